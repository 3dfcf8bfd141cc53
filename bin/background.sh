#!/usr/bin/env bash
# Runs one slow build step in the background and waits for it later, so that native compiles overlap Maven's Java
# compile instead of queueing before it (system-under-test's build: the emulated lanes, the PTX).
#   background.sh start <state-dir> <command> [arguments...]   returns at once; a start while an earlier step of the
#                                                              same state dir still runs waits for that one first
#   background.sh wait <state-dir> [--status]                  until the step has finished; prints its log; with
#                                                              --status exits with the step's own exit status (else 0:
#                                                              for a step that a synchronous one repeats and judges)
# A wait with no started step is an error naming the state dir (a wait must never pass over a step that never ran).
set -euo pipefail
cmd="${1:?usage: background.sh start|wait <state-dir> ...}"
state="${2:?usage: background.sh start|wait <state-dir> ...}"
shift 2

wait_for_running() {
    local pid
    pid="$(cat "$state/pid" 2>/dev/null || true)"
    if [ -n "$pid" ]; then
        # The status file, not the pid, says when it ended: an exited step stays a zombie until init reaps it.
        while [ ! -f "$state/status" ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
        rm -f "$state/pid"
    fi
}

case "$cmd" in
    start)
        [ $# -gt 0 ] || { echo "bin/background.sh start $state: no command given" >&2; exit 2; }
        mkdir -p "$state"
        wait_for_running
        rm -f "$state/status"
        # The step records its own status: the waiting shell is not its parent, so `wait` cannot collect it.
        nohup bash -c '"$@" > "$0/log" 2>&1 < /dev/null; echo $? > "$0/status.tmp"; mv -f "$0/status.tmp" "$0/status"' \
            "$state" "$@" > /dev/null 2>&1 &
        echo $! > "$state/pid"
        echo "bin/background.sh: started $1 ... in the background (pid $!, log $state/log)"
        ;;
    wait)
        if [ ! -f "$state/pid" ] && [ ! -f "$state/status" ]; then
            echo "bin/background.sh wait $state: no step was started there" >&2
            exit 2
        fi
        wait_for_running
        [ -f "$state/log" ] && sed "s|^|[$(basename "$state")] |" "$state/log"
        status="$(cat "$state/status" 2>/dev/null || echo 1)"
        if [ "${1:-}" = --status ] && [ "$status" != 0 ]; then
            echo "bin/background.sh: the step in $state failed (exit $status); its log is above" >&2
            exit "$status"
        fi
        ;;
    *)
        echo "bin/background.sh: $cmd: must be start or wait" >&2
        exit 2
        ;;
esac
