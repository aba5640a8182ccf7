"""The README's "How fast" table: a few headline measurements of fibermpi with
Open MPI and MPICH side by side, taken in interleaved rounds (every program
of every MPI once per round, so a change in the machine's speed hits all of
them alike), reported as medians with the ratio ours / peer.

    scripts/bench.py --summary [--reps N] [--no-readme]

Writes docs/performance/summary.md (the table with ranges and the per-round
ratios), summary.csv (every run) and two plots (ratios.png, pingpong.png),
and replaces the README's block between the "how-fast" markers with the
table. Nothing in that block is written by hand.
"""
import csv
import datetime
import os
import platform
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .build import Target, build_all, find_mpis
from .common import MPI_LABEL, ROOT, run_quiet
from .parse import parse_pingpong

DOCS = ROOT / "docs" / "performance"
README = ROOT / "README.md"
BEGIN, END = "<!-- how-fast:begin -->", "<!-- how-fast:end -->"


def parse_coll(out):
    """coll_bench lines: coll <op> <bytes> <ranks> <latency_us> <iterations>."""
    return [(f"{m.group(1)}_us@{m.group(2)}", float(m.group(3))) for m in
            re.finditer(r"^coll (\w+) (\d+) \d+ ([\d.]+) \d+", out, re.M)]


def parse_startup(out):
    m = re.search(r"^startup ([\d.]+) rss_mb ([\d.]+) pss_mb ([\d.]+)", out, re.M)
    return [("startup_s", float(m.group(1))), ("pss_mb", float(m.group(3)))] if m else []


@dataclass
class Headline:
    what: str            # the table's row
    unit: str
    program: str         # a Target name
    args: list
    ranks: int
    metric: str          # the value parse() yields that the row shows
    parse: object
    lower_is_better: bool = True
    nodes: int = 1       # our node processes
    peer_args: dict = field(default_factory=dict)  # extra launcher options per peer
    peers: tuple = ("openmpi", "mpich")
    startup: bool = False  # wrapped in scripts/startup_bench.py
    plot: bool = True      # in the ratio plot


HEADLINES = [
    Headline("ping-pong 8 B, one way, 2 ranks of one node", "us", "pingpong",
             ["-min", "8", "-max", "8", "-time", "0.3", "-reps", "3"], 2, "latency_us@8",
             parse_pingpong),
    Headline("ping-pong 64 KiB, one way", "us", "pingpong",
             ["-min", "65536", "-max", "65536", "-time", "0.3", "-reps", "3"], 2,
             "latency_us@65536", parse_pingpong),
    Headline("ping-pong 4 MiB bandwidth", "MB/s", "pingpong",
             ["-min", "4194304", "-max", "4194304", "-time", "0.3", "-reps", "3"], 2,
             "bw_MBps@4194304", parse_pingpong, lower_is_better=False),
    Headline("ping-pong 8 B between 2 node processes over TCP (Open MPI: `--mca btl tcp,self`)",
             "us", "pingpong", ["-min", "8", "-max", "8", "-time", "0.3", "-reps", "3"], 2,
             "latency_us@8", parse_pingpong, nodes=2,
             peer_args={"openmpi": ["--mca", "btl", "tcp,self"]}, peers=("openmpi",)),
    Headline("Barrier, 2 ranks", "us", "coll_bench",
             ["-ops", "barrier", "-min", "8", "-max", "8", "-time", "0.3"], 2, "barrier_us@0",
             parse_coll),
    Headline("Allreduce 8 B, 2 ranks", "us", "coll_bench",
             ["-ops", "allreduce", "-min", "8", "-max", "8", "-time", "0.3"], 2,
             "allreduce_us@8", parse_coll),
    Headline("Allreduce 8 B, 16 ranks on the 2 cores", "us", "coll_bench",
             ["-ops", "allreduce", "-min", "8", "-max", "8", "-time", "0.3"], 16,
             "allreduce_us@8", parse_coll),
    Headline("Allreduce 1 MiB, 4 ranks", "us", "coll_bench",
             ["-ops", "allreduce", "-min", "1048576", "-max", "1048576", "-time", "0.3"], 4,
             "allreduce_us@1048576", parse_coll),
    Headline("Alltoall 8 B, 4 ranks", "us", "coll_bench",
             ["-ops", "alltoall", "-min", "8", "-max", "8", "-time", "0.3"], 4,
             "alltoall_us@8", parse_coll),
    Headline("64-rank hello world, launch to exit", "s", "hello", [], 64, "startup_s",
             parse_startup, startup=True),
    Headline("64-rank hello world, memory of the whole job (PSS)", "MB", "hello", [], 64,
             "pss_mb", parse_startup, startup=True),
    # The size sweep behind the ping-pong plot (not a table row).
    Headline("ping-pong sweep", "us", "pingpong",
             ["-min", "1", "-max", "4194304", "-time", "0.05", "-reps", "2"], 2, "", parse_pingpong,
             plot=False),
]

