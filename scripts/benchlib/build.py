"""The toolchains (our wrappers, Open MPI's, MPICH's) and the benchmark
programs, discovered in examples/ and built into <out>/bin/<mpi>/."""
import concurrent.futures
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .common import COMMON, EXAMPLES, OTHER_MPIS, run_quiet

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
    for name in ("pingpong", "allreduce_bench", "coll_bench", "overlap"):
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

