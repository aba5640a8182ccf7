// Collective data movement (MPI 3.1 chapter 5), blocking and nonblocking:
// argument checks, then a schedule from the collectives room. Reductions are
// in coll_reduce.cpp.
#include <vector>

#include "coll_checks.hpp"
#include "coll_entry.hpp"

using namespace mpc::mpi;
namespace coll = mpc::coll;

namespace {

// The checks every collective starts with. *c is null when the handle itself
// is invalid (the error then goes to MPI_COMM_WORLD's handler).
int open_coll(MPI_Comm comm, const Run& run, Comm** c) {
    *c = nullptr;
    Comm* found;
    if (int e = check_comm(comm, &found)) return e;
    *c = found;
    return check_run(run);
}

// A send side that may be MPI_IN_PLACE when in_place_ok (*t stays null then).
int check_send(const void* buf, int count, MPI_Datatype type, Datatype** t, bool in_place_ok,
               const char* where) {
    if (buf == MPI_IN_PLACE) {
        if (in_place_ok) return MPI_SUCCESS;
        return make_error(MPI_ERR_BUFFER, "MPI_IN_PLACE is only valid %s", where);
    }
    return check_data(buf, count, type, t, "the send buffer");
}

// Where MPI_IN_PLACE may be used as the send buffer of a non-rooted collective.
const char* in_place_where(const Comm* c) {
    return c->is_inter() ? "on intracommunicators" : "";
}

// One side of an Alltoallw, checked: its n byte displacements and types, in
// the object itself up to kInline blocks (two heap arrays per side were a
// third of an 8-byte Alltoallw's instructions on 2 ranks). Not movable:
// displs and types may point into it.
class TypedBlocks {
  public:
    TypedBlocks() = default;
    TypedBlocks(const TypedBlocks&) = delete;
    TypedBlocks& operator=(const TypedBlocks&) = delete;

    int check(const int* counts, const int* displs, const MPI_Datatype* types, int n,
              const char* what) {
        if (n > 0 && !types) return make_error(MPI_ERR_ARG, "the %s types array is NULL", what);
        if (int e = check_count_array(counts, displs, n, what)) return e;
        if (n > kInline) {
            heap_displs_.resize(static_cast<size_t>(n));
            heap_types_.resize(static_cast<size_t>(n));
            displs_ = heap_displs_.data();
            types_ = heap_types_.data();
        }
        for (int i = 0; i < n; ++i) {
            if (int e = check_type(types[i], &types_[i])) return e;
            displs_[i] = displs[i];
        }
        return MPI_SUCCESS;
    }
    const MPI_Aint* displs() const { return displs_; }
    Datatype* const* types() const { return types_; }

  private:
    static constexpr int kInline = 32;
    MPI_Aint inline_displs_[kInline];
    Datatype* inline_types_[kInline];
    MPI_Aint* displs_ = inline_displs_;
    Datatype** types_ = inline_types_;
    std::vector<MPI_Aint> heap_displs_;
    std::vector<Datatype*> heap_types_;
};

}  // namespace

// The implementations behind MPI_X, MPI_IX, MPI_X_init and their large-count
// forms (coll_large.cpp).
namespace mpc::mpi::entry {

int barrier(MPI_Comm comm, Run run) {
    Comm* c;
    if (int e = open_coll(comm, run, &c)) return raise(c, e);
    if (c->is_inter()) return start(c, coll::make_inter_barrier(c), run);
    if (run.blocking && coll::shm::eligible(c)) return raise(c, coll::shm::barrier(c));
    if (run.persistent && coll::shm::eligible_nonblocking(c)) {
        *run.request = coll::persistent_request(c, coll::shm::persistent_barrier(c));
        return MPI_SUCCESS;
    }
    if (started_now(run) && coll::shm::eligible_nonblocking(c)) {
        *run.request = coll::shm::ibarrier(c);
        return MPI_SUCCESS;
    }
    return start(c, coll::make_barrier(c), run);
}

int bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, Run run) {
    Comm* c;
    Datatype* t = nullptr;
    if (int e = open_coll(comm, run, &c)) return raise(c, e);
    MPC_TRY(c, check_coll_root(c, root));
    if (c->is_inter()) {
        if (root != MPI_PROC_NULL)
            MPC_TRY(c, check_data(buffer, count, datatype, &t, "the buffer"));
        return start(c, coll::make_inter_bcast(buffer, count, t, root, c), run);
    }
    MPC_TRY(c, check_data(buffer, count, datatype, &t, "the buffer"));
    if (run.blocking && coll::shm::eligible(c))
        return raise(c, coll::shm::bcast(buffer, count, t, root, c));
    if (run.persistent &&
        take_persistent(c, run, coll::shm::persistent_bcast(buffer, count, t, root, c)))
        return MPI_SUCCESS;
    if (started_now(run) && coll::shm::eligible_nonblocking(c)) {
        *run.request = coll::shm::ibcast(buffer, count, t, root, c);
        return MPI_SUCCESS;
    }
    return start(c, coll::make_bcast(buffer, count, t, root, c), run);
}

