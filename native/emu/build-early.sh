#!/usr/bin/env bash
# Runs native/emu/build.sh early, in the background (bin/background.sh): system-under-test starts it when its build
# begins, so that the emulated lanes compile while Maven compiles the Java sources, and waits for it just before its
# synchronous step (build.sh again, at process-test-classes), which then finds the libraries up to date, or builds
# what is missing and reports any failure with the compiler's own messages.
#   build-early.sh start <out-dir> [build.sh arguments after <out-dir>...]   returns at once
#   build-early.sh wait <out-dir>                                          until the started build has finished
# Both exit 0 whatever the early build does: its log (<out-dir>/early/log) is printed by `wait`, and the
# synchronous step that follows is the one that judges. A start while an earlier early build still runs waits for
# it first (the libraries are written through temporary names, never two writers on one file).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cmd="${1:?usage: build-early.sh start|wait <out-dir> [build.sh arguments...]}"
out="${2:?usage: build-early.sh start|wait <out-dir> [build.sh arguments...]}"
shift 2
case "$cmd" in
    start) exec bash "$here/../../bin/background.sh" start "$out/early" bash "$here/build.sh" "$out" "$@" ;;
    wait) exec bash "$here/../../bin/background.sh" wait "$out/early" ;;
    *) echo "native/emu/build-early.sh: $cmd: must be start or wait" >&2; exit 2 ;;
esac
