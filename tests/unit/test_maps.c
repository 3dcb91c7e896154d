// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the process model (lib/model/maps.c, lib/model/procfs.c): time-versioned
 * lookups, remapping, exec, fork, exit, pid reuse, the order rules between
 * a /proc snapshot and older records, the record decoders, ingestion from a
 * window, and bounded memory.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <rsp/maps.h>
#include "support/synth.h"

#define RX (PROT_READ | PROT_EXEC)

static struct rsp_map_info region(uint64_t start, uint64_t end, uint64_t pgoff, uint64_t ino,
				  const char *path)
{
	return (struct rsp_map_info){.start = start,
				     .end = end,
				     .pgoff = pgoff,
				     .maj = 8,
				     .min = 1,
				     .ino = ino,
				     .prot = RX,
				     .path = path,
				     .path_len = strlen(path)};
}

static const char *path_at(struct rsp_maps *m, uint32_t pid, uint64_t t, uint64_t addr)
{
	static struct rsp_map_view v;

	return rsp_maps__find(m, pid, t, addr, &v) ? NULL : v.path;
}

static void test_parse_line(void **state)
{
	struct rsp_map_info mi;

	assert_int_equal(
		rsp_procfs__parse_maps_line("55d0c1a00000-55d0c1a25000 r-xp 00002000 "
					    "08:01 1234567                    /usr/bin/x y\n",
					    &mi),
		0);
	assert_true(mi.start == 0x55d0c1a00000ull && mi.end == 0x55d0c1a25000ull);
	assert_true(mi.pgoff == 0x2000 && mi.maj == 8 && mi.min == 1 && mi.ino == 1234567);
	assert_int_equal(mi.prot, PROT_READ | PROT_EXEC);
	assert_int_equal(mi.flags, MAP_PRIVATE);
	assert_int_equal((int)mi.path_len, (int)strlen("/usr/bin/x y"));
	assert_memory_equal(mi.path, "/usr/bin/x y", mi.path_len);
	assert_int_equal(
		rsp_procfs__parse_maps_line("7ffd1000-7ffd3000 r-xs 00000000 00:00 0", &mi), 0);
	assert_int_equal((int)mi.path_len, 0);
	assert_int_equal(mi.flags, MAP_SHARED);
	assert_int_equal(rsp_procfs__parse_maps_line(
				 "1000-2000 r-xp 00000000 fd:02 77 /lib/libz.so (deleted)", &mi),
			 0);
	assert_int_equal((int)mi.maj, 0xfd);
	/* malformed */
	assert_int_equal(rsp_procfs__parse_maps_line("", &mi), -EINVAL);
	assert_int_equal(rsp_procfs__parse_maps_line("1000 r-xp 0 08:01 1 /x", &mi), -EINVAL);
	assert_int_equal(rsp_procfs__parse_maps_line("1000-2000 rwzp 0 08:01 1 /x", &mi), -EINVAL);
	assert_int_equal(rsp_procfs__parse_maps_line("2000-1000 r-xp 0 08:01 1 /x", &mi), -EINVAL);
	assert_int_equal(rsp_procfs__parse_maps_line("1000-2000 r-xp 0 08 1 /x", &mi), -EINVAL);
	assert_int_equal(rsp_procfs__parse_maps_line("1000-2000 r-xp 0 08:01 x /x", &mi), -EINVAL);
	assert_int_equal(rsp_procfs__parse_maps_line("1000-2000 r-x", &mi), -EINVAL);
}

