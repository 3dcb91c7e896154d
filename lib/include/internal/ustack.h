/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_USTACK_H
#define RSP_INTERNAL_USTACK_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

/*
 * rsp_ustack__rewrite() - @rec as the PERF_RECORD_SAMPLE the kernel writes
 * with @dyn bytes of user stack: the stack's size dyn rounded up to 8, its
 * bytes from @stack (@avail of them readable there, the rest zeroed; @stack
 * may lie in @out where they go), dyn_size kept, and dyn 0 as the kernel's
 * empty stack (size 0 alone); the fields after the stack follow.
 * @data: the offset in @rec of the stack's bytes, after its u64 size word;
 * @size: that word (the stack's bytes and the u64 dyn_size after them are
 * what is replaced). The cut (rsp_ustack__trim()) and a compressed
 * sample's expansion (rsp_ustackz__expand()) both write through it.
 * Return: the size written; -EINVAL past a record's 64 KiB; -ENOSPC.
 */
int rsp_ustack__rewrite(const struct perf_event_header *rec, size_t data, uint64_t size,
			const void *stack, uint64_t avail, uint64_t dyn, void *out, size_t cap);

#endif
