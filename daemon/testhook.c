// SPDX-License-Identifier: GPL-2.0
/*
 * The test suite's hooks: paths the tests need that real input cannot
 * reach on demand, read from rspd's environment. Compiled with
 * RSP_TEST_HOOKS only into the rspd the tests run (build/.../daemon/rspd);
 * the rspd that `cmake --install` installs is linked with this file built
 * without it (daemon/CMakeLists.txt), so a root daemon in production never
 * obeys its environment here.
 */
#include <stdlib.h>
#include "testhook.h"

bool rspd_testhook__bpf_refuse(void)
{
#ifdef RSP_TEST_HOOKS
	return getenv("RSP_TEST_BPF_REFUSE") != NULL;
#else
	return false;
#endif
}
