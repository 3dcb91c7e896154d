/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_ANSWER_H
#define RSP_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <rsp/api.h>
#include <rsp/buf.h>

/*
 * Answers with attachments. Some queries produce files the user asked for
 * (`rspctl snapshot PID --folded FILE --chrome-trace FILE`). rspd never
 * writes a file for a client: it runs as root and the client may not be,
 * and the path means something only in the client's working directory.
 * Offline (`rspctl analyze FILE COMMAND`) the same command must produce the
 * same files. So the answer carries them and rspctl writes them, in one
 * place (cli/rspctl.c), whoever computed the answer.
 *
 * Such an answer is a sequence of parts:
 *
 *   "RSP-PARTS 1\n"
 *   then per part: "<name> <length>\n" <length bytes> "\n"
 *
 * The part named "stdout" is what to print; any other part is the content
 * of the file that the request's output option of that name names
 * (rsp_request__output() in rsp/query.h). An answer that does not start
 * with the magic line is printed as it is: commands without attachments
 * are unchanged.
 */
#define RSP_ANSWER_MAGIC  "RSP-PARTS 1\n"
#define RSP_ANSWER_STDOUT "stdout"

struct rsp_part {
	const char *name; /* not NUL-terminated: name_len bytes */
	size_t name_len;
	const char *data;
	size_t len;
};

/** rsp_answer__begin() - start a multi-part answer in @out (which must be empty). */
RSP_API int rsp_answer__begin(struct rsp_buf *out);

/**
 * rsp_answer__add() - append part @name (no spaces or newlines) of @len bytes
 * Return: 0, -EINVAL (a bad name), -ENOMEM/-E2BIG.
 */
RSP_API int rsp_answer__add(struct rsp_buf *out, const char *name, const void *data, size_t len);

/** rsp_answer__has_parts() - @body is a multi-part answer. */
RSP_API bool rsp_answer__has_parts(const char *body, size_t len);

/**
 * rsp_answer__next() - the part at *@pos of a multi-part @body
 * @pos: 0 to start; advanced past the part
 *
 * Return: 1 and @part (pointing into @body), 0 at the end, -EPROTO when
 * the body is malformed (a part runs past the end, a bad header).
 */
RSP_API int rsp_answer__next(const char *body, size_t len, size_t *pos, struct rsp_part *part);

#endif /* RSP_ANSWER_H */