/* A new mapping over part of an older one: each is found at its own time. */
static void test_remap(void **state)
{
	struct rsp_maps *m = rsp_maps__new(NULL);
	struct rsp_map_info a = region(0x10000, 0x30000, 0x1000, 11, "/lib/a.so");
	struct rsp_map_info b = region(0x20000, 0x40000, 0, 22, "/lib/b.so");
	struct rsp_map_view v;
	struct rsp_maps_stats st;

	assert_int_equal(rsp_maps__mmap(m, 100, 10, &a), 0);
	assert_int_equal(rsp_maps__mmap(m, 100, 20, &b), 0);
	assert_string_equal(path_at(m, 100, 15, 0x25000), "/lib/a.so");
	assert_string_equal(path_at(m, 100, 25, 0x25000), "/lib/b.so");
	assert_string_equal(path_at(m, 100, 25, 0x15000), "/lib/a.so"); /* what stuck out */
	assert_null(path_at(m, 100, 5, 0x15000));			/* before it was mapped */
	assert_null(path_at(m, 100, 25, 0x50000));
	assert_int_equal(rsp_maps__find(m, 999, 25, 0x15000, &v), -ESRCH);
	assert_int_equal(rsp_maps__find(m, 100, 25, 0x50000, &v), -ENOENT);
	/* The dead piece keeps its file offset. */
	assert_int_equal(rsp_maps__find(m, 100, 15, 0x25000, &v), 0);
	assert_true(v.start == 0x20000 && v.end == 0x30000 && v.pgoff == 0x11000);
	assert_true(v.valid_from == 10 && v.valid_to == 20);
	/* A mapping inside an older one splits it: the right part's offset moves. */
	b = region(0x12000, 0x14000, 0, 33, "/lib/c.so");
	assert_int_equal(rsp_maps__mmap(m, 100, 30, &b), 0);
	assert_int_equal(rsp_maps__find(m, 100, 31, 0x15000, &v), 0);
	assert_true(v.start == 0x14000 && v.end == 0x20000 && v.pgoff == 0x5000);
	assert_string_equal(path_at(m, 100, 31, 0x13000), "/lib/c.so");
	assert_string_equal(path_at(m, 100, 31, 0x11000), "/lib/a.so");
	/* Replaying an identical mapping changes nothing. */
	rsp_maps__stats(m, &st);
	assert_int_equal(rsp_maps__mmap(m, 100, 40, &b), 0);
	{
		struct rsp_maps_stats st2;

		rsp_maps__stats(m, &st2);
		assert_int_equal((int)st2.maps_live, (int)st.maps_live);
		assert_int_equal((int)st2.maps_dead, (int)st.maps_dead);
	}
	assert_int_equal(rsp_maps__find(m, 100, 41, 0x13000, &v), 0);
	assert_int_equal((int)v.valid_from, 30);
	rsp_maps__delete(m);
}

/* exec ends every region; fork copies the parent's; comm follows both. */
static void test_exec_fork(void **state)
{
	struct rsp_maps *m = rsp_maps__new(NULL);
	struct rsp_map_info sh = region(0x400000, 0x410000, 0, 1, "/bin/sh");
	struct rsp_map_info libc =
		region(0x7f0000000000, 0x7f0000100000, 0x28000, 2, "/lib/libc.so.6");
	struct rsp_map_info ls = region(0x500000, 0x520000, 0, 3, "/bin/ls");

	assert_int_equal(rsp_maps__comm(m, 100, 100, 5, "sh", 2, false), 0);
	assert_int_equal(rsp_maps__mmap(m, 100, 10, &sh), 0);
	assert_int_equal(rsp_maps__mmap(m, 100, 11, &libc), 0);
	/* a thread of 100 renames itself: the process keeps its name */
	assert_int_equal(rsp_maps__comm(m, 100, 101, 12, "worker", 6, false), 0);
	assert_string_equal(rsp_maps__comm_at(m, 100, 13), "sh");
	assert_int_equal(rsp_maps__fork(m, 100, 100, 12), 0); /* a thread: nothing */
	assert_int_equal(rsp_maps__fork(m, 200, 100, 20), 0);
	assert_string_equal(path_at(m, 200, 21, 0x400100), "/bin/sh");
	assert_string_equal(path_at(m, 200, 21, 0x7f0000000100), "/lib/libc.so.6");
	assert_null(path_at(m, 200, 19, 0x400100)); /* not born yet */
	assert_string_equal(rsp_maps__comm_at(m, 200, 21), "sh");
	assert_int_equal(rsp_maps__comm(m, 200, 200, 30, "ls", 2, true), 0);
	assert_int_equal(rsp_maps__mmap(m, 200, 31, &ls), 0);
	assert_string_equal(path_at(m, 200, 25, 0x400100), "/bin/sh");
	assert_null(path_at(m, 200, 35, 0x400100));
	assert_null(path_at(m, 200, 35, 0x7f0000000100)); /* ld.so maps libc again later */
	assert_string_equal(path_at(m, 200, 35, 0x500100), "/bin/ls");
	assert_string_equal(rsp_maps__comm_at(m, 200, 25), "sh");
	assert_string_equal(rsp_maps__comm_at(m, 200, 35), "ls");
	/* the parent is untouched */
	assert_string_equal(path_at(m, 100, 35, 0x400100), "/bin/sh");
	/* replaying the exec changes nothing */
	assert_int_equal(rsp_maps__comm(m, 200, 200, 30, "ls", 2, true), 0);
	assert_string_equal(path_at(m, 200, 35, 0x500100), "/bin/ls");
	rsp_maps__delete(m);
}

