// mpi_api/fortran: what the generated Fortran wrappers (fortran_bindings.cpp,
// written by api/gen_fortran.py) need beyond plain calls to the C API: the
// Fortran sentinels of the calling rank's program image, CHARACTER and
// LOGICAL conversions, statuses copied between INTEGER arrays and MPI_Status,
// and the trampolines that run Fortran attribute callbacks.
//
// gfortran conventions only: lower-case names with one trailing underscore,
// every argument by reference, CHARACTER lengths as trailing hidden size_t
// arguments, .TRUE. == 1. Nothing here knows about particular MPI functions;
// that knowledge is the generator's.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "fortran_layout.hpp"
#include "mpi.h"

namespace mpc::mpi::fortran {

// ---- Sentinels ----------------------------------------------------------------

// The sentinel COMMON block of the caller's program image: with rank images
// every rank has its own copy of the program's COMMON blocks, so MPI_IN_PLACE
// has a different address in every rank.
const SentinelBlock& sentinels();

// A choice buffer: Fortran's MPI_BOTTOM, MPI_IN_PLACE and
// MPI_BUFFER_AUTOMATIC become the C ones.
inline void* buffer(const void* p) {
    const SentinelBlock& s = sentinels();
    if (p == &s.bottom) return MPI_BOTTOM;
    if (p == &s.in_place) return MPI_IN_PLACE;
    if (p == &s.buffer_automatic) return MPI_BUFFER_AUTOMATIC;
    return const_cast<void*>(p);
}

template <class T>
T* weights(T* p) {
    const SentinelBlock& s = sentinels();
    if (p == s.unweighted) return MPI_UNWEIGHTED;
    if (p == s.weights_empty) return MPI_WEIGHTS_EMPTY;
    return p;
}

template <class T>
T* errcodes(T* p) {
    return p == sentinels().errcodes_ignore ? MPI_ERRCODES_IGNORE : p;
}

// ---- LOGICAL and indices ------------------------------------------------------------

// gfortran's .TRUE. is 1 and .FALSE. 0, as C writes them: LOGICAL arrays
// (Cartesian periods, ...) therefore pass unchanged, while scalars are
// converted so that any nonzero value reads as true.
inline constexpr MPI_Fint kTrue = 1;
inline int c_logical(MPI_Fint v) { return v != 0; }
inline MPI_Fint fortran_logical(int v) { return v ? kTrue : 0; }

// Indices of completed requests count from 1 in Fortran; MPI_UNDEFINED stays.
inline MPI_Fint fortran_index(int i) { return i >= 0 ? i + 1 : i; }
inline void fortran_indices(int* indices, int n) {
    for (int i = 0; i < n; ++i) ++indices[i];
}

// ---- CHARACTER ----------------------------------------------------------------------

inline constexpr bool kTrimLeading = true;

// A CHARACTER*(*) input as a C string: trailing blanks dropped (leading ones too
// for info keys and values).
class InString {
public:
    InString(const char* s, size_t len, bool trim_leading = false);
    const char* c_str() const { return text_.c_str(); }

private:
    std::string text_;
};

// CHARACTER*(*) ARRAY(*) of MPI_COMM_SPAWN's ARGV and COMMANDS: `count`
// strings, or (count < 0) those before the first blank one, trailing blanks
// dropped, as a null-terminated char* array. MPI_ARGV_NULL (blank) is empty.
class InStringArray {
public:
    InStringArray(const char* s, size_t len, int count = -1);
    char** get() { return ptrs_.data(); }

private:
    std::vector<std::string> text_;
    std::vector<char*> ptrs_;
};

// Whether p is the calling rank's MPI_ARGVS_NULL.
bool is_argvs_null(const void* p);

// MPI_COMM_SPAWN_MULTIPLE's CHARACTER*(*) ARRAY_OF_ARGV(COUNT, *): command
// i's arguments are row i, up to its first blank one; MPI_ARGVS_NULL is C's.
class InArgvs {
public:
    InArgvs(const char* s, size_t len, int count);
    char*** get() { return lists_.empty() ? nullptr : lists_.data(); }

private:
    std::vector<std::vector<std::string>> text_;
    std::vector<std::vector<char*>> ptrs_;
    std::vector<char**> lists_;
};

// A CHARACTER*(*) output: C writes into a buffer of `capacity` bytes; store()
// copies the result blank-padded (and truncated) into the Fortran string.
class OutString {
public:
    // capacity 0: the C call writes nothing (MPI_INFO_GET_STRING with BUFLEN
    // 0), and neither does store().
    OutString(char* dest, size_t len, int capacity)
        : dest_(dest),
          len_(len),
          buf_(static_cast<size_t>(capacity > 0 ? capacity : 1), '\0'),
          untouched_(capacity <= 0) {}
    char* data() { return buf_.data(); }
    void store() const;

private:
    char* dest_;
    size_t len_;
    std::vector<char> buf_;
    bool untouched_;
};

// MPI_INFO_GET's VALUELEN counts characters; C also needs room for the NUL.
inline int capacity_for(int valuelen) { return valuelen > 0 ? valuelen + 1 : 1; }

// ---- Statuses -------------------------------------------------------------------------
// An INTEGER array is only 4-byte aligned, MPI_Status needs 8: single statuses
// are copied, arrays are copied only when misaligned.

class StatusOut {
public:
    explicit StatusOut(MPI_Fint* f);
    MPI_Status* get() { return ignore_ ? MPI_STATUS_IGNORE : &c_; }
    void store() const {
        if (!ignore_) memcpy(f_, &c_, sizeof(c_));
    }

private:
    MPI_Fint* f_;
    bool ignore_;
    MPI_Status c_;
};

class StatusIn {
public:
    explicit StatusIn(const MPI_Fint* f) { memcpy(&c_, f, sizeof(c_)); }
    const MPI_Status* get() const { return &c_; }

private:
    MPI_Status c_;
};

class StatusArray {
public:
    StatusArray(MPI_Fint* f, int count);
    MPI_Status* get() { return c_; }
    void store();

private:
    MPI_Fint* f_;
    MPI_Status* c_;
    std::vector<MPI_Status> copy_;  // when f_ is misaligned
};

// ---- Attributes and their callbacks ---------------------------------------------------

// An attribute value as Fortran sees it: the integer stored, or for the
// predefined attributes (MPI_TAG_UB, ...) the value C points to.
MPI_Aint fortran_attribute(int keyval, void* value);

// SUBROUTINE COPY_FN(OLD, KEYVAL, EXTRA_STATE, VALUE_IN, VALUE_OUT, FLAG, IERROR)
using FortranCopyAttrFn = void (*)(const MPI_Fint*, const MPI_Fint*, const MPI_Aint*,
                                   const MPI_Aint*, MPI_Aint*, MPI_Fint*, MPI_Fint*);
// SUBROUTINE DELETE_FN(HANDLE, KEYVAL, VALUE, EXTRA_STATE, IERROR)
using FortranDeleteAttrFn = void (*)(const MPI_Fint*, const MPI_Fint*, const MPI_Aint*,
                                     const MPI_Aint*, MPI_Fint*);

// The extra state of a keyval created from Fortran: the Fortran callbacks and
// the user's extra state, for the trampolines below (which C calls).
void* keyval_state(FortranCopyAttrFn copy, FortranDeleteAttrFn del, MPI_Aint extra_state);
int copy_attr_trampoline(int handle, int keyval, void* state, void* value_in, void* value_out,
                         int* flag);
int delete_attr_trampoline(int handle, int keyval, void* value, void* state);

// The Fortran face of a predefined C callback (MPI_COMM_DUP_FN, ...).
int call_copy_attr(MPI_Comm_copy_attr_function* fn, const MPI_Fint* handle, const MPI_Fint* keyval,
                   const MPI_Aint* extra_state, const MPI_Aint* value_in, MPI_Aint* value_out,
                   MPI_Fint* flag);
int call_delete_attr(MPI_Comm_delete_attr_function* fn, const MPI_Fint* handle,
                     const MPI_Fint* keyval, const MPI_Aint* value, const MPI_Aint* extra_state);

// ---- MPI-1 attributes (MPI_KEYVAL_CREATE, MPI_ATTR_PUT, MPI_ATTR_GET) --------------
// Their values are default INTEGERs: stored sign-extended, read back truncated
// (MPI 3.1 section 17.2.7), the predefined ones by value.

inline void* attribute_from_int(MPI_Fint v) {
    return reinterpret_cast<void*>(static_cast<MPI_Aint>(v));
}
inline MPI_Fint fortran_attribute_int(int keyval, void* value) {
    return static_cast<MPI_Fint>(fortran_attribute(keyval, value));
}

// SUBROUTINE COPY_FUNCTION(OLDCOMM, KEYVAL, EXTRA_STATE, ATTRIBUTE_VAL_IN,
//                          ATTRIBUTE_VAL_OUT, FLAG, IERR), all INTEGER but FLAG.
using FortranCopyAttrFnInt = void (*)(const MPI_Fint*, const MPI_Fint*, const MPI_Fint*,
                                      const MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
// SUBROUTINE DELETE_FUNCTION(COMM, KEYVAL, ATTRIBUTE_VAL, EXTRA_STATE, IERR)
using FortranDeleteAttrFnInt = void (*)(const MPI_Fint*, const MPI_Fint*, const MPI_Fint*,
                                        const MPI_Fint*, MPI_Fint*);

void* keyval_state_int(FortranCopyAttrFnInt copy, FortranDeleteAttrFnInt del,
                       MPI_Fint extra_state);
int copy_attr_trampoline_int(int handle, int keyval, void* state, void* value_in,
                             void* value_out, int* flag);
int delete_attr_trampoline_int(int handle, int keyval, void* value, void* state);

// The Fortran face of MPI_NULL_COPY_FN, MPI_DUP_FN and MPI_NULL_DELETE_FN.
int call_copy_attr_int(MPI_Copy_function* fn, const MPI_Fint* handle, const MPI_Fint* keyval,
                       const MPI_Fint* extra_state, const MPI_Fint* value_in,
                       MPI_Fint* value_out, MPI_Fint* flag);
int call_delete_attr_int(MPI_Delete_function* fn, const MPI_Fint* handle, const MPI_Fint* keyval,
                         const MPI_Fint* value, const MPI_Fint* extra_state);

// ---- Generalized requests (MPI_GREQUEST_START) ---------------------------------------

// SUBROUTINE GREQUEST_QUERY_FUNCTION(EXTRA_STATE, STATUS, IERROR)
using FortranGrequestQueryFn = void (*)(const MPI_Aint*, MPI_Fint*, MPI_Fint*);
// SUBROUTINE GREQUEST_FREE_FUNCTION(EXTRA_STATE, IERROR)
using FortranGrequestFreeFn = void (*)(const MPI_Aint*, MPI_Fint*);
// SUBROUTINE GREQUEST_CANCEL_FUNCTION(EXTRA_STATE, COMPLETE, IERROR)
using FortranGrequestCancelFn = void (*)(const MPI_Aint*, const MPI_Fint*, MPI_Fint*);

// The C extra state of a request started from Fortran: its callbacks and the
// user's extra state, deleted once the free trampoline has run.
void* grequest_state(FortranGrequestQueryFn query, FortranGrequestFreeFn free_fn,
                     FortranGrequestCancelFn cancel, MPI_Aint extra_state);
int grequest_query_trampoline(void* state, MPI_Status* status);
int grequest_free_trampoline(void* state);
int grequest_cancel_trampoline(void* state, int complete);

}  // namespace mpc::mpi::fortran

namespace mpc::mpi::fortran {

// ---- Data representations (MPI_REGISTER_DATAREP) -----------------------------------

// SUBROUTINE CONVERSION_FN(USERBUF, DATATYPE, COUNT, FILEBUF, POSITION, EXTRA_STATE, IERROR)
using FortranDatarepConversionFn = void (*)(void*, const MPI_Fint*, const MPI_Fint*, void*,
                                            const MPI_Offset*, const MPI_Aint*, MPI_Fint*);
// SUBROUTINE EXTENT_FN(DATATYPE, EXTENT, EXTRA_STATE, IERROR)
using FortranDatarepExtentFn = void (*)(const MPI_Fint*, MPI_Aint*, const MPI_Aint*, MPI_Fint*);

// The extra state of a datarep registered from Fortran (kept for the life of
// the process: a datarep cannot be unregistered).
void* datarep_state(FortranDatarepConversionFn read, FortranDatarepConversionFn write,
                    FortranDatarepExtentFn extent, MPI_Aint extra_state);
// The C functions that call the Fortran ones; null for MPI_CONVERSION_FN_NULL.
MPI_Datarep_conversion_function* datarep_trampoline_read_conversion_fn(
    FortranDatarepConversionFn fn);
MPI_Datarep_conversion_function* datarep_trampoline_write_conversion_fn(
    FortranDatarepConversionFn fn);
MPI_Datarep_extent_function* datarep_trampoline_dtype_file_extent_fn(FortranDatarepExtentFn fn);

}  // namespace mpc::mpi::fortran
