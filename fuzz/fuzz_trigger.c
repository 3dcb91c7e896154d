// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the triggers' parsers of untrusted text. The first
 * byte chooses what the rest is: a CONDITION (rspctl trigger add, from a
 * client of the control socket), a configuration line (NAME 'CONDITION'
 * [options], from rspd.conf), or an Alertmanager webhook body (from the
 * network, POST /v1/trigger). A condition that parses must format to a
 * text that parses back to the same condition.
 *
 * Build: scripts/build.sh fuzz; run: build/fuzz/fuzz/fuzz_trigger CORPUS
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/trigger.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void condition(const char *text)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_trig_cond a, b;
	char canon[RSP_TRIG_COND_LEN];

	if (!rsp_trig_cond__parse(text, &a, &err)) {
		rsp_trig_cond__format(&a, canon, sizeof(canon));
		if (rsp_trig_cond__parse(canon, &b, &err) || memcmp(&a, &b, sizeof(a)))
			abort(); /* the canonical form must parse back to the same */
	}
	rsp_buf__exit(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_trig_spec spec;
	struct rsp_am_payload *p;
	char *text;

	if (!size)
		return 0;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	switch (data[0] % 3) {
	case 0:
		condition(text);
		break;
	case 1:
		rsp_trig_spec__parse_line(text, &spec, &err);
		break;
	default:
		p = malloc(sizeof(*p));
		if (p)
			rsp_am_payload__parse((const char *)data + 1, size - 1, p, &err);
		free(p);
		break;
	}
	rsp_buf__exit(&err);
	free(text);
	return 0;
}
