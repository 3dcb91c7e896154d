// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: what a metrics scrape parses. The first line of the
 * input is a scrape's Accept header, untrusted bytes from the network:
 * rsp_prom__negotiate() must answer a format, never crash. The rest is a
 * text exposition for rsp_prom_pb__from_text() (rspd feeds it only its own
 * text; fuzzed all the same): it must refuse with a sentence or translate
 * to length-delimited MetricFamily messages that protobuf-c reads back.
 *
 * Build: scripts/build.sh fuzz; run: build/fuzz/fuzz/fuzz_prom CORPUS
 * Seeds: fuzz/corpus/fuzz_prom/, Prometheus 2.42's Accept headers (with
 * and without native histograms) over excerpts of a real scrape.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/prom.h>
#include <rsp/prom_pb.h>
#include "io/prometheus/client/metrics.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every message of @b's delimited stream unpacks; abort if not. */
static void read_back(const uint8_t *b, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint64_t len = 0;
		unsigned shift = 0;
		Io__Prometheus__Client__MetricFamily *f;

		do {
			if (i >= n || shift > 63)
				abort();
			len |= (uint64_t)(b[i] & 0x7f) << shift;
			shift += 7;
		} while (b[i++] & 0x80);
		if (len > n - i)
			abort();
		f = io__prometheus__client__metric_family__unpack(NULL, len, b + i);
		if (!f || !f->name || !f->n_metric)
			abort();
		io__prometheus__client__metric_family__free_unpacked(f, NULL);
		i += len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t hl = nl ? (size_t)(nl - data) : size;
	char *accept = malloc(hl + 1);
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	enum rsp_prom_format f;
	int ret;

	if (!accept)
		return 0;
	memcpy(accept, data, hl);
	accept[hl] = '\0';
	f = rsp_prom__negotiate(accept);
	if (f != RSP_PROM_TEXT && f != RSP_PROM_OPENMETRICS && f != RSP_PROM_PROTOBUF)
		abort();
	free(accept);
	if (nl) {
		ret = rsp_prom_pb__from_text((const char *)nl + 1, size - hl - 1, &out, &err);
		if (ret == -EINVAL && !err.len) /* a refusal always says why */
			abort();
		if (!ret)
			read_back((const uint8_t *)out.data, out.len);
	}
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	return 0;
}
