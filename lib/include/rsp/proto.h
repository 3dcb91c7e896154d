/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_PROTO_H
#define RSP_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>

/*
 * The control protocol between rspctl and rspd, over a UNIX stream socket.
 *
 * Request:  u32 magic "RSPQ", u32 length, then `length` bytes: the command's
 *           argv as NUL-terminated strings (rspctl sends its own arguments
 *           after the global options, so rspd parses exactly what the user
 *           typed, with the same parser the offline mode uses).
 * Response: u32 magic "RSPA", i32 status (0 or -errno), u32 length, then
 *           `length` bytes: the rendered answer (text, JSON or DOT), or on
 *           error one sentence naming the problem and the fix.
 *
 * All integers little-endian (both ends are the same host). Every length is
 * checked before anything is read or allocated.
 */
#define RSP_PROTO_REQ_MAGIC    0x51505352u /* "RSPQ" */
#define RSP_PROTO_RESP_MAGIC   0x41505352u /* "RSPA" */
#define RSP_PROTO_MAX_REQUEST  (64u * 1024)
#define RSP_PROTO_MAX_ARGS     256
#define RSP_PROTO_MAX_RESPONSE (1024u * 1024 * 1024)
#define RSP_PROTO_REQ_HEADER   8
#define RSP_PROTO_RESP_HEADER  12

/** A decoded request: argv points into the request's payload. */
struct rsp_proto_args {
	int argc;
	const char *argv[RSP_PROTO_MAX_ARGS + 1];
};

/** rsp_proto__encode_request() - frame @argv into @out. 0 or -E2BIG/-ENOMEM. */
RSP_API int rsp_proto__encode_request(int argc, char *const argv[], struct rsp_buf *out);

/**
 * rsp_proto__request_length() - validate a request header
 * @hdr: RSP_PROTO_REQ_HEADER bytes
 *
 * Return: the payload length, or -EPROTO (bad magic) / -EMSGSIZE (too long).
 */
RSP_API long rsp_proto__request_length(const void *hdr);

/**
 * rsp_proto__decode_request() - split a request payload into arguments
 * @payload: @len bytes (the part after the header); must stay alive while
 *           @out is used
 *
 * Return: 0, or -EINVAL (empty, not NUL-terminated, no command) / -E2BIG
 * (more than RSP_PROTO_MAX_ARGS arguments).
 */
RSP_API int rsp_proto__decode_request(const void *payload, size_t len, struct rsp_proto_args *out);

/** rsp_proto__encode_response_header() - the 12 header bytes of a response. */
RSP_API void rsp_proto__encode_response_header(void *hdr, int status, uint32_t len);

/**
 * rsp_proto__decode_response_header() - validate a response header
 * Return: 0 and *status, *len; or -EPROTO / -EMSGSIZE.
 */
RSP_API int rsp_proto__decode_response_header(const void *hdr, int *status, uint32_t *len);

/** rsp_proto__strerror() - a short text for a protocol error code. */
RSP_API const char *rsp_proto__strerror(int err);

#endif /* RSP_PROTO_H */
