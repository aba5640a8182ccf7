#!/usr/bin/env python3
"""Checks the Fortran binding generator (mpi_api/api/gen_fortran.py).

usage: test_gen_fortran.py <source root>

On the real spec it must produce a wrapper and an interface for every
function that has a Fortran binding (large-count forms in mpi_f08 alone), and
an mpif.h valid in fixed form. On
altered copies of the spec it must stop, naming the function, whenever a
parameter has no mapping, an annotation is stale, or two names clash in
Fortran (names ignore case there).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = sys.argv[1]
API = os.path.join(ROOT, "mpi_api", "api")
TEMPLATE = os.path.join(ROOT, "mpi_api", "api", "mpi.h.in")
failures = []


def generate(edit_spec=None, edit_map=None):
    """Runs the generator on a copy of api/, edited; returns (rc, stderr, outputs)."""
    with tempfile.TemporaryDirectory() as tmp:
        for f in os.listdir(API):
            if f.endswith(".py"):
                shutil.copy(os.path.join(API, f), tmp)
        for name, edit in (("spec.py", edit_spec), ("fortran_map.py", edit_map)):
            if edit:
                path = os.path.join(tmp, name)
                text = open(path).read()
                changed = edit(text)
                assert changed != text, f"the edit of {name} changed nothing"
                open(path, "w").write(changed)
        out = os.path.join(tmp, "out")
        os.mkdir(out)
        r = subprocess.run([sys.executable, os.path.join(tmp, "gen_fortran.py"), TEMPLATE, out],
                           capture_output=True, text=True)
        outputs = {f: open(os.path.join(out, f)).read() for f in os.listdir(out)}
        return r.returncode, r.stdout + r.stderr, outputs


def expect(cond, what):
    if not cond:
        failures.append(what)


def add_function(proto):
    return lambda s: s.replace("int MPI_Finalize(void);", "int MPI_Finalize(void);\n" + proto, 1)


def check_real_spec():
    rc, err, out = generate()
    expect(rc == 0, f"the real spec does not generate: {err}")
    if rc:
        return
    sys.path.insert(0, API)
    import gen_c  # noqa: E402
    import fortran_map  # noqa: E402
    f08 = out["mpi_f08.f90"]
    for _ret, name, _args in gen_c.functions():
        if name in ("Status_f2f08", "Status_f082f"):
            # Hand-written: in mpi_f08 alone (they take its TYPE(MPI_Status)).
            expect(f"pmpi_{name.lower()}_(" in out["fortran_bindings.cpp"],
                   f"no wrapper for MPI_{name}")
            expect(re.search(rf"^\s*subroutine MPI_{name}_f08\(", f08, re.M),
                   f"no mpi_f08 interface for MPI_{name}")
            continue
        if fortran_map.C_ONLY.match(name) or name in fortran_map.NO_F08:
            expect(f"pmpi_{name.lower()}_(" not in out["fortran_bindings.cpp"],
                   f"MPI_{name} is C only but has a wrapper")
            continue
        wrappers = [f"pmpi_{name.lower()}_("]
        if fortran_map.LARGE_COUNT.match(name):
            # Without an mpif.h form, an own f08 wrapper is the only one.
            wrappers += [f"pmpi_{name[:-2].lower()}_f08c_(", f"pmpi_{name.lower()}_f08_("]
        expect(any(w in out["fortran_bindings.cpp"] for w in wrappers),
               f"no wrapper for MPI_{name}")
        in_mpi = re.search(rf"^\s*(subroutine|function) MPI_{name}\(", out["mpi.f90"], re.M)
        if fortran_map.LARGE_COUNT.match(name):
            # mpi_f08 alone: in its int form's generic, or by its own name.
            expect(not in_mpi, f"MPI_{name} (large count) is in the mpi module")
            expect(re.search(rf"^\s*subroutine MPI_({name[:-2]}_f08c|{name}_f08)\(", f08, re.M),
                   f"no mpi_f08 interface for MPI_{name}")
            continue
        expect(in_mpi, f"no interface for MPI_{name}")
        expect(re.search(rf"^\s*(subroutine MPI_{name}_f08|function MPI_{name})\(", f08,
                         re.M), f"no mpi_f08 interface for MPI_{name}")
    # A large-count form a generic could not tell apart keeps its own name.
    expect(re.search(r"^\s*interface MPI_Type_get_extent_c$", f08, re.M),
           "MPI_Type_get_extent_c is not by its own name in mpi_f08")
    expect(re.search(r"^\s*subroutine MPI_Send_f08c\(", f08, re.M),
           "MPI_Send_c is not in MPI_Send's generic in mpi_f08")
    for i, line in enumerate(out["mpif.h"].splitlines(), 1):
        expect(len(line) <= 72, f"mpif.h line {i} is longer than 72 columns")
        expect(line.startswith("!") or line.startswith("      ") and line[6] != " ",
               f"mpif.h line {i} is not a fixed-form statement or comment")
    expect("PARAMETER (MPI_STATUS_SIZE=6)" in out["mpif.h"], "MPI_STATUS_SIZE is not 6")
    expect("mpi_fortran_sentinels_" in out["fortran_layout.hpp"], "no sentinel block")


def check_failures():
    cases = [
        ("a void* that is no known buffer", "Example_attach",
         add_function("int MPI_Example_attach(MPI_Comm comm, void *region);"), None),
        # (Made up: MPI_Info_get_string, the example once, is mapped now.)
        ("an output string without its size", "Example_get_label",
         add_function("int MPI_Example_get_label(MPI_Comm comm, int *len, char *label);"), None),
        # (A made-up callback type: the real ones all get mapped in time.)
        ("an unknown callback type", "Unmapped_callback",
         add_function("int MPI_Unmapped_callback(MPI_Unmapped_function *fn, "
                      "MPI_Request *request);"), None),
        ("an unknown C type", "Example_seek",
         add_function("int MPI_Example_seek(MPI_File fh, MPI_Offset offset, unsigned whence);"),
         None),
        ("a stale per-function annotation", "Info_delete.name", None,
         lambda s: s.replace('"Info_delete.key"', '"Info_delete.name"')),
        ("two names equal but for case", "MPI_ROOT",
         lambda s: s.replace('("MPI_ROOT", -3),', '("MPI_ROOT", -3), ("MPI_Root", 7),'), None),
    ]
    for what, name, edit_spec, edit_map in cases:
        rc, err, _ = generate(edit_spec, edit_map)
        expect(rc != 0 and name in err, f"{what}: the generator did not stop naming {name} "
                                         f"(status {rc}): {err.strip()}")


check_real_spec()
check_failures()
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
