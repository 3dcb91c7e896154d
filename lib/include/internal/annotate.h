/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_ANNOTATE_H
#define RSP_INTERNAL_ANNOTATE_H

#include <stddef.h>
#include <stdint.h>
#include <rsp/buf.h>
#include <rsp/symbols.h>
#include "internal/srcline.h"

/*
 * An annotated disassembly of one function: its bytes read from the ELF
 * file on disk (not from a process: the file is what was mapped, and a
 * process may be gone), decoded by capstone, each instruction with the
 * samples at its address and its source line (libdw, when known).
 * x86-64 ELF files only.
 */
struct rsp_annotate_insn {
	uint64_t addr; /* link-time */
	uint32_t size;
	int line;	  /* 0: unknown */
	const char *file; /* the source file (owned by the annotation); NULL: unknown */
	uint64_t samples;
	char text[96]; /* mnemonic and operands, Intel syntax */
};

struct rsp_annotate {
	uint64_t start, size; /* the function's symbol */
	bool truncated;	      /* larger than the byte limit: its first part */
	uint64_t samples;     /* at its instructions */
	uint64_t off_insn;    /* sampled addresses that are no instruction's start */
	size_t n;
	struct rsp_annotate_insn *insns;
	char **files;
	size_t nr_files;
};

/**
 * rsp_annotate__new() - disassemble @name of the ELF file @path and place
 * the sampled addresses @addrs (@nr, ascending) on its instructions
 * @debug_dir: where separate debug files are (for the symbol, when the file
 *             is stripped), NULL: /usr/lib/debug
 * @sl: source lines; NULL: none
 * @max_bytes: the most of the function read; 0: 65536
 * Return: the annotation (free with rsp_annotate__delete()), or NULL with
 * one sentence in @err.
 */
struct rsp_annotate *rsp_annotate__new(const char *path, const char *name, const char *debug_dir,
				       const struct rsp_sampled_addr *addrs, size_t nr,
				       struct rsp_srclines *sl, size_t max_bytes,
				       struct rsp_buf *err);
void rsp_annotate__delete(struct rsp_annotate *a);

#endif
