"""The `mpi_f08` module (MPI 4.1 chapter 19.1.3), for gen_fortran.py.

Like the `mpi` module it holds no code: handle types, constants, the standard's
abstract interfaces for callbacks, and a generic interface per routine whose
specific, MPI_X_f08, is bound (by gfortran's naming, mpi_x_f08_) to the same
Fortran-callable wrapper as MPI_X of mpif.h and the mpi module. That works
because every f08 type has the layout of what the wrapper takes:
- a handle, TYPE(MPI_Comm) and the others, is a BIND(C) type of one INTEGER
  (MPI_VAL), our Fortran handle, passed by reference like an INTEGER;
- TYPE(MPI_Status) holds the words of INTEGER STATUS(MPI_STATUS_SIZE) in their
  order, with MPI_SOURCE, MPI_TAG and MPI_ERROR as named components;
- TYPE(C_PTR) BASEPTR (MPI_ALLOC_MEM and the window allocations) is an
  address-sized word, where the mpi module has INTEGER(KIND=MPI_ADDRESS_KIND);
- the optional IERROR is a null pointer when absent (the wrappers check);
- callbacks of the abstract interfaces below take their arguments as the C
  trampolines pass them (TYPE(C_PTR), VALUE is the address the mpi module's
  choice buffer gets).
The sentinels share the mpi module's COMMON block, so the library finds them
by address alike. Choice buffers are assumed-size with NO_ARG_CHECK, as in
the mpi module: MPI_SUBARRAYS_SUPPORTED is .FALSE. (a nonblocking call needs
a contiguous buffer, MPI 4.1 section 19.1.12).

The large-count routines (MPI_X_c) join MPI_X's generic as MPI_X_f08c where
their arguments tell them apart; where they differ only in kinds this ABI
makes equal (MPI_ADDRESS_KIND and MPI_COUNT_KIND are both 8 bytes), they are
MPI_X_c alone, as MPI 4.1 section 19.2 says.
"""
import re

import fortran_kinds as fk
import spec

HANDLE_TYPES = sorted(spec.HANDLE_KINDS, key=spec.HANDLE_KINDS.get)
KIND_NAMES = ["MPI_ADDRESS_KIND", "MPI_COUNT_KIND", "MPI_OFFSET_KIND", "MPI_STATUS_SIZE"]
SAME_SIZE_KINDS = ("MPI_ADDRESS_KIND", "MPI_COUNT_KIND", "MPI_OFFSET_KIND")

# The standard's abstract interfaces (MPI 4.1 section A.4.x, Fortran 2008),
# as (name, dummy arguments, declarations).
ABSTRACT = [
    ("MPI_User_function", "invec, inoutvec, len, datatype",
     ["TYPE(C_PTR), VALUE :: invec, inoutvec", "INTEGER :: len",
      "TYPE(MPI_Datatype) :: datatype"]),
    ("MPI_User_function_c", "invec, inoutvec, len, datatype",
     ["TYPE(C_PTR), VALUE :: invec, inoutvec", "INTEGER(KIND=MPI_COUNT_KIND) :: len",
      "TYPE(MPI_Datatype) :: datatype"]),
    ("MPI_Datarep_extent_function", "datatype, extent, extra_state, ierror",
     ["TYPE(MPI_Datatype) :: datatype",
      "INTEGER(KIND=MPI_ADDRESS_KIND) :: extent, extra_state", "INTEGER :: ierror"]),
    ("MPI_Datarep_conversion_function",
     "userbuf, datatype, count, filebuf, position, extra_state, ierror",
     ["TYPE(C_PTR), VALUE :: userbuf, filebuf", "TYPE(MPI_Datatype) :: datatype",
      "INTEGER :: count, ierror", "INTEGER(KIND=MPI_OFFSET_KIND) :: position",
      "INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state"]),
    ("MPI_Grequest_query_function", "extra_state, status, ierror",
     ["INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state", "TYPE(MPI_Status) :: status",
      "INTEGER :: ierror"]),
    ("MPI_Grequest_free_function", "extra_state, ierror",
     ["INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state", "INTEGER :: ierror"]),
    ("MPI_Grequest_cancel_function", "extra_state, complete, ierror",
     ["INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state", "LOGICAL :: complete",
      "INTEGER :: ierror"]),
]
for _obj, _h in (("Comm", "comm"), ("Type", "type"), ("Win", "win")):
    _t = "Datatype" if _obj == "Type" else _obj
    ABSTRACT += [
        (f"MPI_{_obj}_copy_attr_function",
         f"old{_h}, {_h}_keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierror",
         [f"TYPE(MPI_{_t}) :: old{_h}", f"INTEGER :: {_h}_keyval, ierror",
          "INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out",
          "LOGICAL :: flag"]),
        (f"MPI_{_obj}_delete_attr_function",
         f"{_h}, {_h}_keyval, attribute_val, extra_state, ierror",
         [f"TYPE(MPI_{_t}) :: {_h}", f"INTEGER :: {_h}_keyval, ierror",
          "INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val, extra_state"]),
    ]
