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
OUTPUT_RANKS = os.environ.get("OUTPUT_RANKS", "")
# mpiexec and mpirun: mpcrun under the names scripts use.
MPIEXEC = os.path.join(os.path.dirname(MPCRUN), "mpiexec")
MPIRUN = os.path.join(os.path.dirname(MPCRUN), "mpirun")
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


def run(args, expect, stdin=subprocess.DEVNULL, max_seconds=None, env=None, program=None):
    start = time.monotonic()
    result = subprocess.run([program or MPCRUN] + args, stdin=stdin, capture_output=True,
                            text=True, timeout=60, env=env)
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
    # MPI between node processes started by hydra: node process 0 makes the
    # job's secret and publishes it through hydra's key-value store.
    r = subprocess.run([hydra, "-n", "3", RANK_LAYOUT, "block", "3", MARKER],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or "rank_layout: block 3 ok" not in r.stdout:
        fail("rank_layout over 3 node processes under hydra", r)
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
        # Open MPI's and hydra's slot counts are read and dropped.
        with open(hostfile, "w") as f:
            f.write(f"localhost slots=4 max_slots=8\n{here}:2\n")
        r = run(["-n", "5", "--hostfile", hostfile, RANK_LAYOUT, "block", "2", MARKER],
                expect=0, max_seconds=20, env=ssh_env())
        if "rank_layout: block 2 ok" not in r.stdout:
            fail("a host file with slot counts", r)
        with open(hostfile, "a") as f:
            f.write("other cpus=4\n")
        r = run(["-n", "5", "--hostfile", hostfile, "true"], expect=2, env=ssh_env())
        if "cpus=4" not in r.stderr or "use -p" not in r.stderr:
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


def case_dropin_output():
    """--tag-output, -prepend-rank, --output-filename: each line marked with
    the rank that wrote it (whatever wrote it), or in that rank's file."""
    def expect_lines(r, mark):
        for rank in range(3):
            for line, stream in ((f"first of rank {rank}, still rank {rank}", r.stdout),
                                 (f"write of rank {rank}", r.stdout),
                                 (f"unfinished of rank {rank}", r.stdout),
                                 (f"error line of rank {rank}", r.stderr)):
                want = mark(rank, stream is r.stderr) + line
                if want not in stream.split("\n"):
                    fail(f"no line {want!r}", r)
    for spelling in ("--tag-output", "-tag-output"):
        r = run(["-np", "3", "-N", "2", spelling, OUTPUT_RANKS, MARKER], expect=0, max_seconds=10,
                program=MPIRUN)
        expect_lines(r, lambda k, err: f"[1,{k}]<{'stderr' if err else 'stdout'}>:")
    for spelling in ("-prepend-rank", "-l"):
        r = run(["-n", "3", spelling, OUTPUT_RANKS, MARKER], expect=0, max_seconds=10,
                program=MPIEXEC)
        expect_lines(r, lambda k, err: f"[{k}] ")
    for spelling in ("--output-filename", "-output-filename"):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            r = run(["-np", "3", "-N", "2", spelling, out, OUTPUT_RANKS, MARKER], expect=0,
                    max_seconds=10, program=MPIRUN)
            if r.stdout.strip():
                fail("output went to mpcrun's stdout too", r)
            for rank in range(3):
                with open(os.path.join(out, "1", f"rank.{rank}", "stdout")) as f:
                    got = f.read()
                want = (f"first of rank {rank}, still rank {rank}\nwrite of rank {rank}\n"
                        f"unfinished of rank {rank}\n")
                if got != want:
                    fail(f"rank {rank}'s stdout file holds {got!r}, expected {want!r}", r)
                with open(os.path.join(out, "1", f"rank.{rank}", "stderr")) as f:
                    if f.read() != f"error line of rank {rank}\n":
                        fail(f"rank {rank}'s stderr file", r)


def case_dropin_env():
    """-x, -genv, -env: values reach every node process; -np, --np, --n, -n."""
    show = 'echo "node=$MPC_NODE_ID a=${A:-unset} b=${B:-unset} c=${C:-unset}"'
    for spelling in ("-np", "--np", "--n", "-n"):
        r = run([spelling, "2", "-N", "2", "-x", "A=1", "-genv", "B", "two words", "-env", "C",
                 "", "sh", "-c", show, MARKER], expect=0, max_seconds=10, program=MPIEXEC)
        for node in (0, 1):
            if f"node={node} a=1 b=two words c=unset" not in r.stdout:
                fail(f"{spelling}: node {node} did not see -x/-genv/-env", r)


def case_dropin_hosts():
    """--host/-H/-host/-hosts with slot counts, -f/-machinefile, -ppn, -genvall
    over the (fake) remote shell."""
    here = socket.gethostname()
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "hosts")
        for spelling in ("--host", "-H", "-host", "-hosts"):
            open(log, "w").close()
            r = run(["-np", "4", spelling, f"localhost:2,{here}:2", RANK_LAYOUT, "block", "2",
                     MARKER], expect=0, max_seconds=20, env=ssh_env(FAKE_SSH_LOG=log),
                    program=MPIRUN)
            if "rank_layout: block 2 ok" not in r.stdout or \
                    logged_hosts(log) != ["localhost", here]:
                fail(f"{spelling} with slot counts: {logged_hosts(log)}", r)
        machines = os.path.join(tmp, "machines")
        with open(machines, "w") as f:
            f.write(f"localhost:2\n{here}:2\nlocalhost:2\n")
        for spelling in ("-f", "-machinefile", "--machinefile", "-hostfile"):
            open(log, "w").close()
            # -ppn 2 with 4 ranks: the first 2 of the 3 hosts.
            r = run(["-n", "4", "-ppn", "2", spelling, machines, RANK_LAYOUT, "block", "2",
                     MARKER], expect=0, max_seconds=20, env=ssh_env(FAKE_SSH_LOG=log),
                    program=MPIEXEC)
            if "rank_layout: block 2 ok" not in r.stdout or len(logged_hosts(log)) != 2:
                fail(f"{spelling} and -ppn 2: hosts {logged_hosts(log)}", r)
        # -ppn without -n: ranks = 2 per node x 3 nodes.
        r = run(["-ppn", "2", "-f", machines, RANK_LAYOUT, "block", "3", MARKER], expect=0,
                max_seconds=20, env=ssh_env(), program=MPIEXEC)
        if "rank_layout: block 3 ok" not in r.stdout:
            fail("-ppn 2 over 3 hosts without -n", r)
        # -genvall: every variable crosses the remote shell; otherwise not.
        show = 'echo "node=$MPC_NODE_ID other=${OTHER:-unset}"'
        env = ssh_env(OTHER="kept")
        r = run(["-n", "2", "-hosts", "localhost,localhost", "-genvall", "sh", "-c", show,
                 MARKER], expect=0, max_seconds=10, env=env, program=MPIEXEC)
        if "node=1 other=kept" not in r.stdout:
            fail("-genvall did not pass OTHER to a remote node process", r)
        r = run(["-n", "2", "-hosts", "localhost,localhost", "sh", "-c", show, MARKER],
                expect=0, max_seconds=10, env=env, program=MPIEXEC)
        if "node=1 other=unset" not in r.stdout:
            fail("without -genvall OTHER should stay here", r)


