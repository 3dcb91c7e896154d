// SPDX-License-Identifier: LGPL-2.1
/*
 * The socket table: versions of each socket in one vector, newest first
 * through a chain of indexes; a hash map from the socket address to its
 * newest version.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <rsp/socktab.h>
#include "internal/u64map.h"
#include "internal/vec.h"

#define NO_PREV	   UINT32_MAX
#define KERNEL_MIN 0xffff800000000000ull /* x86-64 kernel addresses start here */

struct version {
	struct rsp_sock_info si;
	uint64_t from;
	uint32_t prev; /* the older version of the same socket, or NO_PREV */
};

struct rsp_socktab {
	struct version *v;
	size_t nr, cap;
	struct rsp_u64map map; /* sk -> newest version */
};

struct rsp_socktab *rsp_socktab__new(void)
{
	struct rsp_socktab *t = calloc(1, sizeof(*t));

	if (t)
		rsp_u64map__init(&t->map);
	return t;
}

void rsp_socktab__delete(struct rsp_socktab *t)
{
	if (!t)
		return;
	rsp_u64map__exit(&t->map);
	free(t->v);
	free(t);
}

static bool same(const struct rsp_sock_info *a, const struct rsp_sock_info *b)
{
	return a->proto == b->proto && a->state == b->state &&
	       !memcmp(&a->local, &b->local, sizeof(a->local)) &&
	       !memcmp(&a->remote, &b->remote, sizeof(a->remote));
}

int rsp_socktab__add(struct rsp_socktab *t, const struct rsp_sock_info *si, uint64_t from)
{
	uint32_t newest = NO_PREV;

	if (!rsp_u64map__get(&t->map, si->sk, &newest) && same(&t->v[newest].si, si) &&
	    t->v[newest].from <= from)
		return 0;
	if (rsp_vec__reserve((void **)&t->v, &t->cap, t->nr + 1, sizeof(*t->v)))
		return -ENOMEM;
	if (rsp_u64map__put(&t->map, si->sk, (uint32_t)t->nr))
		return -ENOMEM;
	t->v[t->nr] = (struct version){*si, from, newest};
	t->nr++;
	return 0;
}

int rsp_socktab__find(const struct rsp_socktab *t, uint64_t sk, uint64_t time,
		      struct rsp_sock_info *out)
{
	uint32_t i;

