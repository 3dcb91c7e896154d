/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_NETNS_H
#define RSPD_NETNS_H

#include <stdint.h>
#include <sys/types.h>
#include <rsp/buf.h>
#include <rsp/tidfilter.h>

/**
 * rspd_netns__threads() - add to @f every thread alive now whose network
 * namespace is @pid's (/proc/TID/ns/net), and give that namespace's inode
 * in @ino. Return: 0, or -errno with one sentence in @why (no such
 * process, a namespace rspd may not read).
 */
int rspd_netns__threads(pid_t pid, struct rsp_tidfilter *f, uint64_t *ino, uint32_t *threads,
			struct rsp_buf *why);

#endif
