#!/bin/sh
# Install every Debian 12 package rsp needs to build, test and benchmark, and
# build libperf from linux-source-6.1 into build/deps/. Idempotent: when
# everything is present it changes nothing and says so.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)

# Build: compiler, cmake, pkg-config, the libraries librsp links against.
# Test: cmocka, perf (validation of dumps), clang (libFuzzer targets),
# systemd (systemd-analyze verify), iproute2 and procps for workloads,
# graphviz (rspctl graph --format dot must render with dot -Tsvg),
# postgresql (a real database for tests/e2e/test_real_pgbench.py and bench/).
# BPF capture: clang (-target bpf), llvm (llvm-strip), bpftool (vmlinux.h,
# skeletons), libbpf-dev (the loader).
PACKAGES="gcc make cmake pkg-config xz-utils tar
libtraceevent-dev libtracefs-dev libunwind-dev libelf-dev libjansson-dev
libinih-dev libsystemd-dev libcmocka-dev linux-source-6.1
linux-perf clang libclang-rt-14-dev systemd procps util-linux passwd groff-base
graphviz llvm bpftool libbpf-dev postgresql"
# Stopwatches: libseccomp-dev (system call names to numbers, rspctl stopwatch add syscall:NAME).
PACKAGES="$PACKAGES libseccomp-dev"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done

if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: missing packages:$missing; run this script as root (it uses apt-get)" >&2
		exit 1
	fi
	echo "deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing >/dev/null
else
	echo "deps: all Debian packages present"
fi

"$ROOT/scripts/build-libperf.sh" "$ROOT/build/deps"
