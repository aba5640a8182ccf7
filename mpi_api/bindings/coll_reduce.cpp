// Reductions (MPI 3.1 sections 5.9-5.11), blocking and nonblocking, and user
// operations: argument checks, then a schedule from the collectives room.
#include <climits>

#include "coll_checks.hpp"
#include "coll_entry.hpp"

using namespace mpc::mpi;
namespace coll = mpc::coll;
using mpc::mpi::entry::Builder;

namespace {

// The checks every reduction starts with (see open_coll in coll.cpp).
int open_reduction(MPI_Comm comm, const Run& run, Comm** c) {
    *c = nullptr;
    Comm* found;
    if (int e = check_comm(comm, &found)) return e;
    *c = found;
    return check_run(run);
}

// Where MPI_IN_PLACE is refused: never on an intercommunicator.
const char* in_place_rule(const Comm* c) {
    return c->is_inter() ? "MPI_IN_PLACE is not allowed on intercommunicators"
                         : "MPI_IN_PLACE is only valid at the root";
}

// The data of a reduction: sendbuf when significant (or MPI_IN_PLACE when
// allowed, the data then being in recvbuf), recvbuf when significant, the
// type and the op.
[[gnu::always_inline]] inline int check_reduction(const Comm* c, const void* sendbuf,
                                                  bool send_significant, bool in_place_ok,
                                                  void* recvbuf, bool recv_significant, int count,
                                                  MPI_Datatype datatype, MPI_Op op, Datatype** t,
                                                  Op** o) {
    if (int e = check_count(count)) return e;
    if (int e = check_type(datatype, t)) return e;
    if (!send_significant) {
        // (the root of an intercommunicator: only recvbuf counts)
    } else if (sendbuf == MPI_IN_PLACE) {
        if (!in_place_ok) return make_error(MPI_ERR_BUFFER, "%s", in_place_rule(c));
    } else if (int e = check_buffer(sendbuf, count, *t)) {
        return e;
    }
    if (recv_significant || (send_significant && sendbuf == MPI_IN_PLACE)) {
        if (int e = check_not_in_place(recvbuf, "the receive buffer")) return e;
        if (int e = check_buffer(recvbuf, count, *t)) return e;
    }
    return check_op(op, *t, o);
}

}  // namespace

namespace mpc::mpi::entry {

// On an intercommunicator the root receives the reduction of the remote
// group's data; the rest of the root's group (MPI_PROC_NULL) takes no part.
int reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           int root, MPI_Comm comm, Run run) {
    Comm* c;
    Datatype* t = nullptr;
    Op* o = nullptr;
    if (int e = open_reduction(comm, run, &c)) return raise(c, e);
    MPC_TRY(c, check_coll_root(c, root));
    if (c->is_inter()) {
        if (root != MPI_PROC_NULL) {
            const bool is_root = root == MPI_ROOT;
            MPC_TRY(c, check_reduction(c, sendbuf, !is_root, false, recvbuf, is_root, count,
                                       datatype, op, &t, &o));
        }
        return start(c, coll::make_inter_reduce(sendbuf, recvbuf, count, t, o, root, c), run);
    }
    const bool is_root = c->rank == root;
    MPC_TRY(c, check_reduction(c, sendbuf, true, is_root, recvbuf, is_root, count, datatype, op, &t,
                               &o));
    if (run.blocking && coll::shm::eligible(c, o))
        return raise(c, coll::shm::reduce(sendbuf, recvbuf, count, t, o, root, c));
    if (run.persistent &&
        take_persistent(c, run,
                        coll::shm::persistent_reduce(sendbuf, recvbuf, count, t, o, root, c)))
        return MPI_SUCCESS;
    if (started_now(run) && coll::shm::eligible_nonblocking(c, o)) {
        *run.request = coll::shm::ireduce(sendbuf, recvbuf, count, t, o, root, c);
        return MPI_SUCCESS;
    }
    return start(c, coll::make_reduce(sendbuf, recvbuf, count, t, o, root, c), run);
}

}  // namespace mpc::mpi::entry

