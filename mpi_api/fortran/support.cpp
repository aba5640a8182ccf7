// Helpers of the generated Fortran wrappers: sentinel lookup per rank image,
// strings, statuses, attribute callback trampolines (see support.hpp).
#include "support.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>

#include "mpi_api/attributes.hpp"
#include "mpi_api/rank.hpp"

// The library's sentinel block. A Fortran program that includes mpif.h or uses
// the mpi module defines the COMMON block itself; that definition takes
// precedence (the program comes first in the symbol lookup order), and each
// rank image has its own, found through the image's dlopen handle.
extern "C" {
__attribute__((visibility("default"))) mpc::mpi::fortran::SentinelBlock mpi_fortran_sentinels_{};
}

// MPI_ARGVS_NULL's COMMON block, likewise (the program's takes precedence).
extern "C" {
// Aligned as gfortran aligns COMMON blocks (the linker warns otherwise).
__attribute__((visibility("default"), aligned(16))) char mpi_fortran_argvs_null_[1] = {' '};
}

namespace mpc::mpi::fortran {

bool is_argvs_null(const void* p) {
    RankState* rank = current_rank();
    if (rank && rank->image) return p == dlsym(rank->image, "mpi_fortran_argvs_null_");
    return p == mpi_fortran_argvs_null_;
}

const SentinelBlock& sentinels() {
    RankState* rank = current_rank();
    if (!rank) return mpi_fortran_sentinels_;
    if (const void* cached = rank->fortran_sentinels.load(std::memory_order_acquire))
        return *static_cast<const SentinelBlock*>(cached);
    const SentinelBlock* found = &mpi_fortran_sentinels_;
    if (rank->image) {
        if (void* sym = dlsym(rank->image, kSentinelSymbol))
            found = static_cast<const SentinelBlock*>(sym);
    }
    rank->fortran_sentinels.store(found, std::memory_order_release);
    return *found;
}

// MPI_F_STATUS_IGNORE / MPI_F_STATUSES_IGNORE of mpi.h: the calling rank's.
extern "C" MPI_Fint* MPI_F_status_ignore_(void) {
    return const_cast<MPI_Fint*>(sentinels().status_ignore);
}
extern "C" MPI_Fint* MPI_F_statuses_ignore_(void) {
    return const_cast<MPI_Fint*>(sentinels().statuses_ignore);
}

// ---- CHARACTER ----------------------------------------------------------------------

InString::InString(const char* s, size_t len, bool trim_leading) {
    size_t begin = 0;
    size_t end = len;
    while (end > 0 && s[end - 1] == ' ') --end;
    if (trim_leading)
        while (begin < end && s[begin] == ' ') ++begin;
    text_.assign(s + begin, end - begin);
}

namespace {
// Blank: spaces, or the NULs of a COMMON block nobody wrote (MPI_ARGV_NULL).
bool blank(const char* s, size_t len) {
    for (size_t k = 0; k < len; ++k)
        if (s[k] != ' ' && s[k] != '\0') return false;
    return true;
}
}  // namespace

InStringArray::InStringArray(const char* s, size_t len, int count) {
    for (int k = 0; count < 0 || k < count; ++k) {
        const char* item = s + static_cast<size_t>(k) * len;
        if (count < 0 && blank(item, len)) break;
        text_.push_back(InString(item, len).c_str());
    }
    for (auto& t : text_) ptrs_.push_back(t.data());
    ptrs_.push_back(nullptr);
}

InArgvs::InArgvs(const char* s, size_t len, int count)
    : text_(static_cast<size_t>(std::max(count, 0))), ptrs_(text_.size()) {
    if (is_argvs_null(s)) return;  // get(): null, C's MPI_ARGVS_NULL
    // Element (i, j) of a column-major COUNT x * array.
    for (size_t i = 0; i < text_.size(); ++i) {
        for (size_t j = 0;; ++j) {
            const char* item = s + (j * text_.size() + i) * len;
            if (blank(item, len)) break;
            text_[i].push_back(InString(item, len).c_str());
        }
        for (auto& t : text_[i]) ptrs_[i].push_back(t.data());
        ptrs_[i].push_back(nullptr);
        lists_.push_back(ptrs_[i].data());
    }
}

void OutString::store() const {
    if (untouched_) return;
    const size_t n = std::min(strnlen(buf_.data(), buf_.size()), len_);
    memcpy(dest_, buf_.data(), n);
    memset(dest_ + n, ' ', len_ - n);
}

// ---- Statuses -------------------------------------------------------------------------

StatusOut::StatusOut(MPI_Fint* f) : f_(f), ignore_(f == sentinels().status_ignore) {
    // Copied in too: MPI_TEST without completion leaves the status unchanged.
    if (!ignore_) memcpy(&c_, f, sizeof(c_));
}

StatusArray::StatusArray(MPI_Fint* f, int count) : f_(f) {
    if (f == sentinels().statuses_ignore) {
        c_ = MPI_STATUSES_IGNORE;
    } else if (reinterpret_cast<uintptr_t>(f) % alignof(MPI_Status) == 0 || count <= 0) {
        c_ = reinterpret_cast<MPI_Status*>(f);
    } else {
        copy_.resize(static_cast<size_t>(count));
        memcpy(copy_.data(), f, copy_.size() * sizeof(MPI_Status));
        c_ = copy_.data();
    }
}

void StatusArray::store() {
    if (!copy_.empty()) memcpy(f_, copy_.data(), copy_.size() * sizeof(MPI_Status));
}

// ---- Attributes ------------------------------------------------------------------------

MPI_Aint fortran_attribute(int keyval, void* value) {
    // Windows' predefined attributes: the base address itself, the size as
    // an address-sized integer, the others as ints (MPI 3.1 section 11.2.6).
    switch (keyval) {
        case MPI_WIN_BASE: return reinterpret_cast<MPI_Aint>(value);
        case MPI_WIN_SIZE: return *static_cast<const MPI_Aint*>(value);
        case MPI_WIN_DISP_UNIT:
        case MPI_WIN_CREATE_FLAVOR:
        case MPI_WIN_MODEL: return *static_cast<const int*>(value);
        default: break;
    }
    if (is_predefined_keyval(keyval)) return *static_cast<const int*>(value);
    return reinterpret_cast<MPI_Aint>(value);
}

namespace {

struct FortranKeyval {
    FortranCopyAttrFn copy;
    FortranDeleteAttrFn del;
    MPI_Aint extra_state;
};

// Keyvals are few and a freed keyval lives on while attributes use it: the
// states are kept for the life of the process (a deque keeps them in place).
std::mutex g_keyvals_mutex;
std::deque<FortranKeyval> g_keyvals;

}  // namespace

void* keyval_state(FortranCopyAttrFn copy, FortranDeleteAttrFn del, MPI_Aint extra_state) {
    std::lock_guard<std::mutex> lock(g_keyvals_mutex);
    return &g_keyvals.emplace_back(FortranKeyval{copy, del, extra_state});
}

namespace {

struct FortranKeyvalInt {
    FortranCopyAttrFnInt copy;
    FortranDeleteAttrFnInt del;
    MPI_Fint extra_state;
};
std::deque<FortranKeyvalInt> g_keyvals_int;  // under g_keyvals_mutex, kept like g_keyvals

}  // namespace

void* keyval_state_int(FortranCopyAttrFnInt copy, FortranDeleteAttrFnInt del,
                       MPI_Fint extra_state) {
    std::lock_guard<std::mutex> lock(g_keyvals_mutex);
    return &g_keyvals_int.emplace_back(FortranKeyvalInt{copy, del, extra_state});
}

int copy_attr_trampoline_int(int handle, int keyval, void* state, void* value_in,
                             void* value_out, int* flag) {
    const auto* k = static_cast<const FortranKeyvalInt*>(state);
    const MPI_Fint in = static_cast<MPI_Fint>(reinterpret_cast<MPI_Aint>(value_in));
    MPI_Fint out = 0;
    MPI_Fint fflag = 0;
    MPI_Fint ierror = MPI_SUCCESS;
    k->copy(&handle, &keyval, &k->extra_state, &in, &out, &fflag, &ierror);
    *flag = c_logical(fflag);
    if (*flag) *static_cast<void**>(value_out) = attribute_from_int(out);
    return ierror;
}

int delete_attr_trampoline_int(int handle, int keyval, void* value, void* state) {
    const auto* k = static_cast<const FortranKeyvalInt*>(state);
    const MPI_Fint v = static_cast<MPI_Fint>(reinterpret_cast<MPI_Aint>(value));
    MPI_Fint ierror = MPI_SUCCESS;
    k->del(&handle, &keyval, &v, &k->extra_state, &ierror);
    return ierror;
}

int call_copy_attr_int(MPI_Copy_function* fn, const MPI_Fint* handle, const MPI_Fint* keyval,
                       const MPI_Fint* extra_state, const MPI_Fint* value_in,
                       MPI_Fint* value_out, MPI_Fint* flag) {
    void* out = nullptr;
    int cflag = 0;
    const int rc = fn(*handle, *keyval, attribute_from_int(*extra_state),
                      attribute_from_int(*value_in), &out, &cflag);
    if (cflag) *value_out = static_cast<MPI_Fint>(reinterpret_cast<MPI_Aint>(out));
    *flag = fortran_logical(cflag);
    return rc;
}

int call_delete_attr_int(MPI_Delete_function* fn, const MPI_Fint* handle, const MPI_Fint* keyval,
                         const MPI_Fint* value, const MPI_Fint* extra_state) {
    return fn(*handle, *keyval, attribute_from_int(*value), attribute_from_int(*extra_state));
}

int copy_attr_trampoline(int handle, int keyval, void* state, void* value_in, void* value_out,
                         int* flag) {
    const auto* k = static_cast<const FortranKeyval*>(state);
    const MPI_Aint in = reinterpret_cast<MPI_Aint>(value_in);
    MPI_Aint out = 0;
    MPI_Fint fflag = 0;
    MPI_Fint ierror = MPI_SUCCESS;
    k->copy(&handle, &keyval, &k->extra_state, &in, &out, &fflag, &ierror);
    *flag = c_logical(fflag);
    if (*flag) *static_cast<void**>(value_out) = reinterpret_cast<void*>(out);
    return ierror;
}

int delete_attr_trampoline(int handle, int keyval, void* value, void* state) {
    const auto* k = static_cast<const FortranKeyval*>(state);
    const MPI_Aint v = reinterpret_cast<MPI_Aint>(value);
    MPI_Fint ierror = MPI_SUCCESS;
    k->del(&handle, &keyval, &v, &k->extra_state, &ierror);
    return ierror;
}

int call_copy_attr(MPI_Comm_copy_attr_function* fn, const MPI_Fint* handle, const MPI_Fint* keyval,
                   const MPI_Aint* extra_state, const MPI_Aint* value_in, MPI_Aint* value_out,
                   MPI_Fint* flag) {
    void* out = nullptr;
    int cflag = 0;
    const int rc = fn(*handle, *keyval, reinterpret_cast<void*>(*extra_state),
                      reinterpret_cast<void*>(*value_in), &out, &cflag);
    if (cflag) *value_out = reinterpret_cast<MPI_Aint>(out);
    *flag = fortran_logical(cflag);
    return rc;
}

int call_delete_attr(MPI_Comm_delete_attr_function* fn, const MPI_Fint* handle,
                     const MPI_Fint* keyval, const MPI_Aint* value, const MPI_Aint* extra_state) {
    return fn(*handle, *keyval, reinterpret_cast<void*>(*value),
              reinterpret_cast<void*>(*extra_state));
}

// ---- Generalized requests ----------------------------------------------------------------

namespace {

struct FortranGrequest {
    FortranGrequestQueryFn query;
    FortranGrequestFreeFn free_fn;
    FortranGrequestCancelFn cancel;
    MPI_Aint extra_state;
};

}  // namespace

void* grequest_state(FortranGrequestQueryFn query, FortranGrequestFreeFn free_fn,
                     FortranGrequestCancelFn cancel, MPI_Aint extra_state) {
    return new FortranGrequest{query, free_fn, cancel, extra_state};
}

int grequest_query_trampoline(void* state, MPI_Status* status) {
    const auto* g = static_cast<const FortranGrequest*>(state);
    // The same layout: INTEGER STATUS(MPI_STATUS_SIZE) is an MPI_Status.
    MPI_Fint f[kStatusSize];
    memcpy(f, status, sizeof(f));
    MPI_Fint ierror = MPI_SUCCESS;
    g->query(&g->extra_state, f, &ierror);
    memcpy(status, f, sizeof(f));
    return ierror;
}

int grequest_free_trampoline(void* state) {
    auto* g = static_cast<FortranGrequest*>(state);
    MPI_Fint ierror = MPI_SUCCESS;
    g->free_fn(&g->extra_state, &ierror);
    delete g;  // free_fn runs once, last (the request goes with it)
    return ierror;
}

int grequest_cancel_trampoline(void* state, int complete) {
    const auto* g = static_cast<const FortranGrequest*>(state);
    const MPI_Fint fcomplete = fortran_logical(complete);
    MPI_Fint ierror = MPI_SUCCESS;
    g->cancel(&g->extra_state, &fcomplete, &ierror);
    return ierror;
}

}  // namespace mpc::mpi::fortran

