#!/bin/sh
# Make the seed corpus of fuzz/fuzz_elf.c: small ELF files of the shapes rspd
# meets (an executable with .symtab, PIE and not, stripped to .dynsym; a
# shared library; a build-id note), built without libc so that each is a
# few KiB:  usage: fuzz/mkseeds_elf.sh OUT_DIR
set -eu
OUT=${1:?usage: mkseeds_elf.sh OUT_DIR}
mkdir -p "$OUT"
T=$(mktemp -d /tmp/rsp-elfseeds.XXXXXX)
trap 'rm -rf "$T"' EXIT
cat >"$T/tiny.c" <<'C'
static int hidden(int x) { return x * 3 + 1; }
int work(int x) { return hidden(x) ^ 7; }
int other(int x) { return work(x) + hidden(x); }
void _start(void) { for (;;) other(work(1)); }
int main(void) { return other(2); }
C
FLAGS="-Os -nostdlib -fno-asynchronous-unwind-tables -Wl,--build-id -Wl,-z,noseparate-code -Wl,-z,max-page-size=0x1000 -Wl,-z,norelro -Wl,--hash-style=gnu"
# shellcheck disable=SC2086
cc $FLAGS -static -no-pie -o "$OUT/static_nopie" "$T/tiny.c"
# shellcheck disable=SC2086
cc $FLAGS -static-pie -fPIE -o "$OUT/static_pie" "$T/tiny.c"
# shellcheck disable=SC2086
cc $FLAGS -shared -fPIC -o "$OUT/lib.so" "$T/tiny.c"
strip -o "$OUT/lib.stripped.so" "$OUT/lib.so"
# with unwind tables (.eh_frame, .eh_frame_hdr), as real code has them
# shellcheck disable=SC2086
cc $FLAGS -fasynchronous-unwind-tables -Wl,--eh-frame-hdr -shared -fPIC -o "$OUT/lib_eh.so" "$T/tiny.c"
ls -l "$OUT"
