/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_SYSCALL_H
#define RSP_SYSCALL_H

/*
 * The syscall names of this architecture, both ways, from libseccomp: for
 * the syscall profiles (rsp/sysprof.h), the histograms' syscall:NAME
 * operations and the stopwatches' syscall:NAME (lib/model/syscall.c).
 */
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>

/** rsp_syscall__name() - "read" for 0 on x86-64; NULL when this build's table lacks @nr. */
RSP_API const char *rsp_syscall__name(uint32_t nr);
/** rsp_syscall__op_name() - "syscall:read", or "syscall:467" for a number without a name. */
RSP_API void rsp_syscall__op_name(uint32_t nr, char *buf, size_t n);
/**
 * rsp_syscall__parse() - a syscall's number from its name ("read") or a
 * number (below 4096). Return: 0, or -ENOENT (no such name or a number out
 * of range).
 */
RSP_API int rsp_syscall__parse(const char *s, uint32_t *nr);

#endif /* RSP_SYSCALL_H */