/* Exit keeps a process for lookups until pruned; pids are reused. */
static void test_exit_reuse_prune(void **state)
{
	struct rsp_maps *m = rsp_maps__new(NULL);
	struct rsp_map_info a = region(0x1000, 0x2000, 0, 1, "/bin/a");
	struct rsp_map_info b = region(0x1000, 0x2000, 0, 2, "/bin/b");
	struct rsp_maps_stats st;

	assert_int_equal(rsp_maps__mmap(m, 1, 1, &a), 0);
	assert_int_equal(rsp_maps__fork(m, 300, 1, 10), 0);
	assert_int_equal(rsp_maps__exit(m, 300, 301, 50), 0); /* a thread: nothing */
	assert_true(rsp_maps__alive(m, 300, 55));
	assert_int_equal(rsp_maps__exit(m, 300, 300, 60), 0);
	assert_false(rsp_maps__alive(m, 300, 65));
	assert_string_equal(path_at(m, 300, 59, 0x1800), "/bin/a");
	assert_string_equal(path_at(m, 300, 65, 0x1800), "/bin/a"); /* still its last state */
	/* pid 300 again: a new process, with what its parent 2 had */
	assert_int_equal(rsp_maps__mmap(m, 2, 70, &b), 0);
	assert_int_equal(rsp_maps__fork(m, 300, 2, 80), 0);
	assert_string_equal(path_at(m, 300, 59, 0x1800), "/bin/a");
	assert_string_equal(path_at(m, 300, 85, 0x1800), "/bin/b");
	assert_int_equal((int)rsp_maps__birth(m, 300, 85), 80);
	assert_int_equal((int)rsp_maps__birth(m, 300, 59), 10);
	rsp_maps__stats(m, &st);
	assert_int_equal((int)st.procs, 4);
	assert_int_equal((int)st.exited, 1);
	/* Nothing at or after 61 can refer to the first 300: it goes. */
	rsp_maps__prune(m, 61);
	assert_null(path_at(m, 300, 59, 0x1800));
	assert_string_equal(path_at(m, 300, 85, 0x1800), "/bin/b");
	rsp_maps__stats(m, &st);
	assert_int_equal((int)st.procs, 3);
	assert_int_equal((int)st.exited, 0);
	assert_int_equal((int)st.pruned_procs, 1);
	rsp_maps__delete(m);
}

/* A fork storm inside one window: exited processes are capped. */
static void test_bounded(void **state)
{
	struct rsp_maps_config cfg = {.max_exited = 100};
	struct rsp_maps *m = rsp_maps__new(&cfg);
	struct rsp_map_info a = region(0x1000, 0x2000, 0, 1, "/bin/a");
	struct rsp_maps_stats st;
	uint64_t t = 10, bytes_1k = 0;

	assert_int_equal(rsp_maps__mmap(m, 1, 1, &a), 0);
	for (uint32_t i = 0; i < 20000; i++) {
		uint32_t pid = 1000 + i % 5000; /* pids are reused, too */

		assert_int_equal(rsp_maps__fork(m, pid, 1, t++), 0);
		assert_int_equal(rsp_maps__comm(m, pid, pid, t++, "child", 5, true), 0);
		assert_int_equal(rsp_maps__mmap(m, pid, t++, &a), 0);
		assert_int_equal(rsp_maps__exit(m, pid, pid, t++), 0);
		if (i == 1000) {
			rsp_maps__stats(m, &st);
			bytes_1k = st.bytes;
		}
	}
	rsp_maps__stats(m, &st);
	assert_true(st.exited <= 100);
	assert_true(st.procs <= 101);
	assert_int_equal((int)st.dropped_exited, 20000 - 100);
	assert_true(st.bytes <= bytes_1k * 2);
	assert_int_equal((int)st.dsos, 1);
	/* and the pruning rule empties what the window no longer holds */
	rsp_maps__prune(m, t);
	rsp_maps__stats(m, &st);
	assert_int_equal((int)st.procs, 1);
	assert_int_equal((int)st.maps_dead, 0);
	rsp_maps__delete(m);
}

