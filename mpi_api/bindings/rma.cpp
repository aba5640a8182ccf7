// One-sided communication calls (MPI 3.1 sections 11.3 to 11.5): Put, Get,
// the accumulates and their request-based forms (and their large-count _c
// forms, MPI 4.0), and the synchronisation calls. Argument checks here; epochs, ranges and the data movement in the
// one-sided engine (mpi_api/rma).
#include "coll_large.hpp"
#include "object_checks.hpp"
#include "win_checks.hpp"

using namespace mpc::mpi;
namespace rma = mpc::rma;

namespace {

// One side of a transfer: count, datatype and buffer.
int check_side(const void* buf, int count, MPI_Datatype type, Datatype** out, bool check_buf) {
    if (int e = check_count(count)) return e;
    if (int e = check_type(type, out)) return e;
    return check_buf ? check_buffer(buf, count, *out) : MPI_SUCCESS;
}

// The arguments every data movement call has.
int check_transfer(rma::Win* w, const void* origin, int origin_count, MPI_Datatype origin_type,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_type, bool origin_used, rma::Transfer* t) {
    t->origin = origin;
    t->origin_count = origin_count;
    t->target_rank = target_rank;
    t->target_disp = target_disp;
    t->target_count = target_count;
    if (origin_used) {
        if (int e = check_side(origin, origin_count, origin_type, &t->origin_type, true)) return e;
    } else if (datatype_lookup(origin_type)) {
        t->origin_type = datatype_lookup(origin_type);  // MPI_NO_OP: ignored otherwise
    }
    if (int e = check_win_rank(w, target_rank)) return e;
    return check_side(nullptr, target_count, target_type, &t->target_type, false);
}

int check_op(MPI_Op op, Op** out) {
    *out = op_lookup(op);
    if (!*out) return make_error(MPI_ERR_OP, "0x%x is not a valid operation", op);
    return MPI_SUCCESS;
}

// MPI_NO_OP is for the fetching accumulates only (MPI 3.1 section 11.3.4).
int no_op_error(RankState* me, MPI_Win win) {
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    return rma::raise(w, make_error(MPI_ERR_OP,
                                    "MPI_NO_OP is only valid in MPI_Get_accumulate, "
                                    "MPI_Rget_accumulate and MPI_Fetch_and_op"));
}

int check_request(MPI_Request* request) {
    return check_not_null(request, "request");
}

int put(RankState* me, const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
        int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
        MPI_Win win, MPI_Request* request) {
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    rma::Transfer t;
    MPC_WIN_TRY(w, check_transfer(w, origin_addr, origin_count, origin_datatype, target_rank,
                                  target_disp, target_count, target_datatype, true, &t));
    return rma::raise(w, rma::put(w, t, request));
}

int get(RankState* me, void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
        int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
        MPI_Win win, MPI_Request* request) {
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    rma::Transfer t;
    MPC_WIN_TRY(w, check_transfer(w, origin_addr, origin_count, origin_datatype, target_rank,
                                  target_disp, target_count, target_datatype, true, &t));
    return rma::raise(w, rma::get(w, origin_addr, t, request));
}

int accumulate(RankState* me, const void* origin_addr, int origin_count,
               MPI_Datatype origin_datatype, void* result_addr, int result_count,
               MPI_Datatype result_datatype, bool fetch, int target_rank, MPI_Aint target_disp,
               int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
               MPI_Request* request) {
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    Op* o = nullptr;
    MPC_WIN_TRY(w, check_op(op, &o));
    rma::Transfer t;
    MPC_WIN_TRY(w, check_transfer(w, origin_addr, origin_count, origin_datatype, target_rank,
                                  target_disp, target_count, target_datatype, op != MPI_NO_OP, &t));
    Datatype* rt = nullptr;
    if (fetch) MPC_WIN_TRY(w, check_side(result_addr, result_count, result_datatype, &rt, true));
    return rma::raise(
        w, rma::accumulate(w, t, o, fetch ? result_addr : nullptr, result_count, rt, request));
}

}  // namespace

extern "C" {

int PMPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win) {
    MPC_ENTER_ACTIVE(Put);
    if (rma::Win* w = rma::win_lookup(me, win);
        w && rma::put_fast(w, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                           target_count, target_datatype))
        return MPI_SUCCESS;
    return put(me, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
               target_count, target_datatype, win, nullptr);
}

int PMPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    MPC_ENTER_ACTIVE(Get);
    if (rma::Win* w = rma::win_lookup(me, win);
        w && rma::get_fast(w, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                           target_count, target_datatype))
        return MPI_SUCCESS;
    return get(me, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
               target_count, target_datatype, win, nullptr);
}

int PMPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    MPC_ENTER_ACTIVE(Accumulate);
    if (op == MPI_NO_OP) return no_op_error(me, win);
    if (rma::Win* w = rma::win_lookup(me, win);
        w && rma::accumulate_fast(w, origin_addr, origin_count, origin_datatype, nullptr, 0,
                                  MPI_DATATYPE_NULL, target_rank, target_disp, target_count,
                                  target_datatype, op))
        return MPI_SUCCESS;
    return accumulate(me, origin_addr, origin_count, origin_datatype, nullptr, 0, MPI_DATATYPE_NULL,
                      false, target_rank, target_disp, target_count, target_datatype, op, win,
                      nullptr);
}

int PMPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void* result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    MPC_ENTER_ACTIVE(Get_accumulate);
    if (rma::Win* w = rma::win_lookup(me, win);
        w && result_addr &&
        rma::accumulate_fast(w, origin_addr, origin_count, origin_datatype, result_addr,
                             result_count, result_datatype, target_rank, target_disp,
                             target_count, target_datatype, op))
        return MPI_SUCCESS;
    return accumulate(me, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                      result_datatype, true, target_rank, target_disp, target_count,
                      target_datatype, op, win, nullptr);
}

int PMPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
    MPC_ENTER_ACTIVE(Fetch_and_op);
    if (rma::Win* w = rma::win_lookup(me, win);
        w && result_addr &&
        rma::accumulate_fast(w, origin_addr, 1, datatype, result_addr, 1, datatype, target_rank,
                             target_disp, 1, datatype, op))
        return MPI_SUCCESS;
    return accumulate(me, origin_addr, 1, datatype, result_addr, 1, datatype, true, target_rank,
                      target_disp, 1, datatype, op, win, nullptr);
}

int PMPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Win win) {
    MPC_ENTER_ACTIVE(Compare_and_swap);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    Datatype* t = nullptr;
    MPC_WIN_TRY(w, check_type(datatype, &t));
    MPC_WIN_TRY(w, check_win_rank(w, target_rank));
    if (!origin_addr || !compare_addr || !result_addr)
        return rma::raise(
            w, make_error(MPI_ERR_BUFFER, "origin_addr, compare_addr or result_addr is NULL"));
    return rma::raise(w, rma::compare_and_swap(w, origin_addr, compare_addr, result_addr, t,
                                               target_rank, target_disp));
}

int PMPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Rput);
    if (int e = check_request(request)) return raise(nullptr, e);
    return put(me, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
               target_count, target_datatype, win, request);
}

int PMPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request* request) {
    MPC_ENTER_ACTIVE(Rget);
    if (int e = check_request(request)) return raise(nullptr, e);
    return get(me, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
               target_count, target_datatype, win, request);
}

int PMPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Raccumulate);
    if (op == MPI_NO_OP) return no_op_error(me, win);
    if (int e = check_request(request)) return raise(nullptr, e);
    return accumulate(me, origin_addr, origin_count, origin_datatype, nullptr, 0, MPI_DATATYPE_NULL,
                      false, target_rank, target_disp, target_count, target_datatype, op, win,
                      request);
}

int PMPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void* result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                         MPI_Request* request) {
    MPC_ENTER_ACTIVE(Rget_accumulate);
    if (int e = check_request(request)) return raise(nullptr, e);
    return accumulate(me, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                      result_datatype, true, target_rank, target_disp, target_count,
                      target_datatype, op, win, request);
}

// ---- Synchronisation ------------------------------------------------------------------

int PMPI_Win_fence(int assertion, MPI_Win win) {
    MPC_ENTER_ACTIVE(Win_fence);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    MPC_WIN_TRY(
        w, check_assert(assertion,
                        MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED,
                        "MPI_Win_fence"));
    return rma::raise(w, rma::fence(w, assertion));
}

int PMPI_Win_start(MPI_Group group, int assertion, MPI_Win win) {
    MPC_ENTER_ACTIVE(Win_start);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    Group* g = nullptr;
    MPC_WIN_TRY(w, check_group(group, &g));
    MPC_WIN_TRY(w, check_assert(assertion, MPI_MODE_NOCHECK, "MPI_Win_start"));
    return rma::raise(w, rma::start(w, *g->data, assertion));
}

int PMPI_Win_complete(MPI_Win win) {
    MPC_ENTER_ACTIVE(Win_complete);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    return rma::raise(w, rma::complete(w));
}

int PMPI_Win_post(MPI_Group group, int assertion, MPI_Win win) {
    MPC_ENTER_ACTIVE(Win_post);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    Group* g = nullptr;
    MPC_WIN_TRY(w, check_group(group, &g));
    MPC_WIN_TRY(w, check_assert(assertion, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT,
                                "MPI_Win_post"));
    return rma::raise(w, rma::post(w, *g->data, assertion));
}

int PMPI_Win_wait(MPI_Win win) {
    MPC_ENTER_ACTIVE(Win_wait);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    return rma::raise(w, rma::wait(w));
}

