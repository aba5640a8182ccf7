#!/usr/bin/env python3
"""Job-control checks of mpcrun, run with pmi_probe as the node program.

usage: mpcrun_check.py MPCRUN PMI_PROBE CASE

Each case runs mpcrun, checks its exit status, its output and how long it
took, and that no process of the job is left (the probe gets a unique marker
argument that the process table is searched for). Exit 0 = pass, 77 = skip.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid

MPCRUN, PROBE, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
MARKER = "marker-" + uuid.uuid4().hex
STARTED = []  # mpcrun processes started with Popen, killed when a check fails


def fail(message, result=None):
    for proc in STARTED:
        if proc.poll() is None:
            proc.kill()
    print("FAIL:", message)
    if result is not None:
        print("--- exit status:", result.returncode)
        print("--- stdout:\n" + result.stdout)
        print("--- stderr:\n" + result.stderr)
    sys.exit(1)


def job_processes():
    """Pids of live processes whose command line holds this run's marker."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if MARKER.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def expect_no_leftovers(within=3.0):
    deadline = time.monotonic() + within
    while job_processes():
        if time.monotonic() > deadline:
            fail(f"processes left behind: {job_processes()}")
        time.sleep(0.05)


def run(args, expect, stdin=subprocess.DEVNULL, max_seconds=None):
    start = time.monotonic()
    result = subprocess.run([MPCRUN] + args, stdin=stdin, capture_output=True, text=True,
                            timeout=60)
    took = time.monotonic() - start
    if result.returncode != expect:
        fail(f"mpcrun {' '.join(args)}: exit status {result.returncode}, expected {expect}",
             result)
    if max_seconds is not None and took > max_seconds:
        fail(f"mpcrun took {took:.1f} s, more than {max_seconds} s", result)
    expect_no_leftovers()
    return result


def probe(nodes, mode, *extra):
    return ["-n", str(nodes), "-N", str(nodes), PROBE, mode, *extra, MARKER]


def case_exit_status():
    r = run(probe(3, "exit3"), expect=3, max_seconds=10)
    if "node process 1" not in r.stderr or "status 3" not in r.stderr:
        fail("no message naming node process 1 and its status", r)


def case_signal_status():
    r = run(probe(3, "segv"), expect=139, max_seconds=10)
    if "node process 1" not in r.stderr or "signal 11" not in r.stderr:
        fail("no message naming node process 1 and signal 11", r)


def case_abort():
    r = run(probe(2, "abort"), expect=7, max_seconds=10)
    if not re.search(r"node process 1 .*aborted.*probe abort", r.stderr):
        fail("no abort message naming node process 1 and its text", r)


def case_fence_failure():
    r = run(probe(3, "early0"), expect=1, max_seconds=10)
    if "without joining this kvs-fence" not in r.stderr:
        fail("the fence did not fail with a reason", r)


def case_timeout():
    # Node process 1 ignores SIGTERM: only the SIGKILL that follows ends it.
    r = run(["--timeout", "1"] + probe(3, "hang"), expect=124, max_seconds=6)
    if "time limit" not in r.stderr:
        fail("no time limit message", r)


def case_lines():
    nodes, count = 3, 300
    r = run(probe(nodes, "lines", str(count)), expect=0, max_seconds=20)
    pattern = re.compile(r"^node=(\d+) line=(\d+) ([a-z])\3{99}$")
    seen = {n: 0 for n in range(nodes)}
    for line in r.stdout.split("\n")[:-1]:
        m = pattern.match(line)
        if not m or ord(m.group(3)) - ord("a") != int(m.group(1)) % 26:
            fail(f"mixed or broken line: {line!r}", r)
        node, index = int(m.group(1)), int(m.group(2))
        if index != seen[node]:
            fail(f"node {node}: line {index} out of order (expected {seen[node]})", r)
        seen[node] += 1
    if any(v != count for v in seen.values()) or not r.stdout.endswith("\n"):
        fail(f"lines per node: {seen}", r)


def case_stdin():
    data = os.urandom(200000)
    total = 0
    for b in data:
        total = (total * 31 + b) % (1 << 64)
    r = subprocess.run([MPCRUN] + probe(2, "stdin"), input=data, capture_output=True,
                       timeout=60)
    out = r.stdout.decode()
    if r.returncode != 0:
        fail(f"exit status {r.returncode}: {out} {r.stderr.decode()}")
    if f"node 0 stdin bytes={len(data)} sum={total}" not in out:
        fail("node 0 did not get mpcrun's stdin: " + out)
    if "node 1 stdin bytes=0 sum=0" not in out:
        fail("node 1 read something: " + out)
    expect_no_leftovers()