/* A /proc snapshot, then records older than it (rspd's start). */
static void test_snapshot_order(void **state)
{
	struct rsp_maps *m = rsp_maps__new(NULL);
	struct rsp_map_info x = region(0x1000, 0x2000, 0, 7, "/bin/x");
	struct rsp_map_info y = region(0x1000, 0x2000, 0, 8, "/bin/y");
	struct rsp_map_info lib = region(0x9000, 0xa000, 0, 9, "/lib/l.so");
	struct rsp_maps_stats st;

	rsp_maps__pass_begin(m);
	assert_int_equal(rsp_maps__snapshot_begin(m, 500, 1000, "x", 1000), 0);
	assert_int_equal(rsp_maps__snapshot_map(m, 500, &x), 0);
	assert_int_equal(rsp_maps__snapshot_map(m, 500, &lib), 0);
	rsp_maps__snapshot_end(m, 500);
	assert_int_equal((int)rsp_maps__uid(m, 500, 1), 1000);
	/* regions of a first snapshot were there from the start */
	assert_string_equal(path_at(m, 500, 1, 0x1800), "/bin/x");
	assert_string_equal(rsp_maps__comm_at(m, 500, 1), "x");
	/* the (older) fork of 500: same process, birth now known, regions kept */
	assert_int_equal(rsp_maps__fork(m, 500, 1, 900), 0);
	assert_int_equal((int)rsp_maps__birth(m, 500, 950), 900);
	assert_string_equal(path_at(m, 500, 950, 0x1800), "/bin/x");
	/* an older record of the same mapping: nothing changes */
	rsp_maps__stats(m, &st);
	assert_int_equal(rsp_maps__mmap(m, 500, 950, &lib), 0);
	{
		struct rsp_maps_stats st2;

		rsp_maps__stats(m, &st2);
		assert_int_equal((int)st2.maps_live, (int)st.maps_live);
	}
	/* a second pass: the snapshot now shows y, and no more lib */
	rsp_maps__pass_begin(m);
	assert_int_equal(rsp_maps__snapshot_begin(m, 500, 2000, "y", 1000), 0);
	assert_int_equal(rsp_maps__snapshot_map(m, 500, &y), 0);
	rsp_maps__snapshot_end(m, 500);
	assert_string_equal(path_at(m, 500, 1500, 0x1800), "/bin/x");
	assert_string_equal(path_at(m, 500, 2500, 0x1800), "/bin/y");
	assert_string_equal(path_at(m, 500, 1500, 0x9800), "/lib/l.so");
	assert_null(path_at(m, 500, 2500, 0x9800));
	assert_string_equal(rsp_maps__comm_at(m, 500, 2500), "y");
	/* a process the pass did not see has exited */
	assert_int_equal(rsp_maps__mmap(m, 600, 1500, &x), 0);
	rsp_maps__sweep(m, 2000);
	assert_false(rsp_maps__alive(m, 600, 2100));
	assert_true(rsp_maps__alive(m, 500, 2100));
	rsp_maps__delete(m);
}

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* The /proc reader on fixture files. */
static void test_procfs_fixture(void **state)
{
	char root[] = "/tmp/rsp_maps_test.XXXXXX", dir[600];
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_maps *m = rsp_maps__new(NULL);
	struct rsp_map_view v;
	unsigned n;

	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/42", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(write_file(dir, "comm", "fixture\n"), 0);
	assert_int_equal(write_file(dir, "maps",
				    "5600000000-5600001000 r--p 00000000 08:01 99 /usr/bin/fx\n"
				    "5600001000-5600005000 r-xp 00001000 08:01 99 /usr/bin/fx\n"
				    "this line is garbage\n"
				    "7f0000000000-7f0000010000 r-xp 00000000 00:00 0 \n"
				    "7ffff000-7ffff2000 r-xp 00000000 00:00 0 [vdso]\n"),
			 0);
	snprintf(dir, sizeof(dir), "%s/self", root); /* not a pid: skipped */
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/43", root); /* a process that vanished */
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(rsp_procfs__load_all(m, root, 100, &n, &err), 0);
	assert_int_equal((int)n, 1);
	assert_string_equal(rsp_maps__comm_at(m, 42, 5), "fixture");
	assert_int_equal(rsp_maps__find(m, 42, 5, 0x5600002000, &v), 0);
	assert_string_equal(v.path, "/usr/bin/fx");
	assert_true(v.pgoff == 0x1000 && v.ino == 99 && !v.anon && !v.special);
	assert_int_equal(rsp_maps__find(m, 42, 5, 0x5600000100, &v), -ENOENT); /* not executable */
	assert_int_equal(rsp_maps__find(m, 42, 5, 0x7f0000000100, &v), 0);
	assert_true(v.anon);
	assert_int_equal(rsp_maps__find(m, 42, 5, 0x7ffff1000, &v), 0);
	assert_string_equal(v.special, "[vdso]");
	assert_int_equal(rsp_procfs__load_all(m, "/nonexistent/proc", 100, &n, &err), -ENOENT);
	assert_non_null(strstr(err.data, "/nonexistent/proc"));
	rsp_buf__exit(&err);
	rsp_maps__delete(m);
	snprintf(dir, sizeof(dir), "rm -rf %s", root);
	assert_int_equal(system(dir), 0);
}