// On an intercommunicator the root only receives (Gather*) or only sends
// (Scatter*), the remote group only sends or receives, and MPI_IN_PLACE is
// never allowed (MPI 3.1 section 5.5).
int gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, Run run) {
    Comm* c;
    Datatype *st = nullptr, *rt = nullptr;
    if (int e = open_coll(comm, run, &c)) return raise(c, e);
    MPC_TRY(c, check_coll_root(c, root));
    const bool inter = c->is_inter(), is_root = is_coll_root(c, root);
    if (is_coll_leaf(c, root))
        MPC_TRY(c, check_send(sendbuf, sendcount, sendtype, &st, is_root && !inter,
                              inter ? "at the root of an intracommunicator" : "at the root"));
    if (is_root) MPC_TRY(c, check_data(recvbuf, recvcount, recvtype, &rt, "the receive buffer"));
    if (inter)
        return start(
            c, coll::make_inter_gather(sendbuf, sendcount, st, recvbuf, recvcount, rt, root, c),
            run);
    if (shm_takes(c, run))
        return raise(c, coll::shm::gather(sendbuf, sendcount, st, recvbuf, recvcount, rt, root, c,
                                          run.request));
    return start(c, coll::make_gather(sendbuf, sendcount, st, recvbuf, recvcount, rt, root, c),
                 run);
}

int gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
            const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
            MPI_Comm comm, Run run) {
    Comm* c;
    Datatype *st = nullptr, *rt = nullptr;
    if (int e = open_coll(comm, run, &c)) return raise(c, e);
    MPC_TRY(c, check_coll_root(c, root));
    const bool inter = c->is_inter(), is_root = is_coll_root(c, root);
    if (is_coll_leaf(c, root))
        MPC_TRY(c, check_send(sendbuf, sendcount, sendtype, &st, is_root && !inter,
                              inter ? "at the root of an intracommunicator" : "at the root"));
    if (is_root) {
        MPC_TRY(c, check_count_array(recvcounts, displs, c->remote_size(), "receive"));
        MPC_TRY(c, check_type(recvtype, &rt));
        MPC_TRY(c, check_not_in_place(recvbuf, "the receive buffer"));
    }
    if (inter)
        return start(c,
                     coll::make_inter_gatherv(sendbuf, sendcount, st, recvbuf, recvcounts, displs,
                                              rt, root, c),
                     run);
    if (shm_takes(c, run))
        return raise(c, coll::shm::gatherv(sendbuf, sendcount, st, recvbuf, recvcounts, displs, rt,
                                           root, c, run.request));
    return start(
        c, coll::make_gatherv(sendbuf, sendcount, st, recvbuf, recvcounts, displs, rt, root, c),
        run);
}

}  // namespace mpc::mpi::entry

namespace {

// The receive side of a scatter at a non-root rank (or the root of an
// intracommunicator, where it may be MPI_IN_PLACE).
int check_scatter_recv(const Comm* c, int root, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                       Datatype** rt) {
    if (!is_coll_leaf(c, root)) return MPI_SUCCESS;
    if (recvbuf == MPI_IN_PLACE && is_coll_root(c, root)) return MPI_SUCCESS;
    if (recvbuf == MPI_IN_PLACE)
        return make_error(MPI_ERR_BUFFER, "MPI_IN_PLACE is only valid at the root%s",
                          c->is_inter() ? " of an intracommunicator" : "");
    return check_data(recvbuf, recvcount, recvtype, rt, "the receive buffer");
}

}  // namespace

