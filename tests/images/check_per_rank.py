#!/usr/bin/env python3
"""Runs per_rank on N ranks and checks its output: every line each rank must
print appears exactly once and whole, and the end of each rank comes in the
order exit() has in a process (thread-locals, then atexit handlers and static
objects), after the rank's "ok".

usage: check_per_rank.py N -- cmd...
"""
import collections
import subprocess
import sys


def payload(rank, line):
    return "".join(chr(ord("a") + (rank * 7 + line * 3 + k) % 26) for k in range(60))


def main():
    n = int(sys.argv[1])
    cmd = sys.argv[3:] if sys.argv[2] == "--" else sys.argv[2:]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        print(f"FAIL: {' '.join(cmd)} did not end within 60 s")
        return 1
    out = r.stdout.splitlines()
    count = collections.Counter(out)
    err = collections.Counter(r.stderr.splitlines())
    problems = []
    if r.returncode != 0:
        problems.append(f"exit status {r.returncode}")
    for rank in range(n):
        ending = [f"per_rank: rank {rank} thread_local destroyed (owner {rank})",
                  f"per_rank: rank {rank} atexit handler (finalized 1)",
                  f"per_rank: rank {rank} static object destroyed",
                  f"per_rank: rank {rank} static local object destroyed"]
        ok = f"per_rank: rank {rank} ok"
        lines = [f"per_rank: rank {rank} line {i} {payload(rank, i)}" for i in range(40)]
        for want in [ok] + ending + lines:
            if count[want] != 1:
                problems.append(f"{want!r} appears {count[want]} times in stdout")
        for i in range(5):
            want = f"per_rank: rank {rank} stderr line {i}"
            if err[want] != 1:
                problems.append(f"{want!r} appears {err[want]} times in stderr")
        if all(count[x] == 1 for x in [ok] + ending):
            at = {x: out.index(x) for x in [ok] + ending}
            if not at[ok] < at[ending[0]] < min(at[x] for x in ending[1:]):
                problems.append(f"rank {rank} ended out of order: {sorted(at, key=at.get)}")
    if problems:
        print("FAIL:", " ".join(cmd))
        for p in problems[:20]:
            print("  -", p)
        print("--- stdout:\n" + r.stdout[-4000:])
        print("--- stderr:\n" + r.stderr[-4000:])
        return 1
    print("ok:", " ".join(cmd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
