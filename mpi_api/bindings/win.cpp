// Windows as objects (MPI 3.1 sections 11.2 and 11.3.x): creation, shared
// memory queries, dynamic attachment, freeing, group, info, name, error
// handlers, attributes; and MPI_Alloc_mem / MPI_Free_mem (section 8.2). The
// creation and query calls also in their large-count (_c) forms (MPI 4.0).
#include <climits>
#include <cstring>

#include "mpi_api/alloc_kinds.hpp"
#include "mpi_api/attributes.hpp"
#include "object_checks.hpp"
#include "win_checks.hpp"

using namespace mpc::mpi;
namespace rma = mpc::rma;

namespace {

// The checks of every creation call; *c is null when comm itself is bad.
int open_create(MPI_Comm comm, MPI_Info info, MPI_Win* win, Comm** c, Info** i) {
    *c = nullptr;
    Comm* found;
    if (int e = check_comm(comm, &found)) return e;
    *c = found;
    if (int e = check_intra(found)) return e;
    if (int e = check_info_arg(info, i)) return e;
    return check_not_null(win, "win");
}

// The window's size and displacement unit. The large-count forms pass an
// MPI_Aint unit: windows keep an int, and a unit beyond that is refused, never
// truncated.
int check_size(MPI_Aint size, MPI_Aint disp_unit) {
    if (size < 0)
        return make_error(MPI_ERR_SIZE, "negative window size %ld", static_cast<long>(size));
    if (disp_unit <= 0)
        return make_error(MPI_ERR_DISP, "the displacement unit must be positive, not %lld",
                          static_cast<long long>(disp_unit));
    if (disp_unit > INT_MAX)
        return make_error(MPI_ERR_DISP, "a displacement unit of %lld bytes: at most %d supported",
                          static_cast<long long>(disp_unit), INT_MAX);
    return MPI_SUCCESS;
}

enum class Flavor { Create, Allocate, Shared };

// MPI_Win_create, _allocate and _allocate_shared, int and large-count forms.
int create(Flavor flavor, void* base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
           MPI_Comm comm, void* baseptr, MPI_Win* win) {
    Comm* c = nullptr;
    Info* i = nullptr;
    if (int e = open_create(comm, info, win, &c, &i)) return raise(c, e);
    MPC_TRY(c, check_size(size, disp_unit));
    if (flavor != Flavor::Create) MPC_TRY(c, check_not_null(baseptr, "baseptr"));
    const int unit = static_cast<int>(disp_unit);
    void** out = static_cast<void**>(baseptr);
    rma::Win* w = nullptr;
    switch (flavor) {
        case Flavor::Create:
            MPC_TRY(c, rma::win_create(base, size, unit, i, c, &w));
            break;
        case Flavor::Allocate:
            MPC_TRY(c, rma::win_allocate(size, unit, i, c, out, &w));
            break;
        case Flavor::Shared:
            MPC_TRY(c, rma::win_allocate_shared(size, unit, i, c, out, &w));
            break;
    }
    *win = w->handle;
    return MPI_SUCCESS;
}

// MPI_Win_shared_query in both forms: the unit goes out as T.
template <class T>
int shared_query(RankState* me, MPI_Win win, int rank, MPI_Aint* size, T* disp_unit, void* baseptr) {
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    if (!size || !disp_unit || !baseptr)
        return rma::raise(w, make_error(MPI_ERR_ARG, "size, disp_unit or baseptr is NULL"));
    int unit = 0;
    const int e = rma::win_shared_query(w, rank, size, &unit, static_cast<void**>(baseptr));
    if (!e) *disp_unit = unit;
    return rma::raise(w, e);
}

}  // namespace

extern "C" {

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
    MPC_ENTER_ACTIVE(Alloc_mem);
    Info* i = nullptr;
    if (int e = check_info_arg(info, &i)) return raise(nullptr, e);
    if (int e = check_not_null(baseptr, "baseptr")) return raise(nullptr, e);
    return raise(nullptr, rma::alloc_mem(size, i, static_cast<void**>(baseptr)));
}

int PMPI_Free_mem(void* base) {
    MPC_ENTER_ACTIVE(Free_mem);
    return raise(nullptr, rma::free_mem(base));
}

