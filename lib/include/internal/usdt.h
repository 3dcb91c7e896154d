/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_USDT_H
#define RSP_INTERNAL_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/buf.h>

/*
 * USDT probes (<sys/sdt.h>, SystemTap's "stapsdt" notes, version 3) of one
 * x86-64 ELF file, read with libelf: where each probe's nop is in the file
 * (what a uprobe needs), its semaphore, and where its arguments are.
 *
 * The format (https://sourceware.org/systemtap/wiki/UserSpaceProbeImplementation):
 * in the non-allocated section .note.stapsdt, one ELF note per probe site,
 * owner "stapsdt", type 3, whose description is three addresses (the
 * probe's pc, the link-time address of .stapsdt.base, the semaphore or 0)
 * and three strings: provider, name, arguments ("8@%rdi -4@-20(%rbp) 4@$5":
 * size in bytes, negative if signed, '@', an assembler operand).
 *
 * Files come from disk and any local user writes them: every size is
 * checked, notes and argument strings are capped, and a corrupt note is a
 * sentence, never a guess.
 */

/*
 * A table holds at most RSP_USDT_MAX_NOTES probes: 1.5 MiB, and as much
 * again in argument strings at their longest.
 */
#define RSP_USDT_MAX_NOTES 4096 /* stapsdt notes read in one file (python3: 8) */
#define RSP_USDT_MAX_ARGS  12	/* as STAP_PROBE12, the most sdt.h writes */
#define RSP_USDT_ARGS_MAX  512	/* bytes of an argument string */
#define RSP_USDT_NAME_MAX  64	/* bytes of a provider or probe name */

/* Where an argument's value is when the probe fires. */
enum rsp_usdt_loc {
	RSP_USDT_CONST, /* "$N": the value itself */
	RSP_USDT_REG,	/* "%reg": in a register */
	RSP_USDT_MEM,	/* "N(%reg)", "(%reg)": in memory at the register + N */
};

struct rsp_usdt_arg {
	uint8_t size;	/* bytes: 1, 2, 4 or 8 (the low bytes of a wider register) */
	bool is_signed; /* the value sign-extends from @size */
	uint8_t loc;	/* enum rsp_usdt_loc */
	/*
	 * REG, MEM: the 64-bit register, as an index in x86-64's struct
	 * pt_regs (what uprobe_events' "%di" and a BPF program read: 14 is
	 * di) and as a perf register number (PERF_REG_X86_*, what
	 * PERF_SAMPLE_REGS_USER/INTR carry: 5 is di).
	 */
	uint8_t pt_reg;
	uint8_t perf_reg;
	int64_t value; /* CONST: the value; MEM: the displacement */
};

/* One stapsdt note as written: the strings point into the parsed buffer. */
struct rsp_usdt_note {
	uint64_t pc, base, semaphore; /* link-time addresses; semaphore 0: none */
	const char *provider, *name, *args;
};

/* One probe site of a file, placed. */
struct rsp_usdt_probe {
	char provider[RSP_USDT_NAME_MAX];
	char name[RSP_USDT_NAME_MAX];
	uint64_t pc;	 /* as the note says */
	uint64_t vaddr;	 /* pc moved as .stapsdt.base moved (prelink) */
	uint64_t offset; /* of vaddr in the file: the uprobe's (config2) */
	/* of the semaphore in the file, 0: none (the uprobe PMU's ref_ctr_offset: 32 bits) */
	uint64_t sema_offset;
	char *args_str; /* the argument string, owned by the table */
	/*
	 * The arguments, when @args_err is 0. An argument string that is
	 * malformed (-EINVAL) or of a form rsp does not read (-EOPNOTSUPP: a
	 * floating-point value, an indexed or %rip-relative operand) leaves the
	 * probe in the table without arguments: rsp_usdt__parse_args() on
	 * @args_str says why in one sentence.
	 */
	int args_err;
	uint8_t nr_args;
	struct rsp_usdt_arg args[RSP_USDT_MAX_ARGS];
};

struct rsp_usdt {
	size_t nr;
	struct rsp_usdt_probe *probes;
	size_t nr_bad_args; /* probes with args_err set */
};

/**
 * rsp_usdt__parse_note() - one stapsdt note's description (@desc, @size
 * bytes, as the ELF note holds it) into @n, whose strings then point into
 * @desc. Checks the sizes, that each string ends inside @desc, that provider
 * and name are non-empty printable words under RSP_USDT_NAME_MAX bytes and
 * the argument string under RSP_USDT_ARGS_MAX. Arguments are not parsed.
 * Return: 0, or -EINVAL with one sentence in @err.
 */
int rsp_usdt__parse_note(const void *desc, size_t size, struct rsp_usdt_note *n,
			 struct rsp_buf *err);

/**
 * rsp_usdt__parse_args() - an argument string ("8@%rdi -4@$5") into at most
 * RSP_USDT_MAX_ARGS elements of @args.
 * Return: the number of arguments (0 for ""), or -EINVAL (malformed) or
 * -EOPNOTSUPP (a form rsp does not read) with one sentence in @err.
 */
int rsp_usdt__parse_args(const char *s, struct rsp_usdt_arg *args, struct rsp_buf *err);

/**
 * rsp_usdt__has_provider() - whether the ELF file open on @fd has a USDT
 * note of @provider, reading only the section headers, the section names
 * and .note.stapsdt (no allocation per note). The common answer, a file
 * with no .note.stapsdt, costs one walk of the section headers.
 * @path: what to call the file in @err
 * Return: 1, 0, or -errno with one sentence in @err (not a readable x86-64
 * ELF file, a corrupt note, more than RSP_USDT_MAX_NOTES notes).
 */
int rsp_usdt__has_provider(int fd, const char *path, const char *provider, struct rsp_buf *err);

/**
 * rsp_usdt__read_fd() - the probes of @provider (NULL: all) in the ELF file
 * open on @fd (read only during the call; the caller closes it), each
 * placed in the file through the PT_LOAD program headers.
 * @path: what to call the file in @err
 * Return: the table (free with rsp_usdt__delete(); a file without such
 * probes gives an empty one), or NULL with one sentence in @err: not a
 * readable x86-64 ELF file, a corrupt note, a probe outside the file's
 * executable segments or a semaphore outside its writable ones, more than
 * RSP_USDT_MAX_NOTES notes, out of memory.
 */
struct rsp_usdt *rsp_usdt__read_fd(int fd, const char *path, const char *provider,
				   struct rsp_buf *err);
void rsp_usdt__delete(struct rsp_usdt *u);

#endif
