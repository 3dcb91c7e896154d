// SPDX-License-Identifier: GPL-2.0
/*
 * What a dump needs that only the live system knows, taken once at start:
 * the tracepoint formats of the events rspd opened (perf script decodes
 * the raw data with them), the host's description, rspd's command line,
 * the kernel's text address and build id. The process model is taken at
 * dump time instead (dumpprocs.c): processes come and go.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <rsp/record.h>
#include "dumpmeta.h"
#include "dumpprocs.h"
#include "evset.h"
#include "log.h"
#include "rsp_tracefs.h"

#define TRACEFS "/sys/kernel/tracing"

/*
 * The formats of every tracepoint rspd opened, and of those the BPF
 * programs record (a dump writes their records as the tracepoints'
 * samples), for HEADER_TRACING_DATA.
 */
static int build_tracing(struct rspd_dumpmeta *m, const struct rsp_evset *es)
{
	struct rsp_tracedata_event ev[RSP_EV__NR];
	struct rsp_buf fmt[RSP_EV__NR], hp = RSP_BUF_INIT, he = RSP_BUF_INIT;
	bool want[RSP_EV__NR] = {false};
	char path[512];
	int n = 0, err = 0;

	memset(fmt, 0, sizeof(fmt));
	for (int i = 0; i < es->nr; i++)
		if (es->e[i].role != RSP_ROLE_BPF && es->e[i].event >= 0)
			want[es->e[i].event] = true;
	for (int e = 0; es->bpf && e < RSP_EV__NR; e++)
		if (rsp_record__bpf_event(e) && es->status[e].open)
			want[e] = true;
	for (int e = 0; e < RSP_EV__NR; e++) {
		const struct rsp_event_info *ei = rsp_catalogue__event(e);

		if (!want[e] || ei->kind != RSP_EVK_TRACEPOINT)
			continue;
		snprintf(path, sizeof(path), TRACEFS "/events/%s/%s/format", ei->system, ei->tp);
		if ((err = rsp_tracefs__read(path, &fmt[n])))
			goto out;
		ev[n].system = ei->system;
		ev[n].format = fmt[n].data;
		ev[n].len = fmt[n].len;
		n++;
	}
	err = rsp_tracefs__read(TRACEFS "/events/header_page", &hp);
	if (!err)
		err = rsp_tracefs__read(TRACEFS "/events/header_event", &he);
	/* No printk_formats: perf needs them only for bprint events, which rsp does not record. */
	if (!err)
		err = rsp_tracedata__build(&m->tracing, hp.data, hp.len, he.data, he.len, ev, n,
					   NULL, 0, &m->kallsyms_at);
out:
	for (int i = 0; i < RSP_EV__NR; i++)
		rsp_buf__exit(&fmt[i]);
	rsp_buf__exit(&hp);
	rsp_buf__exit(&he);
	return err;
}

/* "key : value" of the first line of /proc/cpuinfo with that key. */
static void cpuinfo(const char *text, const char *key, char *dst, size_t n)
{
	size_t klen = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *colon;
		size_t len;

		if (strncmp(l, key, klen) || (l[klen] != ' ' && l[klen] != '\t' && l[klen] != ':'))
			continue;
		colon = strchr(l, ':');
		if (!colon)
			return;
		colon += 1 + (colon[1] == ' ');
		len = strcspn(colon, "\n");
		snprintf(dst, n, "%.*s", (int)len, colon);
		return;
	}
}

static void describe_cpu(struct rspd_dumpmeta *m)
{
	struct rsp_buf b = RSP_BUF_INIT;
	char vendor[64] = "", family[16] = "", model[16] = "", stepping[16] = "";

	if (rsp_tracefs__read("/proc/cpuinfo", &b) || !b.data)
		goto out;
	cpuinfo(b.data, "model name", m->cpu_desc, sizeof(m->cpu_desc));
	cpuinfo(b.data, "vendor_id", vendor, sizeof(vendor));
	cpuinfo(b.data, "cpu family", family, sizeof(family));
	cpuinfo(b.data, "model", model, sizeof(model));
	cpuinfo(b.data, "stepping", stepping, sizeof(stepping));
	/* perf's x86 cpuid string: vendor,family,model,stepping */
	if (vendor[0] && family[0])
		snprintf(m->cpuid, sizeof(m->cpuid), "%s,%s,%s,%s", vendor, family, model,
			 stepping);
out:
	rsp_buf__exit(&b);
}

static void describe_memory(struct rspd_dumpmeta *m)
{
	struct rsp_buf b = RSP_BUF_INIT;
	unsigned long long kb;

	if (!rsp_tracefs__read("/proc/meminfo", &b) && b.data &&
	    sscanf(b.data, "MemTotal: %llu kB", &kb) == 1)
		m->total_mem_kb = kb;
	rsp_buf__exit(&b);
}

