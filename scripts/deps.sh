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
# postgresql (a real database for tests/e2e/test_real_pgbench.py and bench/),
# redis-server and redis-tools (a key-value server that fsyncs every write,
# and its load generator: tests/e2e/test_real_redis.py).
# BPF capture: clang (-target bpf), llvm (llvm-strip), bpftool (vmlinux.h,
# skeletons), libbpf-dev (the loader).
# rspctl top --annotate: libdw-dev (source lines), libcapstone-dev (disassembly).
# Metrics: libmicrohttpd-dev (rspd --metrics-listen), prometheus (a real
# server scrapes rspd in tests/e2e/test_metrics.py).
PACKAGES="gcc make cmake pkg-config xz-utils tar
libtraceevent-dev libtracefs-dev libunwind-dev libelf-dev libjansson-dev
libinih-dev libsystemd-dev libcmocka-dev linux-source-6.1
linux-perf clang libclang-rt-14-dev systemd procps util-linux passwd groff-base
graphviz llvm bpftool libbpf-dev postgresql
redis-server redis-tools python3-jsonschema libdw-dev libcapstone-dev
libmicrohttpd-dev prometheus"

# rspctl report: Graphviz's library (lays out the page's wait-for graph),
# Chromium (its tests load the page headless), npm (d3 and d3-flame-graph
# at build time, scripts/report-assets.sh) unless a node install has it: a
# NodeSource nodejs ships its own npm, which Debian's npm package conflicts
# with.
PACKAGES="$PACKAGES libgraphviz-dev chromium"
if ! command -v npm >/dev/null 2>&1; then
	PACKAGES="$PACKAGES nodejs npm"
fi
# Syscall profiles (issue 16): the kernel's syscall table, asm/unistd_64.h.
PACKAGES="$PACKAGES linux-libc-dev"
# Syscall names both ways, for syscall:NAME profiles and stopwatches: libseccomp-dev (librsp links it).
PACKAGES="$PACKAGES libseccomp-dev"
# User stacks compressed in rspd's window (lib/stream/ustackz.c): libzstd-dev (librsp links it).
PACKAGES="$PACKAGES libzstd-dev"
# Prometheus' protobuf exposition with native histograms (rspd --metrics-listen):
# protoc-c compiles the vendored metrics.proto at build time (protobuf-c-compiler),
# librsp links libprotobuf-c (libprotobuf-c-dev); libprotobuf-dev has
# google/protobuf/timestamp.proto, which metrics.proto imports.
PACKAGES="$PACKAGES protobuf-c-compiler libprotobuf-c-dev libprotobuf-dev"
# pprof profiles (--pprof, rspd's /debug/pprof/): gzip-compressed with zlib
# (zlib1g-dev; librsp links it), compiled from the vendored profile.proto;
# the tests read them with Google's pprof, built from Debian's Go sources
# (golang-go, golang-github-google-pprof-dev: scripts/go-pprof.sh).
PACKAGES="$PACKAGES zlib1g-dev golang-go golang-github-google-pprof-dev"
# Triggers from the fleet (issue 41): a real Alertmanager with a webhook
# receiver pointing at rspd's /v1/trigger, fed by amtool
# (tests/e2e/test_trigger_alertmanager.py).
PACKAGES="$PACKAGES prometheus-alertmanager"
# Annotations (issue 36): <sys/sdt.h> for the USDT probes of
# lib/include/rsp/annotate.h and the annotated workloads (systemtap-sdt-dev).
PACKAGES="$PACKAGES systemtap-sdt-dev"

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

# speedscope's file-format schema (tests of --speedscope, validated with
# python3-jsonschema above): npm (installed above where none is) fetches
# the package `speedscope`.
"$ROOT/scripts/speedscope-schema.sh" >/dev/null ||
	echo "deps: no speedscope schema; the tests of --speedscope will skip" >&2

# A pprof reader that is not rsp's own code, for the tests of --pprof and
# rspd's /debug/pprof/ (tests/e2e/pprofread.js): npm fetches `pprof-format`.
"$ROOT/scripts/pprof-format.sh" >/dev/null ||
	echo "deps: no pprof-format; the tests of --pprof will skip" >&2
"$ROOT/scripts/go-pprof.sh" >/dev/null ||
	echo "deps: no go pprof; the tests of --pprof check without it" >&2

"$ROOT/scripts/build-libperf.sh" "$ROOT/build/deps"