EXTRA_TARGETS = [Target("coll_bench", "c", [ROOT / "examples" / "coll_bench.c"]),
                 Target("hello", "c", [ROOT / "tests" / "integration" / "hello.c"])]


def command(mpi, exe, h, timeout):
    if mpi.name == "ours":
        mpcrun = str(Path(mpi.cc).with_name("mpcrun"))
        cmd = [mpcrun, "-n", str(h.ranks), "-N", str(h.nodes), "--timeout", str(timeout), exe]
    elif mpi.name == "openmpi":
        cmd = (["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-n", str(h.ranks)]
               + h.peer_args.get("openmpi", []) + [exe])
    else:
        cmd = ["mpiexec.mpich", "-n", str(h.ranks)] + h.peer_args.get("mpich", []) + [exe]
    if h.startup:
        return [sys.executable, str(ROOT / "scripts" / "startup_bench.py"), "--reps", "1", "--"] \
            + cmd
    return cmd + h.args


def run_rounds(mpis, reps, timeout, bindir_of, log_dir):
    """Every headline of every MPI once per round; returns rows (round, mpi, headline, metric, value)."""
    rows = []
    for rnd in range(1, reps + 1):
        for i, h in enumerate(HEADLINES):
            for mpi in mpis:
                if mpi.name != "ours" and mpi.name not in h.peers:
                    continue
                cmd = command(mpi, str(bindir_of(mpi) / h.program), h, timeout)
                try:
                    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 30,
                                       stdin=subprocess.DEVNULL)
                    out, status = r.stdout + r.stderr, r.returncode
                except subprocess.TimeoutExpired:
                    out, status = "time limit\n", 124
                (log_dir / f"r{rnd}_h{i}_{mpi.name}.log").write_text(
                    "$ " + " ".join(cmd) + f"\n# status {status}\n" + out)
                values = dict(h.parse(out)) if status == 0 else {}
                if h.metric and h.metric not in values:
                    print(f"summary: round {rnd}: {h.what} with {MPI_LABEL[mpi.name]} failed "
                          f"(status {status})", flush=True)
                for metric, value in values.items():
                    rows.append((rnd, mpi.name, i, metric, value))
        print(f"summary: round {rnd}/{reps} done", flush=True)
    return rows


def fmt(v):
    if v is None:
        return "—"
    if v >= 100:
        return f"{v:,.0f}".replace(",", " ")
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.3g}" if v >= 0.1 else f"{v:.3f}"


def medians(rows):
    """{(mpi, headline index, metric): [values by round]}."""
    by = {}
    for rnd, mpi, i, metric, value in rows:
        by.setdefault((mpi, i, metric), {})[rnd] = value
    return by


def ratio_text(by, i, metric, peer):
    ours, theirs = by.get(("ours", i, metric)), by.get((peer, i, metric))
    if not ours or not theirs:
        return "—", None
    r = statistics.median(ours.values()) / statistics.median(theirs.values())
    paired = [ours[k] / theirs[k] for k in ours if k in theirs and theirs[k]]
    return f"{r:.2f}x" + (f" ({statistics.median(paired):.2f}x)" if paired else ""), r