// ---- Data representations ------------------------------------------------------------

// MPI_CONVERSION_FN_NULL as Fortran passes it: this procedure, recognised by
// its address (never called by the library).
extern "C" __attribute__((visibility("default"))) void mpi_conversion_fn_null_(
    void*, const MPI_Fint*, const MPI_Fint*, void*, const MPI_Offset*, const MPI_Aint*,
    MPI_Fint* ierror) {
    *ierror = MPI_SUCCESS;
}

namespace mpc::mpi::fortran {
namespace {

struct FortranDatarep {
    FortranDatarepConversionFn read, write;
    FortranDatarepExtentFn extent;
    MPI_Aint extra_state;
};
std::mutex g_datareps_mutex;
std::deque<FortranDatarep> g_datareps;

bool is_null_conversion(FortranDatarepConversionFn fn) {
    return !fn || fn == &mpi_conversion_fn_null_;
}

int call_conversion(FortranDatarepConversionFn fn, void* userbuf, MPI_Datatype type, int count,
                    void* filebuf, MPI_Offset position, void* state) {
    const auto* d = static_cast<const FortranDatarep*>(state);
    MPI_Fint ftype = type, fcount = count, ierror = MPI_SUCCESS;
    fn(userbuf, &ftype, &fcount, filebuf, &position, &d->extra_state, &ierror);
    return ierror;
}

int read_trampoline(void* userbuf, MPI_Datatype type, int count, void* filebuf,
                    MPI_Offset position, void* state) {
    return call_conversion(static_cast<const FortranDatarep*>(state)->read, userbuf, type, count,
                           filebuf, position, state);
}

int write_trampoline(void* userbuf, MPI_Datatype type, int count, void* filebuf,
                     MPI_Offset position, void* state) {
    return call_conversion(static_cast<const FortranDatarep*>(state)->write, userbuf, type,
                           count, filebuf, position, state);
}

int extent_trampoline(MPI_Datatype type, MPI_Aint* extent, void* state) {
    const auto* d = static_cast<const FortranDatarep*>(state);
    MPI_Fint ftype = type, ierror = MPI_SUCCESS;
    d->extent(&ftype, extent, &d->extra_state, &ierror);
    return ierror;
}

}  // namespace

void* datarep_state(FortranDatarepConversionFn read, FortranDatarepConversionFn write,
                    FortranDatarepExtentFn extent, MPI_Aint extra_state) {
    std::lock_guard<std::mutex> lock(g_datareps_mutex);
    return &g_datareps.emplace_back(FortranDatarep{read, write, extent, extra_state});
}

MPI_Datarep_conversion_function* datarep_trampoline_read_conversion_fn(
    FortranDatarepConversionFn fn) {
    return is_null_conversion(fn) ? MPI_CONVERSION_FN_NULL : read_trampoline;
}

MPI_Datarep_conversion_function* datarep_trampoline_write_conversion_fn(
    FortranDatarepConversionFn fn) {
    return is_null_conversion(fn) ? MPI_CONVERSION_FN_NULL : write_trampoline;
}

MPI_Datarep_extent_function* datarep_trampoline_dtype_file_extent_fn(FortranDatarepExtentFn fn) {
    return fn ? extent_trampoline : nullptr;
}

}  // namespace mpc::mpi::fortran
