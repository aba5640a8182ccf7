"""report.md: medians over the repetitions of results.csv, in tables."""
import csv
import statistics
from dataclasses import dataclass

from .common import MPI_LABEL, OTHER_MPIS, OUR_MODES

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
    elif app == "coll":  # by operation, then size
        want = sorted((m for m in metrics if m.startswith("coll_us:")),
                      key=lambda m: (m.split(":")[1].split("@")[0].lstrip("i"),
                                     m.split(":")[1].startswith("i"), int(m.split("@")[1])))
    elif app == "overlap":
        sizes = sorted({int(m.split(":")[-1]) for m in metrics if m.startswith("overlap_ratio:")})
        for s in sizes:
            want += [f"overlap_ratio:both:{s}", f"receiver_wait_us:{s}"]
    else:  # the app's own time when it prints one, else the profiled region's
        want = ["time_s" if "time_s" in metrics else "wall_s", "mpi_mean_s", "mops"]
    return [m for m in want if m in metrics]


def apps_in(med):
    return sorted({k[4] for k in med}, key=lambda a: (a.split(".")[0] != "pingpong", a))


def key_table(med, configs):
    lines = ["## Key results", "",
             "| app | ranks | metric | " + " | ".join(c.label() for c in configs) + " |",
             "|---|---|---|" + "---|" * len(configs)]
    for app in apps_in(med):
        for ranks in sorted({k[3] for k in med if k[4] == app}):
            metrics = {k[5] for k in med if k[4] == app and k[3] == ranks}
            for metric in key_metrics(app, metrics):
                vals = [fmt(c.get(med, ranks, app, metric)) for c in configs]
                lines.append(f"| {app} | {ranks} | {metric} | " + " | ".join(vals) + " |")
    return lines + [""]


def mode_ratio_table(med):
    """MPI time of each progress mode against wait: the seed papers' headline."""
    lines = ["## Progress modes: MPI time against `wait`", "",
             "MPI time = mean over ranks of the time inside MPI (PROFILE total mpi_mean_s); "
             "below 1 the mode spends less time in MPI than `wait`.", "",
             "| app | N | ranks | wait (s) | collaborative (s) | collaborative/wait | "
             "thread-poll/wait | thread-block/wait |", "|---|---|---|---|---|---|---|---|"]
    for app in apps_in(med):
        for (nodes, ranks) in sorted({(k[2], k[3]) for k in med
                                      if k[4] == app and k[0] == "ours" and k[5] == "mpi_mean_s"}):
            mpi_time = {m: med.get(("ours", m, nodes, ranks, app, "mpi_mean_s")) for m in OUR_MODES}
            w = mpi_time["wait"]
            lines.append(f"| {app} | {nodes} | {ranks} | {fmt(w)} | "
                         f"{fmt(mpi_time['collaborative'])} | "
                         + " | ".join(fmt(ratio(mpi_time[m], w)) for m in OUR_MODES[1:]) + " |")
    return lines + [""]


def against_others_table(med, configs):
    others = [m for m in OTHER_MPIS if any(c.mpi == m for c in configs)]
    if not others:
        return []
    lines = ["## fibermpi against Open MPI and MPICH", "",
             "fibermpi as users run it by default: collaborative, one node process (N1). "
             "A ratio below 1 is better for fibermpi, except for bandwidth, overlap ratio "
             "and Mop/s (above 1 is better).", "",
             "| app | ranks | metric | fibermpi | " + " | ".join(MPI_LABEL[m] for m in others)
             + " | " + " | ".join(f"fibermpi/{MPI_LABEL[m]}" for m in others) + " |",
             "|---|---|---|---|" + "---|" * (2 * len(others))]
    ours = Config("ours", "collaborative", 1)
    for app in apps_in(med):
        for ranks in sorted({k[3] for k in med if k[4] == app}):
            metrics = {k[5] for k in med if k[4] == app and k[3] == ranks}
            for metric in key_metrics(app, metrics):
                mine = ours.get(med, ranks, app, metric)
                theirs = [Config(m, "-", None).get(med, ranks, app, metric) for m in others]
                lines.append(f"| {app} | {ranks} | {metric} | {fmt(mine)} | "
                             + " | ".join(fmt(t) for t in theirs) + " | "
                             + " | ".join(fmt(ratio(mine, t)) for t in theirs) + " |")
    return lines + [""]


def nbc_table(med, configs):
    nbc = sorted({k[5].split(":", 1)[1] for k in med if k[5].startswith("nbc_overhead_us:")},
                 key=lambda s: (s.split(":")[0], int(s.split(":")[1]), s.split(":")[2]))
    if not nbc:
        return []
    lines = ["## Nonblocking collectives: overhead (us)", "",
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
    return lines + [""]


def stats_table(med):
    """Work requests by who processed them, and rendezvous timers (mpcrun --stats)."""
    rows = []
    for app in apps_in(med):
        for (mode, nodes, ranks) in sorted({(k[1], k[2], k[3]) for k in med if k[0] == "ours"
                                            and k[4] == app and k[5].startswith("stats_self:")}):
            run = ("ours", mode, nodes, ranks, app)
            per_rank = {}  # field -> [(value, rendezvous count of that rank)]
            for k, v in med.items():
                if k[:5] == run and k[5].startswith("stats_") and v == v:
                    name, rank = k[5][6:].split(":")
                    per_rank.setdefault(name, []).append(
                        (v, med.get(run + (f"stats_rndv:{rank}",), 0)))

            def total(name):
                return sum(v for v, _ in per_rank.get(name, []))

            def per_rendezvous(name):
                pairs = per_rank.get(name, [])
                weight = sum(w for _, w in pairs)
                return sum(v * w for v, w in pairs) / weight if weight else None
            rows.append(f"| {app} | {mode} | {nodes} | {ranks} | {fmt(total('self'))} | "
                        f"{fmt(total('stolen_numa'))} | {fmt(total('stolen_other'))} | "
                        f"{fmt(total('rndv'))} | {fmt(per_rendezvous('req_ack_us'))} | "
                        f"{fmt(per_rendezvous('matching_us'))} |")
    if not rows:
        return []
    return ["## Runtime statistics (mpcrun --stats, network work requests)", "",
            "Summed over ranks; rendezvous timers averaged over rendezvous. Only runs with "
            "more than one node process use the network.", "",
            "| app | mode | N | ranks | self | stolen same NUMA | stolen other NUMA | "
            "rendezvous | REQ->ACK (us) | matching (us) |",
            "|---|---|---|---|---|---|---|---|---|---|"] + rows + [""]


def failure_list(out_dir, failures, build_failures):
    if not failures and not build_failures:
        return []
    lines = ["## Failures", ""]
    for (mpi, target), error in sorted(build_failures.items()):
        last = error.strip().splitlines()[-1] if error.strip() else "?"
        lines.append(f"- build {target} with {MPI_LABEL[mpi]}: `{last[:200]}`")
    for key, status, log in failures:
        what = "time limit" if status == 124 else f"status {status}"
        config = f"{key[1]} N{key[2]} " if key[0] == "ours" else ""
        lines.append(f"- {key[4]} {MPI_LABEL[key[0]]} {config}n{key[3]}: {what} "
                     f"(`{log.relative_to(out_dir)}`)")
    return lines + [""]


def report(out_dir, med, meta, failures, build_failures, plots):
    configs = configs_present(med)
    lines = [f"# Benchmark report ({meta.get('profile', '?')})", ""]
    lines += [f"- {k}: {v}" for k, v in meta.items()]
    lines += ["", "Values are medians over the repetitions. fibermpi columns are `mode N<node "
              "processes>`; Open MPI and MPICH run one process per rank. Times in s or us as "
              "named; `bw` in MB/s, `overlap_ratio` = work/total (1 = full overlap), `mops` "
              "Mop/s: higher is better for those three, lower for the rest.", ""]
    lines += key_table(med, configs)
    lines += mode_ratio_table(med)
    lines += against_others_table(med, configs)
    lines += nbc_table(med, configs)
    lines += stats_table(med)
    lines += failure_list(out_dir, failures, build_failures)
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