def table(by, peers, with_ranges):
    head = "| what | unit | fibermpi | " + " | ".join(MPI_LABEL[p] for p in peers) + " | " + \
        " | ".join(f"ours / {MPI_LABEL[p]}" for p in peers) + " |"
    lines = [head, "|" + "---|" * (3 + 2 * len(peers))]
    for i, h in enumerate(HEADLINES):
        if not h.metric:
            continue
        cells = [h.what, h.unit + ("" if h.lower_is_better else ", higher is better")]
        for mpi in ["ours"] + peers:
            vals = by.get((mpi, i, h.metric))
            if not vals or (mpi != "ours" and mpi not in h.peers):
                cells.append("—")
                continue
            m = fmt(statistics.median(vals.values()))
            if with_ranges and len(vals) > 1:
                m += f" ({fmt(min(vals.values()))}-{fmt(max(vals.values()))})"
            cells.append(m)
        for p in peers:
            cells.append(ratio_text(by, i, h.metric, p)[0] if p in h.peers else "—")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plots(by, peers, term):
    """ratios.png (ours / peer per headline) and pingpong.png (latency by size)."""
    made = []
    data = DOCS / "plot-data"
    data.mkdir(parents=True, exist_ok=True)
    with open(data / "ratios.dat", "w") as f:
        f.write('"what" ' + " ".join(f'"ours / {MPI_LABEL[p]}"' for p in peers) + "\n")
        for i, h in enumerate(HEADLINES):
            if not h.metric or not h.plot:
                continue
            vals = []
            for p in peers:
                r = ratio_text(by, i, h.metric, p)[1] if p in h.peers else None
                if r is not None and not h.lower_is_better:
                    r = 1 / r  # below 1 is better for every bar
                vals.append("NaN" if r is None else f"{r:.4g}")
            short = h.what.split(" (")[0].replace('"', "'")
            f.write(f'"{short}" ' + " ".join(vals) + "\n")
    sweep = HEADLINES.index(next(h for h in HEADLINES if not h.metric))
    sizes = sorted({int(k[2].split("@")[1]) for k in by if k[1] == sweep and
                    k[2].startswith("latency_us@")})
    with open(data / "pingpong.dat", "w") as f:
        f.write('"bytes" ' + " ".join(f'"{MPI_LABEL[m]}"' for m in ["ours"] + peers) + "\n")
        for s in sizes:
            row = []
            for m in ["ours"] + peers:
                v = by.get((m, sweep, f"latency_us@{s}"))
                row.append(f"{statistics.median(v.values()):.4g}" if v else "NaN")
            f.write(f"{s} " + " ".join(row) + "\n")
    colours = ["#2ca02c", "#d62728", "#000000"]
    script = (
        f"set terminal {term} size 1000,520 noenhanced\n"
        f"set output '{DOCS / 'ratios.png'}'\n"
        "set title 'fibermpi time / peer time (below 1: fibermpi faster; bandwidth inverted)'\n"
        "set style data histograms\nset style histogram clustered gap 1\n"
        "set style fill solid 0.8 border -1\nset boxwidth 0.9\nset grid ytics\n"
        "set logscale y\nset xtics rotate by -30 scale 0\nset key top left\n"
        "set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2 dt 2\n"
        "plot " + ", ".join(
            f"'{data / 'ratios.dat'}' using {j + 2}" + (":xtic(1)" if j == 0 else "")
            + f" title columnheader({j + 2}) lc rgb '{colours[j + 1]}'"
            for j in range(len(peers))) + "\n"
        "reset\n"
        f"set terminal {term} size 1000,520 noenhanced\n"
        f"set output '{DOCS / 'pingpong.png'}'\n"
        "set title 'ping-pong, 2 ranks of one node: one-way latency'\n"
        "set logscale xy\nset xlabel 'bytes'\nset ylabel 'us'\nset grid\nset key top left\n"
        "plot " + ", ".join(
            f"'{data / 'pingpong.dat'}' using 1:{j + 2} with linespoints lw 2 "
            f"lc rgb '{colours[j]}' title columnheader({j + 2})"
            for j in range(1 + len(peers))) + "\n")
    r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if r.returncode:
        print("summary: gnuplot failed:\n" + r.stderr, file=sys.stderr)
        return made
    return ["ratios.png", "pingpong.png"]