int PMPI_Win_test(MPI_Win win, int* flag) {
    MPC_ENTER_ACTIVE(Win_test);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    MPC_WIN_TRY(w, check_not_null(flag, "flag"));
    bool done = false;
    MPC_WIN_TRY(w, rma::test(w, &done));
    *flag = done;
    return MPI_SUCCESS;
}

int PMPI_Win_lock(int lock_type, int rank, int assertion, MPI_Win win) {
    MPC_ENTER_ACTIVE(Win_lock);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED)
        return rma::raise(w, make_error(MPI_ERR_LOCKTYPE,
                                        "invalid lock type %d (MPI_LOCK_EXCLUSIVE or "
                                        "MPI_LOCK_SHARED)",
                                        lock_type));
    MPC_WIN_TRY(w, check_win_rank(w, rank));
    MPC_WIN_TRY(w, check_assert(assertion, MPI_MODE_NOCHECK, "MPI_Win_lock"));
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    return rma::raise(w, rma::lock(w, lock_type, rank, assertion));
}

int PMPI_Win_unlock(int rank, MPI_Win win) {
    MPC_ENTER_ACTIVE(Win_unlock);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    MPC_WIN_TRY(w, check_win_rank(w, rank));
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    return rma::raise(w, rma::unlock(w, rank));
}

int PMPI_Win_lock_all(int assertion, MPI_Win win) {
    MPC_ENTER_ACTIVE(Win_lock_all);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    MPC_WIN_TRY(w, check_assert(assertion, MPI_MODE_NOCHECK, "MPI_Win_lock_all"));
    return rma::raise(w, rma::lock_all(w, assertion));
}

int PMPI_Win_unlock_all(MPI_Win win) {
    MPC_ENTER_ACTIVE(Win_unlock_all);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    return rma::raise(w, rma::unlock_all(w));
}

int PMPI_Win_flush(int rank, MPI_Win win) {
    MPC_ENTER_ACTIVE(Win_flush);
    rma::Win* w = rma::win_lookup(me, win);
    if (w && rma::flush_fast(w, rank)) return MPI_SUCCESS;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    MPC_WIN_TRY(w, check_win_rank(w, rank));
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    return rma::raise(w, rma::flush(w, rank, false));
}

int PMPI_Win_flush_all(MPI_Win win) {
    MPC_ENTER_ACTIVE(Win_flush_all);
    rma::Win* w = rma::win_lookup(me, win);
    if (w && rma::flush_fast(w, -1)) return MPI_SUCCESS;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    return rma::raise(w, rma::flush(w, -1, false));
}

int PMPI_Win_flush_local(int rank, MPI_Win win) {
    MPC_ENTER_ACTIVE(Win_flush_local);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    MPC_WIN_TRY(w, check_win_rank(w, rank));
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    return rma::raise(w, rma::flush(w, rank, true));
}

int PMPI_Win_flush_local_all(MPI_Win win) {
    MPC_ENTER_ACTIVE(Win_flush_local_all);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    return rma::raise(w, rma::flush(w, -1, true));
}

int PMPI_Win_sync(MPI_Win win) {
    MPC_ENTER_ACTIVE(Win_sync);
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    return rma::raise(w, rma::sync(w));
}

// ---- Large-count forms (MPI 4.0) ------------------------------------------------------
// Counts that fit an int take the int path; more elements than that travel as
// one element of a contiguous_c type (coll_large.hpp), on both sides.

}  // extern "C"

namespace {

// An error of a _c call found before the int path ran: on the window's handler.
int win_error(RankState* me, MPI_Win win, int code) {
    rma::Win* w = nullptr;
    if (int e = check_win(me, win, &w)) return raise(nullptr, e);
    return rma::raise(w, code);
}

using mpc::mpi::large::Described;

int first_error(const Described& a, const Described& b, const Described& c) {
    return a.error ? a.error : b.error ? b.error : c.error;
}

int put_c(RankState* me, const void* origin_addr, MPI_Count origin_count,
          MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
          MPI_Request* request) {
    Described o(origin_count, origin_datatype), t(target_count, target_datatype);
    if (int e = first_error(o, t, t)) return win_error(me, win, e);
    return put(me, origin_addr, o.count, o.type, target_rank, target_disp, t.count, t.type, win,
               request);
}

int get_c(RankState* me, void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
          int target_rank, MPI_Aint target_disp, MPI_Count target_count,
          MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
    Described o(origin_count, origin_datatype), t(target_count, target_datatype);
    if (int e = first_error(o, t, t)) return win_error(me, win, e);
    return get(me, origin_addr, o.count, o.type, target_rank, target_disp, t.count, t.type, win,
               request);
}

int accumulate_c(RankState* me, const void* origin_addr, MPI_Count origin_count,
                 MPI_Datatype origin_datatype, void* result_addr, MPI_Count result_count,
                 MPI_Datatype result_datatype, bool fetch, int target_rank, MPI_Aint target_disp,
                 MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                 MPI_Request* request) {
    Described o(origin_count, origin_datatype), r(result_count, result_datatype),
        t(target_count, target_datatype);
    if (int e = first_error(o, r, t)) return win_error(me, win, e);
    return accumulate(me, origin_addr, o.count, o.type, result_addr, r.count, r.type, fetch,
                      target_rank, target_disp, t.count, t.type, op, win, request);
}

}  // namespace

