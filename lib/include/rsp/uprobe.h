/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_UPROBE_H
#define RSP_UPROBE_H

#include <limits.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>

/*
 * Where to put a uprobe: the uprobe PMU (perf_event_open with the type in
 * /sys/bus/event_source/devices/uprobe/type) takes a file and an offset in
 * that file. rsp_uprobe__resolve() computes the offset of a function with
 * libelf: the symbol's link-time address (.symtab, else .dynsym; global,
 * weak or IFUNC, as long as it is defined) through the PT_LOAD program
 * header that holds it. Weak symbols such as poll in glibc are fine (perf
 * probe refuses them; the kernel does not care).
 */
struct rsp_uprobe_target {
	char path[PATH_MAX];
	char name[64];
	uint64_t vaddr;	 /* link-time address */
	uint64_t offset; /* in the file: what the uprobe PMU wants (config2) */
	uint64_t size;	 /* the function's size, 0 if the symbol does not say */
};

/**
 * rsp_uprobe__resolve() - the file offset of function @name in the ELF file @path
 * Return: 0 and *out; -ENOENT if the file has no such defined function (not
 * an error for the caller: the probe is left out), other -errno with one
 * sentence in @err (unreadable, not ELF, no segment holds the symbol).
 */
RSP_API int rsp_uprobe__resolve(const char *path, const char *name, struct rsp_uprobe_target *out,
				struct rsp_buf *err);

/**
 * rsp_uprobe__loaded_path() - the path of the object named @soname (e.g.
 * "libc.so.6") that this process has loaded, into @buf. Return: 0 or -ENOENT.
 */
RSP_API int rsp_uprobe__loaded_path(const char *soname, char *buf, size_t n);

#endif /* RSP_UPROBE_H */