/* The kernel's text: perf names its map "[kernel.kallsyms]_text". */
static void kernel_text(struct rspd_dumpmeta *m)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], name[128], type;
	unsigned long long addr;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && (!m->ktext || !m->ketext)) {
		if (sscanf(line, "%llx %c %127s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, "_text"))
			m->ktext = addr;
		else if (!strcmp(name, "_etext"))
			m->ketext = addr;
	}
	fclose(f);
	if (m->ketext <= m->ktext)
		m->ktext = m->ketext = 0; /* hidden by kptr_restrict, or not found */
}

static void kernel_build_id(struct rspd_dumpmeta *m)
{
	struct rsp_buf b = RSP_BUF_INIT;

	if (!rsp_tracefs__read("/sys/kernel/notes", &b) && b.data &&
	    rspd_dumpprocs__note_build_id(b.data, b.len, m->kernel_bid.id, &m->kernel_bid.size)) {
		m->kernel_bid.path = "[kernel.kallsyms]";
		m->kernel_bid.kernel = true;
		m->has_kernel_bid = true;
	}
	rsp_buf__exit(&b);
}

static int copy_argv(struct rspd_dumpmeta *m, int argc, char **argv)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	m->argv = calloc((size_t)argc + 1, sizeof(*m->argv));
	if (!m->argv)
		return -ENOMEM;
	exe[n > 0 ? n : 0] = '\0';
	m->argv[0] = strdup(n > 0 ? exe : argv[0]);
	for (m->argc = 1; m->argv[m->argc - 1] && m->argc < argc; m->argc++)
		m->argv[m->argc] = strdup(argv[m->argc]);
	return m->argv[m->argc - 1] ? 0 : -ENOMEM;
}

/* The boot id tells two dumps of one boot of one host apart from two hosts (rspctl merge). */
static void read_boot_id(struct rspd_dumpmeta *m)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	if (!f)
		return;
	if (!fgets(m->boot_id, sizeof(m->boot_id), f))
		m->boot_id[0] = '\0';
	m->boot_id[strcspn(m->boot_id, "\n")] = '\0';
	fclose(f);
}

int rspd_dumpmeta__init(struct rspd_dumpmeta *m, const struct rsp_evset *es, int argc, char **argv,
			char *err, size_t errlen)
{
	struct utsname u;
	struct timespec res;
	int ret;

	memset(m, 0, sizeof(*m));
	if (!uname(&u)) {
		snprintf(m->hostname, sizeof(m->hostname), "%s", u.nodename);
		snprintf(m->os_release, sizeof(m->os_release), "%s", u.release);
		snprintf(m->arch, sizeof(m->arch), "%.63s", u.machine);
	}
	snprintf(m->version, sizeof(m->version), "rsp %s", RSP_VERSION);
	m->nr_cpus_avail = (unsigned)sysconf(_SC_NPROCESSORS_CONF);
	m->nr_cpus_online = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	m->clock_res_ns = clock_getres(CLOCK_MONOTONIC, &res)
				  ? 1
				  : (uint64_t)res.tv_sec * 1000000000ull + (uint64_t)res.tv_nsec;
	describe_cpu(m);
	describe_memory(m);
	kernel_text(m);
	kernel_build_id(m);
	read_boot_id(m);
	ret = copy_argv(m, argc, argv);
	if (!ret)
		ret = build_tracing(m, es);
	if (ret)
		snprintf(err, errlen, "cannot read the tracepoint formats dumps need from %s: %s",
			 TRACEFS, strerror(-ret));
	return ret;
}

void rspd_dumpmeta__exit(struct rspd_dumpmeta *m)
{
	for (int i = 0; m->argv && i < m->argc; i++)
		free(m->argv[i]);
	free(m->argv);
	rsp_buf__exit(&m->tracing);
	memset(m, 0, sizeof(*m));
}

void rspd_dumpmeta__describe(const struct rspd_dumpmeta *m, struct rsp_perfdata_meta *out)
{
	struct timespec wall, mono;

	memset(out, 0, sizeof(*out));
	out->hostname = m->hostname;
	out->os_release = m->os_release;
	out->arch = m->arch;
	out->version = m->version;
	out->cpu_desc = m->cpu_desc;
	out->cpuid = m->cpuid;
	out->nr_cpus_avail = m->nr_cpus_avail;
	out->nr_cpus_online = m->nr_cpus_online;
	out->total_mem_kb = m->total_mem_kb;
	out->argc = m->argc;
	out->argv = (const char *const *)m->argv;
	out->tracing_data = m->tracing.data;
	out->tracing_size = m->tracing.len;
	out->tracing_kallsyms_at = m->kallsyms_at;
	out->clockid = CLOCK_MONOTONIC;
	out->boot_id = m->boot_id;
	out->clockid_res_ns = m->clock_res_ns;
	/* The pair that converts record times to wall-clock time. */
	clock_gettime(CLOCK_REALTIME, &wall);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	out->wall_clock_ns = (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec;
	out->clockid_time_ns = (uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec;
}
