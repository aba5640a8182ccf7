#!/usr/bin/env python3
"""Job-control checks of mpcrun, run with pmi_probe as the node program.

usage: mpcrun_check.py MPCRUN PMI_PROBE CASE

Each case runs mpcrun, checks its exit status, its output and how long it
took, and that no process of the job is left (the probe gets a unique marker
argument that the process table is searched for). Exit 0 = pass, 77 = skip.
The remote-host cases start node processes through fake_ssh.sh (MPC_SSH; this
machine has no sshd) and run the MPI program $RANK_LAYOUT.
"""
import os
import re
import shutil
import socket
import tempfile
import signal
import subprocess
import sys
import time

from jobcheck import MARKER, job_processes, leftovers

MPCRUN, PROBE, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
FAKE_SSH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_ssh.sh")
RANK_LAYOUT = os.environ.get("RANK_LAYOUT", "")
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


def expect_no_leftovers(within=3.0):
    left = leftovers(within)
    if left:
        fail(f"processes left behind: {left}")


def run(args, expect, stdin=subprocess.DEVNULL, max_seconds=None, env=None):
    start = time.monotonic()
    result = subprocess.run([MPCRUN] + args, stdin=stdin, capture_output=True, text=True,
                            timeout=60, env=env)
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


def ssh_env(**extra):
    """mpcrun's environment with the fake ssh; FAKE_SSH_LOG collects host and node id."""
    env = dict(os.environ, MPC_SSH=FAKE_SSH + " -o BatchMode=yes", **extra)
    for name in ("SLURM_JOB_ID", "MPC_LAUNCH"):
        env.pop(name, None)
    return env


def logged_hosts(path):
    """The host of each node process the fake ssh started, by node id."""
    with open(path) as f:
        pairs = [line.split() for line in f if line.strip()]
    return [host for host, _ in sorted(pairs, key=lambda p: int(p[1]) if p[1].isdigit() else -1)]


def case_hosts():
    """--hosts: node processes through MPC_SSH, -p per host, variables passed on."""
    here = socket.gethostname()
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "hosts")
        env = ssh_env(FAKE_SSH_LOG=log, MPC_STACK_SIZE="1M", MY_VAR="forwarded", OTHER="kept here")
        r = run(["-n", "8", "--hosts", f"localhost,{here}", "-p", "2", "--map", "cyclic",
                 RANK_LAYOUT, "cyclic", "4", MARKER], expect=0, max_seconds=20, env=env)
        if "rank_layout: cyclic 4 ok" not in r.stdout:
            fail("rank_layout over 2 hosts x 2 node processes", r)
        if logged_hosts(log) != ["localhost", "localhost", here, here]:
            fail(f"node processes 0-3 went to {logged_hosts(log)}, expected localhost x2 then "
                 f"{here} x2", r)
        # A remote shell starts afresh: only MPC_* and -x variables may arrive.
        show = ('echo "node=$MPC_NODE_ID of=$MPC_NUM_NODES rank=$PMI_RANK stack=$MPC_STACK_SIZE '
                'my=${MY_VAR:-unset} other=${OTHER:-unset} set=$SET_HERE"')
        r = run(["-n", "3", "-H", "localhost,localhost,localhost", "-x", "MY_VAR", "-x",
                 "SET_HERE=a b'c", "sh", "-c", show, MARKER], expect=0, max_seconds=10, env=env)
        for node in range(3):
            want = (f"node={node} of=3 rank={node} stack=1M my=forwarded other=unset "
                    "set=a b'c")
            if want not in r.stdout:
                fail(f"node process {node}: expected '{want}'", r)
        r = run(["-n", "2", "-N", "1", "--hosts", "localhost,nowhere.invalid", RANK_LAYOUT,
                 "block", "1", MARKER], expect=0, max_seconds=10, env=env)
        if "rank_layout: block 1 ok" not in r.stdout:
            fail("-N 1 should use the first host only", r)


def case_hostfile():
    here = socket.gethostname()
    with tempfile.TemporaryDirectory() as tmp:
        hostfile = os.path.join(tmp, "hosts")
        with open(hostfile, "w") as f:
            f.write(f"# the nodes\n\nlocalhost   # first\n  {here}\n")
        r = run(["-n", "5", "--hostfile", hostfile, RANK_LAYOUT, "block", "2", MARKER],
                expect=0, max_seconds=20, env=ssh_env())
        if "rank_layout: block 2 ok" not in r.stdout:
            fail("rank_layout over the 2 hosts of a host file", r)
        with open(hostfile, "a") as f:
            f.write("other slots=4\n")
        r = run(["-n", "5", "--hostfile", hostfile, "true"], expect=2, env=ssh_env())
        if "slots=4" not in r.stderr or "use -p" not in r.stderr:
            fail("a host file line with more than a name: no clear error", r)