def case_dropin_placement():
    """--map-by/-map-by, --bind-to/-bind-to, --oversubscribe: what node processes see."""
    show = 'echo "node=$MPC_NODE_ID bind=${MPC_BIND:-unset} map=$MPC_MAP"'
    for args, bind, mapping in ((["--map-by", "node", "--bind-to", "core"], "1", "cyclic"),
                                (["-map-by", "slot", "-bind-to", "none"], "0", "block"),
                                (["--map-by", "core:PE=1", "-bind-to", "socket"], "0", "block"),
                                (["--oversubscribe", "-oversubscribe", "-bind-to", "hwthread"],
                                 "1", "block")):
        r = run(["-np", "2", "-N", "2"] + args + ["sh", "-c", show, MARKER], expect=0,
                max_seconds=10, program=MPIRUN)
        for node in (0, 1):
            if f"node={node} bind={bind} map={mapping}" not in r.stdout:
                fail(f"{args}: node {node} saw something else", r)
    # Real ranks, mapped round the node processes by --map-by node.
    r = run(["-np", "6", "-N", "3", "--map-by", "node", RANK_LAYOUT, "cyclic", "3", MARKER],
            expect=0, max_seconds=10, program=MPIRUN)
    if "rank_layout: cyclic 3 ok" not in r.stdout:
        fail("--map-by node did not deal the ranks out", r)


def case_dropin_timeout():
    """MPIEXEC_TIMEOUT, and -timeout: the job ends with status 124."""
    env = dict(os.environ, MPIEXEC_TIMEOUT="1")
    r = run(probe(2, "hang"), expect=124, max_seconds=6, env=env, program=MPIEXEC)
    if "time limit" not in r.stderr:
        fail("MPIEXEC_TIMEOUT: no time limit message", r)
    r = run(["-timeout", "1"] + probe(2, "hang"), expect=124, max_seconds=6, program=MPIRUN)
    r = run(probe(2, "hang"), expect=2, env=dict(os.environ, MPIEXEC_TIMEOUT="soon"),
            program=MPIEXEC)
    if "MPIEXEC_TIMEOUT=soon" not in r.stderr:
        fail("a bad MPIEXEC_TIMEOUT: no usage error", r)


def case_dropin_info():
    """--version, --help, --info, and usage errors under each name."""
    for program, name in ((MPIEXEC, "mpiexec"), (MPIRUN, "mpirun"), (MPCRUN, "mpcrun")):
        for spelling in ("--version", "-version", "-V"):
            r = subprocess.run([program, spelling], capture_output=True, text=True, timeout=10)
            if r.returncode != 0 or not r.stdout.startswith(f"{name} (fibermpi) "):
                fail(f"{name} {spelling}: {r.stdout!r}", r)
        for spelling in ("--help", "-help", "-h"):
            r = subprocess.run([program, spelling], capture_output=True, text=True, timeout=10)
            if r.returncode != 0 or "usage: mpcrun" not in r.stdout or "-genvall" not in r.stdout:
                fail(f"{name} {spelling}: no help", r)
        r = subprocess.run([program, "--frobnicate", "x"], capture_output=True, text=True,
                           timeout=10)
        if r.returncode != 2 or f"{name}: unknown option '--frobnicate'" not in r.stderr or \
                "usage: mpcrun" not in r.stderr:
            fail(f"{name}: an unknown option must give the usage line and status 2", r)
    r = subprocess.run([MPIEXEC, "--info"], capture_output=True, text=True, timeout=30)
    for part in ("fibermpi ", "build:", "network drivers:", "tcp", "ofi", "verbs",
                 "progress modes:", "collaborative", "security:", "interface lo"):
        if r.returncode != 0 or part not in r.stdout:
            fail(f"--info lacks {part!r}", r)


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}
if CASE not in CASES:
    fail(f"unknown case {CASE}; known: {', '.join(sorted(CASES))}")
CASES[CASE]()
print("PASS:", CASE)
