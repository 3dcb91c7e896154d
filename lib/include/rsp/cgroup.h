/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_CGROUP_H
#define RSP_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>

/*
 * Cgroups and containers: what a process's cgroup v2 path says about it.
 *
 * The path is the one /proc/PID/cgroup gives on its "0::" line (relative to
 * the cgroup2 mount, starting with '/'). A container id is recognised in the
 * usual runtimes' forms, the innermost one winning:
 *   docker-<64hex>.scope            docker, systemd cgroup driver
 *   /docker/<64hex>                 docker, cgroupfs driver
 *   cri-containerd-<64hex>.scope    containerd (CRI), systemd driver
 *   crio-<64hex>.scope              CRI-O
 *   libpod-<64hex>.scope            podman
 *   /kubepods.../pod<uid>/<64hex>   kubelet, cgroupfs driver (any parent
 *                                   whose name starts with "kubepods")
 * Monitors beside a container (crio-conmon-<id>.scope, libpod-conmon-<id>
 * .scope) are not the container, and an id that is not exactly 64 hex
 * digits is not one. Pure functions: no allocation, no system calls except
 * in rsp_cgroup__read_proc().
 */

#define RSP_CONTAINER_ID_LEN 64

/**
 * rsp_cgroup__container_id() - the container id in @path
 * @out: RSP_CONTAINER_ID_LEN + 1 bytes, the id in lower case
 * @runtime: if not NULL, the runtime's name ("docker", "containerd", "crio",
 *           "podman", "kubepods"); static strings
 * Return: true if @path names a container.
 */
RSP_API bool rsp_cgroup__container_id(const char *path, char *out, const char **runtime);

/**
 * rsp_cgroup__parse_proc() - the cgroup v2 path in the text of
 * /proc/PID/cgroup (its "0::" line)
 * @out: @size bytes; the path, or "" if the text has none
 * Return: 0, -ENOENT (no v2 line) or -ENAMETOOLONG.
 */
RSP_API int rsp_cgroup__parse_proc(const char *text, char *out, size_t size);

/**
 * rsp_cgroup__parse_nspid() - the pid in the innermost pid namespace from
 * the text of /proc/PID/status (last number of its "NSpid:" line)
 * Return: 0 and *@nspid, or -ENOENT (no NSpid line: a kernel before 4.1).
 */
RSP_API int rsp_cgroup__parse_nspid(const char *text, uint32_t *nspid);

/**
 * rsp_cgroup__read_proc() - read @pid's cgroup path and namespaced pid from
 * @proc_dir (normally "/proc")
 * @path: @size bytes, "" if unknown; *@nspid 0 if unknown
 * Return: 0 if the process was there, -ENOENT if it is gone.
 */
RSP_API int rsp_cgroup__read_proc(const char *proc_dir, uint32_t pid, char *path, size_t size,
				  uint32_t *nspid);

/**
 * rsp_cgroup__in_subtree() - whether @path is @subtree or below it
 * ("/a/b" is below "/a" but not below "/a/bc"; "/" holds every path).
 * A trailing '/' of @subtree is ignored.
 */
RSP_API bool rsp_cgroup__in_subtree(const char *path, const char *subtree);

/**
 * rsp_cgroup__check_container_arg() - whether @arg is a usable --container
 * value: 12 to 64 hex digits (a prefix, as docker accepts)
 */
RSP_API bool rsp_cgroup__check_container_arg(const char *arg);

/**
 * rsp_cgroup__container_matches() - whether @path names a container whose
 * id starts with @prefix (checked by rsp_cgroup__check_container_arg(),
 * compared without case)
 */
RSP_API bool rsp_cgroup__container_matches(const char *path, const char *prefix);

/**
 * rsp_cgroup__short() - @path shortened for a text column of @width bytes
 * (< @size): a container's scope as "<runtime>:<12 hex>", a long path as
 * "…" and its tail. Return: @out.
 */
RSP_API const char *rsp_cgroup__short(const char *path, unsigned width, char *out, size_t size);

/**
 * rsp_cgroup__find_mount() - where the cgroup2 file system is mounted in
 * this mount namespace (the first in /proc/self/mounts), into @out
 * Return: 0, -ENOENT (none), -ENAMETOOLONG or -errno reading the table.
 */
RSP_API int rsp_cgroup__find_mount(char *out, size_t size);

/**
 * rsp_cgroup__owner() - the owner uid of cgroup @path's directory under
 * @mount: a subtree delegated to a user is theirs (systemd's Delegate=, or
 * a chown by the administrator). Return: 0 and *@uid, or -errno.
 */
RSP_API int rsp_cgroup__owner(const char *mount, const char *path, uint32_t *uid);

#endif
