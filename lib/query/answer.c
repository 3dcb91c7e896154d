// SPDX-License-Identifier: LGPL-2.1
/* Multi-part answers: see rsp/answer.h for the format and why. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <rsp/answer.h>

#define MAGIC_LEN    (sizeof(RSP_ANSWER_MAGIC) - 1)
#define NAME_MAX_LEN 64

int rsp_answer__begin(struct rsp_buf *out)
{
	return rsp_buf__add(out, RSP_ANSWER_MAGIC, MAGIC_LEN);
}

int rsp_answer__add(struct rsp_buf *out, const char *name, const void *data, size_t len)
{
	size_t n = strlen(name);
	int err;

	if (!n || n > NAME_MAX_LEN || strpbrk(name, " \n"))
		return -EINVAL;
	err = rsp_buf__printf(out, "%s %zu\n", name, len);
	if (!err && len)
		err = rsp_buf__add(out, data, len);
	return err ? err : rsp_buf__add(out, "\n", 1);
}

bool rsp_answer__has_parts(const char *body, size_t len)
{
	return body && len >= MAGIC_LEN && !memcmp(body, RSP_ANSWER_MAGIC, MAGIC_LEN);
}

int rsp_answer__next(const char *body, size_t len, size_t *pos, struct rsp_part *part)
{
	size_t p = *pos ? *pos : MAGIC_LEN, name_end, num_end;
	uint64_t n = 0;

	if (!rsp_answer__has_parts(body, len))
		return -EPROTO;
	if (p >= len)
		return 0;
	/* "<name> <length>\n" */
	for (name_end = p; name_end < len && body[name_end] != ' '; name_end++)
		if (body[name_end] == '\n' || name_end - p > NAME_MAX_LEN)
			return -EPROTO;
	if (name_end == p || name_end >= len)
		return -EPROTO;
	for (num_end = name_end + 1; num_end < len && body[num_end] != '\n'; num_end++) {
		if (body[num_end] < '0' || body[num_end] > '9' || num_end - name_end > 19)
			return -EPROTO;
		n = n * 10 + (uint64_t)(body[num_end] - '0');
	}
	if (num_end == name_end + 1 || num_end >= len || n > len - num_end - 1 ||
	    len - num_end - 1 - n < 1 || body[num_end + 1 + n] != '\n')
		return -EPROTO;
	part->name = body + p;
	part->name_len = name_end - p;
	part->data = body + num_end + 1;
	part->len = (size_t)n;
	*pos = num_end + 1 + (size_t)n + 1;
	return 1;
}
