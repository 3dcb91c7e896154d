// SPDX-License-Identifier: LGPL-2.1
/*
 * Reading perf.data: rsp's own dumps and what `perf record` writes.
 *
 * The file is untrusted input. Every offset and length is checked against
 * the file (with overflow-safe arithmetic) before it is used, counts are
 * bounded by the bytes that could hold them before anything is allocated,
 * and each failure is one sentence naming the file, the offset and what
 * was wrong there. Only little-endian, file-mode (not pipe-mode), version 2
 * files are read; the others get a sentence saying so.
 *
 * This file parses the header, attrs, features and tracing data; the data
 * section is placed in a window by lib/format/perfdata_load.c, and the file
 * becomes a query source in lib/query/perfdata_source.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <traceevent/event-parse.h>
#include <rsp/file.h>
#include <rsp/maps.h>
#include <rsp/perfdata.h>
#include <rsp/record.h>
#include <rsp/symbols.h>
#include "internal/log.h"
#include "internal/perfdata.h"
#include "internal/schema.h"

int rsp_perfdata__fail(struct rsp_perfdata *pd, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	rsp_buf__reset(pd->err);
	rsp_buf__printf(pd->err, "%s: offset 0x%llx: ", pd->info.path, (unsigned long long)off);
	va_start(ap, fmt);
	rsp_buf__vprintf(pd->err, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A {offset, size} pair at @at that must lie inside the file. */
static int section(struct rsp_perfdata *pd, uint64_t at, const char *what, uint64_t *off,
		   uint64_t *size)
{
	*off = rd64(pd, at);
	*size = rd64(pd, at + 8);
	if (!inside(pd, *off, *size))
		return rsp_perfdata__fail(
			pd, at,
			"the %s (offset 0x%llx, size 0x%llx) runs past the end of the file "
			"(0x%zx bytes): the file is truncated or corrupt",
			what, (unsigned long long)*off, (unsigned long long)*size, pd->len);
	return 0;
}

/* --- header ---------------------------------------------------------------------- */

static int check_magic(struct rsp_perfdata *pd)
{
	if (pd->len < 8)
		return rsp_perfdata__fail(
			pd, 0,
			"%zu bytes is too short for a perf.data file (its header alone is "
			"104 bytes)",
			pd->len);
	if (!memcmp(pd->p, "2ELIFREP", 8))
		return rsp_perfdata__fail(pd, 0,
					  "the file was written on a big-endian machine; rsp reads "
					  "little-endian perf.data only");
	if (!memcmp(pd->p, "PERFFILE", 8))
		return rsp_perfdata__fail(
			pd, 0,
			"this is the legacy perf.data format (version 1); re-record it "
			"with a current perf");
	if (memcmp(pd->p, "PERFILE2", 8))
		return rsp_perfdata__fail(pd, 0,
					  "not a perf.data file: it does not start with PERFILE2");
	if (pd->len >= 16 && rd64(pd, 8) == 16)
		return rsp_perfdata__fail(
			pd, 8,
			"this is a pipe-mode perf.data (perf record -o -); record to a "
			"file instead, or convert it with 'perf inject -i IN -o OUT'");
	if (pd->len < PD_HEADER_SIZE)
		return rsp_perfdata__fail(
			pd, 0,
			"the file is truncated: the perf.data header needs 104 bytes and "
			"the file has %zu",
			pd->len);
	if (rd64(pd, 8) != PD_HEADER_SIZE)
		return rsp_perfdata__fail(pd, 8, "the header size is %llu, not 104",
					  (unsigned long long)rd64(pd, 8));
	return 0;
}

static int read_header(struct rsp_perfdata *pd, uint64_t *attrs_off, uint64_t *attrs_size,
		       uint64_t *attr_size)
{
	uint64_t data_size, unused_off, unused_size;
	int err = check_magic(pd);

	if (err)
		return err;
	*attr_size = rd64(pd, 16);
	if (*attr_size < PERF_ATTR_SIZE_VER0 + 16 || *attr_size > 4096 || *attr_size % 8)
		return rsp_perfdata__fail(pd, 16,
					  "the attr size %llu is not a multiple of 8 in 80 .. 4096",
					  (unsigned long long)*attr_size);
	if ((err = section(pd, 24, "attrs section", attrs_off, attrs_size)) ||
	    (err = section(pd, 40, "data section", &pd->data_off, &data_size)) ||
	    (err = section(pd, 56, "event-types section", &unused_off, &unused_size)))
		return err;
	if (*attrs_size == 0 || *attrs_size % *attr_size)
		return rsp_perfdata__fail(
			pd, 32,
			"the attrs section size %llu is not a whole number of %llu-byte "
			"attrs",
			(unsigned long long)*attrs_size, (unsigned long long)*attr_size);
	if (*attrs_size / *attr_size > RSP_SCHEMA_MAX_EVSELS)
		return rsp_perfdata__fail(pd, 32, "the file has %llu attrs; rsp reads at most %d",
					  (unsigned long long)(*attrs_size / *attr_size),
					  RSP_SCHEMA_MAX_EVSELS);
	if (pd->data_off < PD_HEADER_SIZE)
		return rsp_perfdata__fail(pd, 40, "the data section starts inside the header");
	pd->data_end = pd->data_off + data_size;
	pd->info.data_offset = pd->data_off;
	pd->info.data_size = data_size;
	return 0;
}