int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win* win) {
    MPC_ENTER_ACTIVE(Win_create);
    return create(Flavor::Create, base, size, disp_unit, info, comm, nullptr, win);
}

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                      MPI_Win* win) {
    MPC_ENTER_ACTIVE(Win_allocate);
    return create(Flavor::Allocate, nullptr, size, disp_unit, info, comm, baseptr, win);
}

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void* baseptr, MPI_Win* win) {
    MPC_ENTER_ACTIVE(Win_allocate_shared);
    return create(Flavor::Shared, nullptr, size, disp_unit, info, comm, baseptr, win);
}

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
    MPC_ENTER_ACTIVE(Win_create_dynamic);
    Comm* c = nullptr;
    Info* i = nullptr;
    if (int e = open_create(comm, info, win, &c, &i)) return raise(c, e);
    rma::Win* w = nullptr;
    MPC_TRY(c, rma::win_create_dynamic(i, c, &w));
    *win = w->handle;
    return MPI_SUCCESS;
}

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
    MPC_ENTER_ACTIVE(Win_shared_query);
    return shared_query(me, win, rank, size, disp_unit, baseptr);
}

// ---- Large-count forms (MPI 4.0): disp_unit is an MPI_Aint ---------------------------

int PMPI_Win_create_c(void* base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                      MPI_Win* win) {
    MPC_ENTER_ACTIVE(Win_create_c);
    return create(Flavor::Create, base, size, disp_unit, info, comm, nullptr, win);
}

int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                        void* baseptr, MPI_Win* win) {
    MPC_ENTER_ACTIVE(Win_allocate_c);
    return create(Flavor::Allocate, nullptr, size, disp_unit, info, comm, baseptr, win);
}

int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                               void* baseptr, MPI_Win* win) {
    MPC_ENTER_ACTIVE(Win_allocate_shared_c);
    return create(Flavor::Shared, nullptr, size, disp_unit, info, comm, baseptr, win);
}

int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint* size, MPI_Aint* disp_unit,
                            void* baseptr) {
    MPC_ENTER_ACTIVE(Win_shared_query_c);
    return shared_query(me, win, rank, size, disp_unit, baseptr);
}

int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
    MPC_ENTER_ACTIVE(Win_attach);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    return rma::raise(w, rma::win_attach(w, base, size));
}

int PMPI_Win_detach(MPI_Win win, const void* base) {
    MPC_ENTER_ACTIVE(Win_detach);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    return rma::raise(w, rma::win_detach(w, base));
}

int PMPI_Win_free(MPI_Win* win) {
    MPC_ENTER_ACTIVE(Win_free);
    if (!win) return raise(nullptr, make_error(MPI_ERR_ARG, "win is NULL"));
    rma::Win* w = nullptr;
    if (int e = check_win(me, *win, &w)) return raise(nullptr, e);
    MPC_WIN_TRY(w, rma::win_free(w));
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
    MPC_ENTER_ACTIVE(Win_get_group);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    MPC_WIN_TRY(w, check_not_null(group, "group"));
    *group = group_create(w->comm->group);
    return MPI_SUCCESS;
}

int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
    MPC_ENTER_ACTIVE(Win_set_info);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    Info* i = nullptr;
    MPC_WIN_TRY(w, check_info_arg(info, &i));
    rma::set_info(w, i);
    return MPI_SUCCESS;
}

int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
    MPC_ENTER_ACTIVE(Win_get_info);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    MPC_WIN_TRY(w, check_not_null(info_used, "info_used"));
    Info used = rma::info_of(w);
    used.set(kAllocKindsKey, alloc_kinds_of(w->comm));
    *info_used = info_create(std::move(used));
    return MPI_SUCCESS;
}

int PMPI_Win_set_name(MPI_Win win, const char* win_name) {
    MPC_ENTER_ACTIVE(Win_set_name);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    MPC_WIN_TRY(w, check_not_null(win_name, "win_name"));
    w->name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
    return MPI_SUCCESS;
}

int PMPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
    MPC_ENTER_ACTIVE(Win_get_name);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    if (!win_name || !resultlen)
        return rma::raise(w, make_error(MPI_ERR_ARG, "win_name or resultlen is NULL"));
    memcpy(win_name, w->name.c_str(), w->name.size() + 1);
    *resultlen = static_cast<int>(w->name.size());
    return MPI_SUCCESS;
}

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* fn, MPI_Errhandler* errhandler) {
    MPC_ENTER_ACTIVE(Win_create_errhandler);
    if (!fn || !errhandler)
        return raise(nullptr, make_error(MPI_ERR_ARG, "function or errhandler is NULL"));
    return errhandler_create(reinterpret_cast<MPI_Comm_errhandler_function*>(fn), errhandler,
                             ErrObject::Win);
}

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
    MPC_ENTER_ACTIVE(Win_set_errhandler);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    Errhandler* eh = errhandler_lookup(errhandler);
    if (!eh)
        return rma::raise(w,
                          make_error(MPI_ERR_ARG, "0x%x is not a valid error handler", errhandler));
    if (!eh->builtin && eh->object != ErrObject::Win)
        return rma::raise(w, make_error(MPI_ERR_ARG,
                                        "error handler 0x%x was not made for windows "
                                        "(MPI_Win_create_errhandler)",
                                        errhandler));
    w->errhandler = errhandler;
    return MPI_SUCCESS;
}

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
    MPC_ENTER_ACTIVE(Win_get_errhandler);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    MPC_WIN_TRY(w, check_not_null(errhandler, "errhandler"));
    *errhandler = w->errhandler;
    return MPI_SUCCESS;
}

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
    MPC_ENTER_ACTIVE(Win_call_errhandler);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    rma::raise(w, errorcode);
    return MPI_SUCCESS;
}