def splice_readme(block):
    text = README.read_text()
    if BEGIN not in text or END not in text:
        sys.exit(f"summary: README.md has no {BEGIN} ... {END} block")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    README.write_text(head + BEGIN + "\n" + block + "\n" + END + tail)


def main(a, build_dir, out_dir):
    mpis = find_mpis(build_dir, a.mpis.split(","))
    if not any(m.name == "ours" for m in mpis):
        sys.exit(f"summary: no fibermpi build in {build_dir}")
    from .build import discover_targets
    targets = [t for t in discover_targets() if t.name == "pingpong"] + EXTRA_TARGETS
    failures = build_all(mpis, targets, out_dir, a.rebuild)
    mpis = [m for m in mpis if not any(k[0] == m.name for k in failures)]
    peers = [m.name for m in mpis if m.name != "ours"]
    reps = a.reps or 7
    log_dir = out_dir / "summary-logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    print(f"summary: {reps} interleaved rounds of {len(HEADLINES)} measurements with "
          + ", ".join(MPI_LABEL[m.name] for m in mpis), flush=True)
    rows = run_rounds(mpis, reps, a.timeout or 120, lambda m: out_dir / "bin" / m.name, log_dir)
    DOCS.mkdir(parents=True, exist_ok=True)
    with open(DOCS / "summary.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["round", "mpi", "what", "metric", "value"])
        for rnd, mpi, i, metric, value in rows:
            w.writerow([rnd, mpi, HEADLINES[i].what, metric, f"{value:.6g}"])
    by = medians(rows)
    cpu = ""
    try:
        cpu = re.search(r"model name\s*:\s*(.*)", Path("/proc/cpuinfo").read_text()).group(1)
    except (OSError, AttributeError):
        pass
    versions = {"openmpi": run_quiet(["mpirun.openmpi", "--version"])[1].splitlines()[:1],
                "mpich": run_quiet(["mpichversion"])[1].splitlines()[:1]}
    when = datetime.date.today().isoformat()
    git = run_quiet(["git", "-C", str(ROOT), "describe", "--always", "--dirty"])[1]
    machine = f"{platform.node()}: {os.cpu_count()} cores ({cpu or 'unknown CPU'}), Linux " \
        f"{platform.release()}"
    peers_text = "; ".join(f"{MPI_LABEL[p]}: {' '.join(versions.get(p, []))}" for p in peers)
    intro = (f"Measured on {when} ({machine}; fibermpi {git}; {peers_text}) by "
             f"`scripts/bench.sh --summary`: {reps} interleaved rounds, medians. Ratios: of the "
             "medians, and in brackets the median of the per-round ratios (which pairs runs of "
             "the same moment). Below 1 is better for fibermpi except where higher is better.")
    made = []
    if a.plots:
        from .plots import gnuplot_terminal
        term = gnuplot_terminal()
        if term:
            made = plots(by, peers, term)
    pics = "".join(f"\n![{p}](docs/performance/{p})" for p in made)
    readme_block = intro + "\n\n" + table(by, peers, False) + "\n" + pics + \
        "\n\nRanges, every run and earlier measurements: " \
        "[docs/performance/summary.md](docs/performance/summary.md), " \
        "[docs/performance/notes.md](docs/performance/notes.md)."
    (DOCS / "summary.md").write_text(
        "# How fast: the latest summary\n\n" + intro + " Ranges in brackets after the "
        "medians.\n\n" + table(by, peers, True) + "\n\n"
        + "".join(f"![{p}]({p})\n" for p in made)
        + "\nEvery run: `summary.csv`. Written by `scripts/bench.sh --summary`; do not edit.\n")
    if a.readme:
        splice_readme(readme_block)
    print(f"summary: wrote {DOCS / 'summary.md'}" + (" and the README's table" if a.readme else ""))
