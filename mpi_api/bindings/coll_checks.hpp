// Shared by the collective bindings (coll.cpp, coll_reduce.cpp, neighbor.cpp):
// argument checks with the standard's error classes, and running a schedule
// blocking, behind a request or as a persistent request (MPI_X, MPI_IX and
// MPI_X_init share one implementation).
#pragma once

#include <type_traits>

#include "collectives/collectives.hpp"
#include "collectives/persistent.hpp"
#include "collectives/shm.hpp"
#include "mpi_api/api.hpp"
#include "mpi_api/info.hpp"
#include "mpi_api/op.hpp"

namespace mpc::mpi {

// How a collective binding runs its schedule: blocking, behind *request
// (nonblocking), or as the persistent request *request (MPI_X_init, with its
// info argument).
struct Run {
    bool blocking;
    MPI_Request* request;
    bool persistent = false;
    MPI_Info info = MPI_INFO_NULL;
};
inline constexpr Run kBlocking{true, nullptr};
inline Run nonblocking(MPI_Request* request) {
    return {false, request};
}
inline Run persistent_run(MPI_Request* request, MPI_Info info) {
    return {false, request, true, info};
}
// Nonblocking proper (started now), not persistent.
inline bool started_now(const Run& run) {
    return !run.blocking && !run.persistent;
}

// Memory a started nonblocking or persistent collective keeps reading (arrays
// the binding made: the shared-memory paths keep pointers to them) goes to its
// request, which frees it when it goes (Request::owned). A moved std::vector
// keeps its storage, so pointers taken before the move stay valid. Blocking
// runs and failed starts keep nothing.
template <class T>
void keep_with_request(const Run& run, T&& value) {
    if (run.blocking || !run.request) return;
    Request* r = request_lookup(*run.request);
    if (!r) return;
    struct Held {
        std::decay_t<T> value;
        void* prev;
        void (*prev_free)(void*);
    };
    r->owned = new Held{std::forward<T>(value), r->owned, r->owned_free};
    r->owned_free = [](void* p) {
        auto* h = static_cast<Held*>(p);
        if (h->prev_free) h->prev_free(h->prev);
        delete h;
    };
}

inline int check_run(const Run& run) {
    if (!run.blocking && !run.request) return make_error(MPI_ERR_ARG, "request is NULL");
    if (run.persistent && run.info != MPI_INFO_NULL && !info_lookup(run.info))
        return make_error(MPI_ERR_INFO, "0x%x is not a valid info object", run.info);
    return MPI_SUCCESS;
}

// Blocking: runs s and raises its error on c. Nonblocking: starts it and
// returns its request in *run.request. Persistent: returns the inactive
// request that runs s at every start.
inline int start(Comm* c, coll::SchedulePtr s, const Run& run) {
    if (run.blocking) return raise(c, coll::run_blocking(std::move(s)));
    if (run.persistent) {
        *run.request = coll::persistent_request(c, coll::persistent_schedule(std::move(s)));
        return MPI_SUCCESS;
    }
    *run.request = coll::run_nonblocking(std::move(s));
    return MPI_SUCCESS;
}

// Whether an intracommunicator's collective runs through the shared address
// space (collectives/shm.hpp), blocking or started now; with a reduction's
// operation. Never a persistent one: those paths start the operation at once
// and return an active, non-persistent request, which MPI_X_init must not
// (the persistent shared-memory forms, Barrier and Allreduce, are chosen
// before this).
// A persistent run taken by the shared-memory operation p of the collectives
// room (null when it has none for these arguments): *run.request is set.
inline bool take_persistent(Comm* c, const Run& run, std::unique_ptr<coll::Persistent> p) {
    if (!p) return false;
    *run.request = coll::persistent_request(c, std::move(p));
    return true;
}
inline bool shm_takes(Comm* c, const Run& run) {
    if (run.persistent) return false;
    return run.blocking ? coll::shm::eligible(c) : coll::shm::eligible_nonblocking(c);
}
inline bool shm_takes(Comm* c, const Op* op, const Run& run) {
    if (run.persistent) return false;
    return run.blocking ? coll::shm::eligible(c, op) : coll::shm::eligible_nonblocking(c, op);
}

// Collectives the standard defines on intracommunicators only (Scan, Exscan,
// neighborhood collectives).
inline int check_intra_coll(const Comm* c, const char* what) {
    if (c->is_inter())
        return make_error(MPI_ERR_COMM, "%s is not defined on intercommunicators", what);
    return MPI_SUCCESS;
}

// The root argument: a rank of the communicator; on an intercommunicator
// MPI_ROOT (the root), MPI_PROC_NULL (the rest of the root's group) or the
// root's rank in the remote group.
inline int check_coll_root(const Comm* c, int root) {
    if (!c->is_inter()) return check_root(c, root);
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->remote_size()))
        return MPI_SUCCESS;
    return make_error(MPI_ERR_ROOT,
                      "invalid root %d on an intercommunicator: MPI_ROOT, MPI_PROC_NULL or a "
                      "rank of the remote group (%d ranks) is required",
                      root, c->remote_size());
}

// Whether the caller is the root; and whether it is a leaf, one that sends its
// block to the root (gathers, reductions) or receives one from it (broadcasts,
// scatters): every rank of an intracommunicator (the root too), the ranks of
// the remote group on an intercommunicator (not MPI_ROOT nor MPI_PROC_NULL).
inline bool is_coll_root(const Comm* c, int root) {
    return c->is_inter() ? root == MPI_ROOT : c->rank == root;
}
inline bool is_coll_leaf(const Comm* c, int root) {
    return c->is_inter() ? root >= 0 : true;
}

inline int check_not_in_place(const void* buf, const char* what) {
    if (buf == MPI_IN_PLACE)
        return make_error(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed as %s here", what);
    return MPI_SUCCESS;
}

// count elements of datatype at buf, buf not MPI_IN_PLACE.
inline int check_data(const void* buf, int count, MPI_Datatype datatype, Datatype** t,
                      const char* what) {
    if (int e = check_count(count)) return e;
    if (int e = check_type(datatype, t)) return e;
    if (int e = check_not_in_place(buf, what)) return e;
    return check_buffer(buf, count, *t);
}

// n counts and displacements (block i: counts[i] elements of t at displs[i]).
inline int check_count_array(const int* counts, const void* displs, int n, const char* what) {
    if (n > 0 && (!counts || !displs))
        return make_error(MPI_ERR_ARG, "the %s counts or displacements array is NULL", what);
    for (int i = 0; i < n; ++i)
        if (counts[i] < 0)
            return make_error(MPI_ERR_COUNT, "%s count %d (for rank %d) is negative", what,
                              counts[i], i);
    return MPI_SUCCESS;
}

inline int check_op(MPI_Op op, const Datatype* t, Op** out) {
    Op* o = op_lookup(op);
    if (!o) {
        if (op == MPI_OP_NULL) return make_error(MPI_ERR_OP, "MPI_OP_NULL passed");
        return make_error(MPI_ERR_OP, "0x%x is not a valid operation", op);
    }
    if (int e = op_check(*o, *t)) return e;
    *out = o;
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi
