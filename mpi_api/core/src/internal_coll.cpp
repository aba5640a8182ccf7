// Small tagged collectives over internal point-to-point (see internal_coll.hpp).
#include "mpi_api/internal_coll.hpp"

#include <cstring>

#include "mpi_api/datatype.hpp"
#include "mpi_api/p2p.hpp"

namespace mpc::mpi {
namespace {

Datatype* type_of(MPI_Datatype t) {
    return datatype_lookup(t);
}

}  // namespace

int next_coll_tag(Comm* c) {
    return static_cast<int>(c->coll_sequence++ & 0x3fffffff);
}

void tree_reduce_and(const Team& t, uint64_t* words, int n, int root, int tag) {
    const int size = t.size;
    const int rel = (t.rank - root + size) % size;
    std::vector<uint64_t> tmp(static_cast<size_t>(n));
    Datatype* ty = type_of(MPI_UINT64_T);
    for (int mask = 1; mask < size; mask <<= 1) {
        if (rel & mask) {
            coll_send(t.comm, words, n, ty, t.comm_rank((rel - mask + root) % size), tag);
            return;
        }
        if (rel + mask < size) {
            coll_recv(t.comm, tmp.data(), n, ty, t.comm_rank((rel + mask + root) % size), tag);
            for (int i = 0; i < n; ++i) words[i] &= tmp[static_cast<size_t>(i)];
        }
    }
}

void tree_bcast(const Team& t, void* buf, size_t bytes, int root, int tag) {
    const int size = t.size;
    const int rel = (t.rank - root + size) % size;
    Datatype* ty = type_of(MPI_BYTE);
    const int count = static_cast<int>(bytes);
    int mask = 1;
    while (mask < size) {
        if (rel & mask) {
            coll_recv(t.comm, buf, count, ty, t.comm_rank((rel - mask + root) % size), tag);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < size)
            coll_send(t.comm, buf, count, ty, t.comm_rank((rel + mask + root) % size), tag);
}

void allgather_ints(const Team& t, const int* mine, int n, int* all, int tag) {
    Datatype* ty = type_of(MPI_INT);
    const size_t un = static_cast<size_t>(n);
    if (t.rank == 0) {
        memcpy(all, mine, un * sizeof(int));
        for (int r = 1; r < t.size; ++r)
            coll_recv(t.comm, all + un * static_cast<size_t>(r), n, ty, t.comm_rank(r), tag);
    } else {
        coll_send(t.comm, mine, n, ty, t.comm_rank(0), tag);
    }
    tree_bcast(t, all, un * static_cast<size_t>(t.size) * sizeof(int), 0, tag);
}

void alltoall_int_vectors(const Team& t, const std::vector<std::vector<int>>& out,
                          std::vector<std::vector<int>>& in, int tag) {
    const int n = t.size, me = t.rank;
    Datatype* ty = type_of(MPI_INT);
    in.assign(static_cast<size_t>(n), {});
    in[static_cast<size_t>(me)] = out[static_cast<size_t>(me)];
    // Step k pairs every rank with the ranks k ahead and k behind: one message
    // each way per pair, counts first.
    for (int k = 1; k < n; ++k) {
        const int dst = (me + k) % n, src = (me - k + n) % n;
        const std::vector<int>& o = out[static_cast<size_t>(dst)];
        int scount = static_cast<int>(o.size()), rcount = 0;
        coll_sendrecv(t.comm, &scount, 1, ty, t.comm_rank(dst), &rcount, 1, ty, t.comm_rank(src),
                      tag);
        std::vector<int>& i = in[static_cast<size_t>(src)];
        i.resize(static_cast<size_t>(rcount));
        coll_sendrecv(t.comm, o.data(), scount, ty, t.comm_rank(dst), i.data(), rcount, ty,
                      t.comm_rank(src), tag);
    }
}

}  // namespace mpc::mpi
