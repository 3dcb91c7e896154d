// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/query/proto.c: the control protocol's framing and checks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/proto.h>

static void test_round_trip(void **state)
{
	char *argv[] = {"status", "--pid", "42", "--json", ""};
	struct rsp_buf b = RSP_BUF_INIT;
	struct rsp_proto_args args;
	long len;

	assert_int_equal(rsp_proto__encode_request(5, argv, &b), 0);
	len = rsp_proto__request_length(b.data);
	assert_int_equal(len, (long)b.len - RSP_PROTO_REQ_HEADER);
	assert_int_equal(rsp_proto__decode_request(b.data + 8, (size_t)len, &args), 0);
	assert_int_equal(args.argc, 5);
	for (int i = 0; i < 5; i++)
		assert_string_equal(args.argv[i], argv[i]);
	assert_null(args.argv[5]);
	rsp_buf__exit(&b);
}

static void test_request_checks(void **state)
{
	unsigned char hdr[8];
	struct rsp_proto_args args;
	uint32_t magic = RSP_PROTO_REQ_MAGIC, len = RSP_PROTO_MAX_REQUEST + 1;
	char many[2 * (RSP_PROTO_MAX_ARGS + 1)];

	memcpy(hdr, "GARBAGE!", 8);
	assert_int_equal(rsp_proto__request_length(hdr), -EPROTO);
	memcpy(hdr, &magic, 4);
	memcpy(hdr + 4, &len, 4);
	assert_int_equal(rsp_proto__request_length(hdr), -EMSGSIZE);
	assert_int_equal(rsp_proto__decode_request("status", 6, &args), -EINVAL); /* no NUL */
	assert_int_equal(rsp_proto__decode_request("", 0, &args), -EINVAL);
	assert_int_equal(rsp_proto__decode_request("\0x\0", 3, &args), -EINVAL); /* empty cmd */
	for (size_t i = 0; i < sizeof(many); i += 2) {
		many[i] = 'a';
		many[i + 1] = '\0';
	}
	assert_int_equal(rsp_proto__decode_request(many, sizeof(many), &args), -E2BIG);
	assert_int_equal(rsp_proto__decode_request(many, 2 * RSP_PROTO_MAX_ARGS, &args), 0);
	assert_int_equal(args.argc, RSP_PROTO_MAX_ARGS);
}

static void test_encode_limits(void **state)
{
	struct rsp_buf b = RSP_BUF_INIT;
	char *big = malloc(RSP_PROTO_MAX_REQUEST + 1);
	char *argv[] = {big};

	memset(big, 'x', RSP_PROTO_MAX_REQUEST);
	big[RSP_PROTO_MAX_REQUEST] = '\0';
	assert_int_equal(rsp_proto__encode_request(1, argv, &b), -E2BIG);
	assert_int_equal(b.len, 0);
	assert_int_equal(rsp_proto__encode_request(0, argv, &b), -E2BIG);
	free(big);
	rsp_buf__exit(&b);
}

static void test_response_header(void **state)
{
	unsigned char hdr[RSP_PROTO_RESP_HEADER];
	int status;
	uint32_t len;

	rsp_proto__encode_response_header(hdr, -ENOENT, 1234);
	assert_int_equal(rsp_proto__decode_response_header(hdr, &status, &len), 0);
	assert_int_equal(status, -ENOENT);
	assert_int_equal(len, 1234);
	rsp_proto__encode_response_header(hdr, 0, RSP_PROTO_MAX_RESPONSE + 1u);
	assert_int_equal(rsp_proto__decode_response_header(hdr, &status, &len), -EMSGSIZE);
	hdr[0] ^= 0xff;
	assert_int_equal(rsp_proto__decode_response_header(hdr, &status, &len), -EPROTO);
	assert_non_null(strstr(rsp_proto__strerror(-EPROTO), "magic"));
	assert_non_null(strstr(rsp_proto__strerror(-EMSGSIZE), "long"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_request_checks),
		cmocka_unit_test(test_encode_limits),
		cmocka_unit_test(test_response_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
