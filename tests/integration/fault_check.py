#!/usr/bin/env python3
"""Fault scenarios of a running job, checked from outside.

usage: fault_check.py MPCRUN CASE --fault-traffic EXE [--exit-codes EXE] [--pool-flood EXE]

Each case starts a job with mpcrun, breaks something underneath it, and
checks that the job ends (or copes) with a message naming the cause, within
a few seconds of the fault, leaving no process behind (every program gets a
unique marker argument that the process table is searched for). It prints
how long the job took to end after the fault. Exit 0 = pass, 77 = skip.

Cases:
  kill_n2, kill_n3            node process 1 SIGKILLed while every rank is in
  kill_blocked_n2/_n3         traffic with it / blocked in MPI waiting for it
  cut_n2, cut_n3, cut_blocked_n2
                              the TCP connection between node processes 0 and 1
                              destroyed by the kernel (ss -K: needs root or
                              CAP_NET_ADMIN and SOCK_DESTROY, else skipped)
  segv_n2, early_n2, abort_n2 a rank of node process 1 crashes, exits before
                              MPI_Finalize, or calls MPI_Abort
  pool_n3                     a flooded receive pool (8 buffers per peer)
  register_n2, register1_n2   memory registration fails on every node process,
                              or on node process 1 only: the job still succeeds
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from jobcheck import MARKER, job_processes, leftovers

STARTED = []
END_WITHIN = 5.0  # seconds from the fault to the end of mpcrun


def fail(message, out="", err="", status=None):
    for proc in STARTED:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    print("FAIL:", message)
    if status is not None:
        print("--- exit status:", status)
    print("--- stdout:\n" + out)
    print("--- stderr:\n" + err)
    sys.exit(1)


def skip(message):
    for proc in STARTED:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    print("SKIP:", message)
    sys.exit(77)


def expect_no_leftovers(within=3.0):
    left = leftovers(within)
    if left:
        fail(f"processes left behind: {left}")


def node_pid(mpcrun_pid, node):
    """The pid of node process `node` (its MPC_NODE_ID) of the job."""
    for pid in job_processes():
        if pid == mpcrun_pid:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if f"MPC_NODE_ID={node}".encode() in env:
            return pid
    return None


class Job:
    """mpcrun in the background; its output is collected in files."""

    def __init__(self, args, env=None):
        self.out = open(f"/tmp/fault_check_{MARKER}.out", "w+")
        self.err = open(f"/tmp/fault_check_{MARKER}.err", "w+")
        full_env = dict(os.environ, **(env or {}))
        self.proc = subprocess.Popen([MPCRUN] + args + [MARKER], stdout=self.out,
                                     stderr=self.err, env=full_env)
        STARTED.append(self.proc)

    def text(self):
        self.out.flush()
        self.err.flush()
        with open(self.out.name) as o, open(self.err.name) as e:
            return o.read(), e.read()

    def wait_ready(self, ranks, within=30.0):
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            out, err = self.text()
            if out.count(" ready\n") >= ranks:
                return
            if self.proc.poll() is not None:
                fail("the job ended before every rank was ready", out, err, self.proc.returncode)
            time.sleep(0.05)
        fail("the ranks did not all get ready", *self.text())

    def wait_end(self, since, within=END_WITHIN):
        try:
            self.proc.wait(timeout=within + 30)
        except subprocess.TimeoutExpired:
            fail(f"the job did not end within {within + 30:.0f} s of the fault", *self.text())
        took = time.monotonic() - since
        out, err = self.text()
        os.unlink(self.out.name)
        os.unlink(self.err.name)
        status = self.proc.returncode
        status = status if status >= 0 else 128 - status
        if took > within:
            fail(f"the job took {took:.2f} s to end after the fault (limit {within} s)", out, err,
                 status)
        expect_no_leftovers()
        return status, out, err, took


def expect(regex, out, err, status, what):
    if not re.search(regex, err, re.M):
        fail(f"no message {what} (expected /{regex}/ in stderr)", out, err, status)


def case_kill(nodes, mode):
    job = Job(["-n", str(2 * nodes), "-N", str(nodes), TRAFFIC, mode, "60"])
    job.wait_ready(2 * nodes)
    time.sleep(0.2)  # well inside MPI traffic
    victim = node_pid(job.proc.pid, 1)
    if not victim:
        fail("node process 1 not found", *job.text())
    start = time.monotonic()
    os.kill(victim, signal.SIGKILL)
    status, out, err, took = job.wait_end(start)
    if status == 0:
        fail("the job succeeded although node process 1 was killed", out, err, status)
    expect(r"node process 1 .*killed by signal 9|lost the connection to node process 1", out,
           err, status, "naming node process 1 and its death")
    return took, "the kill"


def established_between(pid_a, pid_b):
    """(local, peer) addresses of a TCP connection from pid_a to pid_b, or None."""
    r = subprocess.run(["ss", "-tnpH", "state", "established"], capture_output=True, text=True)
    owner = {}
    lines = []
    for line in r.stdout.splitlines():
        f = line.split()
        m = re.search(r"pid=(\d+),", line)
        if len(f) >= 4 and m:
            owner[f[2]] = int(m.group(1))
            lines.append((int(m.group(1)), f[2], f[3]))
    for pid, local, peer in lines:
        if pid == pid_a and owner.get(peer) == pid_b:
            return local, peer
    return None


def case_cut(nodes, mode):
    if not shutil.which("ss"):
        skip("ss (iproute2) is not installed")
    job = Job(["-n", str(2 * nodes), "-N", str(nodes), TRAFFIC, mode, "60"])
    job.wait_ready(2 * nodes)
    time.sleep(0.2)
    a, b = node_pid(job.proc.pid, 0), node_pid(job.proc.pid, 1)
    conn = a and b and established_between(a, b)
    if not conn:
        fail("no TCP connection found between node processes 0 and 1", *job.text())
    start = time.monotonic()
    r = subprocess.run(["ss", "-K", "-tn", "src", conn[0], "dst", conn[1]], capture_output=True,
                       text=True)
    if r.returncode != 0:
        skip(f"ss -K failed: {r.stderr.strip()}")
    time.sleep(0.3)
    if job.proc.poll() is None and established_between(a, b) == conn:
        skip("ss -K left the connection up (no CAP_NET_ADMIN, or a kernel without SOCK_DESTROY)")
    status, out, err, took = job.wait_end(start)
    if status == 0:
        fail("the job succeeded although its connection was cut", out, err, status)
    expect(r"lost the connection to node process [01] \(", out, err, status,
           "naming the lost connection")
    return took, "the cut"


def case_rank_ends(mode, want_status, regex):
    job = Job(["-n", "4", "-N", "2", EXIT_CODES, mode])
    start = time.monotonic()
    status, out, err, took = job.wait_end(start, within=15.0)
    if (want_status is None and status == 0) or (want_status is not None and
                                                  status != want_status):
        fail(f"exit status {status}, expected {want_status or 'non-zero'}", out, err, status)
    expect(regex, out, err, status, "naming rank 3 and what it did")
    return took, "the start (the rank fails right after MPI_Init)"


def case_pool():
    env = {"MPC_NET_RECV_BUFFERS": "16", "MPC_NET_SEND_BUFFERS": "8", "MPC_NET_BUFFER": "2048",
           "MPC_HANG_TIMEOUT": "20"}
    job = Job(["-n", "6", "-N", "3", POOL_FLOOD], env)
    start = time.monotonic()
    status, out, err, took = job.wait_end(start, within=40.0)
    if status != 0 or "pool_flood: OK" not in out:
        fail("the flooded job did not complete correctly", out, err, status)
    return took, "the start (the whole run)"


def case_register(which):
    job = Job(["-n", "4", "-N", "2", TRAFFIC, "traffic", "2"], {"MPC_NET_FAULT": which})
    start = time.monotonic()
    status, out, err, took = job.wait_end(start, within=30.0)
    if status != 0 or "fault_traffic: survived" not in out:
        fail("the job did not survive failed registrations", out, err, status)
    expect(r"cannot register .* rendezvous .* copies", out, err, status,
           "saying that rendezvous falls back to copies")
    return took, "the start (2 s of traffic)"


CASES = {
    "kill_n2": lambda: case_kill(2, "traffic"),
    "kill_n3": lambda: case_kill(3, "traffic"),
    "kill_blocked_n2": lambda: case_kill(2, "blocked"),
    "kill_blocked_n3": lambda: case_kill(3, "blocked"),
    "cut_n2": lambda: case_cut(2, "traffic"),
    "cut_n3": lambda: case_cut(3, "traffic"),
    "cut_blocked_n2": lambda: case_cut(2, "blocked"),
    "segv_n2": lambda: case_rank_ends("segv", 139,
                                      r"rank 3[^0-9].*(signal 11|SIGSEGV|[Ss]egmentation)"),
    "early_n2": lambda: case_rank_ends("early", None, r"rank 3.*without calling MPI_Finalize"),
    "abort_n2": lambda: case_rank_ends("abort", 7, r"MPI_Abort"),
    "pool_n3": case_pool,
    "register_n2": lambda: case_register("register"),
    "register1_n2": lambda: case_register("register@1"),
}

p = argparse.ArgumentParser()
p.add_argument("mpcrun")
p.add_argument("case", choices=sorted(CASES))
p.add_argument("--fault-traffic", required=True)
p.add_argument("--exit-codes")
p.add_argument("--pool-flood")
a = p.parse_args()
MPCRUN, TRAFFIC, EXIT_CODES, POOL_FLOOD = a.mpcrun, a.fault_traffic, a.exit_codes, a.pool_flood
took, since = CASES[a.case]()
print(f"PASS: {a.case}: the job ended {took:.2f} s after {since}")
