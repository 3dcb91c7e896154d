// SPDX-License-Identifier: LGPL-2.1
#include <errno.h>
#include <string.h>
#include <rsp/proto.h>

static void put32(void *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint32_t get32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

int rsp_proto__encode_request(int argc, char *const argv[], struct rsp_buf *out)
{
	size_t len = 0, start = out->len;
	unsigned char hdr[RSP_PROTO_REQ_HEADER];
	int err;

	if (argc < 1 || argc > RSP_PROTO_MAX_ARGS)
		return -E2BIG;
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if (len > RSP_PROTO_MAX_REQUEST)
		return -E2BIG;
	put32(hdr, RSP_PROTO_REQ_MAGIC);
	put32(hdr + 4, (uint32_t)len);
	err = rsp_buf__add(out, hdr, sizeof(hdr));
	for (int i = 0; !err && i < argc; i++)
		err = rsp_buf__add(out, argv[i], strlen(argv[i]) + 1);
	if (err)
		out->len = start;
	return err;
}

long rsp_proto__request_length(const void *hdr)
{
	uint32_t len;

	if (get32(hdr) != RSP_PROTO_REQ_MAGIC)
		return -EPROTO;
	len = get32((const char *)hdr + 4);
	if (len > RSP_PROTO_MAX_REQUEST)
		return -EMSGSIZE;
	return (long)len;
}

int rsp_proto__decode_request(const void *payload, size_t len, struct rsp_proto_args *out)
{
	const char *p = payload, *end = p + len;

	out->argc = 0;
	if (!len || len > RSP_PROTO_MAX_REQUEST || p[len - 1] != '\0')
		return -EINVAL;
	while (p < end) {
		size_t n = strlen(p); /* bounded: the payload ends with NUL */

		if (out->argc == RSP_PROTO_MAX_ARGS)
			return -E2BIG;
		out->argv[out->argc++] = p;
		p += n + 1;
	}
	out->argv[out->argc] = NULL;
	return out->argv[0][0] ? 0 : -EINVAL;
}

void rsp_proto__encode_response_header(void *hdr, int status, uint32_t len)
{
	put32(hdr, RSP_PROTO_RESP_MAGIC);
	put32((char *)hdr + 4, (uint32_t)status);
	put32((char *)hdr + 8, len);
}

int rsp_proto__decode_response_header(const void *hdr, int *status, uint32_t *len)
{
	if (get32(hdr) != RSP_PROTO_RESP_MAGIC)
		return -EPROTO;
	*status = (int)get32((const char *)hdr + 4);
	*len = get32((const char *)hdr + 8);
	if (*len > RSP_PROTO_MAX_RESPONSE)
		return -EMSGSIZE;
	return 0;
}

const char *rsp_proto__strerror(int err)
{
	switch (err) {
	case -EPROTO:
		return "not an rsp control message (bad magic)";
	case -EMSGSIZE:
		return "control message too long";
	case -EINVAL:
		return "malformed control message";
	case -E2BIG:
		return "too many arguments in control message";
	default:
		return strerror(err < 0 ? -err : err);
	}
}