/* This very process, from the real /proc. */
static void test_procfs_self(void **state)
{
	struct rsp_maps *m = rsp_maps__new(NULL);
	struct rsp_map_view v;

	assert_int_equal(rsp_procfs__load_pid(m, "/proc", (uint32_t)getpid(), 1), 0);
	assert_int_equal(rsp_maps__find(m, (uint32_t)getpid(), 2, (uintptr_t)&test_procfs_self, &v),
			 0);
	assert_non_null(strstr(v.path, "test_maps"));
	assert_int_equal(rsp_procfs__load_pid(m, "/proc", 0x7ffffff0, 1), -ENOENT);
	rsp_maps__delete(m);
}

/* The record decoders, and malformed records. */
static void test_feed(void **state)
{
	struct synth *s = synth__new(1, 1 << 20);
	struct rsp_maps *m = rsp_maps__new(NULL);
	uint64_t buf[64];
	const struct perf_event_header *h;
	struct rsp_map_view v;
	struct rsp_maps_stats st;

	h = synth__comm_rec(s, buf, .t = 10, .pid = 700, .comm = "bash", .exec = 0);
	assert_int_equal(rsp_maps__feed(m, s->schema, h), 1);
	h = synth__mmap2_rec(s, buf, .t = 11, .pid = 700, .addr = 0x400000, .len = 0x10000,
			     .pgoff = 0x1000, .ino = 5, .prot = RX, .path = "/bin/bash");
	assert_int_equal(rsp_maps__feed(m, s->schema, h), 1);
	h = synth__mmap2_rec(s, buf, .t = 12, .pid = 700, .addr = 0x600000, .len = 0x10000,
			     .pgoff = 0, .ino = 6, .prot = PROT_READ, .path = "/data");
	assert_int_equal(rsp_maps__feed(m, s->schema, h), 0); /* not executable */
	h = synth__task_rec(s, buf, .type = PERF_RECORD_FORK, .t = 20, .pid = 701, .ppid = 700,
			    .tid = 701, .ptid = 700);
	assert_int_equal(rsp_maps__feed(m, s->schema, h), 1);
	h = synth__comm_rec(s, buf, .t = 30, .pid = 701, .comm = "cat", .exec = 1);
	assert_int_equal(rsp_maps__feed(m, s->schema, h), 1);
	h = synth__mmap2_rec(s, buf, .t = 31, .pid = 701, .addr = 0x500000, .len = 0x8000,
			     .pgoff = 0, .ino = 7, .prot = RX, .path = "/bin/cat (deleted)");
	assert_int_equal(rsp_maps__feed(m, s->schema, h), 1);
	h = synth__task_rec(s, buf, .type = PERF_RECORD_EXIT, .t = 40, .pid = 701, .ppid = 700,
			    .tid = 701, .ptid = 700);
	assert_int_equal(rsp_maps__feed(m, s->schema, h), 1);
	assert_int_equal(rsp_maps__find(m, 700, 15, 0x401000, &v), 0);
	assert_string_equal(v.path, "/bin/bash");
	assert_true(v.pgoff == 0x1000 && v.ino == 5 && v.maj == 8 && v.min == 1);
	assert_int_equal(rsp_maps__find(m, 701, 25, 0x401000, &v), 0);
	assert_int_equal(rsp_maps__find(m, 701, 35, 0x501000, &v), 0);
	assert_string_equal(v.path, "/bin/cat");
	assert_true(v.deleted);
	assert_string_equal(rsp_maps__comm_at(m, 701, 35), "cat");
	assert_false(rsp_maps__alive(m, 701, 45));
	/* other record types are not ours */
	h = synth__task_rec(s, buf, .type = PERF_RECORD_THROTTLE, .t = 50, .pid = 1, .ppid = 1,
			    .tid = 1, .ptid = 1);
	assert_int_equal(rsp_maps__feed(m, s->schema, h), 0);
	/* malformed: too short for its type, odd size */
	h = synth__task_rec(s, buf, .type = PERF_RECORD_MMAP2, .t = 50, .pid = 1, .ppid = 1,
			    .tid = 1, .ptid = 1);
	assert_int_equal(rsp_maps__feed(m, s->schema, h), -EINVAL);
	{
		struct perf_event_header odd = *h;

		odd.size = 13;
		assert_int_equal(rsp_maps__feed(m, s->schema, &odd), -EINVAL);
	}
	/* a filename without its NUL stops at the record's end */
	h = synth__mmap2_rec(s, buf, .t = 60, .pid = 702, .addr = 0x1000, .len = 0x1000, .pgoff = 0,
			     .ino = 8, .prot = RX, .path = "/x");
	memset((char *)buf + 72, 'a', h->size - 72);
	assert_int_equal(rsp_maps__feed(m, s->schema, h), 1);
	rsp_maps__stats(m, &st);
	assert_int_equal((int)st.bad_records, 2);
	assert_int_equal((int)st.records, 7);
	rsp_maps__delete(m);
	synth__delete(s);
}