/* The feature table sits right after the data section, one entry per bit. */
static int read_feature_table(struct rsp_perfdata *pd)
{
	uint64_t at = pd->data_end;
	int n = 0;

	for (int bit = 0; bit < PD_FEAT_BITS; bit++)
		n += (rd64(pd, 72 + 8 * (uint64_t)(bit / 64)) >> (bit % 64)) & 1;
	if (!inside(pd, at, (uint64_t)n * 16))
		return rsp_perfdata__fail(
			pd, at,
			"the table of %d feature sections runs past the end of the file "
			"(0x%zx bytes): the file is truncated",
			n, pd->len);
	for (int bit = 0; bit < PD_FEAT_BITS; bit++) {
		int err;

		if (!((rd64(pd, 72 + 8 * (uint64_t)(bit / 64)) >> (bit % 64)) & 1))
			continue;
		err = section(pd, at, "feature section", &pd->feat_off[bit], &pd->feat_size[bit]);
		if (err)
			return err;
		pd->has_feat[bit] = true;
		at += 16;
	}
	return 0;
}

/* --- attrs -------------------------------------------------------------------------- */

static int read_attr(struct rsp_perfdata *pd, uint64_t at, uint64_t attr_size, struct fattr *f)
{
	uint32_t size = rd32(pd, at + 4); /* attr.size */
	int err;

	memset(f, 0, sizeof(*f));
	f->at = at;
	if (size == 0)
		size = PERF_ATTR_SIZE_VER0;
	if (size < PERF_ATTR_SIZE_VER0 || size > attr_size - 16)
		return rsp_perfdata__fail(
			pd, at + 4,
			"the attr says it is %u bytes, which does not fit its %llu-byte slot", size,
			(unsigned long long)attr_size);
	memcpy(&f->attr, pd->p + at, size < sizeof(f->attr) ? size : sizeof(f->attr));
	f->attr.size = sizeof(f->attr);
	err = section(pd, at + attr_size - 16, "ids of an attr", &f->ids_off, &f->ids_size);
	if (err)
		return err;
	if (f->ids_size % 8 || f->ids_size / 8 > PD_MAX_IDS)
		return rsp_perfdata__fail(pd, at + attr_size - 8,
					  "the ids size %llu is not a multiple of 8 up to %u ids",
					  (unsigned long long)f->ids_size, PD_MAX_IDS);
	return 0;
}

/* What rsp needs of every attr to place each record in time and on a CPU. */
static int check_attr(struct rsp_perfdata *pd, const struct fattr *f)
{
	uint64_t need = PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_TID;

	if ((f->attr.sample_type & need) != need || !f->attr.sample_id_all)
		return rsp_perfdata__fail(
			pd, f->at,
			"event %s does not record the time, CPU and thread of every record "
			"(sample_type 0x%llx, sample_id_all %d); record with 'perf record -a "
			"-k mono' (see rspctl help analyze)",
			f->name[0] ? f->name : "?", (unsigned long long)f->attr.sample_type,
			(int)f->attr.sample_id_all);
	return 0;
}

static int read_attrs(struct rsp_perfdata *pd, uint64_t off, uint64_t size, uint64_t attr_size)
{
	pd->nr_attrs = (int)(size / attr_size);
	for (int i = 0; i < pd->nr_attrs; i++) {
		int err = read_attr(pd, off + (uint64_t)i * attr_size, attr_size, &pd->attrs[i]);

		if (err)
			return err;
	}
	pd->info.nr_attrs = pd->nr_attrs;
	return 0;
}

/* --- features ---------------------------------------------------------------------- */

