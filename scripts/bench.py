#!/usr/bin/env python3
"""Benchmark driver: builds the examples with our wrappers (and Open MPI's and
MPICH's when installed), runs the matrix, writes results, a report and plots.

    scripts/bench.py [--quick | --full] [options]      (scripts/bench.sh wraps it)

Matrix: for fibermpi, every progress mode (wait, collaborative, thread-poll,
thread-block) x node processes (-N 1, 2) x rank counts x problem sizes; for
Open MPI and MPICH the same programs at the same rank counts (one process per
rank: no progress modes, no -N; their "nodes" column holds the process count).
Each configuration runs --reps times (default 3; --quick 1 with small sizes;
--full 5 with larger ones), each run under a time limit; a failure is
recorded, never fatal.

Output in --out (default bench-results/):
  results.csv   one row per run and metric: mpi,mode,nodes,ranks,app,metric,value,rep
                (a failed run is one row with metric "failed": its exit status,
                124 for the time limit)
  report.md     medians over the repetitions, collaborative/wait MPI-time ratios,
                ours against Open MPI and MPICH, statistics, failures
  plots/*.png   overlap curves, MPI time per function, stolen work requests per
                rank, rendezvous timers, nonblocking-collective overhead (gnuplot;
                scripts/setup-deps.sh --bench installs it)
  bin/<mpi>/    the executables;  logs/  the output of every run

--report-only rebuilds report.md and the plots from an existing results.csv.
--summary runs the few headline measurements of the README's "How fast" table
instead (interleaved rounds, medians; benchlib/summary.py) and rewrites it.
Stdlib only. BUILD_DIR (default build) is our build tree.
"""
import argparse
import csv
import datetime
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from benchlib.build import Mpi, build_all, discover_targets, find_mpis
from benchlib.common import MPI_LABEL, OUR_MODES, ROOT, run_quiet
from benchlib.parse import (parse_allreduce, parse_coll, parse_common, parse_overlap,
                            parse_pingpong, parse_stats)
from benchlib.plots import gnuplot_terminal, plots
from benchlib.report import failures_from_csv, load_results, medians, report


# What each profile runs. Sizes are chosen so that --quick stays within about
# ten minutes on a loaded 2-core machine, MPICH's oversubscribed runs included
# (4 busy-polling processes on 2 cores make its collectives take milliseconds).
PROFILES = {
    "quick": dict(
        reps=1, timeout=60, nodes=[1, 2], ranks=[4],
        pingpong=["-max", "1048576", "-time", "0.05", "-reps", "2"],
        allreduce_counts=[1], allreduce_iters=300,
        coll=["-ops", "all", "-sizes", "8,4096", "-time", "0.02", "-sync", "1"],
        overlap=["-iters", "5", "-nbc-sizes", "8,32K", "32K", "256K"],
        eulermhd=[["--nx", "128", "--ny", "128", "--steps", "40"]],
        npb_classes=["S"]),
    "default": dict(
        reps=3, timeout=180, nodes=[1, 2], ranks=[2, 4],
        pingpong=["-max", "16777216", "-time", "0.1", "-reps", "3"],
        allreduce_counts=[1, 8192], allreduce_iters=2000,
        coll=["-ops", "all", "-sizes", "8,4096,1048576", "-time", "0.05", "-sync", "1"],
        overlap=["-iters", "15", "-nbc-sizes", "8,32K,1M", "32K", "1M"],
        eulermhd=[["--nx", "256", "--ny", "256", "--steps", "100"],
                  ["--nx", "256", "--ny", "256", "--steps", "100", "--imbalance", "2"]],
        npb_classes=["S", "W"]),
    "full": dict(
        reps=5, timeout=600, nodes=[1, 2], ranks=[2, 4, 8],
        pingpong=["-max", "67108864", "-time", "0.2", "-reps", "5"],
        allreduce_counts=[1, 128, 8192], allreduce_iters=10000,
        coll=["-ops", "all", "-sizes", "8,4096,65536,1048576", "-time", "0.1", "-sync", "1"],
        overlap=["-iters", "30", "-nbc-sizes", "8,1K,32K,1M"],
        eulermhd=[["--nx", "512", "--ny", "512", "--steps", "200"],
                  ["--nx", "512", "--ny", "512", "--steps", "200", "--imbalance", "2"]],
        npb_classes=["S", "W", "A"]),
}

