#include <cstring>
#include <vector>

#include "collectives/collectives.hpp"
#include "mpi_api/p2p.hpp"

namespace mpc::coll {
namespace {

int next_tag(Comm* c) { return static_cast<int>(c->coll_sequence++ & 0x3fffffff); }

mpi::Datatype* byte_type() { return mpi::datatype_lookup(MPI_BYTE); }

// Binomial reduction to rank 0 in rank order (valid for non-commutative ops):
// at each step rank r combines the partial result of [r+mask, r+2*mask) on the
// right of its own. `acc` holds count packed elements and ends with the result
// at rank 0.
void reduce_to_zero(std::vector<char>& acc, int count, Datatype* type, const Op* op, Comm* c,
                    int tag) {
    const int n = c->size, me = c->rank;
    const size_t bytes = static_cast<size_t>(count) * type->size;
    std::vector<char> tmp(bytes);
    Datatype* bt = byte_type();
    for (int mask = 1; mask < n; mask <<= 1) {
        if (me & mask) {
            mpi::coll_send(c, acc.data(), static_cast<int>(bytes), bt, me - mask, tag);
            return;
        }
        if (me + mask < n) {
            mpi::coll_recv(c, tmp.data(), static_cast<int>(bytes), bt, me + mask, tag);
            // acc = acc op tmp: apply computes inout = in op inout.
            mpi::op_apply(*op, acc.data(), tmp.data(), static_cast<size_t>(count), *type);
            acc.swap(tmp);
        }
    }
}

// Packs (buf, count, type) into a contiguous vector.
std::vector<char> packed(const void* buf, int count, const Datatype* t) {
    std::vector<char> v(static_cast<size_t>(count) * t->size);
    mpi::pack(buf, static_cast<size_t>(count), *t, 0, v.data(), v.size());
    return v;
}

}  // namespace

int barrier(Comm* c) {
    const int n = c->size, me = c->rank;
    const int tag = next_tag(c);
    Datatype* bt = byte_type();
    for (int dist = 1; dist < n; dist <<= 1)
        mpi::coll_sendrecv(c, nullptr, 0, bt, (me + dist) % n, nullptr, 0, bt,
                           (me - dist + n) % n, tag);
    return MPI_SUCCESS;
}

int bcast(void* buf, int count, Datatype* type, int root, Comm* c) {
    const int n = c->size;
    const int rel = (c->rank - root + n) % n;
    const int tag = next_tag(c);
    int mask = 1;
    while (mask < n) {
        if (rel & mask) {
            mpi::coll_recv(c, buf, count, type, (rel - mask + root) % n, tag);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < n) mpi::coll_send(c, buf, count, type, (rel + mask + root) % n, tag);
    return MPI_SUCCESS;
}

int reduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op, int root,
           Comm* c) {
    const int tag = next_tag(c);
    const void* src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    std::vector<char> acc = packed(src, count, type);
    reduce_to_zero(acc, count, type, op, c, tag);
    if (root == 0) {
        if (c->rank == 0)
            mpi::unpack(recvbuf, static_cast<size_t>(count), *type, 0, acc.data(), acc.size());
        return MPI_SUCCESS;
    }
    if (c->rank == 0)
        mpi::coll_send(c, acc.data(), static_cast<int>(acc.size()), byte_type(), root, tag);
    else if (c->rank == root)
        mpi::coll_recv(c, recvbuf, count, type, 0, tag);
    return MPI_SUCCESS;
}

int allreduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op,
              Comm* c) {
    const int tag = next_tag(c);
    const void* src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    std::vector<char> acc = packed(src, count, type);
    reduce_to_zero(acc, count, type, op, c, tag);
    if (c->rank == 0)
        mpi::unpack(recvbuf, static_cast<size_t>(count), *type, 0, acc.data(), acc.size());
    return bcast(recvbuf, count, type, 0, c);
}

}  // namespace mpc::coll
