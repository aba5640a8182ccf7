#!/usr/bin/env python3
"""Runs a command and checks how it ended: exit status and output.

usage: expect_run.py [--status N | --nonzero] [--stderr REGEX]... [--stdout REGEX]...
                     [--stdout-count TEXT N] [--not-output REGEX]... [--timeout S] -- cmd...

--status N         the exit status must be N (default 0)
--nonzero          any non-zero exit status (a signal counts as 128+signal)
--stderr REGEX     stderr must match (re.search, multi-line)
--stdout REGEX     stdout must match
--stdout-count T N T must occur exactly N times in stdout
--not-output REGEX neither stdout nor stderr may match
--timeout S        the command must end within S seconds (default 60)

Exit 0 when every expectation holds; otherwise prints what differs, with the
command's output, and exits 1.
"""
import argparse
import re
import subprocess
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--status", type=int, default=None)
    p.add_argument("--nonzero", action="store_true")
    p.add_argument("--stderr", action="append", default=[])
    p.add_argument("--stdout", action="append", default=[])
    p.add_argument("--stdout-count", nargs=2, action="append", default=[])
    p.add_argument("--not-output", action="append", default=[])
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        p.error("no command")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired as e:
        print(f"FAIL: {' '.join(cmd)} did not end within {a.timeout} s")
        print("--- stdout:\n" + (e.stdout or b"").decode(errors="replace"))
        print("--- stderr:\n" + (e.stderr or b"").decode(errors="replace"))
        return 1
    status = r.returncode if r.returncode >= 0 else 128 - r.returncode
    problems = []
    if a.nonzero:
        if status == 0:
            problems.append("exit status 0, expected non-zero")
    else:
        want = 0 if a.status is None else a.status
        if status != want:
            problems.append(f"exit status {status}, expected {want}")
    for rx in a.stderr:
        if not re.search(rx, r.stderr, re.M):
            problems.append(f"stderr does not match {rx!r}")
    for rx in a.stdout:
        if not re.search(rx, r.stdout, re.M):
            problems.append(f"stdout does not match {rx!r}")
    for text, n in a.stdout_count:
        got = r.stdout.count(text)
        if got != int(n):
            problems.append(f"{text!r} occurs {got} times in stdout, expected {n}")
    for rx in a.not_output:
        if re.search(rx, r.stdout + r.stderr, re.M):
            problems.append(f"output matches {rx!r}")
    if problems:
        print("FAIL:", " ".join(cmd))
        for pr in problems:
            print("  -", pr)
        print("--- stdout:\n" + r.stdout)
        print("--- stderr:\n" + r.stderr)
        return 1
    print("ok:", " ".join(cmd), f"(status {status})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
