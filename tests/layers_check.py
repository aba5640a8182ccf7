#!/usr/bin/env python3
"""The layers are the layout: every include of the runtime's sources must point
down (or stay in its own room). Lists each room's includes and fails on one
that runs upward.

The build already refuses most of them (each layer's library gets only the
include directories of the layers below it); this check also sees what the
compiler cannot: includes by relative path ("../../x/y.hpp"), and an include
directory someone adds to a meson.build by mistake.

usage: layers_check.py SOURCE_ROOT       check the tree
       layers_check.py --self-test       check that the checker catches a wrong-way include
"""
import os
import re
import sys
import tempfile

# Bottom up. A room may include its own files and those of rooms listed before
# it; the launcher stands beside the ladder on the base alone.
LADDER = [
    ("base", "runtime/base"),
    ("scheduler", "scheduler"),
    ("network", "ib"),
    ("mpi engine", "mpi_api/core"),
    ("collectives", "collectives"),
    ("one-sided", "mpi_api/rma"),
    ("I/O", "mpi_api/io"),
    ("C bindings", "mpi_api/bindings"),
    ("Fortran bindings", "mpi_api/fortran"),
    ("host", "runtime/host"),
]
BESIDE = {"launcher": ("launcher", ["base"])}

# Where an include of the form "dir/file" is found (each room's public headers).
PUBLIC = {
    "runtime/": "base",
    "scheduler/": "scheduler",
    "ib/": "network",
    "mpi_api/": "mpi engine",
    "collectives/": "collectives",
    "rma/": "one-sided",
    "io/": "I/O",
}
# Generated files: the C API (mpi.h and its tables belong to the engine's
# level: everything above the network may see them), the Fortran layout and
# mpcrun's usage text (generated from launcher/doc).
GENERATED = {"mpcrun_usage.hpp": "launcher", "mpi.h": "mpi engine", "mpi_tables.inc": "mpi engine",
             "fortran_layout.hpp": "Fortran bindings"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".cpp", ".hpp", ".h", ".c", ".inc")


def rooms():
    table = [(name, path, i) for i, (name, path) in enumerate(LADDER)]
    table += [(name, path, None) for name, (path, _) in BESIDE.items()]
    return table


def room_of(relpath):
    best = None
    for name, path, _ in rooms():
        if relpath == path or relpath.startswith(path + "/"):
            if best is None or len(path) > len(best[1]):
                best = (name, path)
    return best[0] if best else None


def allowed(src, dst):
    if src == dst:
        return True
    if src in BESIDE:
        return dst in BESIDE[src][1]
    order = {name: i for i, (name, _) in enumerate(LADDER)}
    if dst not in order:
        return False
    return order[dst] < order[src]


def target_room(root, including_file, inc):
    local = os.path.normpath(os.path.join(os.path.dirname(including_file), inc))
    if os.path.exists(local):
        return room_of(os.path.relpath(local, root)), os.path.relpath(local, root)
    for prefix, room in PUBLIC.items():
        if inc.startswith(prefix):
            return room, inc
    base = os.path.basename(inc)
    if base in GENERATED:
        return GENERATED[base], inc
    return None, inc


def check(root):
    """Returns (per-room include counts, list of violations)."""
    counts = {}
    bad = []
    for name, path, _ in rooms():
        top = os.path.join(root, path)
        for dirpath, _, files in os.walk(top):
            for f in sorted(files):
                if not f.endswith(SOURCES):
                    continue
                full = os.path.join(dirpath, f)
                rel = os.path.relpath(full, root)
                src = room_of(rel)
                if src != name:
                    continue  # a nested room's file, counted there
                with open(full, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for inc in INCLUDE.findall(text):
                    dst, shown = target_room(root, full, inc)
                    if dst is None:
                        bad.append(f"{rel}: includes \"{inc}\", which no room owns")
                        continue
                    counts.setdefault(src, {}).setdefault(dst, 0)
                    counts[src][dst] += 1
                    if not allowed(src, dst):
                        bad.append(f"{rel}: the {src} includes \"{inc}\" of the {dst}, "
                                   f"a layer above it")
    return counts, bad


def report(root):
    counts, bad = check(root)
    for name, path, _ in rooms():
        row = counts.get(name, {})
        parts = ", ".join(f"{dst} {n}" for dst, n in sorted(row.items()))
        print(f"{name:17} ({path}): {parts or 'no includes'}")
    if bad:
        print(f"\n{len(bad)} include(s) run the wrong way:")
        for line in bad:
            print("  " + line)
        return 1
    print("\nevery include points down the layers")
    return 0


def self_test():
    """A small tree with one wrong-way include and one fine: only the first is caught."""
    with tempfile.TemporaryDirectory() as root:
        def write(rel, text):
            full = os.path.join(root, rel)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as fh:
                fh.write(text)
        write("runtime/base/include/runtime/log.hpp", "#pragma once\n")
        write("scheduler/src/vp.cpp", '#include "runtime/log.hpp"\n')
        write("ib/src/up.cpp", '#include "../../mpi_api/core/include/mpi_api/rank.hpp"\n')
        write("mpi_api/core/include/mpi_api/rank.hpp", '#include "collectives/shm.hpp"\n')
        write("launcher/mpcrun/main.cpp", '#include "scheduler/scheduler.hpp"\n')
        _, bad = check(root)
        expect = ["ib/src/up.cpp", "mpi_api/core/include/mpi_api/rank.hpp",
                  "launcher/mpcrun/main.cpp"]
        caught = sorted(line.split(":")[0] for line in bad)
        if caught != sorted(expect):
            print("self-test failed: caught", caught, "expected", expect)
            return 1
    print("self-test: the wrong-way includes were caught")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        sys.exit(self_test())
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(report(sys.argv[1]))