for _obj in ("Comm", "Win", "File", "Session"):
    ABSTRACT.append((f"MPI_{_obj}_errhandler_function", f"{_obj.lower()}, error_code",
                     [f"TYPE(MPI_{_obj}) :: {_obj.lower()}", "INTEGER :: error_code"]))

# The interface each predefined callback of spec.py has (the MPI-1 forms
# stay EXTERNAL: MPI 4.1 gives them no f08 interface).
PREDEFINED_INTERFACES = {name for name, _, _ in ABSTRACT}


def declarations(fn):
    """The f08 declarations of fn's dummy arguments."""
    decls = []
    for p in fn.params:
        decls += fn.kind(p).f08(p)
    if fn.has_ierror:
        decls.append("INTEGER, OPTIONAL, INTENT(OUT) :: ierror")
    return decls


def specific(fn, name, wrap, indent="    "):
    decls = declarations(fn)
    what = "function" if fn.is_function else "subroutine"
    if fn.is_function:
        decls.append(f"{fk.FORTRAN_TYPES[fn.ret]} :: {name}")
    body = wrap(f"{what} {name}", fn.fortran_params(), indent)
    imports = [k for k in KIND_NAMES if any(k in d for d in decls)]
    imports += [t for t in HANDLE_TYPES + ["MPI_Status"]
                if any(f"TYPE({t})" in d for d in decls)]
    if any("C_PTR" in d for d in decls):
        imports.append("C_PTR")
    if imports:
        body += wrap(f"{indent}  import :: ", imports, "", parens=False)
    body.append(f"{indent}  implicit none")
    body += [f"{indent}  {d}" for d in decls]
    body.append(f"{indent}end {what} {name}")
    return body


def distinct(small, large):
    """Whether a generic can tell fn's int form from its large-count form."""
    def norm(fn):
        text = "\n".join(declarations(fn))
        for k in SAME_SIZE_KINDS:
            text = text.replace(k, "MPI_8_KIND")
        return [re.sub(r"\s+", " ", d) for d in text.split("\n")]
    return norm(small) != norm(large)


def status_type(fields, status_bytes):
    """TYPE(MPI_Status): the words of INTEGER STATUS(MPI_STATUS_SIZE)."""
    public = ["MPI_SOURCE", "MPI_TAG", "MPI_ERROR"]
    if [fields[f] for f in public] != [0, 4, 8]:
        raise SystemExit("gen_f08.py: MPI_Status must begin with MPI_SOURCE, MPI_TAG, MPI_ERROR")
    rest = status_bytes // 4 - 3
    return ["  type, bind(C) :: MPI_Status", "    integer :: MPI_SOURCE, MPI_TAG, MPI_ERROR",
            f"    integer :: mpc_internal({rest})", "  end type MPI_Status"]


