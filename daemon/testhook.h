/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_TESTHOOK_H
#define RSPD_TESTHOOK_H

#include <stdbool.h>

/**
 * rspd_testhook__bpf_refuse() - whether the test suite asks that the
 * kernel's verifier refuse rsp's BPF program (RSP_TEST_BPF_REFUSE in the
 * environment). Always false in the rspd that `cmake --install` installs.
 */
bool rspd_testhook__bpf_refuse(void);

#endif
