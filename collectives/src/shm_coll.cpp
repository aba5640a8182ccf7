// Entry points of the shared-address-space Gather(v), Scatter(v),
// Allgather(v), Alltoall(v,w), Reduce_scatter(_block), Scan and Exscan
// (shm.hpp): the MPI arguments as the blocks of shm_data.hpp, then the
// group's steps (flat: the whole communicator in this node process, blocking
// or not), the hierarchical composition (shm_hier.cpp) or the schedule.
#include "collectives/shm.hpp"
#include "shm_hier.hpp"
#include "shm_view.hpp"

namespace mpc::coll::shm {
namespace {

// Runs a movement: its nonblocking steps, the group's steps (flat), or
// `spread` (a communicator over several node processes).
template <class Spread>
int run_move(Comm* c, MoveKind kind, const Movement& m, MPI_Request* request, Spread&& spread) {
    if (request) {
        *request =
            start_nonblocking(c, nullptr, [&](const Local& l) { return move_steps(l, kind, m); });
        return MPI_SUCCESS;
    }
    View& v = view_of(c);
    if (!v.flat) return spread(v);
    return local_move(local_of(v), kind, m);
}

template <class Spread>
int run_partial(Comm* c, const Partial& r, Datatype* type, MPI_Request* request, Spread&& spread) {
    if (request) {
        *request = start_nonblocking(c, type, [&](const Local& l) { return partial_steps(l, r); });
        return MPI_SUCCESS;
    }
    View& v = view_of(c);
    if (!v.flat) return spread(v);
    local_partial(local_of(v), r);
    return MPI_SUCCESS;
}

}  // namespace

int gather(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf, int recvcount,
           Datatype* recvtype, int root, Comm* c, MPI_Request* request) {
    const bool is_root = c->rank == root;
    Movement m;
    m.root = root;
    m.in_place = is_root && sendbuf == MPI_IN_PLACE;
    if (!m.in_place) m.send = Blocks::one(sendbuf, sendcount, sendtype);
    if (is_root) m.recv = Blocks::even(recvbuf, recvcount, recvtype);
    return run_move(c, MoveKind::Gather, m, request, [&](View& v) { return hier_gather(c, v, m); });
}

int gatherv(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
            const int* recvcounts, const int* displs, Datatype* recvtype, int root, Comm* c,
            MPI_Request* request) {
    const bool is_root = c->rank == root;
    Movement m;
    m.root = root;
    m.varying = true;
    m.in_place = is_root && sendbuf == MPI_IN_PLACE;
    if (!m.in_place) m.send = Blocks::one(sendbuf, sendcount, sendtype);
    if (is_root) m.recv = Blocks::v(recvbuf, recvcounts, displs, recvtype);
    return run_move(c, MoveKind::Gather, m, request, [&](View& v) { return hier_gather(c, v, m); });
}

int scatter(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf, int recvcount,
            Datatype* recvtype, int root, Comm* c, MPI_Request* request) {
    const bool is_root = c->rank == root;
    Movement m;
    m.root = root;
    m.in_place = is_root && recvbuf == MPI_IN_PLACE;
    if (is_root) m.send = Blocks::even(sendbuf, sendcount, sendtype);
    if (!m.in_place) m.recv = Blocks::one(recvbuf, recvcount, recvtype);
    return run_move(c, MoveKind::Scatter, m, request,
                    [&](View& v) { return hier_scatter(c, v, m); });
}

int scatterv(const void* sendbuf, const int* sendcounts, const int* displs, Datatype* sendtype,
             void* recvbuf, int recvcount, Datatype* recvtype, int root, Comm* c,
             MPI_Request* request) {
    const bool is_root = c->rank == root;
    Movement m;
    m.root = root;
    m.varying = true;
    m.in_place = is_root && recvbuf == MPI_IN_PLACE;
    if (is_root) m.send = Blocks::v(sendbuf, sendcounts, displs, sendtype);
    if (!m.in_place) m.recv = Blocks::one(recvbuf, recvcount, recvtype);
    return run_move(c, MoveKind::Scatter, m, request,
                    [&](View& v) { return hier_scatter(c, v, m); });
}

int allgather(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf, int recvcount,
              Datatype* recvtype, Comm* c, MPI_Request* request) {
    Movement m;
    m.in_place = sendbuf == MPI_IN_PLACE;
    if (!m.in_place) m.send = Blocks::one(sendbuf, sendcount, sendtype);
    m.recv = Blocks::even(recvbuf, recvcount, recvtype);
    return run_move(c, MoveKind::Allgather, m, request,
                    [&](View& v) { return hier_allgather(c, v, m); });
}

int allgatherv(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
               const int* recvcounts, const int* displs, Datatype* recvtype, Comm* c,
               MPI_Request* request) {
    Movement m;
    m.in_place = sendbuf == MPI_IN_PLACE;
    if (!m.in_place) m.send = Blocks::one(sendbuf, sendcount, sendtype);
    m.recv = Blocks::v(recvbuf, recvcounts, displs, recvtype);
    return run_move(c, MoveKind::Allgather, m, request,
                    [&](View& v) { return hier_allgather(c, v, m); });
}

int alltoall(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf, int recvcount,
             Datatype* recvtype, Comm* c, MPI_Request* request) {
    Movement m;
    m.in_place = sendbuf == MPI_IN_PLACE;
    if (!m.in_place) m.send = Blocks::even(sendbuf, sendcount, sendtype);
    m.recv = Blocks::even(recvbuf, recvcount, recvtype);
    return run_move(c, MoveKind::Alltoall, m, request,
                    [&](View& v) { return hier_alltoall(c, v, m); });
}

int alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, Datatype* sendtype,
              void* recvbuf, const int* recvcounts, const int* rdispls, Datatype* recvtype, Comm* c,
              MPI_Request* request) {
    Movement m;
    m.varying = true;
    m.in_place = sendbuf == MPI_IN_PLACE;
    if (!m.in_place) m.send = Blocks::v(sendbuf, sendcounts, sdispls, sendtype);
    m.recv = Blocks::v(recvbuf, recvcounts, rdispls, recvtype);
    return run_move(c, MoveKind::Alltoall, m, request, [&](View&) {
        return run_blocking(make_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                           recvcounts, rdispls, recvtype, c));
    });
}

int alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
              Datatype* const* sendtypes, void* recvbuf, const int* recvcounts,
              const MPI_Aint* rdispls, Datatype* const* recvtypes, Comm* c, MPI_Request* request) {
    Movement m;
    m.varying = true;
    m.in_place = sendbuf == MPI_IN_PLACE;
    if (!m.in_place) m.send = Blocks::w(sendbuf, sendcounts, sdispls, sendtypes);
    m.recv = Blocks::w(recvbuf, recvcounts, rdispls, recvtypes);
    return run_move(c, MoveKind::Alltoall, m, request, [&](View&) {
        return run_blocking(make_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                           recvcounts, rdispls, recvtypes, c));
    });
}

int reduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts, Datatype* type,
                   const Op* op, Comm* c, MPI_Request* request) {
    const Partial r{PartKind::ReduceScatter, sendbuf, recvbuf, 0, recvcounts, type, op};
    return run_partial(c, r, type, request, [&](View& v) { return hier_reduce_scatter(c, v, r); });
}

int reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, Datatype* type,
                         const Op* op, Comm* c, MPI_Request* request) {
    const Partial r{PartKind::ReduceScatter, sendbuf, recvbuf, recvcount, nullptr, type, op};
    return run_partial(c, r, type, request, [&](View& v) { return hier_reduce_scatter(c, v, r); });
}

int scan(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op, Comm* c,
         MPI_Request* request) {
    const Partial r{PartKind::Scan, sendbuf, recvbuf, count, nullptr, type, op};
    return run_partial(c, r, type, request, [&](View& v) { return hier_scan(c, v, r); });
}

int exscan(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op, Comm* c,
           MPI_Request* request) {
    const Partial r{PartKind::Exscan, sendbuf, recvbuf, count, nullptr, type, op};
    return run_partial(c, r, type, request, [&](View& v) { return hier_scan(c, v, r); });
}

}  // namespace mpc::coll::shm