extern "C" {

int PMPI_Put_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win) {
    MPC_ENTER_ACTIVE(Put_c);
    return put_c(me, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win, nullptr);
}

int PMPI_Rput_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Rput_c);
    if (int e = check_request(request)) return raise(nullptr, e);
    return put_c(me, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win, request);
}

int PMPI_Get_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win) {
    MPC_ENTER_ACTIVE(Get_c);
    return get_c(me, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win, nullptr);
}

int PMPI_Rget_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Rget_c);
    if (int e = check_request(request)) return raise(nullptr, e);
    return get_c(me, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win, request);
}

int PMPI_Accumulate_c(const void* origin_addr, MPI_Count origin_count,
                      MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                      MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                      MPI_Win win) {
    MPC_ENTER_ACTIVE(Accumulate_c);
    if (op == MPI_NO_OP) return no_op_error(me, win);
    return accumulate_c(me, origin_addr, origin_count, origin_datatype, nullptr, 0,
                        MPI_DATATYPE_NULL, false, target_rank, target_disp, target_count,
                        target_datatype, op, win, nullptr);
}

int PMPI_Raccumulate_c(const void* origin_addr, MPI_Count origin_count,
                       MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                       MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                       MPI_Win win, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Raccumulate_c);
    if (op == MPI_NO_OP) return no_op_error(me, win);
    if (int e = check_request(request)) return raise(nullptr, e);
    return accumulate_c(me, origin_addr, origin_count, origin_datatype, nullptr, 0,
                        MPI_DATATYPE_NULL, false, target_rank, target_disp, target_count,
                        target_datatype, op, win, request);
}

int PMPI_Get_accumulate_c(const void* origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void* result_addr, MPI_Count result_count,
                          MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win) {
    MPC_ENTER_ACTIVE(Get_accumulate_c);
    return accumulate_c(me, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                        result_datatype, true, target_rank, target_disp, target_count,
                        target_datatype, op, win, nullptr);
}

int PMPI_Rget_accumulate_c(const void* origin_addr, MPI_Count origin_count,
                           MPI_Datatype origin_datatype, void* result_addr,
                           MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
                           MPI_Aint target_disp, MPI_Count target_count,
                           MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                           MPI_Request* request) {
    MPC_ENTER_ACTIVE(Rget_accumulate_c);
    if (int e = check_request(request)) return raise(nullptr, e);
    return accumulate_c(me, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                        result_datatype, true, target_rank, target_disp, target_count,
                        target_datatype, op, win, request);
}

}  // extern "C"

MPC_WEAK(MPI_Put)
MPC_WEAK(MPI_Get)
MPC_WEAK(MPI_Accumulate)
MPC_WEAK(MPI_Get_accumulate)
MPC_WEAK(MPI_Fetch_and_op)
MPC_WEAK(MPI_Compare_and_swap)
MPC_WEAK(MPI_Rput)
MPC_WEAK(MPI_Rget)
MPC_WEAK(MPI_Raccumulate)
MPC_WEAK(MPI_Rget_accumulate)
MPC_WEAK(MPI_Win_fence)
MPC_WEAK(MPI_Win_start)
MPC_WEAK(MPI_Win_complete)
MPC_WEAK(MPI_Win_post)
MPC_WEAK(MPI_Win_wait)
MPC_WEAK(MPI_Win_test)
MPC_WEAK(MPI_Win_lock)
MPC_WEAK(MPI_Win_unlock)
MPC_WEAK(MPI_Win_lock_all)
MPC_WEAK(MPI_Win_unlock_all)
MPC_WEAK(MPI_Win_flush)
MPC_WEAK(MPI_Win_flush_all)
MPC_WEAK(MPI_Win_flush_local)
MPC_WEAK(MPI_Win_flush_local_all)
MPC_WEAK(MPI_Win_sync)
MPC_WEAK(MPI_Put_c)
MPC_WEAK(MPI_Rput_c)
MPC_WEAK(MPI_Get_c)
MPC_WEAK(MPI_Rget_c)
MPC_WEAK(MPI_Accumulate_c)
MPC_WEAK(MPI_Raccumulate_c)
MPC_WEAK(MPI_Get_accumulate_c)
MPC_WEAK(MPI_Rget_accumulate_c)