struct fcur {
	struct rsp_perfdata *pd;
	uint64_t off, end;
	const char *feat;
};

static int fc_need(struct fcur *c, uint64_t n, const char *what)
{
	if (n > c->end - c->off)
		return rsp_perfdata__fail(
			c->pd, c->off,
			"%s of the %s feature needs %llu bytes but the section has %llu left", what,
			c->feat, (unsigned long long)n, (unsigned long long)(c->end - c->off));
	return 0;
}

static int fc_u32(struct fcur *c, uint32_t *v, const char *what)
{
	int err = fc_need(c, 4, what);

	if (!err) {
		*v = rd32(c->pd, c->off);
		c->off += 4;
	}
	return err;
}

static int fc_u64(struct fcur *c, uint64_t *v, const char *what)
{
	int err = fc_need(c, 8, what);

	if (!err) {
		*v = rd64(c->pd, c->off);
		c->off += 8;
	}
	return err;
}

/* perf_header_string: u32 len, then len bytes holding a NUL-terminated string. */
static int fc_string(struct fcur *c, char *dst, size_t dlen)
{
	uint64_t at = c->off;
	uint32_t len;
	const char *s;
	size_t n;
	int err = fc_u32(c, &len, "a string length");

	if (err)
		return err;
	if (len > c->end - c->off)
		return rsp_perfdata__fail(
			c->pd, at,
			"a string of the %s feature claims %u bytes but the section has %llu "
			"left",
			c->feat, len, (unsigned long long)(c->end - c->off));
	s = (const char *)c->pd->p + c->off;
	n = strnlen(s, len);
	if (n == len)
		return rsp_perfdata__fail(c->pd, c->off - 4,
					  "a string of the %s feature has no terminating NUL",
					  c->feat);
	if (dst && dlen)
		snprintf(dst, dlen, "%.*s", (int)n, s);
	c->off += len;
	return 0;
}

static struct fcur fcur(struct rsp_perfdata *pd, int feat, const char *name)
{
	struct fcur c = {pd, pd->feat_off[feat], pd->feat_off[feat] + pd->feat_size[feat], name};

	return c;
}

static int read_string_feature(struct rsp_perfdata *pd, int feat, const char *name, char *dst,
			       size_t dlen)
{
	struct fcur c = fcur(pd, feat, name);

	return pd->has_feat[feat] ? fc_string(&c, dst, dlen) : 0;
}

static int read_cmdline(struct rsp_perfdata *pd)
{
	struct fcur c = fcur(pd, RSP_PD_FEAT_CMDLINE, "CMDLINE");
	uint32_t nr;
	size_t used = 0;
	int err;

	if (!pd->has_feat[RSP_PD_FEAT_CMDLINE])
		return 0;
	if ((err = fc_u32(&c, &nr, "the argument count")))
		return err;
	if (nr > (c.end - c.off) / 4)
		return rsp_perfdata__fail(pd, c.off - 4,
					  "the CMDLINE feature claims %u arguments in %llu bytes",
					  nr, (unsigned long long)(c.end - c.off));
	for (uint32_t i = 0; i < nr; i++) {
		char arg[512];

		if ((err = fc_string(&c, arg, sizeof(arg))))
			return err;
		if (used < sizeof(pd->info.cmdline))
			used += (size_t)snprintf(pd->info.cmdline + used,
						 sizeof(pd->info.cmdline) - used, "%s%s",
						 i ? " " : "", arg);
	}
	return 0;
}

static int read_small_features(struct rsp_perfdata *pd)
{
	struct fcur c;
	uint32_t a, b;
	uint64_t v;
	int err = 0;

	if (pd->has_feat[RSP_PD_FEAT_NRCPUS]) {
		c = fcur(pd, RSP_PD_FEAT_NRCPUS, "NRCPUS");
		if (!(err = fc_u32(&c, &a, "nr_cpus_avail")) &&
		    !(err = fc_u32(&c, &b, "nr_cpus_online"))) {
			pd->info.nr_cpus_avail = a;
			pd->info.nr_cpus_online = b;
		}
	}
	if (!err && pd->has_feat[RSP_PD_FEAT_TOTAL_MEM]) {
		c = fcur(pd, RSP_PD_FEAT_TOTAL_MEM, "TOTAL_MEM");
		if (!(err = fc_u64(&c, &v, "the memory size")))
			pd->info.total_mem_kb = v;
	}
	if (!err && pd->has_feat[RSP_PD_FEAT_CLOCK_DATA]) {
		c = fcur(pd, RSP_PD_FEAT_CLOCK_DATA, "CLOCK_DATA");
		if (!(err = fc_u32(&c, &a, "the version")) &&
		    !(err = fc_u32(&c, &b, "the clock")) &&
		    !(err = fc_u64(&c, &pd->info.wall_clock_ns, "the wall-clock time")) &&
		    !(err = fc_u64(&c, &pd->info.clockid_time_ns, "the clock time"))) {
			if (a != 1)
				return rsp_perfdata__fail(pd, c.off - 24,
							  "CLOCK_DATA version %u is not 1", a);
			pd->info.clock_data = true;
			pd->info.clockid = (int)b;
		}
	}
	return err;
}

