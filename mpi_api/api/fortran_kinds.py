"""Argument kinds of the Fortran bindings: how one C parameter of an MPI
function appears in its Fortran-callable wrapper (gfortran conventions).

fortran_map.py decides which kind each parameter of spec.py gets;
gen_fortran.py asks the kinds for the code. Every method gets the parameter
(fortran_map.Param) and, where siblings matter, the whole function.
"""
import sys

import spec

# ---- C types -------------------------------------------------------------------

HANDLE_TYPES = set(spec.HANDLE_KINDS)
# C scalar types passed by reference from Fortran, and their Fortran type.
FORTRAN_TYPES = {"int": "INTEGER", "MPI_Fint": "INTEGER",
                 "MPI_Aint": "INTEGER(KIND=MPI_ADDRESS_KIND)",
                 "MPI_Count": "INTEGER(KIND=MPI_COUNT_KIND)",
                 "MPI_Offset": "INTEGER(KIND=MPI_OFFSET_KIND)",
                 "double": "DOUBLE PRECISION"}
FORTRAN_TYPES.update({t: "INTEGER" for t in HANDLE_TYPES})


def fail(fn, why):
    sys.exit(f"gen_fortran.py: MPI_{fn}: {why}.\n  Map it in mpi_api/api/fortran_map.py "
             "(ANNOTATIONS), or list it in C_ONLY with the reason.")


def fortran_shape(p):
    """Fortran dimensions of a C array parameter: "[]" -> "(*)", "[][3]" -> "(3,*)"."""
    dims = ["*" if d == "" else d for d in reversed(p.dims)]
    return f"({','.join(dims)})" if dims else ""


# ---- Argument kinds ------------------------------------------------------------
# Each kind says how one C parameter appears in the Fortran-callable wrapper:
# params(): its C declarations there; hidden(): gfortran's hidden CHARACTER
# lengths (appended after all other arguments); pre()/post(): statements around
# the C call; arg(): the expression passed to the C function; fortran(): its
# declaration in the mpi module's interface ([] when Fortran has no such argument);
# f08(): the same in the mpi_f08 module's.

class Kind:
    def params(self, p, fn):
        return [p.text]

    def hidden(self, p):
        return []

    def pre(self, p, fn):
        return []

    def arg(self, p, fn):
        return p.name

    def post(self, p, fn):
        return []

    def fortran(self, p):
        return [f"{FORTRAN_TYPES[p.type]} :: {p.name}{fortran_shape(p)}"]

    def f08_post(self, p, fn):
        """Statements after the C call that only mpi_f08's wrapper runs: a kind
        with some gets an f08 wrapper of its own (gen_fortran.py)."""
        return []

    def f08(self, p):
        """Its declaration in the mpi_f08 module (gen_f08.py): handles typed."""
        if p.type in HANDLE_TYPES and self.fortran(p):
            return [f"TYPE({p.type}) :: {p.name}{fortran_shape(p)}"]
        return self.fortran(p)


def intent_in(decls):
    """INTENT(IN) added to declarations ("TYPE :: name")."""
    return [d.replace(" :: ", ", INTENT(IN) :: ", 1) for d in decls]


class Value(Kind):
    """A scalar passed by value in C: Fortran passes it by reference."""
    def params(self, p, fn):
        return [f"const {p.type}* {p.name}"]

    def arg(self, p, fn):
        return f"*{p.name}"

    def f08(self, p):
        return intent_in(super().f08(p))


class Pointer(Kind):
    """Integers, handles and addresses by reference, arrays of them: same layout."""
    def f08(self, p):
        return intent_in(super().f08(p)) if p.const else super().f08(p)


class Drop(Kind):
    """A C parameter Fortran does not have (MPI_INIT's argc and argv); C gets
    `value` for it."""
    def __init__(self, value="nullptr"):
        self.value = value

    def params(self, p, fn):
        return []

    def arg(self, p, fn):
        return self.value

    def fortran(self, p):
        return []


class Buffer(Kind):
    """A choice buffer; MPI_BOTTOM and MPI_IN_PLACE are recognised by address."""
    def params(self, p, fn):
        return [f"{'const ' if p.const else ''}void* {p.name}"]

    def arg(self, p, fn):
        return f"f::buffer({p.name})"

    def fortran(self, p):
        return [f"!GCC$ ATTRIBUTES NO_ARG_CHECK :: {p.name}", f"TYPE(*), DIMENSION(*) :: {p.name}"]


