"""How each C function of spec.py maps onto its Fortran binding (gfortran).

The mapping is derived from the C prototypes: every C parameter gets an
argument kind from its type (integers and handles by reference, choice
buffers, statuses, input strings, ...), unless ANNOTATIONS below names it
(output strings, logicals, 1-based indices, attribute values, callbacks).
A parameter that no rule maps stops the build with a message: a new C
function either maps by the rules, gets an annotation, or is listed in
C_ONLY with the reason. gen_fortran.py turns the mapping into code.
"""
import re
import sys
from dataclasses import dataclass, field

from fortran_kinds import (FORTRAN_TYPES, AddressOut, ArgvsIn, AttrCallback, AttrCallbackInt,
                           AttrIn, AttrInInt, AttrOut, AttrOutInt, Buffer, DatarepCallback, DatarepState,
                           DetachedAddress, Drop, FortranBuflen, FortranIndex, FortranIndices, GrequestCallback,
                           GrequestState, KeyvalState, KeyvalStateInt, Logical, Pointer,
                           SameAbiCallback, Sentinel, Status, Statuses, StringArrayIn, StringIn,
                           StringOut, Value,
                           fail)

# void* parameters that are choice buffers (any other void* needs an annotation:
# in MPI it can also be an attribute value or a void** in disguise).
BUFFER_NAMES = {"buf", "sendbuf", "recvbuf", "buffer", "inbuf", "outbuf", "inoutbuf",
                "location", "base", "origin_addr", "result_addr", "compare_addr"}

# Functions without a Fortran binding: MPI defines the handle and status
# conversion functions, and the tools information interface (MPI_T_*, MPI 3.1
# section 14.3), for C only. The f08 status conversions have hand-written
# Fortran bindings in mpi_f08 (gen_f08.py): they take both kinds of status.
C_ONLY = re.compile(r"^(\w+_f2c|\w+_c2f|T_\w+|Status_\w*f08\w*)$")
# The large-count "_c" functions of MPI 4 exist in Fortran only in mpi_f08
# (MPI 4.0 section 19.2): wrappers and mpi_f08 interfaces, nothing in mpif.h
# or the mpi module. MPI_REGISTER_DATAREP_C's conversion functions take
# MPI_Count counts, which the trampolines of the int form do not: no binding.
LARGE_COUNT = re.compile(r"^\w+_c$")
NO_F08 = {"Register_datarep_c"}
# Subroutines without the IERROR argument (MPI 3.1 section 14.2.4).
NO_IERROR = {"Pcontrol"}


@dataclass
class Param:
    text: str  # as written in the prototype
    const: bool
    type: str
    ptr: int
    name: str
    dims: list  # C array dimensions: "int r[][3]" -> ["", "3"]

    @property
    def is_array(self):
        return bool(self.dims)


PARAM_RE = re.compile(r"^(?P<const>const\s+)?(?P<type>[A-Za-z_]\w*(?:\s+[A-Za-z_]\w*)*?)\s*"
                      r"(?P<ptr>\**)\s*(?P<name>\w+)\s*(?P<dims>(?:\[\w*\])*)$")


def parse_params(fn, args):
    params = []
    if args in ("", "void"):
        return params, False
    varargs = False
    for text in (a.strip() for a in args.split(",")):
        if text == "...":
            varargs = True
            continue
        m = PARAM_RE.match(text)
        if not m:
            fail(fn, f"cannot parse parameter '{text}'")
        params.append(Param(text, bool(m.group("const")), m.group("type"), len(m.group("ptr")),
                            m.group("name"), re.findall(r"\[(\w*)\]", m.group("dims"))))
    return params, varargs


CALLBACK_KINDS = {
    "MPI_User_function": SameAbiCallback(),
    "MPI_User_function_c": SameAbiCallback(),
    "MPI_Comm_errhandler_function": SameAbiCallback(),
    "MPI_File_errhandler_function": SameAbiCallback(),
    "MPI_Session_errhandler_function": SameAbiCallback(),
    "MPI_Datarep_conversion_function": DatarepCallback("conversion"),
    "MPI_Datarep_extent_function": DatarepCallback("extent"),
    "MPI_Comm_copy_attr_function": AttrCallback("copy"),
    "MPI_Type_copy_attr_function": AttrCallback("copy"),
    "MPI_Comm_delete_attr_function": AttrCallback("delete"),
    "MPI_Type_delete_attr_function": AttrCallback("delete"),
    "MPI_Grequest_query_function": GrequestCallback("query"),
    "MPI_Grequest_free_function": GrequestCallback("free"),
    "MPI_Grequest_cancel_function": GrequestCallback("cancel"),
    "MPI_Copy_function": AttrCallbackInt("copy"),
    "MPI_Delete_function": AttrCallbackInt("delete"),
    "MPI_Win_errhandler_function": SameAbiCallback(),
    "MPI_Win_copy_attr_function": AttrCallback("copy"),
    "MPI_Win_delete_attr_function": AttrCallback("delete"),
}