def wait_ready(proc, nodes):
    ready = 0
    while ready < nodes:
        line = proc.stdout.readline()
        if not line:
            fail("mpcrun ended before its node processes were ready")
        ready += line.startswith("node ") and "ready" in line


def case_killed():
    """mpcrun killed by SIGKILL: its node processes must die with it."""
    proc = subprocess.Popen([MPCRUN] + probe(3, "wait"), stdout=subprocess.PIPE, text=True)
    STARTED.append(proc)
    wait_ready(proc, 3)
    nodes = [pid for pid in job_processes() if pid != proc.pid]
    if len(nodes) != 3:
        fail(f"expected 3 node processes besides mpcrun {proc.pid}, found {nodes}")
    proc.kill()
    proc.wait()
    expect_no_leftovers(within=2.0)


def case_sigterm():
    proc = subprocess.Popen([MPCRUN] + probe(3, "wait"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    STARTED.append(proc)
    wait_ready(proc, 3)
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    if proc.returncode != 128 + signal.SIGTERM:
        fail(f"exit status {proc.returncode}, expected 143: {err}")
    if time.monotonic() - start > 3:
        fail("the job took more than 3 s to end after SIGTERM")
    expect_no_leftovers()


def case_usage():
    for args, what in ((["-n"], "needs a value"), (["-n", "2", "-N"], "needs a value"),
                       (["-n", "x", "prog"], "invalid number of ranks"),
                       (["--bogus", "prog"], "unknown option")):
        r = subprocess.run([MPCRUN] + args, capture_output=True, text=True, timeout=10)
        if r.returncode != 2 or what not in r.stderr or "usage: mpcrun" not in r.stderr:
            fail(f"mpcrun {' '.join(args)}: expected a usage error ({what})", r)


def case_progress():
    """--progress spellings reach every node process as MPC_PROGRESS(_THREAD)."""
    show = 'echo "node=$MPC_NODE_ID mode=$MPC_PROGRESS thread=${MPC_PROGRESS_THREAD:-unset}"'
    for spelling, mode, thread in (("thread-poll", "thread", "poll"),
                                   ("thread-block", "thread", "block"),
                                   ("thread", "thread", "unset"), ("wait", "wait", "unset")):
        r = run(["-n", "2", "-N", "2", "--progress", spelling, "sh", "-c", show, MARKER],
                expect=0, max_seconds=10)
        for node in (0, 1):
            if f"node={node} mode={mode} thread={thread}" not in r.stdout:
                fail(f"--progress {spelling}: node {node} did not see mode={mode} "
                     f"thread={thread}", r)
    show = 'echo "node=$MPC_NODE_ID shared=${MPC_SHARED_GLOBALS:-unset}"'
    r = run(["-n", "2", "-N", "2", "--shared-globals", "sh", "-c", show, MARKER], expect=0,
            max_seconds=10)
    for node in (0, 1):
        if f"node={node} shared=1" not in r.stdout:
            fail(f"--shared-globals: node {node} did not see MPC_SHARED_GLOBALS=1", r)


def case_hydra():
    """The same client under MPICH's hydra, when it is installed."""
    hydra = shutil.which("mpiexec.hydra")
    if not hydra:
        print("SKIP: mpiexec.hydra not installed")
        sys.exit(77)
    r = subprocess.run([hydra, "-n", "3", PROBE, "kvs", "3", MARKER], capture_output=True,
                       text=True, timeout=60)
    if r.returncode != 0 or r.stdout.count("pmi ok") != 3:
        fail("pmi_probe kvs under hydra", r)
    expect_no_leftovers()


def case_slurm():
    """The same client under Slurm's srun --mpi=pmi2, when a Slurm cluster answers."""
    srun, sinfo = shutil.which("srun"), shutil.which("sinfo")
    try:
        answered = sinfo and subprocess.run([sinfo, "-h", "-t", "idle,mix"], capture_output=True,
                                            text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        answered = False
    if not srun or not answered:
        print("SKIP: no Slurm cluster answers here")
        sys.exit(77)
    r = subprocess.run([srun, "--mpi=pmi2", "--immediate=10", "-O", "-n", "3", PROBE, "kvs", "3",
                        MARKER], capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or r.stdout.count("pmi ok") != 3:
        fail("pmi_probe kvs under srun --mpi=pmi2", r)
    expect_no_leftovers()


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}
if CASE not in CASES:
    fail(f"unknown case {CASE}; known: {', '.join(sorted(CASES))}")
CASES[CASE]()
print("PASS:", CASE)