# --------------------------------------------------------------------- matrix


@dataclass
class Bench:
    app: str               # the CSV's app column
    binary: str
    args: list
    ranks: list
    parse: object
    stats: bool = False    # ours runs with --stats (not for the latency benchmarks)
    default_only: bool = False  # ours only as users run it (collaborative, one node process)


def benches(profile, built, ranks_override):
    p = PROFILES[profile]
    ranks = ranks_override or p["ranks"]
    out = []
    if "pingpong" in built:
        out.append(Bench("pingpong", "pingpong", p["pingpong"], [2], parse_pingpong))
    if "allreduce_bench" in built:
        for count in p["allreduce_counts"]:
            out.append(Bench(f"allreduce.{8 * count}B", "allreduce_bench",
                             ["-iters", str(p["allreduce_iters"]), "-count", str(count)],
                             ranks, parse_allreduce))
    if "coll_bench" in built:  # every collective and its nonblocking form, OSU-style latency
        out.append(Bench("coll", "coll_bench", p["coll"], ranks, parse_coll, default_only=True))
    if "overlap" in built:  # the point-to-point part needs exactly 4 ranks
        out.append(Bench("overlap", "overlap", p["overlap"], [4], parse_overlap, stats=True))
    if "eulermhd" in built:
        for args in p["eulermhd"]:
            tag = f"{args[1]}x{args[3]}" + ("-imb" if "--imbalance" in args else "")
            out.append(Bench(f"eulermhd.{tag}", "eulermhd", args, ranks, parse_common,
                             stats=True))
    for kernel in sorted(k for k in built if k.startswith("npb_")):
        for cls in p["npb_classes"]:
            out.append(Bench(f"{kernel}.{cls}", kernel, [cls], ranks, parse_common, stats=True))
    return out


@dataclass
class Run:
    mpi: Mpi
    mode: str
    nodes: int
    ranks: int
    bench: Bench


def matrix(mpis, bench_list, modes, nodes_list):
    runs = []
    for b in bench_list:
        for ranks in b.ranks:
            for mpi in mpis:
                if mpi.name == "ours" and b.default_only:
                    runs.append(Run(mpi, "collaborative", 1, ranks, b))
                elif mpi.name == "ours":
                    for nodes in nodes_list:
                        if nodes > ranks:
                            continue
                        runs += [Run(mpi, m, nodes, ranks, b) for m in modes]
                else:
                    runs.append(Run(mpi, "-", ranks, ranks, b))
    return runs


