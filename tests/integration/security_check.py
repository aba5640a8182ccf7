#!/usr/bin/env python3
"""Strangers knocking on a running job's ports: none gets in, the job is unharmed.

usage: security_check.py MPCRUN FAULT_TRAFFIC NODES

A job of NODES node processes started through fake_ssh.sh (so that its PMI
goes over TCP) runs fault_traffic, which moves messages of every protocol
(eager to rendezvous into registered memory) and checks every byte. Twice it
is held in start-up, its listeners open:
  1. node process 1 is not started yet (fake_ssh waits for a file): mpcrun's
     PMI port takes 1,000 foreign connections;
  2. node process 0 waits before connecting to the others (MPC_NET_FAULT=hold@0):
     the highest node process's data port (tcp driver) takes 1,000.
The strangers rotate through: no secret (plain PMI or a driver's old greeting),
a proof made with another secret, a proof made with the job's secret for an
earlier connection's challenge (a replay: the secret is taken from the fake
ssh, standing for someone who saw a proof go by), and random bytes. Each must
be closed by the job without a confirm, within a second. One more connection
with a good proof shows that the Python side computes the handshake as the
job does (and is still refused: its node process is connected already, or
its id is none the port waits for). Then the job must finish with its results
correct, refusals logged, and both ports closed once everyone is connected.
Exit 0 = pass.
"""
import hashlib
import hmac
import os
import random
import socket
import struct
import subprocess
import sys
import tempfile
import time

from jobcheck import MARKER, job_processes, leftovers

MPCRUN, TRAFFIC, NODES = sys.argv[1], sys.argv[2], int(sys.argv[3])
FAKE_SSH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_ssh.sh")
TRIES = 1000
PURPOSE_PMI, PURPOSE_TCP = 1, 2


def fail(message, proc=None):
    if proc and proc.poll() is None:
        proc.kill()
    print("FAIL:", message)
    sys.exit(1)


