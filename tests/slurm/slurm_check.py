#!/usr/bin/env python3
"""The same programs under a real Slurm: srun --mpi=pmi2, and mpcrun inside salloc.

usage: slurm_check.py CLUSTER_SCRIPT MPCRUN PMI_PROBE RANK_LAYOUT WORLD_INFO

Starts a one-host cluster with CLUSTER_SCRIPT (scripts/slurm-cluster.sh: it
installs slurm-wlm and munge when missing), runs every case, stops the cluster.
Runs of this test on the machine take turns (a lock file): there is one
cluster. Exit 0 = pass, 77 = skip, only when the daemons cannot start here
(with the reason printed).
"""
import fcntl
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from jobcheck import MARKER, leftovers  # noqa: E402

CLUSTER, MPCRUN, PROBE, RANK_LAYOUT, WORLD_INFO = sys.argv[1:6]
DIRECTORY = os.environ.get("MPC_SLURM_DIR", "/tmp/fibermpi-slurm")
LOCK = DIRECTORY + ".lock"
ENV = dict(os.environ, SLURM_CONF=os.path.join(DIRECTORY, "slurm.conf"))
for name in [n for n in ENV if n.startswith(("SLURM_", "PMI_")) and n != "SLURM_CONF"]:
    del ENV[name]  # this test may itself run inside a job
ENV.pop("MPC_LAUNCH", None)
# One allocation of the whole node, at once or not at all.
SALLOC = ["salloc", "-N", "1", "--exclusive", "--immediate=20", "--quiet"]


class Failure(Exception):
    pass


def run(args, expect, stdout_has=(), stderr_has=(), max_seconds=30):
    start = time.monotonic()
    r = subprocess.run(args, capture_output=True, text=True, timeout=60, env=ENV)
    took = time.monotonic() - start
    problem = None
    if r.returncode != expect:
        problem = f"exit status {r.returncode}, expected {expect}"
    for pattern in stdout_has:
        if not problem and not re.search(pattern, r.stdout, re.M):
            problem = f"no /{pattern}/ in stdout"
    for pattern in stderr_has:
        if not problem and not re.search(pattern, r.stderr, re.M):
            problem = f"no /{pattern}/ in stderr"
    if not problem and took > max_seconds:
        problem = f"took {took:.1f} s, more than {max_seconds}"
    if problem:
        raise Failure(f"{' '.join(args)}: {problem}\n--- stdout:\n{r.stdout}"
                      f"--- stderr:\n{r.stderr}")
    left = leftovers(within=5)
    if left:
        raise Failure(f"{' '.join(args)}: processes left behind: {left}")
    print(f"ok ({took:.2f} s): {' '.join(a.replace(MARKER, 'MARKER') for a in args)}")
    return r


def srun_cases():
    """srun --mpi=pmi2 starts one rank per process, each its own node process."""
    srun = ["srun", "--mpi=pmi2", "--immediate=20", "--overcommit"]
    run(srun + ["-n", "2", WORLD_INFO, "2", MARKER], 0)
    run(srun + ["-n", "3", RANK_LAYOUT, "block", "3", MARKER], 0,
        stdout_has=[r"^rank_layout: block 3 ok$"])
    r = run(srun + ["-n", "3", PROBE, "kvs", "3", MARKER], 0)
    if r.stdout.count("pmi ok") != 3:
        raise Failure("pmi_probe kvs under srun: " + r.stdout)


def salloc_cases():
    """mpcrun inside an allocation starts its node processes with srun."""
    show = 'echo "step=${SLURM_STEP_ID:-none} task=$SLURM_PROCID pmi=${PMI_PORT:+tcp}"'
    r = run(SALLOC + [MPCRUN, "-n", "4", "-p", "2", "sh", "-c", show, MARKER], 0)
    for task in (0, 1):
        if not re.search(rf"^step=\d+ task={task} pmi=tcp$", r.stdout, re.M):
            raise Failure(f"node process {task} was not a task of an srun step: {r.stdout}")
    run(SALLOC + [MPCRUN, "-n", "6", "-p", "2", "--map", "cyclic", RANK_LAYOUT, "cyclic", "2",
                  MARKER], 0, stdout_has=[r"^rank_layout: cyclic 2 ok$"])
    run(SALLOC + [MPCRUN, "-n", "5", "-p", "3", WORLD_INFO, "5", MARKER], 0)
    # mpiexec is mpcrun: the same inside an allocation, with hydra's -ppn.
    mpiexec = os.path.join(os.path.dirname(MPCRUN), "mpiexec")
    run(SALLOC + [mpiexec, "-np", "4", "-p", "2", "-ppn", "4", WORLD_INFO, "4", MARKER], 0)
    r = run(SALLOC + [MPCRUN, "-n", "4", "-p", "2", PROBE, "exit3", MARKER], 3,
            stderr_has=[r"srun \(node processes 0-1"], max_seconds=15)
    run(SALLOC + [MPCRUN, "-n", "2", "-p", "2", PROBE, "abort", MARKER], 7,
        stderr_has=[r"node process 1 .*aborted.*probe abort"], max_seconds=15)
    # Node process 1 ignores SIGTERM: it ends when its PMI connection closes.
    run(SALLOC + [MPCRUN, "--timeout", "1", "-n", "2", "-p", "2", PROBE, "hang", MARKER], 124,
        stderr_has=["time limit"], max_seconds=10)
    run(SALLOC + [MPCRUN, "-n", "4", "-N", "2", WORLD_INFO, "4"], 2,
        stderr_has=["more nodes than the 1 node of Slurm allocation"])


def main():
    os.makedirs(os.path.dirname(LOCK), exist_ok=True)
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # meson's timeout bounds the wait
        start = time.monotonic()
        up = subprocess.run([CLUSTER, "start"], capture_output=True, text=True, timeout=240)
        if up.returncode != 0:
            subprocess.run([CLUSTER, "stop"], capture_output=True, timeout=60)
            print("SKIP: the Slurm daemons could not start here:",
                  (up.stderr or up.stdout).strip())
            return 77
        print(f"cluster up in {time.monotonic() - start:.1f} s")
        try:
            srun_cases()
            salloc_cases()
        except Failure as e:
            print("FAIL:", e)
            return 1
        finally:
            down = time.monotonic()
            subprocess.run([CLUSTER, "stop"], capture_output=True, timeout=60)
            print(f"cluster down in {time.monotonic() - down:.1f} s; "
                  f"{time.monotonic() - start:.1f} s in all")
    print("PASS: slurm")
    return 0


sys.exit(main())
