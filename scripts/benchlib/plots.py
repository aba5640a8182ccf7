"""PNG plots of the medians, drawn by gnuplot (pngcairo, else png)."""
import subprocess
import sys

from .common import OUR_MODES
from .report import configs_present

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


class Canvas:
    """The gnuplot script being written, its data files and the PNGs it makes."""

    def __init__(self, out_dir, term):
        self.plot_dir = out_dir / "plots"
        self.data_dir = self.plot_dir / "data"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.term = term
        self.script, self.made = [], []

    def png(self, name):
        p = self.plot_dir / f"{name}.png"
        self.made.append(p)
        return str(p)

    def draw(self):
        if not self.script:
            return []
        gp = self.plot_dir / "plots.gp"
        gp.write_text("".join(self.script))
        r = subprocess.run(["gnuplot", str(gp)], capture_output=True, text=True)
        noise = [line for line in r.stderr.splitlines() if line.strip()
                 and "warning" not in line.lower() and not line.startswith(" ")]
        if r.returncode or noise:
            print("bench: gnuplot: " + "\n".join(noise[-10:] or [r.stderr[-1000:]]),
                  file=sys.stderr)
        return [p for p in self.made if p.exists()]


def overlap_curves(cv, med, configs):
    """Total against work time of the point-to-point patterns, normalised by
    each configuration's t_comm: no overlap is 1 + work, full overlap max(1, work)."""
    curve_configs = [c for c in configs if c.mpi != "ours" or c.nodes == 2] or configs
    patterns = ["Isend/Recv", "Irecv/Send", "Isend/Irecv"]
    for size in sorted({int(k[5].split(":")[1]) for k in med if k[5].startswith("tcomm_us:")}):
        files = {}
        for c in curve_configs:
            tcomm = c.get(med, 4, "overlap", f"tcomm_us:{size}")
            for pat in patterns:
                rows = []
                for k in range(0, 9):
                    w = c.get(med, 4, "overlap", f"curve_work_us:{pat}:{size}:k{k}")
                    t = c.get(med, 4, "overlap", f"curve_total_us:{pat}:{size}:k{k}")
                    if w is not None and t is not None and tcomm:
                        rows.append((w / tcomm, t / tcomm))
                if rows:
                    f = cv.data_dir / (f"overlap_{size}_{c.label().replace(' ', '_')}_"
                                       f"{pat.replace('/', '-')}.dat")
                    write_table(f, ["work", "total"], rows)
                    files[(c, pat)] = f
        if not files:
            continue
        title = (f"Overlap, {size} bytes, rank 0 -> rank 2 of 4 (fibermpi: N2): total vs work, "
                 "both / t_comm")
        cv.script.append(f"set terminal {cv.term} size 1500,500 noenhanced\n"
                         f"set output {quote(cv.png(f'overlap_{size}'))}\n"
                         f"reset\nset multiplot layout 1,3 title {quote(title)}\n")
        for pat in patterns:
            parts = ["1 + x title 'no overlap' dt 2 lc rgb 'gray'",
                     "(x > 1 ? x : 1) title 'full overlap' dt 3 lc rgb 'black'"]
            parts += [f"{quote(files[(c, pat)])} using 1:2 skip 1 with linespoints {style(c)} "
                      f"title {quote(c.label())}" for c in curve_configs if (c, pat) in files]
            cv.script.append(f"set title {quote(pat)}\nset xlabel 'work / t_comm'\n"
                             "set ylabel 'total / t_comm'\nset key top left\nset grid\n"
                             "set xrange [0:2.1]\nset yrange [0:*<6]\n"
                             "plot " + ", ".join(parts) + "\n")
        cv.script.append("unset multiplot\n")


def nbc_overhead(cv, med, configs):
    """Nonblocking-collective overhead against the size, one panel per op and method."""
    nbc_keys = {k[5].split(":", 1)[1] for k in med if k[5].startswith("nbc_overhead_us:")}
    if not nbc_keys:
        return
    ops = sorted({k.split(":")[0] for k in nbc_keys})
    cv.script.append(f"set terminal {cv.term} size 1400,900 noenhanced\n"
                     f"set output {quote(cv.png('nbc_overhead'))}\n"
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
                    f = cv.data_dir / f"nbc_{op}_{method}_{c.label().replace(' ', '_')}.dat"
                    write_table(f, ["bytes", "overhead_us"], rows)
                    parts.append(f"{quote(f)} using 1:2 skip 1 with linespoints {style(c)} "
                                 f"title {quote(c.label())}")
            if parts:
                cv.script.append(f"set title {quote(f'{op}, {method}-based')}\n"
                                 "set logscale xy\nset xlabel 'bytes'\n"
                                 "set ylabel 'overhead (us)'\nset grid\n"
                                 "set key outside right\nplot " + ", ".join(parts) + "\n")
    cv.script.append("unset multiplot\n")


def mpi_time(cv, med, configs):
    """MPI time per function (PROFILE lines), per app and rank count."""
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
            f = cv.data_dir / f"mpi_time_{app}_n{ranks}.dat"
            write_table(f, ["function"] + [c.label() for c in present], rows)
            histogram(cv.script, f, cv.png(f"mpi_time_{app}_n{ranks}"),
                      f"{app}, {ranks} ranks: MPI time per function (mean over ranks)",
                      "seconds (log scale)", present, cv.term, logy=True)


def runtime_stats(cv, med):
    """Stolen work requests per rank and rendezvous timers (mpcrun --stats)."""
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
            f = cv.data_dir / f"stolen_{app}_N{nodes}_n{ranks}.dat"
            write_table(f, ["rank"] + modes, rows)
            histogram(cv.script, f, cv.png(f"stolen_{app}_N{nodes}_n{ranks}"),
                      f"{app}, N{nodes} n{ranks}: work requests of each rank processed by others",
                      "work requests", modes, cv.term, size="900,450")
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
            if not any_rndv:  # the timers of interest are the rendezvous ones
                continue
            f = cv.data_dir / f"rndv_{app}_N{nodes}_n{ranks}.dat"
            write_table(f, ["timer"] + modes, rows)
            histogram(cv.script, f, cv.png(f"rndv_{app}_N{nodes}_n{ranks}"),
                      f"{app}, N{nodes} n{ranks}: rendezvous (REQ->ACK, matching) and "
                      "work-request reception timers", "microseconds (mean)", modes, cv.term,
                      size="900,450")


def plots(out_dir, med, term):
    """Draws every plot the results allow; returns the PNG paths."""
    cv = Canvas(out_dir, term)
    configs = configs_present(med)
    overlap_curves(cv, med, configs)
    nbc_overhead(cv, med, configs)
    mpi_time(cv, med, configs)
    runtime_stats(cv, med)
    return cv.draw()
