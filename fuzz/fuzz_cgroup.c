// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the cgroup parsers (lib/model/cgroup.c). Cgroup names
 * are chosen by whoever may create a cgroup (a delegated subtree's user), and
 * rspd parses them as paths, container ids and /proc text: never a crash, a
 * read past the input, or an id that is not 64 lower-case hex digits; the
 * short form always fits its width.
 *
 * Build: scripts/build.sh fuzz; run: build/fuzz/fuzz/fuzz_cgroup CORPUS
 * Seeds: fuzz/corpus/fuzz_cgroup/, cgroup files and runtimes' paths.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/cgroup.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), path[256], id[RSP_CONTAINER_ID_LEN + 1], shortp[32];
	const char *rt = NULL;
	uint32_t ns;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0'; /* /proc files are text: a NUL ends them */
	if (rsp_cgroup__container_id(text, id, &rt)) {
		if (strlen(id) != RSP_CONTAINER_ID_LEN || !rt)
			abort();
		for (size_t i = 0; i < RSP_CONTAINER_ID_LEN; i++)
			if (!isxdigit((unsigned char)id[i]) || isupper((unsigned char)id[i]))
				abort();
		if (!rsp_cgroup__container_matches(text, id))
			abort();
	}
	if (rsp_cgroup__parse_proc(text, path, sizeof(path)) == 0 && strlen(path) >= sizeof(path))
		abort();
	rsp_cgroup__parse_nspid(text, &ns);
	for (unsigned w = 0; w < 40; w += 13)
		if (strlen(rsp_cgroup__short(text, w, shortp, sizeof(shortp))) > w)
			abort();
	rsp_cgroup__in_subtree(text, "/a/b");
	rsp_cgroup__check_container_arg(text);
	free(text);
	return 0;
}