namespace mpc::mpi::entry {

int scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
            MPI_Datatype recvtype, int root, MPI_Comm comm, Run run) {
    Comm* c;
    Datatype *st = nullptr, *rt = nullptr;
    if (int e = open_coll(comm, run, &c)) return raise(c, e);
    MPC_TRY(c, check_coll_root(c, root));
    if (is_coll_root(c, root))
        MPC_TRY(c, check_data(sendbuf, sendcount, sendtype, &st, "the send buffer"));
    MPC_TRY(c, check_scatter_recv(c, root, recvbuf, recvcount, recvtype, &rt));
    if (c->is_inter())
        return start(
            c, coll::make_inter_scatter(sendbuf, sendcount, st, recvbuf, recvcount, rt, root, c),
            run);
    if (shm_takes(c, run))
        return raise(c, coll::shm::scatter(sendbuf, sendcount, st, recvbuf, recvcount, rt, root, c,
                                           run.request));
    return start(c, coll::make_scatter(sendbuf, sendcount, st, recvbuf, recvcount, rt, root, c),
                 run);
}

int scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
             Run run) {
    Comm* c;
    Datatype *st = nullptr, *rt = nullptr;
    if (int e = open_coll(comm, run, &c)) return raise(c, e);
    MPC_TRY(c, check_coll_root(c, root));
    if (is_coll_root(c, root)) {
        MPC_TRY(c, check_count_array(sendcounts, displs, c->remote_size(), "send"));
        MPC_TRY(c, check_type(sendtype, &st));
        MPC_TRY(c, check_not_in_place(sendbuf, "the send buffer"));
    }
    MPC_TRY(c, check_scatter_recv(c, root, recvbuf, recvcount, recvtype, &rt));
    if (c->is_inter())
        return start(c,
                     coll::make_inter_scatterv(sendbuf, sendcounts, displs, st, recvbuf, recvcount,
                                               rt, root, c),
                     run);
    if (shm_takes(c, run))
        return raise(c, coll::shm::scatterv(sendbuf, sendcounts, displs, st, recvbuf, recvcount, rt,
                                            root, c, run.request));
    return start(
        c, coll::make_scatterv(sendbuf, sendcounts, displs, st, recvbuf, recvcount, rt, root, c),
        run);
}

// Non-rooted: on an intercommunicator every block comes from (goes to) a
// remote rank, so the arrays have remote-size entries (c->remote_size() is
// the size of an intracommunicator), and MPI_IN_PLACE is not allowed.
int allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, MPI_Comm comm, Run run) {
    Comm* c;
    Datatype *st = nullptr, *rt = nullptr;
    if (int e = open_coll(comm, run, &c)) return raise(c, e);
    const bool inter = c->is_inter();
    MPC_TRY(c, check_send(sendbuf, sendcount, sendtype, &st, !inter, in_place_where(c)));
    MPC_TRY(c, check_data(recvbuf, recvcount, recvtype, &rt, "the receive buffer"));
    if (inter)
        return start(
            c, coll::make_inter_allgather(sendbuf, sendcount, st, recvbuf, recvcount, rt, c), run);
    if (run.persistent && take_persistent(c, run,
                                          coll::shm::persistent_allgather(
                                              sendbuf, sendcount, st, recvbuf, recvcount, rt, c)))
        return MPI_SUCCESS;
    if (shm_takes(c, run))
        return raise(c, coll::shm::allgather(sendbuf, sendcount, st, recvbuf, recvcount, rt, c,
                                             run.request));
    return start(c, coll::make_allgather(sendbuf, sendcount, st, recvbuf, recvcount, rt, c), run);
}

int allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
               Run run) {
    Comm* c;
    Datatype *st = nullptr, *rt = nullptr;
    if (int e = open_coll(comm, run, &c)) return raise(c, e);
    const bool inter = c->is_inter();
    MPC_TRY(c, check_send(sendbuf, sendcount, sendtype, &st, !inter, in_place_where(c)));
    MPC_TRY(c, check_count_array(recvcounts, displs, c->remote_size(), "receive"));
    MPC_TRY(c, check_type(recvtype, &rt));
    MPC_TRY(c, check_not_in_place(recvbuf, "the receive buffer"));
    if (inter)
        return start(
            c,
            coll::make_inter_allgatherv(sendbuf, sendcount, st, recvbuf, recvcounts, displs, rt, c),
            run);
    if (shm_takes(c, run))
        return raise(c, coll::shm::allgatherv(sendbuf, sendcount, st, recvbuf, recvcounts, displs,
                                              rt, c, run.request));
    return start(
        c, coll::make_allgatherv(sendbuf, sendcount, st, recvbuf, recvcounts, displs, rt, c), run);
}

int alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, Run run) {
    Comm* c;
    Datatype *st = nullptr, *rt = nullptr;
    if (int e = open_coll(comm, run, &c)) return raise(c, e);
    const bool inter = c->is_inter();
    MPC_TRY(c, check_send(sendbuf, sendcount, sendtype, &st, !inter, in_place_where(c)));
    MPC_TRY(c, check_data(recvbuf, recvcount, recvtype, &rt, "the receive buffer"));
    if (inter)
        return start(
            c, coll::make_inter_alltoall(sendbuf, sendcount, st, recvbuf, recvcount, rt, c), run);
    if (run.persistent && take_persistent(c, run,
                                          coll::shm::persistent_alltoall(
                                              sendbuf, sendcount, st, recvbuf, recvcount, rt, c)))
        return MPI_SUCCESS;
    if (shm_takes(c, run))
        return raise(
            c, coll::shm::alltoall(sendbuf, sendcount, st, recvbuf, recvcount, rt, c, run.request));
    return start(c, coll::make_alltoall(sendbuf, sendcount, st, recvbuf, recvcount, rt, c), run);
}

int alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
              MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
              MPI_Datatype recvtype, MPI_Comm comm, Run run) {
    Comm* c;
    Datatype *st = nullptr, *rt = nullptr;
    if (int e = open_coll(comm, run, &c)) return raise(c, e);
    const bool inter = c->is_inter();
    const int n = c->remote_size();
    if (inter) MPC_TRY(c, check_not_in_place(sendbuf, "the send buffer on an intercommunicator"));
    if (sendbuf != MPI_IN_PLACE) {
        MPC_TRY(c, check_count_array(sendcounts, sdispls, n, "send"));
        MPC_TRY(c, check_type(sendtype, &st));
    }
    MPC_TRY(c, check_count_array(recvcounts, rdispls, n, "receive"));
    MPC_TRY(c, check_type(recvtype, &rt));
    MPC_TRY(c, check_not_in_place(recvbuf, "the receive buffer"));
    if (inter)
        return start(c,
                     coll::make_inter_alltoallv(sendbuf, sendcounts, sdispls, st, recvbuf,
                                                recvcounts, rdispls, rt, c),
                     run);
    if (shm_takes(c, run))
        return raise(c, coll::shm::alltoallv(sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts,
                                             rdispls, rt, c, run.request));
    return start(
        c,
        coll::make_alltoallv(sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts, rdispls, rt, c),
        run);
}

int alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
              const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
              const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, Run run) {
    Comm* c;
    TypedBlocks sb, rb;
    if (int e = open_coll(comm, run, &c)) return raise(c, e);
    const bool inter = c->is_inter();
    const int n = c->remote_size();
    if (inter) MPC_TRY(c, check_not_in_place(sendbuf, "the send buffer on an intercommunicator"));
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (!in_place) MPC_TRY(c, sb.check(sendcounts, sdispls, sendtypes, n, "send"));
    MPC_TRY(c, rb.check(recvcounts, rdispls, recvtypes, n, "receive"));
    MPC_TRY(c, check_not_in_place(recvbuf, "the receive buffer"));
    const MPI_Aint* sd = in_place ? nullptr : sb.displs();
    Datatype* const* st = in_place ? nullptr : sb.types();
    // Every path copies what it keeps of the arrays: the schedules their
    // blocks, the shared-memory steps of a nonblocking call the arrays.
    if (inter)
        return start(c,
                     coll::make_inter_alltoallw(sendbuf, sendcounts, sd, st, recvbuf, recvcounts,
                                                rb.displs(), rb.types(), c),
                     run);
    if (shm_takes(c, run))
        return raise(c, coll::shm::alltoallw(sendbuf, sendcounts, sd, st, recvbuf, recvcounts,
                                             rb.displs(), rb.types(), c, run.request));
    return start(c,
                 coll::make_alltoallw(sendbuf, sendcounts, sd, st, recvbuf, recvcounts,
                                      rb.displs(), rb.types(), c),
                 run);
}

}  // namespace mpc::mpi::entry

using namespace mpc::mpi::entry;

extern "C" {

int PMPI_Barrier(MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Barrier);
    return barrier(comm, kBlocking);
}

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Ibarrier);
    return barrier(comm, nonblocking(request));
}

int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Bcast);
    return bcast(buffer, count, datatype, root, comm, kBlocking);
}

int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request* request) {
    MPC_ENTER_ACTIVE(Ibcast);
    return bcast(buffer, count, datatype, root, comm, nonblocking(request));
}

