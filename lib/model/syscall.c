// SPDX-License-Identifier: LGPL-2.1
/*
 * Syscall names of this architecture, both ways (see rsp/syscall.h): below
 * the histograms that name syscall profiles and the syscall profiles
 * themselves, which both use them.
 */
#include <errno.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdio.h>
#include <rsp/parse.h>
#include <rsp/syscall.h>

#define MAX_NR 4096 /* syscall numbers are far below: x86-64 has ~470 */

/*
 * Syscall names, both ways, from libseccomp (the one source for the syscall
 * profiles and the stopwatches' syscall:NAME): the seccomp project's
 * per-architecture tables, kept up with the kernel's, with lookups by
 * name and by number for the native ABI. It replaced a table generated
 * from asm/unistd_64.h at build time, which had no home for the other
 * direction's users (rspd's stopwatches already resolved names with it).
 * A number libseccomp does not know is named by number ("syscall:467").
 * Names are resolved once, on first use, and kept: libseccomp returns a
 * fresh copy per lookup.
 */
static const char *names[MAX_NR];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void load_names(void)
{
	for (int nr = 0; nr < MAX_NR; nr++)
		names[nr] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
}

const char *rsp_syscall__name(uint32_t nr)
{
	pthread_once(&names_once, load_names);
	return nr < MAX_NR ? names[nr] : NULL;
}

void rsp_syscall__op_name(uint32_t nr, char *buf, size_t n)
{
	const char *name = rsp_syscall__name(nr);

	if (name)
		snprintf(buf, n, "syscall:%s", name);
	else
		snprintf(buf, n, "syscall:%u", nr);
}

int rsp_syscall__parse(const char *s, uint32_t *nr)
{
	uint64_t v;
	int n;

	if (!*s)
		return -ENOENT;
	/* negative: unknown, or a pseudo-number of a call this ABI lacks (socketcall) */
	n = seccomp_syscall_resolve_name_arch(SCMP_ARCH_NATIVE, s);
	if (n >= 0 && n < MAX_NR) {
		*nr = (uint32_t)n;
		return 0;
	}
	if (rsp_parse__u64(s, 0, MAX_NR - 1, &v))
		return -ENOENT;
	*nr = (uint32_t)v;
	return 0;
}