	if (!t || rsp_u64map__get(&t->map, sk, &i))
		return -ENOENT;
	/* Versions are added in time order, so the chain is newest first. */
	for (; i != NO_PREV; i = t->v[i].prev) {
		if (t->v[i].from <= time) {
			*out = t->v[i].si;
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * Keep the versions of the sockets whose newest version is from @before on,
 * in their order (oldest first within a socket), and index them again.
 */
size_t rsp_socktab__expire(struct rsp_socktab *t, uint64_t before)
{
	struct rsp_u64map map;
	size_t n = 0, dropped = 0;
	struct version *v;

	if (!t || !t->nr)
		return 0;
	v = malloc(t->nr * sizeof(*v));
	if (!v)
		return 0; /* no memory: keep everything, try again next time */
	rsp_u64map__init(&map);
	if (rsp_u64map__reserve(&map, t->map.count)) {
		free(v);
		return 0;
	}
	/* Versions are appended in time order: walk the vector, keep what is kept. */
	for (size_t i = 0; i < t->nr; i++) {
		uint32_t newest = UINT32_MAX, prev = NO_PREV;

		if (rsp_u64map__get(&t->map, t->v[i].si.sk, &newest) ||
		    t->v[newest].from < before) {
			if (newest == i)
				dropped++;
			continue;
		}
		rsp_u64map__get(&map, t->v[i].si.sk, &prev);
		v[n] = t->v[i];
		v[n].prev = prev;
		rsp_u64map__put(&map, t->v[i].si.sk, (uint32_t)n); /* reserved: cannot fail */
		n++;
	}
	free(t->v);
	rsp_u64map__exit(&t->map);
	if (!n) {
		free(v);
		v = NULL;
	}
	t->v = v;
	t->nr = t->cap = n;
	t->map = map;
	return dropped;
}

size_t rsp_socktab__count(const struct rsp_socktab *t)
{
	return t ? t->map.count : 0;
}

/* "0100007F:1F90": the address as the kernel prints it (u32 words in host order). */
static int parse_endpoint(const char *s, uint16_t family, struct rsp_sockaddr *a)
{
	unsigned words = family == AF_INET6 ? 4 : 1;
	unsigned port;
	char *end;

	memset(a, 0, sizeof(*a));
	for (unsigned i = 0; i < words; i++) {
		char hex[9];
		uint32_t w;

		memcpy(hex, s + 8 * i, 8);
		hex[8] = '\0';
		if (strlen(hex) != 8)
			return -EINVAL;
		w = (uint32_t)strtoul(hex, &end, 16);
		if (*end)
			return -EINVAL;
		memcpy(a->addr + 4 * i, &w, 4);
	}
	s += 8 * words;
	if (*s != ':' || sscanf(s + 1, "%4x", &port) != 1)
		return -EINVAL;
	a->family = family;
	a->port = (uint16_t)port;
	return 0;
}

/*
 * "sl local rem st tx:rx tr:when retrnsmt uid timeout inode ..." then, for
 * TCP, "refcnt pointer ..." and for UDP "ref pointer drops": the pointer is
 * the twelfth field in both.
 */
int rsp_socktab__parse_proc_line(const char *line, uint16_t family, uint8_t proto,
				 struct rsp_sock_info *out)
{
	char tok[12][80];
	unsigned st;
	char *end;
	int n;

	memset(out, 0, sizeof(*out));
	n = sscanf(line, "%79s %79s %79s %79s %79s %79s %79s %79s %79s %79s %79s %79s", tok[0],
		   tok[1], tok[2], tok[3], tok[4], tok[5], tok[6], tok[7], tok[8], tok[9], tok[10],
		   tok[11]);
	if (n < 12 || !strchr(tok[0], ':') || tok[0][strlen(tok[0]) - 1] != ':')
		return -EINVAL;
	if (parse_endpoint(tok[1], family, &out->local) ||
	    parse_endpoint(tok[2], family, &out->remote) || sscanf(tok[3], "%2x", &st) != 1)
		return -EINVAL;
	out->inode = (uint32_t)strtoul(tok[9], &end, 10);
	if (*end)
		return -EINVAL;
	out->sk = strtoull(tok[11], &end, 16);
	if (*end)
		return -EINVAL;
	out->proto = proto;
	out->state = proto == RSP_IPPROTO_TCP ? (uint8_t)st : 0;
	out->source = RSP_SOCK_FROM_PROC;
	/* kptr_restrict: a hash (0) or zeros (2) instead of the address. */
	return out->sk >= KERNEL_MIN ? 0 : -EPERM;
}

static int load_file(struct rsp_socktab *t, const char *path, uint16_t family, uint8_t proto,
		     struct rsp_socktab_load *res)
{
	FILE *f = fopen(path, "re");
	char line[512];
	int ret = 0;

	if (!f)
		return -errno;
	res->files++;
	while (!ret && fgets(line, sizeof(line), f)) {
		struct rsp_sock_info si;
		int r = rsp_socktab__parse_proc_line(line, family, proto, &si);

		if (r == -EPERM)
			res->hidden++;
		else if (!r && !(ret = rsp_socktab__add(t, &si, 0)))
			res->sockets++;
	}
	fclose(f);
	return ret;
}

int rsp_socktab__load_proc(struct rsp_socktab *t, const char *proc_dir,
			   struct rsp_socktab_load *res, struct rsp_buf *err)
{
	static const struct {
		const char *name;
		uint16_t family;
		uint8_t proto;
	} files[] = {
		{"tcp", AF_INET, RSP_IPPROTO_TCP},
		{"tcp6", AF_INET6, RSP_IPPROTO_TCP},
		{"udp", AF_INET, RSP_IPPROTO_UDP},
		{"udp6", AF_INET6, RSP_IPPROTO_UDP},
	};
	char path[4096];
	int last = 0;

	memset(res, 0, sizeof(*res));
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int r;

		snprintf(path, sizeof(path), "%s/net/%s", proc_dir, files[i].name);
		r = load_file(t, path, files[i].family, files[i].proto, res);
		if (r == -ENOMEM) {
			rsp_buf__puts(err, "out of memory reading the socket table");
			return r;
		}
		if (r)
			last = r;
	}
	if (!res->files) {
		rsp_buf__printf(err, "cannot read %s/net/tcp or its siblings: %s", proc_dir,
				strerror(-last));
		return last ? last : -ENOENT;
	}
	return 0;
}

int rsp_socktab__version(const struct rsp_socktab *t, size_t i, struct rsp_sock_info *out,
			 uint64_t *from)
{
	if (!t || i >= t->nr)
		return -ENOENT;
	*out = t->v[i].si;
	if (from)
		*from = t->v[i].from;
	return 0;
}
