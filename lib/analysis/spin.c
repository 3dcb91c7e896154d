// SPDX-License-Identifier: LGPL-2.1
/*
 * The table of known spin loops and the rule that puts a cpu-clock sample
 * in one: see rsp/spin.h.
 */
#include <string.h>
#include <linux/perf_event.h>
#include <rsp/spin.h>

/*
 * Names as rsp's symbolizer gives them for Debian 12's glibc 2.36
 * (nm -D /lib/x86_64-linux-gnu/libc.so.6; of aliases at one address the
 * global one, then the first by name, names it: __sched_yield, not the weak
 * sched_yield), and the internal names its .symtab adds when libc6-dbg or
 * debuginfod supplies it.
 *
 * pthread_spin_lock is the loop itself (lock decl; on failure a pause loop
 * reading the word until it is free): a sample in it is spinning but for
 * the few instructions of an uncontended acquisition. sched_yield,
 * pthread_yield and thrd_yield (tail calls to it): a thread yielding in a
 * loop waits for another to run. The adaptive mutex's spin
 * (PTHREAD_MUTEX_ADAPTIVE_NP) is inlined into __pthread_mutex_lock with
 * no symbol of its own, beside every mutex's uncontended path: naming
 * pthread_mutex_lock would call a busy ordinary mutex spinning, so it is
 * not in the table; a program known to use adaptive mutexes adds it
 * (--spin-symbol __pthread_mutex_lock).
 */
static const char *const defaults[] = {
	"pthread_spin_lock",  "__pthread_spin_lock", "__sched_yield", "sched_yield",
	"__GI___sched_yield", "pthread_yield",	     "thrd_yield",
};

const char *rsp_spin__default_at(size_t i)
{
	return i < sizeof(defaults) / sizeof(defaults[0]) ? defaults[i] : NULL;
}

/* @name's entry in @list of @n names, or NULL. */
static const char *in_list(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return list[i];
	return NULL;
}

const char *rsp_spin__match(const struct rsp_spin *sp, const char *name)
{
	const char *m;

	if (!name)
		return NULL;
	m = in_list(defaults, sizeof(defaults) / sizeof(defaults[0]), name);
	return m || !sp ? m : in_list(sp->extra, sp->nr_extra, name);
}

static const char *match_at(const struct rsp_spin *sp, struct rsp_symbolizer *sym, unsigned flags,
			    uint32_t pid, uint64_t time, uint64_t addr)
{
	struct rsp_sym s;

	if (rsp_symbolizer__resolve(sym, pid, time, addr, flags, &s))
		return NULL;
	return rsp_spin__match(sp, s.name);
}

/*
 * The kernel's own sched_yield: a sample taken in the kernel spins only
 * there (its user frames are then worth naming). Kernel names come from
 * kallsyms, at no cost; naming the user frames of every sample taken in
 * the kernel would load the libraries of every process seen only there
 * (a system-wide top read 384 objects instead of 55).
 */
static const char *const kernel_yield[] = {"do_sched_yield", "__x64_sys_sched_yield",
					   "__do_sys_sched_yield", "__ia32_sys_sched_yield"};

#define KERNEL_YIELD_FRAMES 8 /* sched_yield is near the syscall's entry: a few frames */

static bool kernel_yields(struct rsp_symbolizer *sym, unsigned flags, uint32_t pid, uint64_t time,
			  const uint64_t *chain, uint32_t nr)
{
	struct rsp_sym s;

	for (uint32_t i = 1, n = 0; i < nr && n < KERNEL_YIELD_FRAMES; i++, n++) {
		if (chain[i] >= (uint64_t)PERF_CONTEXT_MAX)
			return false; /* the end of the kernel's frames */
		if (rsp_symbolizer__resolve(sym, pid, time, chain[i],
					    flags | (n ? RSP_SYM_RETADDR : 0), &s) ||
		    !s.name)
			continue;
		if (in_list(kernel_yield, sizeof(kernel_yield) / sizeof(kernel_yield[0]), s.name))
			return true;
	}
	return false;
}

/*
 * The first RSP_SPIN_USER_FRAMES user frames of @chain (return addresses
 * after the first); of a sample taken in the kernel, only in sched_yield.
 */
const char *rsp_spin__user(const struct rsp_spin *sp, struct rsp_symbolizer *sym, unsigned flags,
			   uint32_t pid, uint64_t time, uint64_t ip, const uint64_t *chain,
			   uint32_t nr)
{
	bool user = false;
	unsigned seen = 0;

	if (chain && nr && chain[0] == (uint64_t)PERF_CONTEXT_KERNEL &&
	    !kernel_yields(sym, flags, pid, time, chain, nr))
		return NULL;
	for (uint32_t i = 0; chain && i < nr && seen < RSP_SPIN_USER_FRAMES; i++) {
		const char *m;

		if (chain[i] >= (uint64_t)PERF_CONTEXT_MAX) {
			user = chain[i] == (uint64_t)PERF_CONTEXT_USER;
			continue;
		}
		if (!user)
			continue;
		/* a sample taken in user mode: its first user frame is the leaf, looked at */
		m = seen == 0 && chain[i] == ip
			    ? NULL
			    : match_at(sp, sym, flags | (seen ? RSP_SYM_RETADDR : 0), pid, time,
				       chain[i]);
		if (m)
			return m;
		seen++;
	}
	return NULL;
}

const char *rsp_spin__sample(const struct rsp_spin *sp, struct rsp_symbolizer *sym, unsigned flags,
			     uint32_t pid, uint64_t time, uint64_t ip, const uint64_t *chain,
			     uint32_t nr_chain)
{
	const char *m = match_at(sp, sym, flags, pid, time, ip);

	return m ? m : rsp_spin__user(sp, sym, flags, pid, time, ip, chain, nr_chain);
}
