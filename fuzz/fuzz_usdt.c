// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: USDT notes (lib/model/usdt.c). rspd reads the
 * .note.stapsdt of every program it sees to find rsp's annotations, and any
 * local user writes those files. The first byte chooses what the rest is:
 *   0  one note's description (three addresses, provider, name, arguments),
 *      then its argument string parsed;
 *   1  an argument string ("8@%rdi -4@-20(%rbp)");
 *   2  an ELF file, asked whether it has rsp probes and read whole.
 * Each answers within its caps or refuses with a sentence; a probe placed
 * in a file lies inside it.
 *
 * Build: scripts/build.sh fuzz; run: build/fuzz/fuzz/fuzz_usdt CORPUS
 * Seeds: fuzz/corpus/fuzz_usdt/ (fuzz/mkseeds_usdt.sh): the notes of a
 * small annotated program, its argument strings, the program itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "internal/usdt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_args(const char *s)
{
	struct rsp_usdt_arg args[RSP_USDT_MAX_ARGS];
	struct rsp_buf err = RSP_BUF_INIT;
	int n = rsp_usdt__parse_args(s, args, &err);

	if (n < 0 ? !err.len : n > RSP_USDT_MAX_ARGS || err.len)
		abort(); /* a refusal says why; an answer fits */
	for (int i = 0; i < n; i++) {
		const struct rsp_usdt_arg *a = &args[i];

		if ((a->size != 1 && a->size != 2 && a->size != 4 && a->size != 8) ||
		    a->loc > RSP_USDT_MEM || a->pt_reg > 20 || a->perf_reg > 23)
			abort();
	}
	rsp_buf__exit(&err);
}

static void check_note(const uint8_t *data, size_t size)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_usdt_note n;
	/* exactly @size bytes: ASan sees any read past the note */
	uint8_t *desc = malloc(size ? size : 1);

	if (!desc)
		return;
	memcpy(desc, data, size);
	if (!rsp_usdt__parse_note(desc, size, &n, &err)) {
		if (strlen(n.provider) >= RSP_USDT_NAME_MAX ||
		    strlen(n.name) >= RSP_USDT_NAME_MAX || strlen(n.args) >= RSP_USDT_ARGS_MAX ||
		    n.args + strlen(n.args) >= (char *)desc + size)
			abort();
		check_args(n.args);
	} else if (!err.len) {
		abort();
	}
	rsp_buf__exit(&err);
	free(desc);
}

static void check_file(const uint8_t *data, size_t size)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_usdt *u;
	int fd = memfd_create("fuzz_usdt", MFD_CLOEXEC);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	if (rsp_usdt__has_provider(fd, "fuzz", "rsp", &err) < 0 && !err.len)
		abort();
	rsp_buf__reset(&err);
	u = rsp_usdt__read_fd(fd, "fuzz", NULL, &err);
	if (!u && !err.len)
		abort();
	for (size_t i = 0; u && i < u->nr; i++) {
		const struct rsp_usdt_probe *p = &u->probes[i];

		if (p->offset >= size || (p->sema_offset && p->sema_offset + 2 > size) ||
		    p->nr_args > RSP_USDT_MAX_ARGS || (p->args_err && p->nr_args))
			abort();
		check_args(p->args_str);
	}
	rsp_usdt__delete(u);
	rsp_buf__exit(&err);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	if (!size)
		return 0;
	switch (data[0] % 3) {
	case 0:
		check_note(data + 1, size - 1);
		break;
	case 1:
		text = malloc(size);
		if (!text)
			return 0;
		memcpy(text, data + 1, size - 1);
		text[size - 1] = '\0';
		check_args(text);
		free(text);
		break;
	default:
		check_file(data + 1, size - 1);
	}
	return 0;
}
