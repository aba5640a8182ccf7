// Blocking neighbor collectives (neighbor.hpp).
#include "collectives/neighbor.hpp"

#include <memory>
#include <vector>

#include "mpi_api/internal_coll.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/request.hpp"
#include "mpi_api/topology.hpp"

namespace mpc::coll {
namespace {

// One block of a neighbor exchange: where it lives and which neighbor it goes
// to or comes from (index into the neighbor list).
struct Block {
    char* buf;
    int count;
    Datatype* type;
};

char* at(const void* base, MPI_Aint offset) {
    return static_cast<char*>(const_cast<void*>(base)) + offset;
}

// Posts every receive, then every send, and waits for all of them. block_of(k)
// gives the k-th block of a side. Returns the first error (truncation).
template <class SendBlock, class RecvBlock>
int exchange(Comm* c, SendBlock&& send_block, RecvBlock&& recv_block) {
    const mpi::NeighborList nl = mpi::topo_neighbors(*c);
    std::vector<int> tags(static_cast<size_t>(nl.tags));
    for (int& t : tags) t = mpi::next_coll_tag(c);
    std::unique_ptr<mpi::Request[]> recvs(new mpi::Request[nl.in.size()]);
    std::unique_ptr<mpi::Request[]> sends(new mpi::Request[nl.out.size()]);
    for (size_t k = 0; k < nl.in.size(); ++k) {
        if (nl.in[k] == MPI_PROC_NULL) continue;
        Block b = recv_block(k);
        mpi::coll_start_recv(&recvs[k], c, b.buf, b.count, b.type, nl.in[k],
                             tags[static_cast<size_t>(nl.in_tag[k])]);
    }
    for (size_t k = 0; k < nl.out.size(); ++k) {
        if (nl.out[k] == MPI_PROC_NULL) continue;
        Block b = send_block(k);
        mpi::coll_start_send(&sends[k], c, b.buf, b.count, b.type, nl.out[k],
                             tags[static_cast<size_t>(nl.out_tag[k])]);
    }
    int err = MPI_SUCCESS;
    for (size_t k = 0; k < nl.out.size(); ++k)
        if (nl.out[k] != MPI_PROC_NULL) mpi::wait_complete(&sends[k]);
    for (size_t k = 0; k < nl.in.size(); ++k) {
        if (nl.in[k] == MPI_PROC_NULL) continue;
        mpi::wait_complete(&recvs[k]);
        if (err == MPI_SUCCESS) err = recvs[k].status.MPI_ERROR;
    }
    return err;
}

}  // namespace

int neighbor_allgather(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                       int recvcount, Datatype* recvtype, Comm* c) {
    const MPI_Aint rstride = recvcount * recvtype->extent;
    return exchange(
        c, [&](size_t) { return Block{at(sendbuf, 0), sendcount, sendtype}; },
        [&](size_t k) {
            return Block{at(recvbuf, static_cast<MPI_Aint>(k) * rstride), recvcount, recvtype};
        });
}

int neighbor_allgatherv(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                        const int* recvcounts, const int* displs, Datatype* recvtype, Comm* c) {
    return exchange(
        c, [&](size_t) { return Block{at(sendbuf, 0), sendcount, sendtype}; },
        [&](size_t k) {
            return Block{at(recvbuf, displs[k] * recvtype->extent), recvcounts[k], recvtype};
        });
}

int neighbor_alltoall(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                      int recvcount, Datatype* recvtype, Comm* c) {
    const MPI_Aint sstride = sendcount * sendtype->extent;
    const MPI_Aint rstride = recvcount * recvtype->extent;
    return exchange(
        c,
        [&](size_t k) {
            return Block{at(sendbuf, static_cast<MPI_Aint>(k) * sstride), sendcount, sendtype};
        },
        [&](size_t k) {
            return Block{at(recvbuf, static_cast<MPI_Aint>(k) * rstride), recvcount, recvtype};
        });
}

int neighbor_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                       Datatype* sendtype, void* recvbuf, const int* recvcounts,
                       const int* rdispls, Datatype* recvtype, Comm* c) {
    return exchange(
        c,
        [&](size_t k) {
            return Block{at(sendbuf, sdispls[k] * sendtype->extent), sendcounts[k], sendtype};
        },
        [&](size_t k) {
            return Block{at(recvbuf, rdispls[k] * recvtype->extent), recvcounts[k], recvtype};
        });
}

int neighbor_alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                       Datatype* const* sendtypes, void* recvbuf, const int* recvcounts,
                       const MPI_Aint* rdispls, Datatype* const* recvtypes, Comm* c) {
    return exchange(
        c, [&](size_t k) { return Block{at(sendbuf, sdispls[k]), sendcounts[k], sendtypes[k]}; },
        [&](size_t k) { return Block{at(recvbuf, rdispls[k]), recvcounts[k], recvtypes[k]}; });
}

}  // namespace mpc::coll