def execute(cmd, timeout, log_path):
    """Runs cmd in its own process group; returns (status, output, seconds)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True, text=True,
                            errors="replace")
    try:
        out, _ = proc.communicate(timeout=timeout)
        status = proc.returncode
    except subprocess.TimeoutExpired:
        for sig, grace in ((signal.SIGTERM, 3), (signal.SIGKILL, 5)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=grace)
                break
            except subprocess.TimeoutExpired:
                pass
        out = (proc.communicate()[0] or "") + f"\nbench: time limit of {timeout} s reached\n"
        status = 124
    took = time.monotonic() - start
    log_path.write_text(f"$ {' '.join(cmd)}\n# status {status}, {took:.1f} s\n{out}")
    return status, out, took


def run_matrix(runs, reps, timeout, out_dir, writer, csv_file):
    logs = out_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    total, done, failures = len(runs) * reps, 0, []
    for rep in range(1, reps + 1):  # repetitions outermost: noise spreads over them
        for r in runs:
            done += 1
            exe = str(out_dir / "bin" / r.mpi.name / r.bench.binary)
            cmd = r.mpi.command(exe, r.bench.args, r.ranks, r.nodes, r.mode, r.bench.stats,
                                timeout)
            mode_tag = r.mode if r.mpi.name == "ours" else "na"
            log = logs / f"{r.bench.app}_{r.mpi.name}_{mode_tag}_N{r.nodes}_n{r.ranks}_rep{rep}.log"
            # mpcrun ends its own job at the limit; the others get no extra time.
            status, out, took = execute(cmd, timeout + 15 if r.mpi.name == "ours" else timeout,
                                        log)
            rows = r.bench.parse(out)
            if r.mpi.name == "ours" and r.bench.stats:
                rows += parse_stats(out)
            bad = status != 0 or not rows or ("verified", 0.0) in rows
            key = [r.mpi.name, r.mode, r.nodes, r.ranks, r.bench.app]
            if bad:
                rows = [("failed", float(status if status else 1))]
                failures.append((key, status, log))
            for metric, value in rows:
                writer.writerow(key + [metric, f"{value:.6g}", rep])
            csv_file.flush()
            label = (f"fibermpi {r.mode} N{r.nodes}" if r.mpi.name == "ours"
                     else MPI_LABEL[r.mpi.name])
            print(f"[{done}/{total}] {r.bench.app} {label} n{r.ranks} rep{rep}: "
                  f"{took:.1f} s {'FAILED (' + str(status) + ')' if bad else 'ok'}", flush=True)
    return failures

# ---------------------------------------------------------------------- main


def parse_args():
    intro, _, rest = __doc__.partition("\n\n")
    ap = argparse.ArgumentParser(description=intro, epilog=rest,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_const", dest="profile", const="quick",
                      help="1 repetition, small sizes (about 10 minutes)")
    size.add_argument("--full", action="store_const", dest="profile", const="full",
                      help="5 repetitions, larger sizes and rank counts")
    ap.add_argument("--reps", type=int, help="repetitions of each configuration")
    ap.add_argument("--timeout", type=float, help="time limit of one run, seconds")
    ap.add_argument("--out", default=str(ROOT / "bench-results"), help="output directory")
    ap.add_argument("--mpis", default="ours,openmpi,mpich", help="comma-separated subset")
    ap.add_argument("--modes", default=",".join(OUR_MODES), help="our progress modes to run")
    ap.add_argument("--nodes", help="our node-process counts, comma-separated (default 1,2)")
    ap.add_argument("--ranks", help="rank counts of the scalable apps, comma-separated")
    ap.add_argument("--only", help="apps to run (prefixes of the app names), comma-separated")
    ap.add_argument("--no-build", action="store_true", help="use the built project and binaries")
    ap.add_argument("--rebuild", action="store_true", help="rebuild every example binary")
    ap.add_argument("--dry-run", action="store_true", help="list the runs, run nothing")
    ap.add_argument("--report-only", action="store_true",
                    help="report and plots from the existing results.csv")
    ap.add_argument("--summary", action="store_true",
                    help="the README's How-fast table: headline measurements in interleaved "
                         "rounds (--reps, default 7), docs/performance/summary.md and plots")
    ap.add_argument("--no-readme", dest="readme", action="store_false",
                    help="with --summary: leave README.md alone")
    ap.add_argument("--no-plots", dest="plots", action="store_false",
                    help="with --summary: no plots")
    a = ap.parse_args()
    a.profile = a.profile or "default"
    return a


def prepare(a, build_dir, out_dir):
    """Builds what is needed; returns (runs, build failures)."""
    if not a.no_build and not a.dry_run:
        print(f"bench: building fibermpi in {build_dir}", flush=True)
        r = subprocess.run([str(ROOT / "scripts" / "build.sh")], cwd=ROOT,
                           env=dict(os.environ, BUILD_DIR=str(build_dir)))
        if r.returncode:
            sys.exit("bench: scripts/build.sh failed")
    mpis = find_mpis(build_dir, a.mpis.split(","))
    if not (build_dir / "launcher" / "mpcrun").exists():
        if any(m.name == "ours" for m in mpis):
            print(f"bench: no mpcrun in {build_dir}: fibermpi left out", file=sys.stderr)
        mpis = [m for m in mpis if m.name != "ours"]
    targets = discover_targets()
    print("bench: MPIs: " + ", ".join(MPI_LABEL[m.name] for m in mpis)
          + "; programs: " + ", ".join(t.name for t in targets), flush=True)
    build_failures = {} if a.dry_run else build_all(mpis, targets, out_dir, a.rebuild)
    bench_list = benches(a.profile, {t.name for t in targets},
                         [int(x) for x in a.ranks.split(",")] if a.ranks else None)
    if a.only:
        prefixes = a.only.split(",")
        bench_list = [b for b in bench_list if any(b.app.startswith(x) for x in prefixes)]
    nodes = [int(x) for x in a.nodes.split(",")] if a.nodes else PROFILES[a.profile]["nodes"]
    modes = [m for m in a.modes.split(",") if m in OUR_MODES]
    runs = [r for r in matrix(mpis, bench_list, modes, nodes)
            if (r.mpi.name, r.bench.binary) not in build_failures]
    return runs, build_failures


def read_meta(out_dir):
    meta = {}
    if (out_dir / "meta.txt").exists():
        for line in (out_dir / "meta.txt").read_text().splitlines():
            k, _, v = line.partition(": ")
            meta[k] = v
    return meta


def main():
    a = parse_args()
    out_dir = Path(a.out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    build_dir = Path(os.environ.get("BUILD_DIR", "build"))
    if not build_dir.is_absolute():
        build_dir = ROOT / build_dir
    start = time.monotonic()
    if a.summary:
        if not a.no_build:
            r = subprocess.run([str(ROOT / "scripts" / "build.sh")], cwd=ROOT,
                               env=dict(os.environ, BUILD_DIR=str(build_dir)))
            if r.returncode:
                sys.exit("bench: scripts/build.sh failed")
        from benchlib import summary
        summary.main(a, build_dir, out_dir)
        return

    failures, build_failures = [], {}
    if a.report_only:
        meta = read_meta(out_dir)
    else:
        runs, build_failures = prepare(a, build_dir, out_dir)
        reps = a.reps or PROFILES[a.profile]["reps"]
        timeout = a.timeout or PROFILES[a.profile]["timeout"]
        if a.dry_run:
            for r in runs:
                print(" ".join(r.mpi.command(f"bin/{r.mpi.name}/{r.bench.binary}", r.bench.args,
                                             r.ranks, r.nodes, r.mode, r.bench.stats, timeout)))
            print(f"bench: {len(runs)} runs x {reps} repetitions")
            return
        print(f"bench: {a.profile}: {len(runs)} configurations x {reps} repetitions, "
              f"time limit {timeout:g} s each", flush=True)
        with open(out_dir / "results.csv", "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["mpi", "mode", "nodes", "ranks", "app", "metric", "value", "rep"])
            failures = run_matrix(runs, reps, timeout, out_dir, writer, f)
        meta = {
            "command": " ".join(["scripts/bench.py"] + sys.argv[1:]),
            "profile": a.profile, "repetitions": reps, "time limit per run (s)": timeout,
            "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "host": f"{platform.node()}, {os.cpu_count()} cores, load average "
                    + ", ".join(f"{x:.2f}" for x in os.getloadavg()),
            "git": run_quiet(["git", "-C", str(ROOT), "describe", "--always", "--dirty"])[1],
            "fibermpi build": str(build_dir),
            "runs": f"{len(runs) * reps}, {len(failures)} failed",
            "duration (s)": f"{time.monotonic() - start:.0f}",
        }
        (out_dir / "meta.txt").write_text("".join(f"{k}: {v}\n" for k, v in meta.items()))

    data = load_results(out_dir / "results.csv")
    if a.report_only:
        failures = failures_from_csv(data, out_dir)
    med = medians(data)
    made = []
    term = gnuplot_terminal() if shutil.which("gnuplot") else None
    if term:
        made = plots(out_dir, med, term)
    else:
        print("bench: no gnuplot (scripts/setup-deps.sh --bench): no plots", file=sys.stderr)
    report(out_dir, med, meta, failures, build_failures, made)
    print(f"bench: wrote {out_dir / 'results.csv'}, {out_dir / 'report.md'} and "
          f"{len(made)} plots in {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