class DetachedAddress(Buffer):
    """MPI_BUFFER_DETACH's BUFFER_ADDR: a void** in C. The mpi module's is a
    choice buffer, left alone; mpi_f08's a TYPE(C_PTR) that gets the address."""
    def params(self, p, fn):
        return [f"void* {p.name}"]

    def pre(self, p, fn):
        return [f"void* {p.name}_c = nullptr;", f"static_cast<void>({p.name});  // mpif.h: unused"]

    def arg(self, p, fn):
        return f"&{p.name}_c"

    def f08_post(self, p, fn):
        return [f"if (rc == MPI_SUCCESS) *static_cast<void**>({p.name}) = {p.name}_c;"]

    def f08(self, p):
        return [f"TYPE(C_PTR) :: {p.name}"]


class AddressOut(Kind):
    """A void* through which C stores an address (MPI_ALLOC_MEM's BASEPTR):
    INTEGER(KIND=MPI_ADDRESS_KIND) in Fortran, as wide as the pointer."""
    def params(self, p, fn):
        return [f"MPI_Aint* {p.name}"]

    def fortran(self, p):
        return [f"INTEGER(KIND=MPI_ADDRESS_KIND) :: {p.name}"]

    def f08(self, p):
        return [f"TYPE(C_PTR) :: {p.name}"]


class Status(Kind):
    """INTEGER STATUS(MPI_STATUS_SIZE): copied to and from a C MPI_Status."""
    def params(self, p, fn):
        return [f"{'const ' if p.const else ''}MPI_Fint* {p.name}"]

    def pre(self, p, fn):
        cls = "StatusIn" if p.const else "StatusOut"
        return [f"f::{cls} {p.name}_s({p.name});"]

    def arg(self, p, fn):
        return f"{p.name}_s.get()"

    def post(self, p, fn):
        return [] if p.const else [f"{p.name}_s.store();"]

    def fortran(self, p):
        return [f"INTEGER :: {p.name}(MPI_STATUS_SIZE)"]

    def f08(self, p):
        return [f"TYPE(MPI_Status) :: {p.name}"]


class Statuses(Kind):
    """INTEGER STATUSES(MPI_STATUS_SIZE, COUNT); the count is the function's
    count or incount argument."""
    def params(self, p, fn):
        return [f"MPI_Fint* {p.name}"]

    def pre(self, p, fn):
        count = fn.param_named("count", "incount")
        if not count:
            fail(fn.name, f"array of statuses '{p.name}' without a count argument")
        return [f"f::StatusArray {p.name}_s({p.name}, *{count.name});"]

    def arg(self, p, fn):
        return f"{p.name}_s.get()"

    def post(self, p, fn):
        return [f"{p.name}_s.store();"]

    def fortran(self, p):
        return [f"INTEGER :: {p.name}(MPI_STATUS_SIZE,*)"]

    def f08(self, p):
        return [f"TYPE(MPI_Status) :: {p.name}(*)"]


class StringIn(Kind):
    """CHARACTER*(*) input: trailing blanks dropped (and leading ones for info
    keys and values, MPI 3.1 section 9)."""
    def __init__(self, trim_leading=False):
        self.trim_leading = trim_leading

    def params(self, p, fn):
        return [f"const char* {p.name}"]

    def hidden(self, p):
        return [f"size_t {p.name}_len"]

    def pre(self, p, fn):
        lead = ", f::kTrimLeading" if self.trim_leading else ""
        return [f"const f::InString {p.name}_s({p.name}, {p.name}_len{lead});"]

    def arg(self, p, fn):
        return f"{p.name}_s.c_str()"

    def fortran(self, p):
        return [f"CHARACTER(LEN=*) :: {p.name}"]


class StringOut(Kind):
    """CHARACTER*(*) output: C writes into a buffer of `capacity` bytes (a C++
    expression), copied back blank-padded when the call succeeded (and its
    logical flag, if any, is true)."""
    def __init__(self, capacity):
        self.capacity = capacity

    def params(self, p, fn):
        return [f"char* {p.name}"]

    def hidden(self, p):
        return [f"size_t {p.name}_len"]

    def pre(self, p, fn):
        return [f"f::OutString {p.name}_s({p.name}, {p.name}_len, {self.capacity});"]

    def arg(self, p, fn):
        return f"{p.name}_s.data()"

    def post(self, p, fn):
        flag = fn.param_of_kind(Logical)
        cond = "rc == MPI_SUCCESS" + (f" && {flag.name}_c" if flag and flag.ptr else "")
        return [f"if ({cond}) {p.name}_s.store();"]

    def fortran(self, p):
        return [f"CHARACTER(LEN=*) :: {p.name}"]


class StringArrayIn(Kind):
    """CHARACTER*(*) ARRAY(*) (MPI_COMM_SPAWN's ARGV and COMMANDS): the
    function's `count` strings, or those before the first blank one."""
    def __init__(self, count=None):
        self.count = count

    def params(self, p, fn):
        return [f"const char* {p.name}"]

    def hidden(self, p):
        return [f"size_t {p.name}_len"]

    def pre(self, p, fn):
        count = f", *{self.count}" if self.count else ""
        return [f"f::InStringArray {p.name}_s({p.name}, {p.name}_len{count});"]

    def arg(self, p, fn):
        return f"{p.name}_s.get()"

    def fortran(self, p):
        return [f"CHARACTER(LEN=*) :: {p.name}(*)"]