/* Ingesting a window in steps: each record applied once, in time order. */
static void test_ingest(void **state)
{
	struct synth *s = synth__new(2, 1 << 20);
	struct rsp_maps *m = rsp_maps__new(NULL);
	struct rsp_maps_ingest res;
	struct rsp_map_view v;

	/* The fork is on CPU 0, the child's exec on CPU 1: merged by time. */
	synth__comm(s, .cpu = 0, .t = 100, .pid = 800, .comm = "make", .exec = 0);
	synth__mmap2(s, .cpu = 0, .t = 110, .pid = 800, .addr = 0x400000, .len = 0x1000, .pgoff = 0,
		     .ino = 1, .prot = RX, .path = "/usr/bin/make");
	synth__task(s, .type = PERF_RECORD_FORK, .cpu = 0, .t = 200, .pid = 801, .ppid = 800,
		    .tid = 801, .ptid = 800);
	synth__comm(s, .cpu = 1, .t = 300, .pid = 801, .comm = "cc", .exec = 1);
	synth__mmap2(s, .cpu = 1, .t = 310, .pid = 801, .addr = 0x400000, .len = 0x1000, .pgoff = 0,
		     .ino = 2, .prot = RX, .path = "/usr/bin/cc");
	synth__cpu_sample(s, .cpu = 1, .t = 320, .tid = 801, .ip = 0x400100);
	synth__task(s, .type = PERF_RECORD_EXIT, .cpu = 1, .t = 400, .pid = 801, .ppid = 801,
		    .tid = 801, .ptid = 801);
	rsp_window__note_lost(s->window, 0, 450, 3);
	assert_int_equal(rsp_maps__ingest(m, s->schema, s->window, 0, 250, &res), 0);
	assert_int_equal((int)res.records, 3);
	assert_int_equal((int)res.until, 250);
	assert_false(res.evicted_gap);
	assert_int_equal(rsp_maps__find(m, 801, 260, 0x400100, &v), 0);
	assert_string_equal(v.path, "/usr/bin/make");
	assert_int_equal(rsp_maps__ingest(m, s->schema, s->window, res.until, 1000, &res), 0);
	assert_int_equal((int)res.records, 3);
	assert_int_equal((int)res.lost, 1);
	assert_int_equal((int)res.scanned, 5);
	assert_int_equal(rsp_maps__find(m, 801, 320, 0x400100, &v), 0);
	assert_string_equal(v.path, "/usr/bin/cc");
	assert_string_equal(rsp_maps__comm_at(m, 801, 320), "cc");
	assert_int_equal(rsp_maps__find(m, 801, 250, 0x400100, &v), 0);
	assert_string_equal(v.path, "/usr/bin/make");
	assert_false(rsp_maps__alive(m, 801, 500));
	/* nothing new: nothing applied */
	assert_int_equal(rsp_maps__ingest(m, s->schema, s->window, 1000, 2000, &res), 0);
	assert_int_equal((int)res.records, 0);
	rsp_maps__delete(m);
	synth__delete(s);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Side-band records from a dump file are untrusted: random mutations of
 * valid records, truncated or not, never crash or read past the record
 * (ASan), and lookups on whatever model results stay sane.
 */
static void test_feed_garbage(void **state)
{
	struct synth *s = synth__new(1, 1 << 20);
	struct rsp_maps *m = rsp_maps__new(NULL);
	uint64_t rnd = 7, buf[64];
	struct rsp_map_view v;

	for (int i = 0; i < 20000; i++) {
		const struct perf_event_header *h;
		struct perf_event_header *copy;
		size_t size;

		/* Each record's random fields drawn in a fixed order (not an argument
		 * list's, whose order C leaves unspecified). */
		switch (xorshift(&rnd) % 4) {
		case 0: {
			uint64_t addr = xorshift(&rnd) % 0x10000;
			uint32_t pid = 1 + (uint32_t)(xorshift(&rnd) % 50);

			h = synth__mmap2_rec(s, buf, .t = (uint64_t)i, .pid = pid, .addr = addr,
					     .len = 0x1000, .pgoff = 0, .ino = 3, .prot = RX,
					     .path = "/lib/x.so");
			break;
		}
		case 1: {
			int exec = (int)(xorshift(&rnd) % 2);
			uint32_t pid = 1 + (uint32_t)(xorshift(&rnd) % 50);

			h = synth__comm_rec(s, buf, .t = (uint64_t)i, .pid = pid, .tid = 1,
					    .comm = "name", .exec = exec);
			break;
		}
		case 2: {
			uint32_t ppid = 1 + (uint32_t)(xorshift(&rnd) % 50);
			uint32_t pid = 1 + (uint32_t)(xorshift(&rnd) % 50);

			h = synth__task_rec(s, buf, .type = PERF_RECORD_FORK, .t = (uint64_t)i,
					    .pid = pid, .ppid = ppid, .tid = 1, .ptid = 1);
			break;
		}
		default:
			h = synth__task_rec(s, buf, .type = PERF_RECORD_EXIT, .t = (uint64_t)i,
					    .pid = 1 + (uint32_t)(xorshift(&rnd) % 50), .ppid = 1,
					    .tid = 1, .ptid = 1);
			break;
		}
		size = h->size;
		if (xorshift(&rnd) % 2)
			size = 8 * (1 + xorshift(&rnd) % (size / 8)); /* truncated */
		copy = malloc(size);
		memcpy(copy, h, size);
		copy->size = (uint16_t)size;
		for (int k = (int)(xorshift(&rnd) % 6); k > 0; k--) {
			size_t at = 8 + xorshift(&rnd) % (size > 8 ? size - 8 : 1);

			if (at < size)
				((unsigned char *)copy)[at] = (unsigned char)xorshift(&rnd);
		}
		rsp_maps__feed(m, s->schema, copy);
		free(copy);
		rsp_maps__find(m, (uint32_t)(xorshift(&rnd) % 50), (uint64_t)i,
			       xorshift(&rnd) % 0x20000, &v);
		if (i % 1000 == 999)
			rsp_maps__prune(m, (uint64_t)i - 500);
	}
	rsp_maps__delete(m);
	synth__delete(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_line),     cmocka_unit_test(test_remap),
		cmocka_unit_test(test_exec_fork),      cmocka_unit_test(test_exit_reuse_prune),
		cmocka_unit_test(test_bounded),	       cmocka_unit_test(test_snapshot_order),
		cmocka_unit_test(test_procfs_fixture), cmocka_unit_test(test_procfs_self),
		cmocka_unit_test(test_feed),	       cmocka_unit_test(test_ingest),
		cmocka_unit_test(test_feed_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