def module(consts, fns, large, wrap, sentinels, sentinel_block, argv, fields,
           status_bytes, logical_consts, null_procedures, sizeof_lines, sync_reg_lines, header):
    """mpi_f08.f90. consts are the mpi module's (name, value) INTEGER
    constants; large maps a routine's name to its large-count form."""
    handle_of = {n: t for n, t, _ in spec.HANDLES}
    handle_of.update({n: "MPI_Datatype" for n, *_r in spec.DATATYPES})
    handle_of.update({n: "MPI_Op" for n in spec.OPS})
    lines = ["! mpi_f08.f90: the `mpi_f08` module of fibermpi (use mpi_f08): handle types,",
             "! TYPE(MPI_Status), constants, abstract interfaces and a generic interface per",
             "! routine; no code (see mpi_api/api/gen_f08.py for why it needs none).",
             f"! {header}", "module mpi_f08", "  use, intrinsic :: iso_c_binding, only: C_PTR",
             "  implicit none", "  private :: C_PTR"]
    for t in HANDLE_TYPES:
        lines += [f"  type, bind(C) :: {t}", "    integer :: MPI_VAL", f"  end type {t}"]
    lines += status_type(fields, status_bytes)
    # (MPI_SOURCE, MPI_TAG and MPI_ERROR stay INTEGER constants too: indices
    # into an INTEGER status, for MPI_Status_f082f's.)
    for n, v in consts:
        if n in handle_of:
            t = handle_of[n]
            lines.append(f"  type({t}), parameter :: {n} = {t}({v})")
        else:
            lines.append(f"  integer, parameter :: {n} = {v}")
    lines += [f"  logical, parameter :: {n} = {v}" for n, v in logical_consts]
    lines += [f"  integer(kind=MPI_OFFSET_KIND), parameter :: {n} = {v}"
              for n, v in spec.OFFSET_CONSTANTS]
    # The sentinels: the mpi module's COMMON block, statuses as TYPE(MPI_Status).
    status_dims = {"(MPI_STATUS_SIZE)": "", "(MPI_STATUS_SIZE,1)": "(1)"}
    for n, d, _ in sentinels:
        if d in status_dims:
            lines.append(f"  type(MPI_Status) :: {n}{status_dims[d]}")
        else:
            lines.append(f"  integer :: {n}{d}")
    lines += wrap(f"common /{sentinel_block}/ ", [n for n, _, _ in sentinels], "  ", parens=False)
    lines += argv
    # Callbacks.
    lines.append("  abstract interface")
    for name, args, decls in ABSTRACT:
        imports = [k for k in KIND_NAMES if any(k in d for d in decls)]
        imports += [t for t in HANDLE_TYPES + ["MPI_Status"] if any(f"TYPE({t})" in d for d in decls)]
        if any("C_PTR" in d for d in decls):
            imports.append("C_PTR")
        lines.append(f"    subroutine {name}({args})")
        lines += wrap("      import :: ", imports, "", parens=False)
        lines.append("      implicit none")
        lines += [f"      {d}" for d in decls]
        lines.append(f"    end subroutine {name}")
    lines.append("  end interface")
    externals = list(null_procedures)
    for ctype, name in spec.PREDEFINED_CALLBACKS:
        if ctype in PREDEFINED_INTERFACES:
            lines.append(f"  procedure({ctype}) :: {name}")
        else:
            externals.append(name)
    lines += wrap("external :: ", externals, "  ", parens=False)
    # Handle comparisons: one C function (all handles are INTEGERs), a
    # specific per type, private (the operators are the interface); elemental,
    # for arrays of requests.
    for op, c in (("==", "eq"), ("/=", "ne")):
        lines += wrap("private :: ", [f"mpi_f08_{c}_{t[4:].lower()}" for t in HANDLE_TYPES], "  ",
                      parens=False)
        lines.append(f"  interface operator({op})")
        for t in HANDLE_TYPES:
            f = f"mpi_f08_{c}_{t[4:].lower()}"
            lines += [f"    elemental logical function {f}(a, b)", f"      import :: {t}",
                      "      implicit none", f"      type({t}), intent(in) :: a, b",
                      f"    end function {f}"]
        lines.append("  end interface")
    # Routines.
    for fn in fns:
        if fn.is_function:
            lines.append("  interface")
            lines += specific(fn, f"MPI_{fn.name}", wrap)
            lines += specific(fn, f"PMPI_{fn.name}", wrap)
            lines.append("  end interface")
            continue
        # The profiling names too (MPI 4.1 section 15.2.6): PMPI_X, PMPI_X_f08.
        for prefix in ("MPI", "PMPI"):
            lines.append(f"  interface {prefix}_{fn.name}")
            lines += specific(fn, f"{prefix}_{fn.name}_f08", wrap)
            big = large.get(fn.name)
            if big and distinct(fn, big):
                lines += specific(big, f"{prefix}_{fn.name}_f08c", wrap)
            lines.append(f"  end interface {prefix}_{fn.name}")
    # Large-count forms a generic cannot tell apart: by their own name.
    for name, big in large.items():
        small = next((f for f in fns if f.name == name), None)
        if small is None or not distinct(small, big):
            for prefix in ("MPI", "PMPI"):
                lines.append(f"  interface {prefix}_{big.name}")
                lines += specific(big, f"{prefix}_{big.name}_f08", wrap)
                lines.append(f"  end interface {prefix}_{big.name}")
    # The status conversions between the mpi module's and mpi_f08's.
    for name, first, second in (("MPI_Status_f2f08", "f_status", "f08_status"),
                                ("MPI_Status_f082f", "f08_status", "f_status")):
        decl = {"f_status": "integer :: f_status(MPI_STATUS_SIZE)",
                "f08_status": "type(MPI_Status) :: f08_status"}
        lines += [f"  interface {name}", f"    subroutine {name}_f08({first}, {second}, ierror)",
                  "      import :: MPI_STATUS_SIZE, MPI_Status", "      implicit none",
                  f"      {decl[first]}", f"      {decl[second]}",
                  "      integer, optional, intent(out) :: ierror",
                  f"    end subroutine {name}_f08", f"  end interface {name}"]
    lines += sizeof_lines
    lines += sync_reg_lines
    lines.append("end module mpi_f08")
    return "\n".join(lines) + "\n"
