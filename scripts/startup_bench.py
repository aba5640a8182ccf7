#!/usr/bin/env python3
"""Start-up cost of an MPI job: wall time from launch to exit, and the memory
of the whole job (every process the launcher starts, the launcher included).

    scripts/startup_bench.py [--reps N] -- COMMAND...

The job's process tree is sampled every 2 ms; the peak of the summed resident
set (RSS, shared pages counted once per process) and of the summed
proportional set (PSS, shared pages split among the processes that map them,
the fair figure for many processes of one program) are reported, with the
median wall time over the repetitions. Typical use, 64-rank hello world:

    scripts/startup_bench.py -- build/launcher/mpcrun -n 64 ./hello
    scripts/startup_bench.py -- mpirun.openmpi --oversubscribe -np 64 ./hello.openmpi

Output: one line "startup <seconds> rss_mb <MB> pss_mb <MB> reps <N>" (medians
of the per-run peaks), after the command's own output is discarded.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def children(pid):
    """Every descendant of pid (from /proc/<pid>/task/*/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    kids = [int(k) for k in f.read().split()]
                out += kids
                todo += kids
        except OSError:
            pass
    return out


def memory_kb(pid):
    """(RSS, PSS) of one process in kB; zeros once it has gone."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


def one_run(cmd):
    start = time.monotonic()
    job = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak_rss = peak_pss = 0
    while job.poll() is None:
        rss = pss = 0
        for p in [job.pid] + children(job.pid):
            r, s = memory_kb(p)
            rss += r
            pss += s
        peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
        time.sleep(0.002)
    wall = time.monotonic() - start
    if job.returncode != 0:
        sys.exit(f"startup_bench: {' '.join(cmd)} exited with status {job.returncode}")
    return wall, peak_rss / 1024, peak_pss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3, help="runs (median reported)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND...")
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd or a.reps < 1:
        ap.error("a command after -- and --reps >= 1 are needed")
    runs = [one_run(cmd) for _ in range(a.reps)]
    wall, rss, pss = (statistics.median(x) for x in zip(*runs))
    print(f"startup {wall:.3f} rss_mb {rss:.1f} pss_mb {pss:.1f} reps {a.reps}")


if __name__ == "__main__":
    main()
