// SPDX-License-Identifier: GPL-2.0
/*
 * rsp-merge-gen DIR HOSTS RECORDS [CONNS [ring|chain|loop]]: HOSTS synthetic
 * hosts' dumps for `rspctl merge` (bench/merge.py --synthetic),
 * DIR/host-K.perf.data, about RECORDS records each (tests/support/xhosts.h:
 * what the dumps hold, the hosts' addresses and clocks).
 *
 * ring (the default): host K's CONNS client threads (default 8) each ask
 * host K+1 (mod HOSTS) over one TCP connection; host K's server threads
 * answer host K-1's. chain: host 0's clients ask host 1, whose servers ask
 * host 2 before answering, ... (the snapshot's recursion HOSTS-1 deep).
 * loop (2 hosts): host 1's servers ask host 0 back, where the asking client
 * thread answers (the snapshot's cycle guard).
 *
 * Prints one JSON line: {"hosts", "records_per_host" (host 0's),
 * "connections", "exchanges_per_connection", "bytes"}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/xhosts.h"

#define REC_EXCHANGE 18 /* a host's records per exchange: 10 client side, 8 server side */

static unsigned long number(const char *arg, unsigned long lo, unsigned long hi, const char *what)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	if (end == arg || *end || v < lo || v > hi) {
		fprintf(stderr, "rsp-merge-gen: %s wants a number from %lu to %lu, not '%s'\n",
			what, lo, hi, arg);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct xhosts x = {.conns = 8};
	uint64_t records = 0, bytes = 0;

	if (argc < 4 || argc > 6 ||
	    (argc == 6 && strcmp(argv[5], "ring") && strcmp(argv[5], "chain") &&
	     strcmp(argv[5], "loop"))) {
		fprintf(stderr,
			"usage: rsp-merge-gen DIR HOSTS RECORDS [CONNS [ring|chain|loop]]\n");
		return 2;
	}
	x.hosts = (unsigned)number(argv[2], 2, 64, "HOSTS");
	x.slots = number(argv[3], 1000, 100000000, "RECORDS") / REC_EXCHANGE;
	if (argc >= 5)
		x.conns = (unsigned)number(argv[4], 1, 1000, "CONNS");
	x.chain = argc == 6 && !strcmp(argv[5], "chain");
	x.loop = argc == 6 && !strcmp(argv[5], "loop");
	if (xhosts__write(&x, argv[1], &records, &bytes))
		return 1;
	printf("{\"hosts\": %u, \"records_per_host\": %llu, \"connections\": %u, "
	       "\"exchanges_per_connection\": %lu, \"bytes\": %llu}\n",
	       x.hosts, (unsigned long long)records,
	       (x.chain	 ? x.hosts - 1
		: x.loop ? 1
			 : x.hosts) *
		       x.conns,
	       x.slots / x.conns, (unsigned long long)bytes);
	return 0;
}
