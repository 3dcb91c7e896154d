// SPDX-License-Identifier: GPL-2.0
/* Sizes as the options take them (size.h): what rspd shows and names in its sentences. */
#include <stdio.h>
#include "size.h"

char *rspd_size__text(uint64_t v, bool round_up, char *buf, size_t n)
{
	static const char sfx[] = "GMK";

	for (int i = 0; i < 3; i++) {
		uint64_t unit = 1ull << (10 * (3 - i));
		bool up = round_up && ((i == 1 && v >= unit) || i == 2);

		if (v && (v % unit == 0 || up)) {
			snprintf(buf, n, "%llu%c", (unsigned long long)(v / unit + (v % unit != 0)),
				 sfx[i]);
			return buf;
		}
	}
	snprintf(buf, n, "%llu", (unsigned long long)v);
	return buf;
}
