// SPDX-License-Identifier: LGPL-2.1
/*
 * The overhead budget's degradation levels named (rsp/status.h), in one
 * place below every answer that shows them: status, snapshot, the
 * metrics, rspd's log.
 */
#include <rsp/status.h>

const char *rsp_degrade__name(unsigned level)
{
	static const char *const names[] = {"full capture", "fewer stack checks", "no waker stacks",
					    "stacks on one sleep in 8", "no stacks"};

	return level < sizeof(names) / sizeof(names[0]) ? names[level] : "?";
}
