#!/bin/sh
# Print the directory of the npm package `pprof-format` (Datadog's decoder
# and encoder of pprof's profile.proto, used by their Node.js profiler),
# installed into build/npm/ first if it is not there (npm-package.sh). The
# tests read rsp's --pprof files and rspd's /debug/pprof/ answers with it
# (tests/e2e/pprofread.js): a reader that is not rsp's own code. Exits 1
# with one line when it cannot.
exec "$(dirname "$0")/npm-package.sh" pprof-format 2.3.2