# ---- Annotations: "Function.param", or "*.param" for every function -------------

LOGICAL = Logical()
ANNOTATIONS = {
    # Fortran's MPI_INIT has no command line.
    "Init.argc": Drop(), "Init.argv": Drop(),
    "Init_thread.argc": Drop(), "Init_thread.argv": Drop(),
    "Info_create_env.argc": Drop("0"), "Info_create_env.argv": Drop(),
    # MPI 4.0's MPI_INFO_GET_STRING: BUFLEN counts characters in Fortran.
    "Info_get_string.buflen": FortranBuflen(),
    "Info_get_string.value": StringOut("buflen_c"),
    "Info_get_string.key": StringIn(trim_leading=True),
    # MPI_SESSION_GET_NTH_PSET: PSET_LEN counts characters, as BUFLEN above.
    "Session_get_nth_pset.pset_len": FortranBuflen(),
    "Session_get_nth_pset.pset_name": StringOut("pset_len_c"),
    # Output strings and the size of the C buffer they need.
    "Get_library_version.version": StringOut("MPI_MAX_LIBRARY_VERSION_STRING"),
    "Get_processor_name.name": StringOut("MPI_MAX_PROCESSOR_NAME"),
    "Error_string.string": StringOut("MPI_MAX_ERROR_STRING"),
    "Comm_get_name.comm_name": StringOut("MPI_MAX_OBJECT_NAME"),
    "Type_get_name.type_name": StringOut("MPI_MAX_OBJECT_NAME"),
    "Info_get.value": StringOut("f::capacity_for(*valuelen)"),
    "Info_get_nthkey.key": StringOut("MPI_MAX_INFO_KEY"),
    "File_get_view.datarep": StringOut("MPI_MAX_DATAREP_STRING"),
    "Open_port.port_name": StringOut("MPI_MAX_PORT_NAME"),
    "Lookup_name.port_name": StringOut("MPI_MAX_PORT_NAME"),
    # MPI_COMM_SPAWN's argument lists.
    "Comm_spawn.argv": StringArrayIn(),
    "Comm_spawn_multiple.array_of_commands": StringArrayIn("count"),
    "Comm_spawn_multiple.array_of_argv": ArgvsIn("count"),
    "Register_datarep.extra_state": DatarepState(),
    "Info_set.key": StringIn(trim_leading=True), "Info_set.value": StringIn(trim_leading=True),
    "Info_get.key": StringIn(trim_leading=True),
    "Info_get_valuelen.key": StringIn(trim_leading=True),
    "Info_delete.key": StringIn(trim_leading=True),
    # LOGICAL arguments.
    "*.flag": LOGICAL, "*.commute": LOGICAL, "*.reorder": LOGICAL, "*.high": LOGICAL,
    "*.weighted": LOGICAL, "*.periods": LOGICAL, "*.remain_dims": LOGICAL,
    # Indices of completed requests count from 1 in Fortran.
    "Waitany.index": FortranIndex(), "Testany.index": FortranIndex(),
    "Waitsome.array_of_indices": FortranIndices("outcount"),
    "Testsome.array_of_indices": FortranIndices("outcount"),
    "Request_get_status_any.index": FortranIndex(),
    "Request_get_status_some.array_of_indices": FortranIndices("outcount"),
    # Attribute values are address-sized integers in Fortran.
    "Comm_set_attr.attribute_val": AttrIn(), "Type_set_attr.attribute_val": AttrIn(),
    "Comm_get_attr.attribute_val": AttrOut("comm_keyval"),
    "Type_get_attr.attribute_val": AttrOut("type_keyval"),
    "Comm_create_keyval.extra_state": KeyvalState(),
    "Type_create_keyval.extra_state": KeyvalState(),
    # The MPI-1 forms: default INTEGER values and extra state.
    "Attr_put.attribute_val": AttrInInt(), "Attr_get.attribute_val": AttrOutInt("keyval"),
    "Keyval_create.extra_state": KeyvalStateInt(),
    "Grequest_start.extra_state": GrequestState(),
    "Buffer_detach.buffer_addr": DetachedAddress(),
    "Comm_detach_buffer.buffer_addr": DetachedAddress(),
    "Session_detach_buffer.buffer_addr": DetachedAddress(),
    # Windows: attribute values, names, and the addresses of memory MPI
    # allocates (INTEGER(KIND=MPI_ADDRESS_KIND) BASEPTR, for Cray pointers).
    "Win_set_attr.attribute_val": AttrIn(), "Win_get_attr.attribute_val": AttrOut("win_keyval"),
    "Win_create_keyval.extra_state": KeyvalState(),
    "Win_get_name.win_name": StringOut("MPI_MAX_OBJECT_NAME"),
    "*.baseptr": AddressOut(),
    # Integer arrays that may be Fortran sentinels.
    "*.weights": Sentinel("weights"), "*.sourceweights": Sentinel("weights"),
    "*.destweights": Sentinel("weights"), "*.array_of_errcodes": Sentinel("errcodes"),
}