static int read_build_ids(struct rsp_perfdata *pd)
{
	struct fcur c = fcur(pd, RSP_PD_FEAT_BUILD_ID, "BUILD_ID");

	if (!pd->has_feat[RSP_PD_FEAT_BUILD_ID])
		return 0;
	while (c.off < c.end) {
		uint16_t size;
		int err = fc_need(&c, 8, "a build-id record header");

		if (err)
			return err;
		memcpy(&size, pd->p + c.off + 6, 2);
		if (size < 8 + 4 + 24)
			return rsp_perfdata__fail(
				pd, c.off, "a build-id record of %u bytes is too short", size);
		if ((err = fc_need(&c, size, "a build-id record")))
			return err;
		c.off += size;
		pd->info.nr_build_ids++;
	}
	return 0;
}

/* EVENT_DESC: the evsels' names, matched to the attrs by their first id. */
static void name_attr(struct rsp_perfdata *pd, uint64_t first_id, const char *name)
{
	for (int i = 0; i < pd->nr_attrs; i++) {
		struct fattr *f = &pd->attrs[i];

		if (f->ids_size >= 8 && rd64(pd, f->ids_off) == first_id)
			snprintf(f->name, sizeof(f->name), "%s", name);
	}
}

static int read_event_desc(struct rsp_perfdata *pd)
{
	struct fcur c = fcur(pd, RSP_PD_FEAT_EVENT_DESC, "EVENT_DESC");
	uint32_t nre, sz;
	int err;

	if (!pd->has_feat[RSP_PD_FEAT_EVENT_DESC])
		return 0;
	if ((err = fc_u32(&c, &nre, "the event count")) || (err = fc_u32(&c, &sz, "the attr size")))
		return err;
	if (sz < PERF_ATTR_SIZE_VER0 || sz > 4096 || nre > (c.end - c.off) / (sz + 8))
		return rsp_perfdata__fail(pd, c.off - 8,
					  "EVENT_DESC claims %u events of %u bytes in %llu bytes",
					  nre, sz, (unsigned long long)(c.end - c.off));
	for (uint32_t i = 0; i < nre; i++) {
		char name[96];
		uint32_t nri;
		uint64_t first = 0;

		if ((err = fc_need(&c, sz, "an attr")))
			return err;
		c.off += sz;
		if ((err = fc_u32(&c, &nri, "the id count")) ||
		    (err = fc_string(&c, name, sizeof(name))))
			return err;
		if ((err = fc_need(&c, (uint64_t)nri * 8, "the ids")))
			return err;
		if (nri)
			first = rd64(pd, c.off);
		c.off += (uint64_t)nri * 8;
		if (nri)
			name_attr(pd, first, name);
	}
	return 0;
}

/* The most sockets a dump's socket table may claim: memory stays bounded. */
#define MAX_HOST_SOCKETS (1u << 22)

static void rsp_host_socket(const unsigned char *e, struct rsp_sock_info *si)
{
	memset(si, 0, sizeof(*si));
	memcpy(&si->sk, e, 8);
	si->proto = e[8];
	si->state = e[9];
	si->source = RSP_SOCK_FROM_PROC;
	memcpy(&si->inode, e + 12, 4);
	memcpy(&si->local, e + 16, 20);
	memcpy(&si->remote, e + 36, 20);
}