def wait_for(what, predicate, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    fail(f"timed out waiting for {what}")


def sockets_of(pid, state):
    """(local port, remote port) of pid's TCP sockets in `state` (/proc/net/tcp:
    0A listening, 01 established)."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        return []
    found = []
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[3] == state and fields[9] in inodes:
                found.append((int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16)))
    return found


def listening_ports(pid):
    return [local for local, _ in sockets_of(pid, "0A")]


def environ_of(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
    except OSError:
        return {}


def node_pid(node):
    for pid in job_processes():
        env = environ_of(pid)
        if env.get(b"MPC_NODE_ID") == str(node).encode() and b"PMI_PORT" in env:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if os.path.basename(TRAFFIC).encode() in f.read().split(b"\0")[0]:
                    return pid
    return None


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def proof_for(secret, challenge, purpose, my_id, nonce=None):
    """The handshake's proof (runtime/handshake.hpp), computed here."""
    head = b"MPCp" + bytes([1, purpose, 0, 0]) + struct.pack("<i", my_id) + bytes(4)
    head += nonce or os.urandom(16)
    mac = hmac.new(secret, b"fibermpi-auth-1 connector\0" + challenge + head,
                   hashlib.sha256).digest()
    return head + mac


def confirm_ok(secret, challenge, proof, confirm):
    want = hmac.new(secret, b"fibermpi-auth-1 acceptor\0" + challenge + proof,
                    hashlib.sha256).digest()
    return len(confirm) == 48 and confirm[:4] == b"MPCc" and hmac.compare_digest(confirm[16:], want)


def knock(port, purpose, secret, mode, stale_challenge):
    """One stranger; returns the challenge it saw. Fails the test if the job
    answers anything but the challenge, or keeps the connection open."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.settimeout(10)
    try:
        challenge = recv_exact(s, 32)
        if len(challenge) != 32 or challenge[:4] != b"MPCh" or challenge[5] != purpose:
            fail(f"port {port}: no challenge first ({challenge!r})")
        if mode == "plain":
            s.sendall(b"cmd=init pmi_version=2 pmi_subversion=0\n" if purpose == PURPOSE_PMI
                      else struct.pack("<Ii", 0x6d706331, 0))  # the driver's old greeting
        elif mode == "wrong":
            s.sendall(proof_for(os.urandom(32), challenge, purpose, 0))
        elif mode == "replay":
            s.sendall(proof_for(secret, stale_challenge, purpose, 0))
        else:
            # Not a proof's first byte: random bytes that begin as a proof
            # would (1 in 256) make a truncated proof, rightly given the 10 s
            # of a silent stranger.
            junk = bytearray(os.urandom(random.randint(1, 200)))
            if junk[0] == ord("M"):
                junk[0] ^= 0xFF
            s.sendall(bytes(junk))
        # "Closed at once": well before the 10 s a silent stranger is given,
        # with room for a loaded machine (1 s failed under CI's load).
        s.settimeout(4.0)
        try:
            rest = s.recv(64)
        except ConnectionResetError:
            rest = b""
        except socket.timeout:
            fail(f"port {port}: a stranger ({mode}) still connected after 4 s")
        if rest:
            fail(f"port {port}: a stranger ({mode}) got an answer: {rest!r}")
        return challenge
    finally:
        s.close()


def hammer(port, purpose, secret, label):
    start = time.monotonic()
    modes = ["plain", "wrong", "replay", "garbage"]
    stale = bytes(32)
    for i in range(TRIES):
        stale = knock(port, purpose, secret, modes[i % len(modes)], stale)
        if time.monotonic() - start > 120:
            fail(f"{label}: {i} tries took more than 120 s")
    print(f"{label}: {TRIES} strangers refused in {time.monotonic() - start:.2f} s")


def good_pmi_proof(port, secret, jobid):
    """A proof with the secret: the handshake passes, then mpcrun refuses the
    fullinit of a node process that is connected already."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    challenge = recv_exact(s, 32)
    proof = proof_for(secret, challenge, PURPOSE_PMI, 0)
    s.sendall(proof + b"cmd=init pmi_version=2 pmi_subversion=0\n")
    if not confirm_ok(secret, challenge, proof, recv_exact(s, 48)):
        fail("PMI: mpcrun's confirm does not verify here (the handshakes differ)")
    s.recv(256)  # response_to_init
    body = f"cmd=fullinit;pmijobid={jobid};pmirank=0;threaded=FALSE;".encode()
    s.sendall(b"%-6d" % len(body) + body)
    answer = s.recv(512)
    if b"rc=1" not in answer or b"connected already" not in answer:
        fail(f"PMI: a second node process 0 was not refused: {answer!r}")
    s.close()


def good_tcp_proof(port, secret):
    """A proof with the secret but an id the port does not wait for."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    challenge = recv_exact(s, 32)
    s.sendall(proof_for(secret, challenge, PURPOSE_TCP, 99))
    s.settimeout(5)
    if s.recv(64):
        fail("tcp: a proof for node 99 got an answer")
    s.close()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        go_pmi, go_net = os.path.join(tmp, "go-pmi"), os.path.join(tmp, "go-net")
        secret_file = os.path.join(tmp, "secret")
        env = dict(os.environ, MPC_SSH=FAKE_SSH, FAKE_SSH_HOLD=f"1:{go_pmi}",
                   FAKE_SSH_SECRET=secret_file, MPC_NET="tcp",
                   MPC_NET_FAULT="hold@0", MPC_NET_HOLD_FILE=go_net)
        for name in ("SLURM_JOB_ID", "MPC_LAUNCH"):
            env.pop(name, None)
        hosts = ",".join(["localhost"] * NODES)
        proc = subprocess.Popen([MPCRUN, "-n", str(2 * NODES), "--hosts", hosts, TRAFFIC,
                                 "traffic", "1", MARKER],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        try:
            # 1. The PMI port, node process 1 not started.
            pmi_port = wait_for("mpcrun's PMI port", lambda: (listening_ports(proc.pid) or [0])[0])
            secret = bytes.fromhex(wait_for("the secret", lambda: os.path.exists(secret_file) and
                                            open(secret_file).read().strip()))
            jobid = wait_for("node process 0", lambda: node_pid(0) and
                             environ_of(node_pid(0)).get(b"PMI_JOBID", b"").decode())
            wait_for("node process 0 on the PMI port",
                     lambda: any(r == pmi_port for _, r in sockets_of(node_pid(0), "01")))
            good_pmi_proof(pmi_port, secret, jobid)
            hammer(pmi_port, PURPOSE_PMI, secret, f"N{NODES} PMI port")
            open(go_pmi, "w").close()
            # 2. The data port of the highest node process, node 0 holding back.
            top = NODES - 1
            top_pid = wait_for(f"node process {top}", lambda: node_pid(top))
            data_port = wait_for("its data port", lambda: (listening_ports(top_pid) or [0])[0])
            good_tcp_proof(data_port, secret)
            hammer(data_port, PURPOSE_TCP, secret, f"N{NODES} data port of node {top}")
            open(go_net, "w").close()
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            fail("the job did not end", proc)
        out, err = out.decode(), err.decode()
        if proc.returncode != 0 or "fault_traffic: survived" not in out:
            fail(f"the job failed (status {proc.returncode}):\n{out}\n{err}")
        # Both ports are gone now that everyone is connected.
        for port, what in ((pmi_port, "PMI"), (data_port, "data")):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                fail(f"the {what} port {port} still accepts connections after start-up")
            except OSError:
                pass
        logged = err.count("refused a PMI connection from 127.0.0.1:")
        if logged != 5 or "connections to the PMI port were refused in all" not in err:
            fail(f"PMI refusals: {logged} logged, expected 5 and a total:\n{err}")
        if "tcp: refused a connection from 127.0.0.1:" not in err or \
                "proof names node 99" not in err or "were refused in all" not in err:
            fail(f"tcp refusals not logged as expected:\n{err}")
        total = [int(w) for line in err.splitlines() if "refused in all" in line
                 for w in line.split() if w.isdigit()]
        if len(total) != 2 or min(total) < TRIES:
            fail(f"refusal totals {total}, expected at least {TRIES} each:\n{err}")
    if leftovers(3.0):
        fail(f"processes left behind: {leftovers(0)}")
    print(f"PASS: {NODES} node processes, {2 * TRIES} strangers refused, results correct")


main()