def case_remote_failure():
    """Exit status, signal and abort of node processes started through ssh."""
    env = ssh_env()
    hosts = ["--hosts", "localhost,localhost,localhost"]
    r = run(hosts + probe(3, "exit3"), expect=3, max_seconds=10, env=env)
    if "node process 1" not in r.stderr or "host localhost" not in r.stderr:
        fail("no message naming node process 1 and its host", r)
    r = run(hosts + probe(3, "segv"), expect=139, max_seconds=10, env=env)
    if "node process 1" not in r.stderr:
        fail("no message naming node process 1", r)
    r = run(hosts[:1] + ["localhost,localhost"] + probe(2, "abort"), expect=7, max_seconds=10,
            env=env)
    if not re.search(r"node process 1 .*aborted.*probe abort", r.stderr):
        fail("no abort message naming node process 1 and its text", r)
    r = run(["--hosts", "localhost,nowhere.invalid"] + probe(2, "kvs", "2"), expect=255,
            max_seconds=10, env=env)
    if "node process 1" not in r.stderr or "nowhere.invalid" not in r.stderr:
        fail("an unreachable host: no message naming it", r)


def case_remote_killed():
    """mpcrun killed: node processes it reached through ssh end too (their PMI
    connection closes; no signal reaches them)."""
    proc = subprocess.Popen([MPCRUN, "--hosts", "localhost,localhost,localhost"] +
                            probe(3, "wait"), stdout=subprocess.PIPE, text=True, env=ssh_env())
    STARTED.append(proc)
    wait_ready(proc, 3)
    if len([pid for pid in job_processes() if pid != proc.pid]) < 3:
        fail(f"expected 3 node processes besides mpcrun, found {job_processes()}")
    proc.kill()
    proc.wait()
    expect_no_leftovers(within=3.0)
    # SIGTERM: the job ends cleanly, remote node processes included.
    proc = subprocess.Popen([MPCRUN, "--hosts", "localhost,localhost"] + probe(2, "wait"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=ssh_env())
    STARTED.append(proc)
    wait_ready(proc, 2)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=10)
    if proc.returncode != 128 + signal.SIGTERM:
        fail(f"exit status {proc.returncode} after SIGTERM, expected 143")
    expect_no_leftovers(within=3.0)


def case_bind():
    show = 'echo "node=$MPC_NODE_ID bind=${MPC_BIND:-unset} map=$MPC_MAP"'
    for option, value in ((["--bind", "none"], "0"), (["--bind=core"], "1"), ([], "unset")):
        r = run(["-n", "2", "-N", "2"] + option + ["sh", "-c", show, MARKER], expect=0,
                max_seconds=10)
        for node in (0, 1):
            if f"node={node} bind={value} map=block" not in r.stdout:
                fail(f"{option}: node {node} did not see MPC_BIND={value}", r)


def case_launch_errors():
    """Usage errors of the placement options: exit 2, a reason and the usage text."""
    env = dict(os.environ)
    env.pop("SLURM_JOB_ID", None)
    for args, what in ((["-n", "2", "-p", "0", "p"], "invalid number of node processes per node"),
                       (["-n", "2", "--bind", "socket", "p"], "invalid binding"),
                       (["-n", "2", "--map", "round", "p"], "invalid rank mapping"),
                       (["-n", "2", "--hosts", "a,,b", "p"], "invalid host list"),
                       (["-n", "2", "--hosts", "a", "--hostfile", "f", "p"], "exclude each other"),
                       (["-n", "4", "-N", "3", "--hosts", "a,b", "p"], "more nodes than the 2 hosts"),
                       (["-n", "3", "-N", "2", "-p", "2", "p"], "more node processes"),
                       (["-n", "3", "--hostfile", "/nonexistent/hosts", "p"], "cannot read"),
                       (["-n", "2", "p"], "MPC_LAUNCH=slurm, but this is not inside")):
        run_env = dict(env, MPC_LAUNCH="slurm") if "MPC_LAUNCH" in what else env
        r = subprocess.run([MPCRUN] + args, capture_output=True, text=True, timeout=10,
                           env=run_env)
        if r.returncode != 2 or what not in r.stderr or "usage: mpcrun" not in r.stderr:
            fail(f"mpcrun {' '.join(args)}: expected a usage error ({what})", r)
    r = subprocess.run([MPCRUN, "-n", "2", "true"], capture_output=True, text=True, timeout=10,
                       env=dict(env, MPC_MAP="diagonal"))
    if r.returncode != 2 or "MPC_MAP=diagonal" not in r.stderr:
        fail("MPC_MAP=diagonal: expected a usage error", r)


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}
if CASE not in CASES:
    fail(f"unknown case {CASE}; known: {', '.join(sorted(CASES))}")
CASES[CASE]()
print("PASS:", CASE)
