// Neighbor collectives as schedules (neighbor.hpp).
#include "collectives/neighbor.hpp"

#include "builders.hpp"
#include "mpi_api/topology.hpp"

namespace mpc::coll {
namespace {

// One block of a neighbor exchange: where it lives.
struct Block {
    char* buf;
    int count;
    Datatype* type;
};

// Adds every receive, then every send: recv_block(k) / send_block(k) give the
// k-th block of each side, in the topology's neighbor order.
template <class SendBlock, class RecvBlock>
SchedulePtr exchange(Comm* c, SendBlock&& send_block, RecvBlock&& recv_block) {
    const mpi::NeighborList nl = mpi::topo_neighbors(*c);
    auto s = std::make_unique<Schedule>(c, nl.tags);
    for (size_t k = 0; k < nl.in.size(); ++k) {
        if (nl.in[k] == MPI_PROC_NULL) continue;
        const Block b = recv_block(k);
        s->set_tag_offset(s->recv(b.buf, b.count, b.type, nl.in[k]), nl.in_tag[k]);
    }
    for (size_t k = 0; k < nl.out.size(); ++k) {
        if (nl.out[k] == MPI_PROC_NULL) continue;
        const Block b = send_block(k);
        s->set_tag_offset(s->send(b.buf, b.count, b.type, nl.out[k]), nl.out_tag[k]);
    }
    return s;
}

}  // namespace

SchedulePtr make_neighbor_allgather(const void* sendbuf, int sendcount, Datatype* sendtype,
                                    void* recvbuf, int recvcount, Datatype* recvtype, Comm* c) {
    return exchange(
        c,
        [&](size_t) {
            return Block{at(sendbuf, 0), sendcount, sendtype};
        },
        [&](size_t k) {
            return Block{block_at(recvbuf, static_cast<int>(k), recvcount, recvtype), recvcount,
                         recvtype};
        });
}

SchedulePtr make_neighbor_allgatherv(const void* sendbuf, int sendcount, Datatype* sendtype,
                                     void* recvbuf, const int* recvcounts, const int* displs,
                                     Datatype* recvtype, Comm* c) {
    return exchange(
        c,
        [&](size_t) {
            return Block{at(sendbuf, 0), sendcount, sendtype};
        },
        [&](size_t k) {
            return Block{at(recvbuf, displs[k] * recvtype->extent), recvcounts[k], recvtype};
        });
}

SchedulePtr make_neighbor_alltoall(const void* sendbuf, int sendcount, Datatype* sendtype,
                                   void* recvbuf, int recvcount, Datatype* recvtype, Comm* c) {
    return exchange(
        c,
        [&](size_t k) {
            return Block{block_at(sendbuf, static_cast<int>(k), sendcount, sendtype), sendcount,
                         sendtype};
        },
        [&](size_t k) {
            return Block{block_at(recvbuf, static_cast<int>(k), recvcount, recvtype), recvcount,
                         recvtype};
        });
}

SchedulePtr make_neighbor_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
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

SchedulePtr make_neighbor_alltoallw(const void* sendbuf, const int* sendcounts,
                                    const MPI_Aint* sdispls, Datatype* const* sendtypes,
                                    void* recvbuf, const int* recvcounts, const MPI_Aint* rdispls,
                                    Datatype* const* recvtypes, Comm* c) {
    return exchange(
        c,
        [&](size_t k) {
            return Block{at(sendbuf, sdispls[k]), sendcounts[k], sendtypes[k]};
        },
        [&](size_t k) {
            return Block{at(recvbuf, rdispls[k]), recvcounts[k], recvtypes[k]};
        });
}

}  // namespace mpc::coll
