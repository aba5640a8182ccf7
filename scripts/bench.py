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
Stdlib only. BUILD_DIR (default build) is our build tree.
"""
import argparse
import concurrent.futures
import csv
import datetime
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
COMMON = EXAMPLES / "common"
OUR_MODES = ["wait", "collaborative", "thread-poll", "thread-block"]
OTHER_MPIS = ["openmpi", "mpich"]
MPI_LABEL = {"ours": "fibermpi", "openmpi": "Open MPI", "mpich": "MPICH"}

# What each profile runs. Sizes are chosen so that --quick stays within about
# ten minutes on a loaded 2-core machine, MPICH's oversubscribed runs included
# (4 busy-polling processes on 2 cores make its collectives take milliseconds).
PROFILES = {
    "quick": dict(
        reps=1, timeout=60, nodes=[1, 2], ranks=[4],
        pingpong=["-max", "1048576", "-time", "0.05", "-reps", "2"],
        allreduce_counts=[1], allreduce_iters=300,
        overlap=["-iters", "5", "-nbc-sizes", "8,32K", "32K", "256K"],
        eulermhd=[["--nx", "128", "--ny", "128", "--steps", "40"]],
        npb_classes=["S"]),
    "default": dict(
        reps=3, timeout=180, nodes=[1, 2], ranks=[2, 4],
        pingpong=["-max", "16777216", "-time", "0.1", "-reps", "3"],
        allreduce_counts=[1, 8192], allreduce_iters=2000,
        overlap=["-iters", "15", "-nbc-sizes", "8,32K,1M", "32K", "1M"],
        eulermhd=[["--nx", "256", "--ny", "256", "--steps", "100"],
                  ["--nx", "256", "--ny", "256", "--steps", "100", "--imbalance", "2"]],
        npb_classes=["S", "W"]),
    "full": dict(
        reps=5, timeout=600, nodes=[1, 2], ranks=[2, 4, 8],
        pingpong=["-max", "67108864", "-time", "0.2", "-reps", "5"],
        allreduce_counts=[1, 128, 8192], allreduce_iters=10000,
        overlap=["-iters", "30", "-nbc-sizes", "8,1K,32K,1M"],
        eulermhd=[["--nx", "512", "--ny", "512", "--steps", "200"],
                  ["--nx", "512", "--ny", "512", "--steps", "200", "--imbalance", "2"]],
        npb_classes=["S", "W", "A"]),
}

# ---------------------------------------------------------------- toolchains


@dataclass
class Mpi:
    name: str                      # ours | openmpi | mpich
    cc: str
    cxx: str
    fc: str | None
    deps: list = field(default_factory=list)   # files whose change means rebuild

    def command(self, exe, args, ranks, nodes, mode, stats, timeout):
        if self.name == "ours":
            mpcrun = str(Path(self.cc).with_name("mpcrun"))
            cmd = [mpcrun, "-n", str(ranks), "-N", str(nodes), "--progress", mode]
            if stats:
                cmd.append("--stats")
            return cmd + ["--timeout", str(timeout), exe] + args
        if self.name == "openmpi":
            return ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-n", str(ranks),
                    exe] + args
        return ["mpiexec.mpich", "-n", str(ranks), exe] + args


def find_mpis(build_dir, wanted):
    found = []
    wrappers = build_dir / "launcher"
    if "ours" in wanted:
        fc = wrappers / "mpifort"
        found.append(Mpi("ours", str(wrappers / "mpicc"), str(wrappers / "mpicxx"),
                         str(fc) if fc.exists() else None,
                         deps=[p for p in (build_dir / "libfibermpi.so",
                                           build_dir / "mpi_api" / "mpi.h") if p.exists()]))
    for name in OTHER_MPIS:
        if name in wanted and shutil.which(f"mpicc.{name}"):
            launcher = "mpirun.openmpi" if name == "openmpi" else "mpiexec.mpich"
            if not shutil.which(launcher):
                continue
            found.append(Mpi(name, f"mpicc.{name}", f"mpicxx.{name}",
                             f"mpifort.{name}" if shutil.which(f"mpifort.{name}") else None))
    return found

# ------------------------------------------------------------------- targets


@dataclass
class Target:
    name: str              # executable name
    lang: str              # c | cxx | fortran
    sources: list
    flags: list = field(default_factory=list)
    libs: list = field(default_factory=list)
    profiled: bool = False  # links examples/common/mpi_profile.c
    watch: list = field(default_factory=list)  # other inputs (headers)


MAIN_RE = re.compile(r"^\s*int\s+main\s*\(", re.M)
FORTRAN_MODULE_RE = re.compile(r"^\s*module\s+(?!procedure\b)\w+", re.M | re.I)


def discover_targets():
    """The benchmark programs that exist now (others are being written)."""
    targets = []
    for name in ("pingpong", "allreduce_bench", "overlap"):
        src = EXAMPLES / f"{name}.c"
        if src.exists():
            targets.append(Target(name, "c", [src]))
    euler = sorted((EXAMPLES / "eulermhd").glob("*.c"))
    if any(MAIN_RE.search(p.read_text(errors="replace")) for p in euler):
        targets.append(Target("eulermhd", "c", euler, flags=["-ffp-contract=off"], libs=["-lm"],
                              profiled=True, watch=sorted((EXAMPLES / "eulermhd").glob("*.h"))))
    npb = sorted((EXAMPLES / "npb").glob("*.cpp"))
    kernels = [p for p in npb if MAIN_RE.search(p.read_text(errors="replace"))]
    helpers = [p for p in npb if p not in kernels]
    for k in kernels:
        targets.append(Target(k.stem, "cxx", [k] + helpers, flags=["-std=c++20"], profiled=True,
                              watch=sorted((EXAMPLES / "npb").glob("*.hpp"))))
    f90 = sorted((EXAMPLES / "npb_cg_f").glob("*.f90"))
    if f90:  # files that define modules first: the others use them
        f90.sort(key=lambda p: not FORTRAN_MODULE_RE.search(p.read_text(errors="replace")))
        targets.append(Target("npb_cg_f", "fortran", f90, flags=["-fallow-argument-mismatch"],
                              watch=sorted((EXAMPLES / "npb_cg_f").glob("*.h"))))
    return targets


def run_quiet(cmd, cwd=None):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return r.returncode, (r.stdout + r.stderr).strip()


def up_to_date(out, inputs):
    if not out.exists():
        return False
    t = out.stat().st_mtime
    return all(Path(i).stat().st_mtime <= t for i in inputs if Path(i).exists())


def build_target(mpi, target, bindir, rebuild):
    """Returns (target name, error or None)."""
    out = bindir / target.name
    objdir = bindir / "obj" / target.name
    objdir.mkdir(parents=True, exist_ok=True)
    inputs = list(target.sources) + target.watch + mpi.deps
    extra = []
    if target.profiled:
        prof_src, prof_obj = COMMON / "mpi_profile.c", objdir / "mpi_profile.o"
        inputs += [prof_src, COMMON / "mpi_profile.h"]
        if rebuild or not up_to_date(prof_obj, [prof_src, COMMON / "mpi_profile.h"] + mpi.deps):
            rc, text = run_quiet([mpi.cc, "-O2", "-I", str(COMMON), "-c", str(prof_src), "-o",
                                  str(prof_obj)])
            if rc:
                return target.name, f"mpi_profile.c: {text[-2000:]}"
        extra = [str(prof_obj)]
    if not rebuild and up_to_date(out, inputs):
        return target.name, None
    compiler = {"c": mpi.cc, "cxx": mpi.cxx, "fortran": mpi.fc}[target.lang]
    if compiler is None:
        return target.name, f"no {target.lang} compiler wrapper"
    includes = ["-I", str(COMMON)] + sorted({f"-I{p.parent}" for p in target.sources})
    cmd = ([compiler, "-O2"] + target.flags + includes + [str(s) for s in target.sources] + extra
           + ["-o", str(out)] + target.libs)
    rc, text = run_quiet(cmd, cwd=objdir)  # Fortran .mod files land in objdir
    return target.name, (f"{' '.join(cmd)}\n{text[-3000:]}" if rc else None)


def build_all(mpis, targets, out_dir, rebuild):
    """Builds every target for every MPI, two at a time; returns {(mpi, target): error}."""
    failures, jobs = {}, {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for mpi in mpis:
            bindir = out_dir / "bin" / mpi.name
            bindir.mkdir(parents=True, exist_ok=True)
            for t in targets:
                jobs[pool.submit(build_target, mpi, t, bindir, rebuild)] = mpi.name
        for fut in concurrent.futures.as_completed(jobs):
            name, error = fut.result()
            if error:
                failures[(jobs[fut], name)] = error
                print(f"bench: build of {name} with {jobs[fut]} failed", file=sys.stderr)
    return failures

# ------------------------------------------------------------------- parsing

NUM = r"([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf))"


def kv_fields(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


def fnum(text):
    try:
        return float(text)
    except ValueError:
        return float("nan")


def parse_common(out):
    """PROFILE lines (examples/common/mpi_profile.c), NPB summaries, verification."""
    rows = []
    for line in out.splitlines():
        if line.startswith("PROFILE "):
            kv = kv_fields(line)
            if "fn" in kv:
                rows.append((f"mpi_s:{kv['fn']}", fnum(kv.get("mean_s", "nan"))))
                rows.append((f"calls:{kv['fn']}", fnum(kv.get("calls", "nan"))))
            elif " total " in line:
                for key in ("wall_s", "mpi_mean_s", "mpi_max_s", "compute_mean_s"):
                    if key in kv:
                        rows.append((key, fnum(kv[key])))
        elif m := re.match(r"\s*Time in seconds\s*=\s*" + NUM, line):
            rows.append(("time_s", fnum(m.group(1))))
        elif m := re.match(r"\s*Mop/s total\s*=\s*" + NUM, line):
            rows.append(("mops", fnum(m.group(1))))
        elif m := re.match(r"eulermhd: wall " + NUM + r" s", line):
            rows.append(("time_s", fnum(m.group(1))))
    if "VERIFICATION SUCCESSFUL" in out:
        rows.append(("verified", 1.0))
    elif "VERIFICATION FAILED" in out:
        rows.append(("verified", 0.0))
    return rows


def parse_pingpong(out):
    rows = []
    for m in re.finditer(r"^\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s*$", out, re.M):
        n = m.group(1)
        rows += [(f"latency_us@{n}", float(m.group(2))), (f"bw_MBps@{n}", float(m.group(3)))]
    return rows


def parse_allreduce(out):
    m = re.search(r"allreduce: \d+ ranks, (\d+) bytes, \d+ iterations: ([\d.]+) us per call", out)
    if not m:
        return []
    rows = [(f"allreduce_us@{m.group(1)}", float(m.group(2)))]
    if "WRONG RESULT" in out:
        rows.append(("verified", 0.0))
    return rows


def parse_overlap(out):
    rows = []
    for line in out.splitlines():
        kv = kv_fields(line)
        if line.startswith("OVERLAP part=curve"):
            key = f"{kv['pattern']}:{kv['size']}"
            work, total, nov = (fnum(kv[k]) for k in ("work_us", "total_us", "nooverlap_us"))
            step = round(2 * work / (nov - work)) if nov > work else 0  # work = step/2 x t_comm
            rows += [(f"curve_work_us:{key}:k{step}", work),
                     (f"curve_total_us:{key}:k{step}", total),
                     (f"tcomm_us:{kv['size']}", nov - work)]
        elif line.startswith("OVERLAP part=ratio"):
            rows.append((f"overlap_ratio:{kv['side']}:{kv['size']}", fnum(kv["ratio"])))
        elif line.startswith("OVERLAP part=receiver-wait"):
            rows.append((f"receiver_wait_us:{kv['size']}", fnum(kv["median_us"])))
        elif line.startswith("NBC "):
            key = f"{kv['op']}:{kv['size']}:{kv['method']}"
            for field_name in ("total_us", "work_us", "overhead_us", "work_measured_us"):
                rows.append((f"nbc_{field_name}:{key}", fnum(kv[field_name])))
            rows.append((f"nbc_blocking_us:{kv['op']}:{kv['size']}", fnum(kv["blocking_us"])))
    # tcomm_us and nbc_blocking_us repeat: keep the first.
    seen, unique = set(), []
    for metric, value in rows:
        if metric in seen:
            continue
        seen.add(metric)
        unique.append((metric, value))
    return unique


STATS_RANK_RE = re.compile(r"^mpcx stats:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+"
                           r"([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")
STATS_FN_RE = re.compile(r"^mpcx stats: (MPI_\w+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s*$")
STATS_RANK_FIELDS = ["self", "stolen_numa", "stolen_other", "rndv", "req_ack_us", "matching_us",
                     "reception_us"]


def parse_stats(out):
    """mpcrun --stats (runtime/entry/stats_report.cpp): per rank and per function."""
    rows, fn_ms = [], {}
    for line in out.splitlines():
        if m := STATS_RANK_RE.match(line):
            rank = m.group(1)
            for name, value in zip(STATS_RANK_FIELDS, m.groups()[1:]):
                rows.append((f"stats_{name}:r{rank}", float(value)))
        elif m := STATS_FN_RE.match(line):
            fn_ms[m.group(1)] = fn_ms.get(m.group(1), 0.0) + float(m.group(3))
    rows += [(f"stats_fn_ms:{fn}", ms) for fn, ms in fn_ms.items()]
    return rows

# --------------------------------------------------------------------- matrix


@dataclass
class Bench:
    app: str               # the CSV's app column
    binary: str
    args: list
    ranks: list
    parse: object
    stats: bool = False    # ours runs with --stats (not for the latency benchmarks)


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
                if mpi.name == "ours":
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

# -------------------------------------------------------------------- report


def load_results(path):
    """{(mpi, mode, nodes, ranks, app, metric): [values]} from results.csv."""
    data = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["mpi"], row["mode"], int(row["nodes"]), int(row["ranks"]), row["app"],
                   row["metric"])
            data.setdefault(key, []).append(float(row["value"]))
    return data


def medians(data):
    out = {}
    for k, v in data.items():
        finite = [x for x in v if x == x]
        out[k] = statistics.median(finite) if finite else float("nan")
    return out


def fmt(v):
    if v is None or v != v:
        return "–"
    if abs(v) >= 1000:
        return f"{v:.0f}"
    return f"{v:.3g}"


def ratio(a, b):
    if a is None or b is None or a != a or b != b or b == 0:
        return None
    return a / b


@dataclass(frozen=True)
class Config:
    mpi: str
    mode: str
    nodes: int | None      # None: the other MPIs (nodes = ranks there)

    def label(self):
        if self.mpi != "ours":
            return MPI_LABEL[self.mpi]
        return f"{self.mode} N{self.nodes}"

    def get(self, med, ranks, app, metric):
        nodes = ranks if self.nodes is None else self.nodes
        return med.get((self.mpi, self.mode, nodes, ranks, app, metric))


def configs_present(med):
    found = {(k[0], k[1], k[2]) for k in med}
    out = []
    for nodes in sorted({n for m, _, n in found if m == "ours"}):
        out += [Config("ours", mode, nodes) for mode in OUR_MODES
                if ("ours", mode, nodes) in found]
    out += [Config(m, "-", None) for m in OTHER_MPIS if any(k[0] == m for k in found)]
    return out


def key_metrics(app, metrics):
    """The metrics worth a row of the main table, for one app."""
    want = []
    if app == "pingpong":
        want = [m for m in ("latency_us@8", "latency_us@65536", "bw_MBps@1048576",
                            "bw_MBps@16777216") if m in metrics]
    elif app.startswith("allreduce"):
        want = sorted(m for m in metrics if m.startswith("allreduce_us@"))
    elif app == "overlap":
        sizes = sorted({int(m.split(":")[-1]) for m in metrics if m.startswith("overlap_ratio:")})
        for s in sizes:
            want += [f"overlap_ratio:both:{s}", f"receiver_wait_us:{s}"]
    else:  # the app's own time when it prints one, else the profiled region's
        want = ["time_s" if "time_s" in metrics else "wall_s", "mpi_mean_s", "mops"]
    return [m for m in want if m in metrics]


HIGHER_IS_BETTER = ("bw_MBps", "overlap_ratio", "mops")


def report(out_dir, med, meta, failures, build_failures, plots):
    configs = configs_present(med)
    apps = sorted({k[4] for k in med}, key=lambda a: (a.split(".")[0] != "pingpong", a))
    lines = [f"# Benchmark report ({meta.get('profile', '?')})", ""]
    lines += [f"- {k}: {v}" for k, v in meta.items()]
    lines += ["", "Values are medians over the repetitions. fibermpi columns are `mode N<node "
              "processes>`; Open MPI and MPICH run one process per rank. Times in s or us as "
              "named; `bw` in MB/s, `overlap_ratio` = work/total (1 = full overlap), `mops` "
              "Mop/s: higher is better for those three, lower for the rest.", ""]

    # 1. key table
    lines += ["## Key results", ""]
    lines.append("| app | ranks | metric | " + " | ".join(c.label() for c in configs) + " |")
    lines.append("|---|---|---|" + "---|" * len(configs))
    for app in apps:
        for ranks in sorted({k[3] for k in med if k[4] == app}):
            metrics = {k[5] for k in med if k[4] == app and k[3] == ranks}
            for metric in key_metrics(app, metrics):
                vals = [fmt(c.get(med, ranks, app, metric)) for c in configs]
                lines.append(f"| {app} | {ranks} | {metric} | " + " | ".join(vals) + " |")
    lines.append("")

    # 2. collaborative / wait
    lines += ["## Progress modes: MPI time against `wait`", "",
              "MPI time = mean over ranks of the time inside MPI (PROFILE total mpi_mean_s); "
              "below 1 the mode spends less time in MPI than `wait`.", "",
              "| app | N | ranks | wait (s) | collaborative (s) | collaborative/wait | "
              "thread-poll/wait | thread-block/wait |", "|---|---|---|---|---|---|---|---|"]
    for app in apps:
        for (nodes, ranks) in sorted({(k[2], k[3]) for k in med
                                      if k[4] == app and k[0] == "ours" and k[5] == "mpi_mean_s"}):
            def get(mode):
                return med.get(("ours", mode, nodes, ranks, app, "mpi_mean_s"))
            w = get("wait")
            lines.append(f"| {app} | {nodes} | {ranks} | {fmt(w)} | {fmt(get('collaborative'))} | "
                         + " | ".join(fmt(ratio(get(m), w))
                                      for m in ("collaborative", "thread-poll", "thread-block"))
                         + " |")
    lines.append("")

    # 3. against the other MPIs
    others = [m for m in OTHER_MPIS if any(c.mpi == m for c in configs)]
    if others:
        lines += ["## fibermpi against Open MPI and MPICH", "",
                  "fibermpi as users run it by default: collaborative, one node process (N1). "
                  "A ratio below 1 is better for fibermpi, except for bandwidth, overlap ratio "
                  "and Mop/s (above 1 is better).", "",
                  "| app | ranks | metric | fibermpi | " + " | ".join(MPI_LABEL[m] for m in others)
                  + " | " + " | ".join(f"fibermpi/{MPI_LABEL[m]}" for m in others) + " |",
                  "|---|---|---|---|" + "---|" * (2 * len(others))]
        ours = Config("ours", "collaborative", 1)
        for app in apps:
            for ranks in sorted({k[3] for k in med if k[4] == app}):
                metrics = {k[5] for k in med if k[4] == app and k[3] == ranks}
                for metric in key_metrics(app, metrics):
                    mine = ours.get(med, ranks, app, metric)
                    theirs = [Config(m, "-", None).get(med, ranks, app, metric) for m in others]
                    lines.append(f"| {app} | {ranks} | {metric} | {fmt(mine)} | "
                                 + " | ".join(fmt(t) for t in theirs) + " | "
                                 + " | ".join(fmt(ratio(mine, t)) for t in theirs) + " |")
        lines.append("")

    # 4. nonblocking collectives
    nbc = sorted({k[5].split(":", 1)[1] for k in med if k[5].startswith("nbc_overhead_us:")},
                 key=lambda s: (s.split(":")[0], int(s.split(":")[1]), s.split(":")[2]))
    if nbc:
        lines += ["## Nonblocking collectives: overhead (us)", "",
                  "overlap, 4 ranks. time: post, compute T = 2 x blocking time, wait, overhead = "
                  "total - T; work: the same amount of work in calibrated units, overhead = total "
                  "- their time alone. Blocking time in parentheses.", "",
                  "| op:bytes:method | " + " | ".join(c.label() for c in configs) + " |",
                  "|---|" + "---|" * len(configs)]
        for key in nbc:
            op, size, _ = key.split(":")
            cells = []
            for c in configs:
                o = c.get(med, 4, "overlap", f"nbc_overhead_us:{key}")
                b = c.get(med, 4, "overlap", f"nbc_blocking_us:{op}:{size}")
                cells.append(f"{fmt(o)} ({fmt(b)})")
            lines.append(f"| {key} | " + " | ".join(cells) + " |")
        lines.append("")

    # 5. runtime statistics
    stat_rows = []
    for app in apps:
        for (mode, nodes, ranks) in sorted({(k[1], k[2], k[3]) for k in med if k[0] == "ours"
                                            and k[4] == app and k[5].startswith("stats_self:")}):
            def total(name):
                return sum(v for k, v in med.items() if k[:5] == ("ours", mode, nodes, ranks, app)
                           and k[5].startswith(f"stats_{name}:") and v == v)

            def mean_weighted(name):
                pairs = [(v, med.get(k[:5] + (k[5].replace(name, "rndv"),), 0))
                         for k, v in med.items() if k[:5] == ("ours", mode, nodes, ranks, app)
                         and k[5].startswith(f"stats_{name}:")]
                weight = sum(w for _, w in pairs)
                return sum(v * w for v, w in pairs) / weight if weight else None
            stat_rows.append(f"| {app} | {mode} | {nodes} | {ranks} | {fmt(total('self'))} | "
                             f"{fmt(total('stolen_numa'))} | {fmt(total('stolen_other'))} | "
                             f"{fmt(total('rndv'))} | {fmt(mean_weighted('req_ack_us'))} | "
                             f"{fmt(mean_weighted('matching_us'))} |")
    if stat_rows:
        lines += ["## Runtime statistics (mpcrun --stats, network work requests)", "",
                  "Summed over ranks; rendezvous timers averaged over rendezvous. Only runs with "
                  "more than one node process use the network.", "",
                  "| app | mode | N | ranks | self | stolen same NUMA | stolen other NUMA | "
                  "rendezvous | REQ->ACK (us) | matching (us) |",
                  "|---|---|---|---|---|---|---|---|---|---|"] + stat_rows + [""]

    # 6. failures
    if failures or build_failures:
        lines += ["## Failures", ""]
        for (mpi, target), error in sorted(build_failures.items()):
            first = error.strip().splitlines()[-1] if error.strip() else "?"
            lines.append(f"- build {target} with {MPI_LABEL[mpi]}: `{first[:200]}`")
        for key, status, log in failures:
            what = "time limit" if status == 124 else f"status {status}"
            config = f"{key[1]} N{key[2]} " if key[0] == "ours" else ""
            lines.append(f"- {key[4]} {MPI_LABEL[key[0]]} {config}n{key[3]}: {what} "
                         f"(`{log.relative_to(out_dir)}`)")
        lines.append("")

    if plots:
        lines += ["## Plots", ""] + [f"![{p.stem}]({p.relative_to(out_dir)})" for p in plots]
        lines.append("")
    (out_dir / "report.md").write_text("\n".join(lines))


def failures_from_csv(data, out_dir):
    failures = []
    for k, values in data.items():
        if k[5] == "failed":
            mode_tag = k[1] if k[0] == "ours" else "na"
            for v in values:
                failures.append((list(k[:5]), int(v), out_dir / "logs" /
                                 f"{k[4]}_{k[0]}_{mode_tag}_N{k[2]}_n{k[3]}_rep?.log"))
    return failures

# --------------------------------------------------------------------- plots


def gnuplot_terminal():
    for term in ("pngcairo", "png"):
        r = subprocess.run(["gnuplot", "-e", f"set terminal {term}"], capture_output=True)
        if r.returncode == 0 and not r.stderr:
            return term
    return None


MODE_COLOURS = {"wait": "#1f77b4", "collaborative": "#2ca02c", "thread-poll": "#ff7f0e",
                "thread-block": "#9467bd"}
OTHER_COLOURS = {"openmpi": "#d62728", "mpich": "#000000"}


def style(c):
    """Line style of a configuration: colour by mode or MPI, dashes for N1."""
    if c.mpi != "ours":
        return f"lc rgb '{OTHER_COLOURS[c.mpi]}' dt 1 pt 9 lw 2"
    dashed = c.nodes == 1
    return (f"lc rgb '{MODE_COLOURS[c.mode]}' dt {2 if dashed else 1} pt {6 if dashed else 7} "
            "lw 2")


def quote(s):
    return '"' + str(s).replace('"', "'") + '"'


def write_table(path, header, rows):
    with open(path, "w") as f:
        f.write(" ".join(quote(h) for h in header) + "\n")
        for row in rows:
            f.write(" ".join(quote(c) if isinstance(c, str) else
                             ("NaN" if c is None or c != c else f"{c:.6g}") for c in row) + "\n")


def histogram(script, data_path, png, title, ylabel, columns, term, size="1100,500", logy=False):
    """Clustered bars: one cluster per row of data_path, one bar per column
    (columns: the Config, or mode name, of each)."""
    script.append(f"set terminal {term} size {size} noenhanced\nset output {quote(png)}\n"
                  f"reset\nset title {quote(title)}\nset ylabel {quote(ylabel)}\n"
                  "set style data histograms\nset style histogram clustered gap 1\n"
                  "set style fill solid 0.8 border -1\nset boxwidth 0.9\nset grid ytics\n"
                  "set key outside right top\nset xtics rotate by -30\nset yrange [0:*]\n"
                  + ("set logscale y\nset yrange [*:*]\n" if logy else "")
                  + "plot " + ", ".join(
                      f"{quote(data_path) if i == 0 else chr(39) * 2} using {i + 2}"
                      + (":xtic(1)" if i == 0 else "") + f" title columnheader({i + 2}) "
                      + bar_colour(c) for i, c in enumerate(columns)) + "\n")


def bar_colour(c):
    if isinstance(c, str):
        return f"lc rgb '{MODE_COLOURS.get(c, '#777777')}'"
    if c.mpi != "ours":
        return f"lc rgb '{OTHER_COLOURS[c.mpi]}'"
    # N1 lighter than N2: the same hue at 60 % towards white.
    rgb = [int(MODE_COLOURS[c.mode][i:i + 2], 16) for i in (1, 3, 5)]
    if c.nodes == 1:
        rgb = [int(x + 0.6 * (255 - x)) for x in rgb]
    return "lc rgb '#%02x%02x%02x'" % tuple(rgb)


def plots(out_dir, med, term):
    plot_dir = out_dir / "plots"
    data_dir = plot_dir / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    configs = configs_present(med)
    script, made = [], []

    def png(name):
        p = plot_dir / f"{name}.png"
        made.append(p)
        return str(p)

    # Overlap curves, normalised by each configuration's t_comm: without overlap
    # total = 1 + work, with full overlap max(1, work).
    curve_configs = [c for c in configs if c.mpi != "ours" or c.nodes == 2] or configs
    for size in sorted({int(k[5].split(":")[1]) for k in med if k[5].startswith("tcomm_us:")}):
        patterns = ["Isend/Recv", "Irecv/Send", "Isend/Irecv"]
        files = {}
        for c in curve_configs:
            for pat in patterns:
                tcomm = c.get(med, 4, "overlap", f"tcomm_us:{size}")
                rows = []
                for k in range(0, 9):
                    w = c.get(med, 4, "overlap", f"curve_work_us:{pat}:{size}:k{k}")
                    t = c.get(med, 4, "overlap", f"curve_total_us:{pat}:{size}:k{k}")
                    if w is not None and t is not None and tcomm:
                        rows.append((w / tcomm, t / tcomm))
                if rows:
                    f = data_dir / f"overlap_{size}_{c.label().replace(' ', '_')}_{pat.replace('/', '-')}.dat"
                    write_table(f, ["work", "total"], rows)
                    files[(c, pat)] = f
        if not files:
            continue
        script.append(f"set terminal {term} size 1500,500 noenhanced\nset output {quote(png(f'overlap_{size}'))}\n"
                      "reset\nset multiplot layout 1,3 title "
                      + quote(f"Overlap, {size} bytes, rank 0 -> rank 2 of 4 (fibermpi: N2): total "
                              "vs work, both / t_comm") + "\n")
        for pat in patterns:
            parts = [f"1 + x title 'no overlap' dt 2 lc rgb 'gray'",
                     "(x > 1 ? x : 1) title 'full overlap' dt 3 lc rgb 'black'"]
            parts += [f"{quote(files[(c, pat)])} using 1:2 skip 1 with linespoints {style(c)} "
                      f"title {quote(c.label())}" for c in curve_configs if (c, pat) in files]
            script.append(f"set title {quote(pat)}\nset xlabel 'work / t_comm'\n"
                          "set ylabel 'total / t_comm'\nset key top left\nset grid\n"
                          "set xrange [0:2.1]\nset yrange [0:*<6]\n"
                          "plot " + ", ".join(parts) + "\n")
        script.append("unset multiplot\n")

    # Nonblocking-collective overhead against the size, one panel per op and method.
    nbc_keys = {k[5].split(":", 1)[1] for k in med if k[5].startswith("nbc_overhead_us:")}
    if nbc_keys:
        ops = sorted({k.split(":")[0] for k in nbc_keys})
        script.append(f"set terminal {term} size 1400,900 noenhanced\nset output {quote(png('nbc_overhead'))}\n"
                      f"reset\nset multiplot layout {len(ops)},2 title 'Nonblocking collectives: "
                      "overhead = total - compute (4 ranks), log scale: values <= 0 not drawn'\n")
        for op in ops:
            for method in ("time", "work"):
                sizes = sorted({int(k.split(":")[1]) for k in nbc_keys
                                if k.startswith(op + ":") and k.endswith(":" + method)})
                parts = []
                for c in configs:
                    rows = [(s, c.get(med, 4, "overlap", f"nbc_overhead_us:{op}:{s}:{method}"))
                            for s in sizes]
                    rows = [(s, v) for s, v in rows if v is not None]
                    if rows:
                        f = data_dir / f"nbc_{op}_{method}_{c.label().replace(' ', '_')}.dat"
                        write_table(f, ["bytes", "overhead_us"], rows)
                        parts.append(f"{quote(f)} using 1:2 skip 1 with linespoints {style(c)} "
                                     f"title {quote(c.label())}")
                if parts:
                    script.append(f"set title {quote(f'{op}, {method}-based')}\nset logscale xy\n"
                                  "set xlabel 'bytes'\nset ylabel 'overhead (us)'\nset grid\n"
                                  "set key outside right\nplot " + ", ".join(parts) + "\n")
        script.append("unset multiplot\n")

    # MPI time per function (PROFILE lines), per app and rank count.
    for app in sorted({k[4] for k in med if k[5].startswith("mpi_s:")}):
        for ranks in sorted({k[3] for k in med if k[4] == app and k[5].startswith("mpi_s:")}):
            fns = sorted({k[5][6:] for k in med if k[4] == app and k[3] == ranks
                          and k[5].startswith("mpi_s:")})
            present = [c for c in configs if any(c.get(med, ranks, app, f"mpi_s:{fn}") is not None
                                                 for fn in fns)]
            if not present:
                continue
            biggest = {fn: max((c.get(med, ranks, app, f"mpi_s:{fn}") or 0) for c in present)
                       for fn in fns}
            top = max(biggest.values()) if biggest else 0
            fns = [fn for fn in fns if top and biggest[fn] >= 0.01 * top]
            rows = [[fn] + [c.get(med, ranks, app, f"mpi_s:{fn}") for c in present] for fn in fns]
            rows.append(["total MPI"] + [c.get(med, ranks, app, "mpi_mean_s") for c in present])
            f = data_dir / f"mpi_time_{app}_n{ranks}.dat"
            write_table(f, ["function"] + [c.label() for c in present], rows)
            histogram(script, f, png(f"mpi_time_{app}_n{ranks}"),
                      f"{app}, {ranks} ranks: MPI time per function (mean over ranks)",
                      "seconds (log scale)", present, term, logy=True)

    # Stolen work requests per rank and rendezvous timers (mpcrun --stats).
    for app in sorted({k[4] for k in med if k[5].startswith("stats_self:")}):
        for (nodes, ranks) in sorted({(k[2], k[3]) for k in med if k[4] == app
                                      and k[5].startswith("stats_self:")}):
            modes = [m for m in OUR_MODES if ("ours", m, nodes, ranks, app, "stats_self:r0") in med]
            rows = []
            for r in range(ranks):
                rows.append([f"rank {r}"] + [
                    (med.get(("ours", m, nodes, ranks, app, f"stats_stolen_numa:r{r}")) or 0)
                    + (med.get(("ours", m, nodes, ranks, app, f"stats_stolen_other:r{r}")) or 0)
                    for m in modes])
            f = data_dir / f"stolen_{app}_N{nodes}_n{ranks}.dat"
            write_table(f, ["rank"] + modes, rows)
            histogram(script, f, png(f"stolen_{app}_N{nodes}_n{ranks}"),
                      f"{app}, N{nodes} n{ranks}: work requests of each rank processed by others",
                      "work requests", modes, term, size="900,450")
            timers = [("req->ack", "req_ack_us"), ("matching", "matching_us"),
                      ("reception", "reception_us")]
            rows, any_rndv = [], False
            for label, name in timers:
                row = [label]
                for m in modes:
                    vals, weights = [], []
                    for r in range(ranks):
                        v = med.get(("ours", m, nodes, ranks, app, f"stats_{name}:r{r}"))
                        n = med.get(("ours", m, nodes, ranks, app, f"stats_rndv:r{r}")) or 0
                        if v is not None and (n > 0 or name == "reception_us"):
                            vals.append(v)
                            weights.append(n if name != "reception_us" else 1)
                    any_rndv |= name != "reception_us" and sum(weights) > 0
                    row.append(sum(v * w for v, w in zip(vals, weights)) / sum(weights)
                               if sum(weights) else None)
                rows.append(row)
            f = data_dir / f"rndv_{app}_N{nodes}_n{ranks}.dat"
            write_table(f, ["timer"] + modes, rows)
            histogram(script, f, png(f"rndv_{app}_N{nodes}_n{ranks}"),
                      f"{app}, N{nodes} n{ranks}: rendezvous and reception timers"
                      + ("" if any_rndv else " (no rendezvous in this run)"),
                      "microseconds (mean)", modes, term, size="900,450")

    if not script:
        return []
    gp = plot_dir / "plots.gp"
    gp.write_text("".join(script))
    r = subprocess.run(["gnuplot", str(gp)], capture_output=True, text=True)
    noise = [l for l in r.stderr.splitlines() if l.strip() and "warning" not in l.lower()
             and not l.startswith(" ")]
    if r.returncode or noise:
        print("bench: gnuplot: " + "\n".join(noise[-10:] or [r.stderr[-1000:]]), file=sys.stderr)
    return [p for p in made if p.exists()]

# ---------------------------------------------------------------------- main


def main():
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
    a = ap.parse_args()
    profile = a.profile or "default"
    p = PROFILES[profile]
    out_dir = Path(a.out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    build_dir = Path(os.environ.get("BUILD_DIR", "build"))
    if not build_dir.is_absolute():
        build_dir = ROOT / build_dir
    start = time.monotonic()

    failures, build_failures = [], {}
    if not a.report_only:
        if not a.no_build and not a.dry_run:
            print(f"bench: building fibermpi in {build_dir}", flush=True)
            r = subprocess.run([str(ROOT / "scripts" / "build.sh")], cwd=ROOT,
                               env=dict(os.environ, BUILD_DIR=str(build_dir)))
            if r.returncode:
                sys.exit("bench: scripts/build.sh failed")
        mpis = find_mpis(build_dir, a.mpis.split(","))
        if not any(m.name == "ours" for m in mpis) or not (build_dir / "launcher" / "mpcrun").exists():
            print(f"bench: no mpcrun in {build_dir}: fibermpi left out", file=sys.stderr)
            mpis = [m for m in mpis if m.name != "ours"]
        targets = discover_targets()
        print("bench: MPIs: " + ", ".join(MPI_LABEL[m.name] for m in mpis)
              + "; programs: " + ", ".join(t.name for t in targets), flush=True)
        if not a.dry_run:
            build_failures = build_all(mpis, targets, out_dir, a.rebuild)
        built = {t.name for t in targets}
        bench_list = benches(profile, built,
                             [int(x) for x in a.ranks.split(",")] if a.ranks else None)
        if a.only:
            prefixes = a.only.split(",")
            bench_list = [b for b in bench_list if any(b.app.startswith(x) for x in prefixes)]
        nodes = [int(x) for x in a.nodes.split(",")] if a.nodes else p["nodes"]
        modes = [m for m in a.modes.split(",") if m in OUR_MODES]
        runs = [r for r in matrix(mpis, bench_list, modes, nodes)
                if (r.mpi.name, r.bench.binary) not in build_failures]
        reps = a.reps or p["reps"]
        timeout = a.timeout or p["timeout"]
        if a.dry_run:
            for r in runs:
                print(" ".join(r.mpi.command(f"bin/{r.mpi.name}/{r.bench.binary}", r.bench.args,
                                             r.ranks, r.nodes, r.mode, r.bench.stats, timeout)))
            print(f"bench: {len(runs)} runs x {reps} repetitions")
            return
        print(f"bench: {profile}: {len(runs)} configurations x {reps} repetitions, "
              f"time limit {timeout:g} s each", flush=True)
        with open(out_dir / "results.csv", "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["mpi", "mode", "nodes", "ranks", "app", "metric", "value", "rep"])
            failures = run_matrix(runs, reps, timeout, out_dir, writer, f)
        meta = {
            "profile": profile, "repetitions": reps, "time limit per run (s)": timeout,
            "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "host": f"{platform.node()}, {os.cpu_count()} cores, load average "
                    + ", ".join(f"{x:.2f}" for x in os.getloadavg()),
            "git": run_quiet(["git", "-C", str(ROOT), "describe", "--always", "--dirty"])[1],
            "fibermpi build": str(build_dir),
            "runs": f"{len(runs) * reps}, {len(failures)} failed",
            "duration (s)": f"{time.monotonic() - start:.0f}",
        }
        (out_dir / "meta.txt").write_text("".join(f"{k}: {v}\n" for k, v in meta.items()))
    else:
        meta = {}
        if (out_dir / "meta.txt").exists():
            for line in (out_dir / "meta.txt").read_text().splitlines():
                k, _, v = line.partition(": ")
                meta[k] = v

    data = load_results(out_dir / "results.csv")
    if a.report_only:
        failures = failures_from_csv(data, out_dir)
    med = medians(data)
    made = []
    if shutil.which("gnuplot"):
        term = gnuplot_terminal()
        if term:
            made = plots(out_dir, med, term)
    else:
        print("bench: no gnuplot (scripts/setup-deps.sh --bench): no plots", file=sys.stderr)
    report(out_dir, med, meta, failures, build_failures, made)
    print(f"bench: wrote {out_dir / 'results.csv'}, {out_dir / 'report.md'} and "
          f"{len(made)} plots in {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
