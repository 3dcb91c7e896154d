// SPDX-License-Identifier: GPL-2.0
/*
 * rsp-bench-sc-floor [--switch] [-- CMD [ARG...]]: attaches empty BPF
 * programs to tp_btf/sys_enter and tp_btf/sys_exit (and, with --switch, to
 * tp_btf/sched_switch), runs CMD, waits for it and detaches; exits with
 * CMD's status. Without CMD: says "ready" on stderr and keeps them attached
 * until SIGINT or SIGTERM. What any BPF syscall profiler costs on this kernel before
 * doing any work: bench/syscalls.py runs its workloads under it beside the
 * syscall family (bpf/sc_floor.bpf.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "sc_floor.skel.h"

int main(int argc, char **argv)
{
	struct rsp_sc_floor *skel;
	int i = 1, sw = 0, status = 0;
	pid_t pid;

	if (i < argc && !strcmp(argv[i], "--switch")) {
		sw = 1;
		i++;
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i < argc && argv[i][0] == '-') {
		fprintf(stderr, "usage: rsp-bench-sc-floor [--switch] [-- CMD [ARG...]]\n");
		return 2;
	}
	skel = rsp_sc_floor__open();
	if (!skel) {
		fprintf(stderr, "rsp-bench-sc-floor: cannot open the BPF object: %s\n",
			strerror(errno));
		return 1;
	}
	if (!sw)
		bpf_program__set_autoload(skel->progs.rsp_floor_switch, false);
	if (rsp_sc_floor__load(skel) || rsp_sc_floor__attach(skel)) {
		fprintf(stderr,
			"rsp-bench-sc-floor: cannot load or attach the empty programs "
			"(run as root on a kernel with BTF): %s\n",
			strerror(errno));
		rsp_sc_floor__destroy(skel);
		return 1;
	}
	if (i >= argc) {
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGTERM);
		sigprocmask(SIG_BLOCK, &set, NULL);
		fprintf(stderr, "rsp-bench-sc-floor: ready\n");
		sigwait(&set, &sig);
		rsp_sc_floor__destroy(skel);
		return 0;
	}
	pid = fork();
	if (pid == 0) {
		execvp(argv[i], argv + i);
		fprintf(stderr, "rsp-bench-sc-floor: cannot run %s: %s\n", argv[i],
			strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		status = 1 << 8;
	rsp_sc_floor__destroy(skel);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