int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Gather);
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                  kBlocking);
}

int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
    MPC_ENTER_ACTIVE(Igather);
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                  nonblocking(request));
}

int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Gatherv);
    return gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                   kBlocking);
}

int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Igatherv);
    return gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                   nonblocking(request));
}

int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Scatter);
    return scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                   kBlocking);
}

int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request) {
    MPC_ENTER_ACTIVE(Iscatter);
    return scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                   nonblocking(request));
}

int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Scatterv);
    return scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                    kBlocking);
}

int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Iscatterv);
    return scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                    nonblocking(request));
}

int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Allgather);
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, kBlocking);
}

int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Iallgather);
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                     nonblocking(request));
}

int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Allgatherv);
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                      kBlocking);
}

int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Iallgatherv);
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                      nonblocking(request));
}

int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Alltoall);
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, kBlocking);
}

int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Ialltoall);
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                    nonblocking(request));
}

int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Alltoallv);
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                     comm, kBlocking);
}

int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
    MPC_ENTER_ACTIVE(Ialltoallv);
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                     comm, nonblocking(request));
}

int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Alltoallw);
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, kBlocking);
}

int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request* request) {
    MPC_ENTER_ACTIVE(Ialltoallw);
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, nonblocking(request));
}

// Persistent collectives (MPI 4.0 section 6.13): the same checks, the
// operation built once.
int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Barrier_init);
    return barrier(comm, persistent_run(request, info));
}

int PMPI_Bcast_init(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Bcast_init);
    return bcast(buffer, count, datatype, root, comm, persistent_run(request, info));
}

int PMPI_Gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request* request) {
    MPC_ENTER_ACTIVE(Gather_init);
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                  persistent_run(request, info));
}

int PMPI_Gatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Gatherv_init);
    return gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                   persistent_run(request, info));
}

int PMPI_Scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request* request) {
    MPC_ENTER_ACTIVE(Scatter_init);
    return scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                   persistent_run(request, info));
}

int PMPI_Scatterv_init(const void* sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Scatterv_init);
    return scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                    persistent_run(request, info));
}

int PMPI_Allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request* request) {
    MPC_ENTER_ACTIVE(Allgather_init);
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                     persistent_run(request, info));
}

int PMPI_Allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Info info, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Allgatherv_init);
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                      persistent_run(request, info));
}

int PMPI_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request* request) {
    MPC_ENTER_ACTIVE(Alltoall_init);
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                    persistent_run(request, info));
}

int PMPI_Alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request* request) {
    MPC_ENTER_ACTIVE(Alltoallv_init);
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                     comm, persistent_run(request, info));
}

int PMPI_Alltoallw_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        MPI_Info info, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Alltoallw_init);
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, persistent_run(request, info));
}

}  // extern "C"

MPC_WEAK(MPI_Barrier)
MPC_WEAK(MPI_Ibarrier)
MPC_WEAK(MPI_Bcast)
MPC_WEAK(MPI_Ibcast)
MPC_WEAK(MPI_Gather)
MPC_WEAK(MPI_Igather)
MPC_WEAK(MPI_Gatherv)
MPC_WEAK(MPI_Igatherv)
MPC_WEAK(MPI_Scatter)
MPC_WEAK(MPI_Iscatter)
MPC_WEAK(MPI_Scatterv)
MPC_WEAK(MPI_Iscatterv)
MPC_WEAK(MPI_Allgather)
MPC_WEAK(MPI_Iallgather)
MPC_WEAK(MPI_Allgatherv)
MPC_WEAK(MPI_Iallgatherv)
MPC_WEAK(MPI_Alltoall)
MPC_WEAK(MPI_Ialltoall)
MPC_WEAK(MPI_Alltoallv)
MPC_WEAK(MPI_Ialltoallv)
MPC_WEAK(MPI_Alltoallw)
MPC_WEAK(MPI_Ialltoallw)
MPC_WEAK(MPI_Barrier_init)
MPC_WEAK(MPI_Bcast_init)
MPC_WEAK(MPI_Gather_init)
MPC_WEAK(MPI_Gatherv_init)
MPC_WEAK(MPI_Scatter_init)
MPC_WEAK(MPI_Scatterv_init)
MPC_WEAK(MPI_Allgather_init)
MPC_WEAK(MPI_Allgatherv_init)
MPC_WEAK(MPI_Alltoall_init)
MPC_WEAK(MPI_Alltoallv_init)
MPC_WEAK(MPI_Alltoallw_init)