/* RSP_PD_FEAT_RSP_HOST (layout in rsp/perfdata.h). */
static int read_rsp_host(struct rsp_perfdata *pd)
{
	struct fcur c = fcur(pd, RSP_PD_FEAT_RSP_HOST, "RSP_HOST");
	uint32_t version, nr, size;
	int err;

	if (!pd->has_feat[RSP_PD_FEAT_RSP_HOST])
		return 0;
	err = fc_u32(&c, &version, "the version");
	if (!err && version != 1)
		return rsp_perfdata__fail(pd, c.off - 4,
					  "RSP_HOST version %u is not 1: the dump is from a newer "
					  "rsp, read it with that version",
					  version);
	if (!err)
		err = fc_string(&c, pd->info.boot_id, sizeof(pd->info.boot_id));
	if (!err)
		err = fc_u32(&c, &nr, "the socket count");
	if (!err)
		err = fc_u32(&c, &size, "the socket entry size");
	if (!err && (size != 56 || nr > MAX_HOST_SOCKETS))
		return rsp_perfdata__fail(
			pd, c.off - 8,
			"RSP_HOST claims %u sockets of %u bytes (expected at most "
			"%u of 56)",
			nr, size, MAX_HOST_SOCKETS);
	if (!err)
		err = fc_need(&c, (uint64_t)nr * 56, "the socket table");
	if (err)
		return err;
	if (nr && !(pd->socks = calloc(nr, sizeof(*pd->socks))))
		return rsp_perfdata__fail(pd, c.off, "no memory for %u sockets", nr);
	for (uint32_t i = 0; i < nr; i++)
		rsp_host_socket(pd->p + c.off + 56ull * i, &pd->socks[i]);
	pd->info.nr_sockets = nr;
	pd->info.has_host = true;
	return 0;
}

/* RSP_PD_FEAT_RSP_TRIGGER (layout in rsp/perfdata.h). */
static int read_rsp_trigger(struct rsp_perfdata *pd)
{
	struct fcur c = fcur(pd, RSP_PD_FEAT_RSP_TRIGGER, "RSP_TRIGGER");
	struct rsp_dump_info *in = &pd->info;
	uint32_t version;
	int err;

	if (!pd->has_feat[RSP_PD_FEAT_RSP_TRIGGER])
		return 0;
	err = fc_u32(&c, &version, "the version");
	if (!err && version != 1)
		return rsp_perfdata__fail(pd, c.off - 4,
					  "RSP_TRIGGER version %u is not 1: the dump is from a "
					  "newer rsp, read it with that version",
					  version);
	if (!err)
		err = fc_string(&c, in->trigger_name, sizeof(in->trigger_name));
	if (!err)
		err = fc_string(&c, in->trigger_condition, sizeof(in->trigger_condition));
	if (!err)
		err = fc_string(&c, in->trigger_value, sizeof(in->trigger_value));
	if (!err)
		err = fc_u64(&c, &in->trigger_time, "the trip time");
	if (!err)
		err = fc_u64(&c, &in->trigger_post_ns, "the post-trigger time");
	in->has_trigger = !err;
	return err;
}

/* RSP_PD_FEAT_RSP_CGROUPS (layout in rsp/perfdata.h): checked whole here. */
static int read_rsp_cgroups(struct rsp_perfdata *pd)
{
	struct fcur c = fcur(pd, RSP_PD_FEAT_RSP_CGROUPS, "RSP_CGROUPS");
	uint32_t version, nr, v;
	uint64_t t;
	int err;

	if (!pd->has_feat[RSP_PD_FEAT_RSP_CGROUPS])
		return 0;
	err = fc_u32(&c, &version, "the version");
	if (!err && version != 1)
		return rsp_perfdata__fail(
			pd, c.off - 4,
			"RSP_CGROUPS version %u is not 1: the dump is from a newer "
			"rsp, read it with that version",
			version);
	if (!err)
		err = fc_u32(&c, &nr, "the process count");
	if (err)
		return err;
	/* an entry takes at least 20 bytes: memory stays bounded by the file */
	if (nr > (c.end - c.off) / 20)
		return rsp_perfdata__fail(pd, c.off - 4,
					  "RSP_CGROUPS claims %u processes in %llu bytes", nr,
					  (unsigned long long)(c.end - c.off));
	if (nr && !(pd->cgroups = calloc(nr, sizeof(*pd->cgroups))))
		return rsp_perfdata__fail(pd, c.off, "no memory for %u processes' cgroups", nr);
	for (uint32_t i = 0; i < nr; i++) {
		pd->cgroups[i] = c.off;
		if ((err = fc_u32(&c, &v, "a pid")) || (err = fc_u32(&c, &v, "a namespaced pid")) ||
		    (err = fc_u64(&c, &t, "a time")) || (err = fc_string(&c, NULL, 0)))
			return err;
		if (pd->p[pd->cgroups[i] + 20] && pd->p[pd->cgroups[i] + 20] != '/')
			return rsp_perfdata__fail(pd, pd->cgroups[i] + 20,
						  "RSP_CGROUPS has a cgroup path that does not "
						  "start with '/'");
	}
	pd->info.nr_cgroups = nr;
	pd->info.has_cgroups = true;
	return 0;
}

