/* SPDX-License-Identifier: GPL-2.0 */
/* A small kallsyms text with known addresses, for tests and benchmarks. */
#ifndef RSP_TEST_KALLSYMS_FAKE_H
#define RSP_TEST_KALLSYMS_FAKE_H

#define K_SCHEDULE 0xffffffff81001800ull
#define K_IO_SCHEDULE 0xffffffff81002000ull
#define K_FOLIO_WAIT 0xffffffff81003000ull
#define K_NANOSLEEP 0xffffffff81004000ull
#define K_FUTEX_WAIT 0xffffffff81005000ull
#define K_PIPE_READ 0xffffffff81006000ull
#define K_TCP_RECV 0xffffffff81007000ull
#define K_MM_FAULT 0xffffffff81008000ull
#define K_SCHED_TIMEOUT 0xffffffff81009000ull
#define K_EXT4_SYNC 0xffffffff8100a000ull
#define K_MUTEX_LOCK 0xffffffff8100b000ull
#define K_DATA 0xffffffff8100c000ull
#define K_POLL 0xffffffff8100d000ull
#define K_KSYS_READ 0xffffffff8100e000ull
#define K_TRY_WAKE 0xffffffff8100f000ull
#define K_HRTIMER_WAKEUP 0xffffffff8100f800ull
#define K_MODFN 0xffffffffc0000000ull

static const char fake_kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T __schedule\n"
	"ffffffff81001800 T schedule\n"
	"ffffffff81002000 T io_schedule\n"
	"ffffffff81003000 T folio_wait_bit_common\n"
	"ffffffff81004000 T do_nanosleep\n"
	"ffffffff81005000 T futex_wait_queue\n"
	"ffffffff81006000 T anon_pipe_read\n"
	"ffffffff81007000 T tcp_recvmsg\n"
	"ffffffff81008000 T handle_mm_fault\n"
	"ffffffff81009000 T schedule_timeout\n"
	"ffffffff8100a000 T ext4_sync_file\n"
	"ffffffff8100b000 t mutex_lock\n"
	"ffffffff8100c000 d some_data\n"
	"ffffffff8100d000 T do_sys_poll\n"
	"ffffffff8100e000 T ksys_read\n"
	"ffffffff8100f000 T try_to_wake_up\n"
	"ffffffff8100f800 t hrtimer_wakeup\n"
	"ffffffff81010000 T _etext\n"
	"ffffffffc0000000 t modfn\t[mymod]\n";

#endif
