#!/bin/sh
# A one-host Slurm cluster for tests: munged, slurmctld and slurmd on this
# machine, everything (keys, configuration, state, logs) under one directory.
#
#   scripts/slurm-cluster.sh start   install slurm-wlm and munge if missing, write the
#                                    configuration, start the daemons, wait for the node
#   scripts/slurm-cluster.sh stop    stop the daemons (the directory stays, for the logs)
#   scripts/slurm-cluster.sh env     print the variable clients need (SLURM_CONF=...)
#
# MPC_SLURM_DIR chooses the directory (default /tmp/fibermpi-slurm). Needs root
# (slurmd must start job steps as any user). Ports 16817/16818, not Slurm's
# defaults, so that a real cluster's daemons on this machine are left alone.
# Exit status of start: 0 when the node is idle, 1 with the reason otherwise.
set -eu

DIR="${MPC_SLURM_DIR:-/tmp/fibermpi-slurm}"
CONF="$DIR/slurm.conf"
MUNGE_SOCKET="$DIR/munge/munge.socket"
HOST="$(hostname -s)"
CPUS="$(nproc)"

say() { echo "slurm-cluster: $*" >&2; }
die() {
    say "$*"
    exit 1
}

install_packages() {
    missing=""
    for p in slurm-wlm munge; do
        case "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" in
            *"install ok installed"*) ;;
            *) missing="$missing $p" ;;
        esac
    done
    [ -z "$missing" ] && return 0
    say "installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-cache show slurm-wlm >/dev/null 2>&1 || apt-get update -qq >/dev/null
    # The packages' own services are denied or unused: we start the daemons ourselves.
    # shellcheck disable=SC2086 # one word per package
    apt-get install -y -qq --no-install-recommends $missing >"$DIR-apt.log" 2>&1 ||
        die "apt-get install$missing failed (see $DIR-apt.log)"
}

write_config() {
    mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log" "$DIR/munge"
    chmod 0755 "$DIR"
    # munged refuses keys and sockets in directories others may write to.
    chown munge:munge "$DIR/munge"
    chmod 0755 "$DIR/munge"  # clients need to reach the socket; the key itself is 0400
    if [ ! -s "$DIR/munge/munge.key" ]; then
        mungekey --create --keyfile="$DIR/munge/munge.key" >/dev/null 2>&1 ||
            die "mungekey could not create a key"
        chown munge:munge "$DIR/munge/munge.key"
        chmod 0400 "$DIR/munge/munge.key"
    fi
    # proctrack/linuxproc and task/affinity: no cgroups needed (containers);
    # task/affinity rather than task/none so that srun --cpu-bind=none (which
    # mpcrun passes) is understood instead of warned about. cons_tres with
    # the CPUs found, so tests may ask for what the machine has.
    cat >"$CONF" <<EOF
ClusterName=fibermpi-test
SlurmctldHost=$HOST
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
NodeName=$HOST CPUs=$CPUS State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
}

pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# stop_daemons PIDFILE...: SIGTERM to all at once (each takes about 2 s to
# wind down), then SIGKILL to those still there after 5 s.
stop_daemons() {
    pids=""
    for file in "$@"; do
        [ -s "$file" ] || continue
        pid="$(cat "$file")"
        kill -TERM "$pid" 2>/dev/null && pids="$pids $pid"
        rm -f "$file"
    done
    i=0
    for pid in $pids; do
        while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do
            sleep 0.1
            i=$((i + 1))
        done
        if kill -0 "$pid" 2>/dev/null; then
            say "process $pid did not stop on SIGTERM; killing it"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done
}

node_state() { SLURM_CONF="$CONF" sinfo -h -n "$HOST" -o %t 2>/dev/null | head -n 1; }

start() {
    [ "$(id -u)" = 0 ] || die "needs root (slurmd runs job steps as any user)"
    install_packages
    write_config
    if ! pid_alive "$DIR/munge/munged.pid"; then
        runuser -u munge -- munged --socket="$MUNGE_SOCKET" --key-file="$DIR/munge/munge.key" \
            --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" \
            --seed-file="$DIR/munge/munged.seed" ||
            die "munged did not start: $(tail -n 3 "$DIR/munge/munged.log" 2>/dev/null)"
    fi
    # -c: no jobs from an earlier run of the cluster.
    pid_alive "$DIR/slurmctld.pid" || slurmctld -c -f "$CONF" ||
        die "slurmctld did not start: $(tail -n 3 "$DIR/log/slurmctld.log" 2>/dev/null)"
    pid_alive "$DIR/slurmd.pid" || slurmd -f "$CONF" ||
        die "slurmd did not start: $(tail -n 3 "$DIR/log/slurmd.log" 2>/dev/null)"
    i=0
    while :; do
        state="$(node_state)"
        case "$state" in
            idle | mix | alloc) return 0 ;;
            down* | drain*)  # left down by an earlier run: bring it back
                SLURM_CONF="$CONF" scontrol update nodename="$HOST" state=resume 2>/dev/null || true ;;
        esac
        i=$((i + 1))
        if [ $i -ge 300 ]; then
            die "node $HOST not idle after 30 s (state '${state:-no answer}'); logs in $DIR/log"
        fi
        sleep 0.1
    done
}

stop() {
    # munged last: the Slurm daemons may still authenticate a last message.
    stop_daemons "$DIR/slurmd.pid" "$DIR/slurmctld.pid"
    stop_daemons "$DIR/munge/munged.pid"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    env) echo "SLURM_CONF=$CONF" ;;
    *)
        echo "usage: $0 start|stop|env" >&2
        exit 2
        ;;
esac