static int read_features(struct rsp_perfdata *pd)
{
	struct rsp_dump_info *in = &pd->info;
	int err = read_string_feature(pd, RSP_PD_FEAT_HOSTNAME, "HOSTNAME", in->hostname,
				      sizeof(in->hostname));

	if (!err)
		err = read_string_feature(pd, RSP_PD_FEAT_OSRELEASE, "OSRELEASE", in->os_release,
					  sizeof(in->os_release));
	if (!err)
		err = read_string_feature(pd, RSP_PD_FEAT_VERSION, "VERSION", in->version,
					  sizeof(in->version));
	if (!err)
		err = read_string_feature(pd, RSP_PD_FEAT_ARCH, "ARCH", in->arch, sizeof(in->arch));
	if (!err)
		err = read_string_feature(pd, RSP_PD_FEAT_CPUDESC, "CPUDESC", in->cpu_desc,
					  sizeof(in->cpu_desc));
	if (!err)
		err = read_string_feature(pd, RSP_PD_FEAT_CPUID, "CPUID", in->cpuid,
					  sizeof(in->cpuid));
	if (!err)
		err = read_cmdline(pd);
	if (!err)
		err = read_small_features(pd);
	if (!err)
		err = read_build_ids(pd);
	if (!err)
		err = read_event_desc(pd);
	if (!err)
		err = read_rsp_host(pd);
	if (!err)
		err = read_rsp_cgroups(pd);
	if (!err)
		err = read_rsp_trigger(pd);
	in->written_by_rsp = !strncmp(in->version, "rsp ", 4);
	if (pd->has_feat[RSP_PD_FEAT_RSP_SYSCALLS]) {
		/* checked where it is used (rsp_sysdump__load()) */
		in->rsp_syscalls =
			(const unsigned char *)pd->p + pd->feat_off[RSP_PD_FEAT_RSP_SYSCALLS];
		in->rsp_syscalls_size = pd->feat_size[RSP_PD_FEAT_RSP_SYSCALLS];
		in->rsp_syscalls_offset = pd->feat_off[RSP_PD_FEAT_RSP_SYSCALLS];
	}
	return err;
}

/* --- schema ------------------------------------------------------------------------------- */

/*
 * A probe made through a dynamic PMU (uprobe, kprobe): its type number is
 * the recording machine's, so rsp's dumps name it, as rspd did: "libc:poll"
 * for the libc uprobes, "kprobe:tcp_sendmsg" for the network kprobes.
 */
static int probe_event(const char *name)
{
	if (!strncmp(name, "libc:", 5) && name[5])
		return RSP_EV_uprobe;
	if (strncmp(name, "kprobe:", 7))
		return -1;
	for (int ev = 0; ev < RSP_EV__NR; ev++) {
		const struct rsp_event_info *ei = rsp_catalogue__event(ev);

		if (ei->kind == RSP_EVK_KPROBE && !strcmp(ei->tp, name + 7))
			return ev;
	}
	return -1;
}

static int attr_event(const struct fattr *f, struct tep_handle *tep, char *name, size_t n)
{
	const struct perf_event_attr *a = &f->attr;
	struct tep_event *te;

	if (a->type == PERF_TYPE_TRACEPOINT) {
		te = tep && a->config <= INT32_MAX ? tep_find_event(tep, (int)a->config) : NULL;
		if (!te)
			return -1;
		if (!name[0])
			snprintf(name, n, "%s:%s", te->system, te->name);
		return rsp_catalogue__find_tracepoint(te->system, te->name);
	}
	if (a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_CPU_CLOCK)
		return RSP_EV_cpu_clock;
	if (a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_DUMMY)
		return RSP_EV_sideband;
	if (a->type >= PERF_TYPE_MAX)
		return probe_event(name);
	return -1;
}