namespace {

// Scan or Exscan through the shared address space (out of line: the
// Allreduce path stays as it was).
[[gnu::noinline]] int shm_scan(Builder build, const void* sendbuf, void* recvbuf, int count,
                               Datatype* t, const Op* o, Comm* c, const Run& run) {
    auto shm = build == coll::make_scan ? coll::shm::scan : coll::shm::exscan;
    return raise(c, shm(sendbuf, recvbuf, count, t, o, c, run.request));
}

}  // namespace

namespace mpc::mpi::entry {

// Allreduce, Scan, Exscan: same arguments. On an intercommunicator, each
// group receives the reduction of the other group's data (Allreduce); Scan
// and Exscan are not defined there (MPI 3.1 section 5.11).
int all_ranks_reduction(Builder build, const void* sendbuf, void* recvbuf, int count,
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, Run run) {
    Comm* c;
    Datatype* t = nullptr;
    Op* o = nullptr;
    if (int e = open_reduction(comm, run, &c)) return raise(c, e);
    const bool inter = c->is_inter();
    if (build != coll::make_allreduce)
        MPC_TRY(c, check_intra_coll(c, build == coll::make_scan ? "MPI_Scan (MPI_Iscan)"
                                                                : "MPI_Exscan (MPI_Iexscan)"));
    MPC_TRY(c,
            check_reduction(c, sendbuf, true, !inter, recvbuf, true, count, datatype, op, &t, &o));
    if (inter) return start(c, coll::make_inter_allreduce(sendbuf, recvbuf, count, t, o, c), run);
    if (build == coll::make_allreduce && run.blocking && coll::shm::eligible(c, o))
        return raise(c, coll::shm::allreduce(sendbuf, recvbuf, count, t, o, c));
    if (build == coll::make_allreduce && run.persistent && coll::shm::eligible_nonblocking(c, o)) {
        *run.request = coll::persistent_request(
            c, coll::shm::persistent_allreduce(sendbuf, recvbuf, count, t, o, c), t);
        return MPI_SUCCESS;
    }
    if (build == coll::make_allreduce && started_now(run) &&
        coll::shm::eligible_nonblocking(c, o)) {
        *run.request = coll::shm::iallreduce(sendbuf, recvbuf, count, t, o, c);
        return MPI_SUCCESS;
    }
    if (build != coll::make_allreduce && shm_takes(c, o, run))
        return shm_scan(build, sendbuf, recvbuf, count, t, o, c, run);
    return start(c, build(sendbuf, recvbuf, count, t, o, c), run);
}

// On an intercommunicator the reduction of the remote group's vectors is
// scattered over the local group: recvcounts has one entry per local rank,
// the send buffers hold their sum (the same in both groups).
int reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, Run run) {
    Comm* c;
    Datatype* t = nullptr;
    Op* o = nullptr;
    if (int e = open_reduction(comm, run, &c)) return raise(c, e);
    if (!recvcounts) MPC_TRY(c, make_error(MPI_ERR_ARG, "recvcounts is NULL"));
    long long total = 0;
    for (int i = 0; i < c->size; ++i) {
        if (recvcounts[i] < 0)
            MPC_TRY(c, make_error(MPI_ERR_COUNT, "receive count %d (for rank %d) is negative",
                                  recvcounts[i], i));
        total += recvcounts[i];
    }
    if (total > INT_MAX)
        MPC_TRY(c, make_error(MPI_ERR_COUNT,
                              "the receive counts add up to %lld elements, more "
                              "than an int can count",
                              total));
    const bool inter = c->is_inter();
    // In place, the whole input is in recvbuf; otherwise recvbuf holds my block.
    MPC_TRY(c, check_reduction(c, sendbuf, true, !inter, recvbuf, false, static_cast<int>(total),
                               datatype, op, &t, &o));
    if (sendbuf != MPI_IN_PLACE) {
        MPC_TRY(c, check_not_in_place(recvbuf, "the receive buffer"));
        MPC_TRY(c, check_buffer(recvbuf, recvcounts[c->rank], t));
    }
    if (inter)
        return start(c, coll::make_inter_reduce_scatter(sendbuf, recvbuf, recvcounts, t, o, c),
                     run);
    if (shm_takes(c, o, run))
        return raise(c,
                     coll::shm::reduce_scatter(sendbuf, recvbuf, recvcounts, t, o, c, run.request));
    return start(c, coll::make_reduce_scatter(sendbuf, recvbuf, recvcounts, t, o, c), run);
}