class ArgvsIn(StringArrayIn):
    """MPI_COMM_SPAWN_MULTIPLE's CHARACTER*(*) ARRAY_OF_ARGV(COUNT, *)."""
    def pre(self, p, fn):
        return [f"f::InArgvs {p.name}_s({p.name}, {p.name}_len, *{self.count});"]

    def fortran(self, p):
        return [f"CHARACTER(LEN=*) :: {p.name}({self.count},*)"]


class FortranBuflen(Kind):
    """MPI_INFO_GET_STRING's BUFLEN (INOUT): a length in characters in Fortran,
    the size of a buffer with its NUL in C; C's buffer is `{name}_c` bytes."""
    def pre(self, p, fn):
        return [f"int {p.name}_c = *{p.name} > 0 ? *{p.name} + 1 : 0;"]

    def arg(self, p, fn):
        return f"&{p.name}_c"

    def post(self, p, fn):
        flag = fn.param_of_kind(Logical)
        cond = "rc == MPI_SUCCESS" + (f" && {flag.name}_c" if flag else "")
        return [f"if ({cond}) *{p.name} = {p.name}_c - 1;"]


class Logical(Kind):
    """LOGICAL: scalars converted both ways; arrays passed as they are, which
    relies on gfortran's .TRUE. being 1 (checked in the generated code)."""
    def params(self, p, fn):
        if p.is_array:
            return [p.text]
        return [f"{'' if p.ptr else 'const '}MPI_Fint* {p.name}"]

    def pre(self, p, fn):
        return [f"int {p.name}_c = 0;"] if p.ptr else []

    def arg(self, p, fn):
        if p.is_array:
            return p.name
        return f"&{p.name}_c" if p.ptr else f"f::c_logical(*{p.name})"

    def post(self, p, fn):
        return [f"*{p.name} = f::fortran_logical({p.name}_c);"] if p.ptr else []

    def fortran(self, p):
        return [f"LOGICAL :: {p.name}{fortran_shape(p)}"]


class FortranIndex(Kind):
    """An index into an array of requests: 1-based in Fortran."""
    def params(self, p, fn):
        return [f"MPI_Fint* {p.name}"]

    def pre(self, p, fn):
        return [f"int {p.name}_c = MPI_UNDEFINED;"]

    def arg(self, p, fn):
        return f"&{p.name}_c"

    def post(self, p, fn):
        return [f"*{p.name} = f::fortran_index({p.name}_c);"]


class FortranIndices(Kind):
    """Indices into an array of requests, as many as the out-count: 1-based.
    The out-count starts undefined, so a call that fails early changes nothing."""
    def __init__(self, count):
        self.count = count

    def pre(self, p, fn):
        return [f"*{self.count} = MPI_UNDEFINED;"]

    def post(self, p, fn):
        return [f"f::fortran_indices({p.name}, *{self.count});"]


class AttrIn(Kind):
    """An attribute value: INTEGER(KIND=MPI_ADDRESS_KIND) in Fortran, void* in C."""
    def params(self, p, fn):
        return [f"const MPI_Aint* {p.name}"]

    def arg(self, p, fn):
        return f"reinterpret_cast<void*>(*{p.name})"

    def fortran(self, p):
        return [f"INTEGER(KIND=MPI_ADDRESS_KIND) :: {p.name}"]


class AttrOut(AttrIn):
    """A value read back: C stores a void*; Fortran gets it as an integer, and
    the value itself for the predefined attributes (MPI 3.1 section 6.7.2)."""
    def __init__(self, keyval):
        self.keyval = keyval

    def params(self, p, fn):
        return [f"MPI_Aint* {p.name}"]

    def pre(self, p, fn):
        return [f"void* {p.name}_c = nullptr;"]

    def arg(self, p, fn):
        return f"&{p.name}_c"

    def post(self, p, fn):
        flag = fn.param_of_kind(Logical)
        return [f"if (rc == MPI_SUCCESS && {flag.name}_c) "
                f"*{p.name} = f::fortran_attribute(*{self.keyval}, {p.name}_c);"]


class SameAbiCallback(Kind):
    """A user function Fortran and C call alike (all arguments by reference)."""
    def params(self, p, fn):
        return [f"{p.type}* {p.name}"]

    def fortran(self, p):
        return [f"EXTERNAL :: {p.name}"]


class AttrCallback(Kind):
    """A copy or delete callback of a keyval: called through a C trampoline
    that finds the Fortran function in the keyval's extra state."""
    def __init__(self, what):
        self.what = what  # "copy" or "delete"

    def params(self, p, fn):
        return [f"f::Fortran{self.what.capitalize()}AttrFn {p.name}"]

    def arg(self, p, fn):
        return f"f::{self.what}_attr_trampoline"

    def fortran(self, p):
        return [f"EXTERNAL :: {p.name}"]


class KeyvalState(AttrIn):
    """The extra state of a keyval created from Fortran: carries the Fortran
    callbacks and the user's extra state to the trampolines."""
    def arg(self, p, fn):
        copy, delete = (q for q in fn.params if isinstance(fn.kind(q), AttrCallback))
        return f"f::keyval_state({copy.name}, {delete.name}, *{p.name})"


class AttrInInt(Kind):
    """An MPI-1 attribute value (MPI_ATTR_PUT): a default INTEGER in Fortran,
    stored sign-extended as a void* (MPI 3.1 section 17.2.7)."""
    def params(self, p, fn):
        return [f"const MPI_Fint* {p.name}"]

    def arg(self, p, fn):
        return f"f::attribute_from_int(*{p.name})"

    def fortran(self, p):
        return [f"INTEGER :: {p.name}"]


class AttrOutInt(AttrInInt):
    """An MPI-1 attribute value read back (MPI_ATTR_GET): the low bits of the
    stored value as a default INTEGER, the value itself for the predefined
    attributes."""
    def __init__(self, keyval):
        self.keyval = keyval

    def params(self, p, fn):
        return [f"MPI_Fint* {p.name}"]

    def pre(self, p, fn):
        return [f"void* {p.name}_c = nullptr;"]

    def arg(self, p, fn):
        return f"&{p.name}_c"

    def post(self, p, fn):
        flag = fn.param_of_kind(Logical)
        return [f"if (rc == MPI_SUCCESS && {flag.name}_c) "
                f"*{p.name} = f::fortran_attribute_int(*{self.keyval}, {p.name}_c);"]


class AttrCallbackInt(AttrCallback):
    """A copy or delete callback of an MPI-1 keyval (MPI_KEYVAL_CREATE): its
    attribute values and extra state are default INTEGERs."""
    def params(self, p, fn):
        return [f"f::Fortran{self.what.capitalize()}AttrFnInt {p.name}"]

    def arg(self, p, fn):
        return f"f::{self.what}_attr_trampoline_int"


class KeyvalStateInt(AttrInInt):
    """The extra state of an MPI-1 keyval created from Fortran (a default INTEGER)."""
    def arg(self, p, fn):
        copy, delete = (q for q in fn.params if isinstance(fn.kind(q), AttrCallback))
        return f"f::keyval_state_int({copy.name}, {delete.name}, *{p.name})"


class GrequestCallback(Kind):
    """A callback of a generalized request (query, free or cancel): called
    through a C trampoline that finds the Fortran one in the request's extra
    state."""
    def __init__(self, what):
        self.what = what

    def params(self, p, fn):
        return [f"f::FortranGrequest{self.what.capitalize()}Fn {p.name}"]

    def arg(self, p, fn):
        return f"f::grequest_{self.what}_trampoline"

    def fortran(self, p):
        return [f"EXTERNAL :: {p.name}"]


class GrequestState(AttrIn):
    """The extra state of a generalized request started from Fortran: carries
    its three Fortran callbacks and the user's extra state to the trampolines."""
    def arg(self, p, fn):
        q, f, c = (x for x in fn.params if isinstance(fn.kind(x), GrequestCallback))
        return f"f::grequest_state({q.name}, {f.name}, {c.name}, *{p.name})"


class Sentinel(Kind):
    """An integer array that may be a Fortran sentinel (f::<mapper> maps it)."""
    def __init__(self, mapper):
        self.mapper = mapper

    def arg(self, p, fn):
        return f"f::{self.mapper}({p.name})"


class DatarepCallback(Kind):
    """A conversion or extent function of MPI_REGISTER_DATAREP: C calls a
    trampoline that finds the Fortran function in the datarep's extra state;
    MPI_CONVERSION_FN_NULL stays null."""
    def __init__(self, what):
        self.what = what  # "conversion" or "extent"

    def params(self, p, fn):
        return [f"f::FortranDatarep{self.what.capitalize()}Fn {p.name}"]

    def arg(self, p, fn):
        return f"f::datarep_trampoline_{p.name}({p.name})"

    def fortran(self, p):
        return [f"EXTERNAL :: {p.name}"]


class DatarepState(AttrIn):
    """The extra state of a datarep registered from Fortran: carries the
    Fortran functions and the user's extra state to the trampolines."""
    def arg(self, p, fn):
        read, write, extent = (q for q in fn.params
                               if isinstance(fn.kind(q), DatarepCallback))
        return f"f::datarep_state({read.name}, {write.name}, {extent.name}, *{p.name})"
