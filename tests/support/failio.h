/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSP_TESTS_FAILIO_H
#define RSP_TESTS_FAILIO_H

/*
 * I/O-failure injection, the file-system twin of failalloc.h: fail the Nth
 * call after arming of the calls a file write makes (openat, write, pwrite,
 * fsync, close, renameat2, linkat), with EIO, for N = 1, 2, ... until the
 * operation completes without reaching it.
 *
 * A link-time wrapper: a test linked with
 *   -Wl,--wrap=openat,--wrap=write,--wrap=pwrite,--wrap=fsync,--wrap=close,
 *   --wrap=renameat2,--wrap=linkat
 * (tests/CMakeLists.txt, RSP_FAILIO_TESTS) has those calls of its own
 * objects and of librsp.a go through here; calls inside shared libraries
 * (libc's fclose, cmocka) are not counted. A failed close still closes the
 * descriptor, as close(2) does on EIO. Not thread-safe.
 */
#include <stdbool.h>

/**
 * failio__arm() - fail the @nth wrapped call from now (1: the next); 0
 * disarms (failio__failed() still says whether the last arming failed one).
 */
void failio__arm(unsigned long nth);
/** failio__failed() - whether the armed failure happened since arming. */
bool failio__failed(void);
/** failio__what() - the name of the call that failed ("write", ...), or "". */
const char *failio__what(void);

#endif
