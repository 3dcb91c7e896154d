// SPDX-License-Identifier: LGPL-2.1
#include <stdio.h>
#include "internal/fmt.h"

char *rsp_fmt__bytes(char *buf, size_t size, uint64_t bytes)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, "%.1f %s", v, unit[u]);
	return buf;
}