@dataclass
class Function:
    name: str  # without MPI_
    ret: str
    params: list
    varargs: bool
    kinds: dict = field(default_factory=dict)  # param name -> Kind

    @property
    def has_ierror(self):
        return self.ret == "int" and self.name not in NO_IERROR

    @property
    def is_function(self):
        """A Fortran FUNCTION (MPI_WTIME, MPI_AINT_ADD): returns the C value."""
        return self.ret != "int"

    def kind(self, p):
        return self.kinds[p.name]

    def param_named(self, *names):
        return next((p for p in self.params if p.name in names), None)

    def param_of_kind(self, cls):
        return next((p for p in self.params if isinstance(self.kind(p), cls)), None)

    def fortran_params(self):
        """Fortran dummy arguments, in order (IERROR last when there is one)."""
        names = [p.name for p in self.params if self.kind(p).fortran(p)]
        return names + (["ierror"] if self.has_ierror else [])


def default_kind(fn, p):
    """The kind of a parameter no annotation names, from its C type alone."""
    if p.type in FORTRAN_TYPES and p.type != "double":
        if p.ptr == 0 and not p.dims:
            return Value()
        if p.ptr + len(p.dims) == 1 or (p.ptr == 0 and len(p.dims) == 2 and p.dims[1]):
            return Pointer()
    if p.type == "void" and p.ptr == 1:
        if p.name in BUFFER_NAMES:
            return Buffer()
        fail(fn, f"'{p.text}' is not a known choice buffer name (BUFFER_NAMES)")
    if p.type == "char" and p.ptr + len(p.dims) == 1:
        if p.const:
            return StringIn()
        fail(fn, f"output string '{p.text}' needs its buffer size (StringOut)")
    if p.type == "MPI_Status":
        if p.ptr == 1 and not p.dims:
            return Status()
        if p.ptr == 0 and p.dims == [""]:
            return Statuses()
    if p.type in CALLBACK_KINDS and p.ptr == 1:
        return CALLBACK_KINDS[p.type]
    fail(fn, f"no rule maps parameter '{p.text}'")


def functions(parsed):
    """Functions with a Fortran binding, each parameter mapped; parsed is
    gen_c.functions()."""
    out = []
    used = set()
    for ret, name, args in parsed:
        if C_ONLY.match(name) or name in NO_F08:
            continue
        params, varargs = parse_params(name, args)
        fn = Function(name, ret, params, varargs)
        if fn.is_function and ret not in FORTRAN_TYPES:
            fail(name, f"returns {ret}, which has no Fortran type")
        for p in params:
            # A large-count form takes its int form's annotations.
            base = name[:-2] if LARGE_COUNT.match(name) else name
            key = next((k for k in (f"{name}.{p.name}", f"{base}.{p.name}", f"*.{p.name}")
                        if k in ANNOTATIONS), None)
            if key:
                used.add(key)
                fn.kinds[p.name] = ANNOTATIONS[key]
            else:
                fn.kinds[p.name] = default_kind(name, p)
        out.append(fn)
    # A per-function annotation that matches nothing is a mistake (a renamed
    # parameter); "*." ones may wait for functions not implemented yet.
    stale = {k for k in ANNOTATIONS if not k.startswith("*.")} - used
    if stale:
        sys.exit(f"gen_fortran.py: annotations match no parameter: {', '.join(sorted(stale))}")
    return out
