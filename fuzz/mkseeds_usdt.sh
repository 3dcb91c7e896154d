#!/bin/sh
# Make the seed corpus of fuzz/fuzz_usdt.c from a small program with USDT
# probes (sdt.h, systemtap-sdt-dev), built without libc to stay a few KiB:
# each note's description (first byte 0), each argument string (1), the
# program itself (2).  usage: fuzz/mkseeds_usdt.sh OUT_DIR
set -eu
OUT=${1:?usage: mkseeds_usdt.sh OUT_DIR}
mkdir -p "$OUT"
T=$(mktemp -d /tmp/rsp-usdtseeds.XXXXXX)
trap 'rm -rf "$T"' EXIT
cat >"$T/tiny.c" <<'C'
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
__attribute__((used, section(".probes"))) unsigned short rsp_gated_semaphore;
__attribute__((used, section(".probes"))) unsigned short rsp_spin_begin_semaphore;
__attribute__((used, section(".probes"))) unsigned short rsp_false_wakeup_semaphore;
static long lock;
void _start(void)
{
	for (;;) {
		STAP_PROBE1(rsp, spin_begin, &lock);
		__asm__ volatile(STAP_PROBE_ASM(rsp, gated, -4@$-9 2@%r12w -8@(%rsp) 4@0x10(%r15) 8@-8(%rbp,%rax,8)));
		STAP_PROBE(rsp, false_wakeup);
	}
}
C
cc -Os -nostdlib -static -no-pie -fno-asynchronous-unwind-tables -Wl,-z,noseparate-code \
	-Wl,-z,max-page-size=0x1000 -Wl,-z,norelro -o "$T/tiny" "$T/tiny.c"
{ printf '\002'; cat "$T/tiny"; } >"$OUT/elf_tiny"
# The note section's notes: 12-byte header, "stapsdt\0", then the description.
objcopy --dump-section .note.stapsdt="$T/notes" "$T/tiny" "$T/tiny.out"
python3 - "$T/notes" "$OUT" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
off, i = 0, 0
while off + 12 <= len(b):
    namesz, descsz, _ = struct.unpack_from("<III", b, off)
    desc = off + 12 + ((namesz + 3) & ~3)
    d = b[desc:desc + descsz]
    open("%s/note_%d" % (sys.argv[2], i), "wb").write(b"\0" + d)
    args = d[24:].split(b"\0")[2]
    open("%s/args_%d" % (sys.argv[2], i), "wb").write(b"\1" + args)
    off, i = desc + ((descsz + 3) & ~3), i + 1
PY
ls -l "$OUT"
