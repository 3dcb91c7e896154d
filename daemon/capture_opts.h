/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_CAPTURE_OPTS_H
#define RSPD_CAPTURE_OPTS_H

/*
 * The capture options: what the event set captures (families, stacks,
 * sampling, ring sizes, network source, uprobes, DWARF), with their defaults
 * and parsers. Filled by rspd's configuration and read by rsp_evset__open().
 */
#include <stdbool.h>
#include <stddef.h>
#include <rsp/catalogue.h>

enum rsp_stack_policy {
	RSP_STACKS_NONE,    /* no callchain on switches */
	RSP_STACKS_ALL,	    /* every switch */
	RSP_STACKS_SLEEPS,  /* only switches into a sleep (a second, filtered sched_switch) */
	RSP_STACKS_SAMPLED, /* one switch in N (a sampled duplicate of sched_switch) */
	RSP_STACKS_CACHED,  /* as sleeps, from the BPF stack cache (perf: sleeps, and says so) */
};

enum rsp_net_source {
	RSP_NET_SOURCE_AUTO, /* kprobes where the kernel has the kprobe PMU, else tracepoints */
	RSP_NET_SOURCE_TRACEPOINT, /* the sock tracepoints */
	RSP_NET_SOURCE_KPROBE,	   /* kprobes; refused where there is no kprobe PMU */
};

/* Which capture backend records the scheduler's events (README "BPF capture"). */
enum rsp_capture_backend {
	RSP_CAPTURE_PERF, /* perf tracepoints */
	RSP_CAPTURE_BPF,  /* rsp's BPF programs; refused: an error */
	RSP_CAPTURE_AUTO, /* BPF where the kernel allows it, else perf (and why, in status) */
};

#define RSP_UPROBES_DEFAULT                                                                        \
	"poll,ppoll,select,epoll_wait,epoll_pwait,read,recv,recvfrom,recvmsg,write,send,sendto,"   \
	"sendmsg,nanosleep,clock_nanosleep,pthread_cond_wait,pthread_mutex_lock"

struct rsp_capture_opts {
	enum rsp_capture_backend backend;
	/* not configured: hrtimer_wakeup's address from kallsyms (0: unknown) */
	uint64_t hrtimer_wakeup;
	bool families[RSP_FAM__NR];
	enum rsp_stack_policy stacks;
	unsigned stack_every;	/* N of sampled:N */
	bool stack_check;	/* cached: walk every stack and compare with the cache */
	unsigned stack_refresh; /* cached: a cache hit is walked anyway once in this many */
	bool callchain_kernel;
	bool callchain_user;
	bool sample_stacks;	 /* callchains on cpu-clock samples */
	bool waker_stacks;	 /* callchains on sched_waking (all, sleeps policies) */
	unsigned sample_freq;	 /* Hz */
	unsigned ring_pages;	 /* data pages per CPU ring, power of two */
	unsigned wakeup_percent; /* wake the drain when a ring is this full */
	unsigned max_stack;	 /* frames per callchain */
	enum rsp_net_source net_source;
	char uprobes[512];	/* libc functions to probe, comma-separated */
	bool dwarf[RSP_EV__NR]; /* events that capture user registers and stack */
	unsigned dwarf_stack;	/* bytes of user stack they capture */
	char cgroup[1024];	/* --capture-cgroup: a cgroup v2 path; "": every thread */
	/* not configured: the verifier refuses the switch program (a test hook: testhook.h) */
	bool bpf_refuse;
};

/** rsp_capture_opts__init() - the defaults. */
void rsp_capture_opts__init(struct rsp_capture_opts *o);
/** rsp_capture_opts__set_stacks() - parse "cached|all|sleeps|sampled:N|none". 0 or -EINVAL. */
int rsp_capture_opts__set_stacks(struct rsp_capture_opts *o, const char *s);
/** rsp_capture_opts__stacks_name() - the policy as the user writes it. */
const char *rsp_capture_opts__stacks_name(const struct rsp_capture_opts *o, char *buf, size_t n);
/** rsp_capture_opts__set_families() - "all", "sched,block,..." or changes "+syscall,-net"; 0 or
 * -EINVAL. */
int rsp_capture_opts__set_families(struct rsp_capture_opts *o, const char *list, char *err,
				   size_t errlen);
/** rsp_capture_opts__set_net_source() - "auto", "tracepoint" or "kprobe"; 0 or -EINVAL. */
int rsp_capture_opts__set_net_source(struct rsp_capture_opts *o, const char *s);
const char *rsp_capture_opts__net_source_name(const struct rsp_capture_opts *o);
/** rsp_capture_opts__set_backend() - "perf", "bpf" or "auto"; 0 or -EINVAL. */
int rsp_capture_opts__set_backend(struct rsp_capture_opts *o, const char *s);
const char *rsp_capture_opts__backend_name(const struct rsp_capture_opts *o);
/** rsp_capture_opts__set_dwarf() - "none" or events ("cpu_clock,uprobe"); 0 or -EINVAL. */
int rsp_capture_opts__set_dwarf(struct rsp_capture_opts *o, const char *list, char *err,
				size_t errlen);
void rsp_capture_opts__dwarf_name(const struct rsp_capture_opts *o, char *buf, size_t n);
/** rsp_capture_opts__dwarf_bytes() - the size of a sample that copies the user stack. */
size_t rsp_capture_opts__dwarf_bytes(const struct rsp_capture_opts *o);
/**
 * rsp_capture_opts__may_dwarf() - whether an event that copies the user
 * stack may be opened (its family on, the other options leave it events).
 */
bool rsp_capture_opts__may_dwarf(const struct rsp_capture_opts *o);
/** rsp_capture_opts__set_uprobes() - "none" or function names; 0 or -EINVAL. */
int rsp_capture_opts__set_uprobes(struct rsp_capture_opts *o, const char *list, char *err,
				  size_t errlen);

#endif