// Intercommunicator: as Reduce_scatter, the send buffers holding local size
// times recvcount elements.
int reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, Run run) {
    Comm* c;
    Datatype* t = nullptr;
    Op* o = nullptr;
    if (int e = open_reduction(comm, run, &c)) return raise(c, e);
    MPC_TRY(c, check_count(recvcount));
    const long long total = static_cast<long long>(recvcount) * c->size;
    if (total > INT_MAX)
        MPC_TRY(c, make_error(MPI_ERR_COUNT,
                              "recvcount %d times %d ranks is more elements than "
                              "an int can count",
                              recvcount, c->size));
    const bool inter = c->is_inter();
    MPC_TRY(c, check_reduction(c, sendbuf, true, !inter, recvbuf, false, static_cast<int>(total),
                               datatype, op, &t, &o));
    if (sendbuf != MPI_IN_PLACE) {
        MPC_TRY(c, check_not_in_place(recvbuf, "the receive buffer"));
        MPC_TRY(c, check_buffer(recvbuf, recvcount, t));
    }
    if (inter)
        return start(c, coll::make_inter_reduce_scatter_block(sendbuf, recvbuf, recvcount, t, o, c),
                     run);
    if (shm_takes(c, o, run))
        return raise(
            c, coll::shm::reduce_scatter_block(sendbuf, recvbuf, recvcount, t, o, c, run.request));
    return start(c, coll::make_reduce_scatter_block(sendbuf, recvbuf, recvcount, t, o, c), run);
}

int reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op) {
    Datatype* t = nullptr;
    Op* o = nullptr;
    MPC_TRY(nullptr, check_data(inbuf, count, datatype, &t, "the input buffer"));
    MPC_TRY(nullptr, check_data(inoutbuf, count, datatype, &t, "the inout buffer"));
    MPC_TRY(nullptr, check_op(op, t, &o));
    coll::reduce_local(inbuf, inoutbuf, count, t, o);
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi::entry

using namespace mpc::mpi::entry;

extern "C" {

int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Reduce);
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, kBlocking);
}

int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Ireduce);
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, nonblocking(request));
}

int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Allreduce);
    return all_ranks_reduction(coll::make_allreduce, sendbuf, recvbuf, count, datatype, op, comm,
                               kBlocking);
}

int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Iallreduce);
    return all_ranks_reduction(coll::make_allreduce, sendbuf, recvbuf, count, datatype, op, comm,
                               nonblocking(request));
}

int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Reduce_scatter);
    return reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, kBlocking);
}

int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Ireduce_scatter);
    return reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, nonblocking(request));
}

int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Reduce_scatter_block);
    return reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, kBlocking);
}

int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request* request) {
    MPC_ENTER_ACTIVE(Ireduce_scatter_block);
    return reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                nonblocking(request));
}

int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Scan);
    return all_ranks_reduction(coll::make_scan, sendbuf, recvbuf, count, datatype, op, comm,
                               kBlocking);
}

int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Iscan);
    return all_ranks_reduction(coll::make_scan, sendbuf, recvbuf, count, datatype, op, comm,
                               nonblocking(request));
}

int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Exscan);
    return all_ranks_reduction(coll::make_exscan, sendbuf, recvbuf, count, datatype, op, comm,
                               kBlocking);
}

int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Iexscan);
    return all_ranks_reduction(coll::make_exscan, sendbuf, recvbuf, count, datatype, op, comm,
                               nonblocking(request));
}

int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op) {
    MPC_ENTER_ACTIVE(Reduce_local);
    return reduce_local(inbuf, inoutbuf, count, datatype, op);
}

