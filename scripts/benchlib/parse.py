"""Metrics from the output of one run: key=value lines of the examples
(PROFILE, OVERLAP, NBC), the pingpong and allreduce tables, NPB summaries,
and the mpcrun --stats report (runtime/host/stats_report.cpp)."""
import re

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


def parse_coll(out):
    """coll_bench: one line per collective and size (coll op bytes ranks latency_us iters)."""
    rows = []
    for m in re.finditer(r"^coll (\S+) (\d+) \d+ " + NUM + r" \d+( WRONG)?$", out, re.M):
        rows.append((f"coll_us:{m.group(1)}@{m.group(2)}", fnum(m.group(3))))
        if m.group(4):
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
    """mpcrun --stats (runtime/host/stats_report.cpp): per rank and per function."""
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

