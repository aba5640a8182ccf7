#!/bin/sh
# A stand-in for ssh on a machine without sshd (MPC_SSH in mpcrun's tests):
# `fake_ssh.sh [-o OPT | -x | ...] HOST COMMAND` runs COMMAND here as sshd
# would on HOST: with a shell, in a clean environment (a remote login does not
# inherit mpcrun's variables: mpcrun must pass them in COMMAND), in a session
# of its own (signals to this script's process group do not reach it, nor does
# mpcrun's death: only the PMI connection ties it to the job). This script
# waits for it and exits with its status, 128+N for signal N. Each call
# appends "HOST NODE" to $FAKE_SSH_LOG when that is set, NODE being the
# MPC_NODE_ID the command sets (the calls run at once: their order is not
# the node processes' order). For security_check.py: FAKE_SSH_HOLD=NODE:FILE
# holds node process NODE back until FILE exists; FAKE_SSH_SECRET=FILE copies
# the first line of standard input (the job's secret, as ssh would carry it)
# into FILE, standing for someone who learned it.
while [ $# -gt 0 ]; do
    case "$1" in
        -o | -p | -l | -i) shift 2 ;;
        -*) shift ;;
        *) break ;;
    esac
done
[ $# -ge 2 ] || { echo "fake_ssh: usage: fake_ssh.sh HOST COMMAND" >&2; exit 255; }
host="$1"
shift
case "$host" in
    localhost | 127.* | "$(hostname)" | "$(hostname -s)") ;;
    *) echo "ssh: Could not resolve hostname $host" >&2; exit 255 ;;
esac
node=$(printf '%s\n' "$*" | sed -n "s/.*MPC_NODE_ID='*\([0-9][0-9]*\).*/\1/p")
if [ -n "${FAKE_SSH_LOG:-}" ]; then
    echo "$host ${node:-?}" >>"$FAKE_SSH_LOG"
fi
if [ -n "${FAKE_SSH_HOLD:-}" ] && [ "${FAKE_SSH_HOLD%%:*}" = "${node:-}" ]; then
    while [ ! -e "${FAKE_SSH_HOLD#*:}" ]; do sleep 0.05; done
fi
if [ -n "${FAKE_SSH_SECRET:-}" ] && [ "${node:-}" = 0 ]; then
    IFS= read -r secret
    printf '%s\n' "$secret" >"$FAKE_SSH_SECRET"
    { printf '%s\n' "$secret"; exec cat; } | env -i PATH="$PATH" HOME="${HOME:-/}" setsid sh -c "$*" &
    wait $!
    exit $?
fi
# stdin kept explicitly: an asynchronous command would otherwise read /dev/null.
exec 3<&0
env -i PATH="$PATH" HOME="${HOME:-/}" setsid sh -c "$*" <&3 3<&- &
exec 3<&-
wait $!