int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
    MPC_ENTER_ACTIVE(Op_create);
    if (!user_fn) return raise(nullptr, make_error(MPI_ERR_ARG, "user_fn is NULL"));
    if (!op) return raise(nullptr, make_error(MPI_ERR_ARG, "op is NULL"));
    *op = op_create(user_fn, commute != 0);
    return MPI_SUCCESS;
}

int PMPI_Op_create_c(MPI_User_function_c* user_fn, int commute, MPI_Op* op) {
    MPC_ENTER_ACTIVE(Op_create_c);
    if (!user_fn) return raise(nullptr, make_error(MPI_ERR_ARG, "user_fn is NULL"));
    if (!op) return raise(nullptr, make_error(MPI_ERR_ARG, "op is NULL"));
    *op = op_create_c(user_fn, commute != 0);
    return MPI_SUCCESS;
}

int PMPI_Op_free(MPI_Op* op) {
    MPC_ENTER_ACTIVE(Op_free);
    if (!op) return raise(nullptr, make_error(MPI_ERR_ARG, "op is NULL"));
    Op* o = op_lookup(*op);
    if (!o) return raise(nullptr, make_error(MPI_ERR_OP, "0x%x is not a valid operation", *op));
    if (o->predefined)
        return raise(nullptr, make_error(MPI_ERR_OP, "predefined operations cannot be freed"));
    // Pending nonblocking reductions keep their own copy of the operation.
    op_free(*op);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int PMPI_Op_commutative(MPI_Op op, int* commute) {
    MPC_ENTER_ACTIVE(Op_commutative);
    if (!commute) return raise(nullptr, make_error(MPI_ERR_ARG, "commute is NULL"));
    Op* o = op_lookup(op);
    if (!o) return raise(nullptr, make_error(MPI_ERR_OP, "0x%x is not a valid operation", op));
    *commute = o->commutative ? 1 : 0;
    return MPI_SUCCESS;
}

// Persistent reductions (MPI 4.0 section 6.13).
int PMPI_Reduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Reduce_init);
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, persistent_run(request, info));
}

int PMPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Allreduce_init);
    return all_ranks_reduction(coll::make_allreduce, sendbuf, recvbuf, count, datatype, op, comm,
                               persistent_run(request, info));
}

int PMPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request* request) {
    MPC_ENTER_ACTIVE(Reduce_scatter_init);
    return reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm,
                          persistent_run(request, info));
}

int PMPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf, int recvcount,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request) {
    MPC_ENTER_ACTIVE(Reduce_scatter_block_init);
    return reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                persistent_run(request, info));
}

int PMPI_Scan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Info info, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Scan_init);
    return all_ranks_reduction(coll::make_scan, sendbuf, recvbuf, count, datatype, op, comm,
                               persistent_run(request, info));
}

int PMPI_Exscan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Exscan_init);
    return all_ranks_reduction(coll::make_exscan, sendbuf, recvbuf, count, datatype, op, comm,
                               persistent_run(request, info));
}

}  // extern "C"

MPC_WEAK(MPI_Reduce)
MPC_WEAK(MPI_Ireduce)
MPC_WEAK(MPI_Allreduce)
MPC_WEAK(MPI_Iallreduce)
MPC_WEAK(MPI_Reduce_scatter)
MPC_WEAK(MPI_Ireduce_scatter)
MPC_WEAK(MPI_Reduce_scatter_block)
MPC_WEAK(MPI_Ireduce_scatter_block)
MPC_WEAK(MPI_Scan)
MPC_WEAK(MPI_Iscan)
MPC_WEAK(MPI_Exscan)
MPC_WEAK(MPI_Iexscan)
MPC_WEAK(MPI_Reduce_local)
MPC_WEAK(MPI_Op_create)
MPC_WEAK(MPI_Op_create_c)
MPC_WEAK(MPI_Op_free)
MPC_WEAK(MPI_Op_commutative)
MPC_WEAK(MPI_Reduce_init)
MPC_WEAK(MPI_Allreduce_init)
MPC_WEAK(MPI_Reduce_scatter_init)
MPC_WEAK(MPI_Reduce_scatter_block_init)
MPC_WEAK(MPI_Scan_init)
MPC_WEAK(MPI_Exscan_init)