// ---- Attributes ------------------------------------------------------------------

int MPI_WIN_NULL_COPY_FN(MPI_Win, int, void*, void*, void*, int* flag) {
    *flag = 0;
    return MPI_SUCCESS;
}

int MPI_WIN_DUP_FN(MPI_Win, int, void*, void* attribute_val_in, void* attribute_val_out,
                   int* flag) {
    *static_cast<void**>(attribute_val_out) = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_WIN_NULL_DELETE_FN(MPI_Win, int, void*, void*) {
    return MPI_SUCCESS;
}

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                           MPI_Win_delete_attr_function* win_delete_attr_fn, int* win_keyval,
                           void* extra_state) {
    MPC_ENTER_ACTIVE(Win_create_keyval);
    if (int e = check_not_null(win_keyval, "keyval")) return raise(nullptr, e);
    return raise(nullptr,
                 win_keyval_create(win_copy_attr_fn, win_delete_attr_fn, extra_state, win_keyval));
}

int PMPI_Win_free_keyval(int* win_keyval) {
    MPC_ENTER_ACTIVE(Win_free_keyval);
    if (int e = check_not_null(win_keyval, "keyval")) return raise(nullptr, e);
    return raise(nullptr, keyval_free(KeyvalKind::Win, win_keyval));
}

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
    MPC_ENTER_ACTIVE(Win_set_attr);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    void* ignored;
    if (rma::predefined_attr(w, win_keyval, &ignored))
        return rma::raise(w, make_error(MPI_ERR_KEYVAL,
                                        "keyval 0x%x is predefined and cannot be set", win_keyval));
    return rma::raise(w, win_attr_set(w->attributes, w->handle, win_keyval, attribute_val));
}

int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
    MPC_ENTER_ACTIVE(Win_get_attr);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    if (!attribute_val || !flag)
        return rma::raise(w, make_error(MPI_ERR_ARG, "attribute_val or flag is NULL"));
    if (rma::predefined_attr(w, win_keyval, static_cast<void**>(attribute_val))) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    return rma::raise(
        w, win_attr_get(w->attributes, win_keyval, static_cast<void**>(attribute_val), flag));
}

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval) {
    MPC_ENTER_ACTIVE(Win_delete_attr);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    void* ignored;
    if (rma::predefined_attr(w, win_keyval, &ignored))
        return rma::raise(
            w, make_error(MPI_ERR_KEYVAL, "keyval 0x%x is predefined and cannot be deleted",
                          win_keyval));
    return rma::raise(w, win_attr_delete(w->attributes, w->handle, win_keyval));
}

}  // extern "C"

MPC_WEAK(MPI_Alloc_mem)
MPC_WEAK(MPI_Free_mem)
MPC_WEAK(MPI_Win_create)
MPC_WEAK(MPI_Win_allocate)
MPC_WEAK(MPI_Win_allocate_shared)
MPC_WEAK(MPI_Win_create_dynamic)
MPC_WEAK(MPI_Win_shared_query)
MPC_WEAK(MPI_Win_attach)
MPC_WEAK(MPI_Win_detach)
MPC_WEAK(MPI_Win_free)
MPC_WEAK(MPI_Win_get_group)
MPC_WEAK(MPI_Win_set_info)
MPC_WEAK(MPI_Win_get_info)
MPC_WEAK(MPI_Win_set_name)
MPC_WEAK(MPI_Win_get_name)
MPC_WEAK(MPI_Win_create_errhandler)
MPC_WEAK(MPI_Win_set_errhandler)
MPC_WEAK(MPI_Win_get_errhandler)
MPC_WEAK(MPI_Win_call_errhandler)
MPC_WEAK(MPI_Win_create_keyval)
MPC_WEAK(MPI_Win_free_keyval)
MPC_WEAK(MPI_Win_set_attr)
MPC_WEAK(MPI_Win_get_attr)
MPC_WEAK(MPI_Win_delete_attr)
MPC_WEAK(MPI_Win_create_c)
MPC_WEAK(MPI_Win_allocate_c)
MPC_WEAK(MPI_Win_allocate_shared_c)
MPC_WEAK(MPI_Win_shared_query_c)