static int add_ids(struct rsp_perfdata *pd, int idx, const struct fattr *f)
{
	for (uint64_t k = 0; k < f->ids_size / 8; k++) {
		uint64_t id = rd64(pd, f->ids_off + 8 * k);

		if (!id)
			return rsp_perfdata__fail(pd, f->ids_off + 8 * k,
						  "sample id 0 is not a valid id");
		if (rsp_schema__evsel_by_id(pd->schema, id) >= 0)
			return rsp_perfdata__fail(pd, f->ids_off + 8 * k,
						  "sample id %llu belongs to two attrs",
						  (unsigned long long)id);
		if (rsp_schema__add_id(pd->schema, idx, id))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Several attrs must identify their records: with PERF_SAMPLE_IDENTIFIER
 * everywhere, or PERF_SAMPLE_ID at the same place in all of them.
 */
static int check_identification(struct rsp_perfdata *pd)
{
	const struct rsp_schema *s = pd->schema;
	uint64_t head = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
			PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU;

	if (s->all_identifier || s->nr_evsels == 1)
		return 0;
	for (int i = 0; i < s->nr_evsels; i++) {
		uint64_t st = s->evsels[i].attr.sample_type;

		if (!(st & PERF_SAMPLE_ID) || (st & head) != (s->evsels[0].attr.sample_type & head))
			return rsp_perfdata__fail(
				pd, pd->attrs[i].at,
				"the attrs do not say which event a record belongs to "
				"(no PERF_SAMPLE_IDENTIFIER, and PERF_SAMPLE_ID not at one "
				"place); record with a current perf");
	}
	return 0;
}

static int build_schema(struct rsp_perfdata *pd, struct tep_handle *tep)
{
	pd->schema = rsp_schema__new();
	if (!pd->schema)
		return -ENOMEM;
	if (tep)
		rsp_schema__resolve_fields(pd->schema, tep);
	for (int i = 0; i < pd->nr_attrs; i++) {
		struct fattr *f = &pd->attrs[i];
		int ev = attr_event(f, tep, f->name, sizeof(f->name)), idx, err;
		enum rsp_role role = !strncmp(f->name, RSP_PD_STACK_COPY_PREFIX,
					      strlen(RSP_PD_STACK_COPY_PREFIX))
					     ? RSP_ROLE_STACK_COPY
					     : RSP_ROLE_PRIMARY;
		bool bpf = f->attr.type == PERF_TYPE_SOFTWARE &&
			   f->attr.config == PERF_COUNT_SW_BPF_OUTPUT;

		/* rsp's BPF records: the scheduler's events, as compact records */
		if (bpf) {
			role = RSP_ROLE_BPF;
			ev = RSP_EV_sched_switch;
			for (int e = 0; e < RSP_EV__NR; e++)
				pd->info.event_present[e] |= rsp_record__bpf_event(e);
		}

		if (!f->name[0])
			snprintf(f->name, sizeof(f->name), "type %u config 0x%llx", f->attr.type,
				 (unsigned long long)f->attr.config);
		if ((err = check_attr(pd, f)))
			return err;
		idx = rsp_schema__add_evsel(pd->schema, &f->attr, ev, role, f->name);
		if (idx < 0)
			return idx;
		if ((err = add_ids(pd, idx, f)))
			return err;
		if (ev >= 0 && role == RSP_ROLE_PRIMARY &&
		    (rsp_catalogue__event(ev)->kind != RSP_EVK_TRACEPOINT ||
		     rsp_schema__event_ok(pd->schema, ev)))
			pd->info.event_present[ev] = true;
		/* perf record asks for side-band records on its first event. */
		if (f->attr.mmap || f->attr.mmap2 || f->attr.comm || f->attr.task)
			pd->info.event_present[RSP_EV_sideband] = true;
	}
	return check_identification(pd);
}

static int read_tracing(struct rsp_perfdata *pd, struct tep_handle **tep)
{
	struct rsp_buf msg = RSP_BUF_INIT;
	uint64_t off = pd->feat_off[RSP_PD_FEAT_TRACING_DATA];

	*tep = NULL;
	if (!pd->has_feat[RSP_PD_FEAT_TRACING_DATA])
		return 0;
	*tep = rsp_tracedata__parse(pd->p + off, pd->feat_size[RSP_PD_FEAT_TRACING_DATA], off,
				    &pd->kallsyms, &pd->kallsyms_len, &msg);
	if (!*tep) {
		rsp_buf__reset(pd->err);
		rsp_buf__printf(pd->err, "%s: %s", pd->info.path,
				msg.data ? msg.data : "bad tracing data");
		rsp_buf__exit(&msg);
		return -EINVAL;
	}
	rsp_buf__exit(&msg);
	pd->info.has_tracing_data = true;
	return 0;
}

/* --- open / parse / delete ---------------------------------------------------------------------
 */

static int parse_all(struct rsp_perfdata *pd)
{
	uint64_t attrs_off, attrs_size, attr_size;
	struct tep_handle *tep = NULL;
	int err = read_header(pd, &attrs_off, &attrs_size, &attr_size);

	if (!err)
		err = read_feature_table(pd);
	if (!err)
		err = read_attrs(pd, attrs_off, attrs_size, attr_size);
	if (!err)
		err = read_features(pd);
	if (!err)
		err = read_tracing(pd, &tep);
	if (!err)
		err = build_schema(pd, tep);
	tep_free(tep);
	if (err == -ENOMEM && !pd->err->len)
		rsp_buf__printf(pd->err, "%s: out of memory", pd->info.path);
	return err;
}

static struct rsp_perfdata *pd_new(const char *name, struct rsp_buf *err)
{
	struct rsp_perfdata *pd = calloc(1, sizeof(*pd));

	if (!pd) {
		rsp_buf__puts(err, "out of memory");
		return NULL;
	}
	pd->err = err;
	pd->info.clockid = -1;
	snprintf(pd->info.path, sizeof(pd->info.path), "%s", name);
	return pd;
}

struct rsp_perfdata *rsp_perfdata__parse(const void *buf, size_t len, const char *name,
					 struct rsp_buf *err)
{
	struct rsp_perfdata *pd;

	if ((uintptr_t)buf % 8) {
		rsp_buf__printf(err, "%s: the bytes are not 8-byte aligned in memory",
				name ? name : "perf.data");
		return NULL;
	}
	pd = pd_new(name ? name : "perf.data", err);
	if (!pd)
		return NULL;
	pd->p = buf;
	pd->len = len;
	pd->info.file_size = len;
	if (parse_all(pd)) {
		rsp_perfdata__delete(pd);
		return NULL;
	}
	return pd;
}

struct rsp_perfdata *rsp_perfdata__open(const char *path, struct rsp_buf *err)
{
	struct rsp_perfdata *pd = pd_new(path, err);
	struct stat st;
	int fd;

	if (!pd)
		return NULL;
	/* Never blocks: a FIFO or a device is refused before any read. */
	fd = rsp_file__open_regular(path, err);
	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			rsp_buf__printf(err, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (st.st_size > 0) {
		pd->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd,
			       0);
		if (pd->map == MAP_FAILED) {
			pd->map = NULL;
			rsp_buf__printf(err, "%s: cannot map it: %s", path, strerror(errno));
			goto fail;
		}
		pd->map_len = (size_t)st.st_size;
	}
	close(fd);
	fd = -1;
	pd->p = pd->map;
	pd->len = pd->map_len;
	pd->info.file_size = pd->len;
	if (parse_all(pd))
		goto fail;
	return pd;
fail:
	if (fd >= 0)
		close(fd);
	rsp_perfdata__delete(pd);
	return NULL;
}

void rsp_perfdata__delete(struct rsp_perfdata *pd)
{
	if (!pd)
		return;
	rsp_symbolizer__delete(pd->symbols);
	rsp_ksyms__delete(pd->ksyms);
	rsp_window__delete(pd->side);
	rsp_window__delete(pd->window);
	rsp_schema__delete(pd->schema);
	if (pd->map)
		munmap(pd->map, pd->map_len);
	free(pd->model);
	free(pd->socks);
	free(pd->cgroups);
	free(pd);
}

const struct rsp_schema *rsp_perfdata__schema(const struct rsp_perfdata *pd)
{
	return pd->schema;
}

const struct rsp_dump_info *rsp_perfdata__info(const struct rsp_perfdata *pd)
{
	return &pd->info;
}

const struct rsp_sock_info *rsp_perfdata__sockets(const struct rsp_perfdata *pd)
{
	return pd->socks;
}

int rsp_perfdata__cgroup(const struct rsp_perfdata *pd, uint32_t i, struct rsp_pd_cgroup *out)
{
	uint64_t off;

	if (i >= pd->info.nr_cgroups)
		return -ENOENT;
	off = pd->cgroups[i];
	out->pid = rd32(pd, off);
	out->nspid = rd32(pd, off + 4);
	out->time = rd64(pd, off + 8);
	out->path = (const char *)pd->p + off + 20;
	return 0;
}

int rsp_perfdata__process_model(const struct rsp_perfdata *pd,
				int (*fn)(const struct perf_event_header *rec, void *ctx),
				void *ctx)
{
	for (size_t i = 0; i < pd->nr_model; i++) {
		int ret = fn((const void *)(pd->p + pd->model[i]), ctx);

		if (ret)
			return ret;
	}
	return 0;
}
