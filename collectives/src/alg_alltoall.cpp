// Alltoall, Alltoallv, Alltoallw (tuning.hpp): every receive is posted at the
// start; the sends follow in pairwise order (rank me sends to me+1, me+2, ...,
// so that no rank is everybody's first target), all at once for small blocks,
// one after the other for large ones.
#include "builders.hpp"

namespace mpc::coll {
namespace {

struct Block {
    char* buf;
    int count;
    Datatype* type;
    size_t bytes() const { return data_bytes(count, type); }
};

// send_block(j) / recv_block(j): what goes to / comes from rank j. With
// MPI_IN_PLACE the blocks to send are first packed out of the receive buffer
// (each receive waits only for the copy of its own block).
template <class SendBlock, class RecvBlock>
void exchange(Schedule& s, bool in_place, SendBlock&& send_block, RecvBlock&& recv_block) {
    Comm* c = s.comm();
    const int n = c->size, me = c->rank;
    Datatype* bt = byte_type();
    std::vector<char*> packed(static_cast<size_t>(n), nullptr);
    std::vector<Step> freed(static_cast<size_t>(n), kNone);
    bool pairwise = false;
    for (int k = 1; k < n; ++k) {
        const int j = (me + k) % n;
        const Block b = in_place ? recv_block(j) : send_block(j);
        if (b.bytes() >= tuning::kAlltoallPairwiseMin) pairwise = true;
        if (in_place && b.bytes()) {
            packed[static_cast<size_t>(j)] = s.scratch(b.bytes());
            freed[static_cast<size_t>(j)] = s.copy(
                b.buf, b.count, b.type, packed[static_cast<size_t>(j)], as_count(b.bytes()), bt);
        }
    }
    for (int k = 1; k < n; ++k) {
        const int j = (me - k + n) % n;
        const Block b = recv_block(j);
        if (b.bytes()) s.recv(b.buf, b.count, b.type, j, {freed[static_cast<size_t>(j)]});
    }
    if (!in_place) {
        const Block from = send_block(me), to = recv_block(me);
        if (from.bytes()) s.copy(from.buf, from.count, from.type, to.buf, to.count, to.type);
    }
    Step prev = kNone;
    for (int k = 1; k < n; ++k) {
        const int j = (me + k) % n;
        Step sent = kNone;
        if (in_place) {
            const size_t bytes = recv_block(j).bytes();
            if (bytes)
                sent = s.send(packed[static_cast<size_t>(j)], as_count(bytes), bt, j,
                              {freed[static_cast<size_t>(j)], pairwise ? prev : kNone});
        } else {
            const Block b = send_block(j);
            if (b.bytes()) sent = s.send(b.buf, b.count, b.type, j, {pairwise ? prev : kNone});
        }
        if (sent != kNone) prev = sent;
    }
}

}  // namespace

SchedulePtr make_alltoall(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                          int recvcount, Datatype* recvtype, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    exchange(
        *s, sendbuf == MPI_IN_PLACE,
        [&](int j) {
            return Block{block_at(sendbuf, j, sendcount, sendtype), sendcount, sendtype};
        },
        [&](int j) {
            return Block{block_at(recvbuf, j, recvcount, recvtype), recvcount, recvtype};
        });
    return s;
}

SchedulePtr make_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                           Datatype* sendtype, void* recvbuf, const int* recvcounts,
                           const int* rdispls, Datatype* recvtype, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    exchange(
        *s, sendbuf == MPI_IN_PLACE,
        [&](int j) {
            return Block{at(sendbuf, sdispls[j] * sendtype->extent), sendcounts[j], sendtype};
        },
        [&](int j) {
            return Block{at(recvbuf, rdispls[j] * recvtype->extent), recvcounts[j], recvtype};
        });
    return s;
}

SchedulePtr make_alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                           Datatype* const* sendtypes, void* recvbuf, const int* recvcounts,
                           const MPI_Aint* rdispls, Datatype* const* recvtypes, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    exchange(
        *s, sendbuf == MPI_IN_PLACE,
        [&](int j) {
            return Block{at(sendbuf, sdispls[j]), sendcounts[j], sendtypes[j]};
        },
        [&](int j) {
            return Block{at(recvbuf, rdispls[j]), recvcounts[j], recvtypes[j]};
        });
    return s;
}

}  // namespace mpc::coll
