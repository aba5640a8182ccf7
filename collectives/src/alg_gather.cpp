// Gather, Gatherv, Scatter, Scatterv (tuning.hpp).
//
// The binomial trees run over ranks relative to the root; subtree [rel,
// rel+k) of relative ranks is one run of packed blocks in a non-root's
// scratch. At the root the run may wrap past the last rank of the user's
// buffer, so a child of the root sends (or receives) it as two messages, split
// where both ends compute it.
#include <algorithm>

#include "builders.hpp"

namespace mpc::coll {
namespace {

// The real ranks of relative subtree [rel, rel+len) as at most two runs of
// consecutive ranks: [start, start+first) and [0, len-first).
struct Runs {
    int start, first, second;
};
Runs runs_of(int rel, int len, int root, int n) {
    const int start = real_rank(rel, root, n);
    const int first = std::min(len, n - start);
    return {start, first, len - first};
}

void gather_binomial(Schedule& s, const void* sendbuf, int scount, Datatype* stype, void* recvbuf,
                     int rcount, Datatype* rtype, int root, size_t block) {
    Comm* c = s.comm();
    const int n = c->size;
    const int rel = (c->rank - root + n) % n;
    Datatype* bt = byte_type();
    if (rel == 0) {
        for (int mask = 1; mask < n; mask <<= 1) {
            const Runs runs = runs_of(mask, subtree_size(mask, n), root, n);
            const int child = real_rank(mask, root, n);
            s.recv(block_at(recvbuf, runs.start, rcount, rtype), runs.first * rcount, rtype, child);
            if (runs.second > 0) s.recv(recvbuf, runs.second * rcount, rtype, child);
        }
        if (sendbuf != MPI_IN_PLACE)
            s.copy(sendbuf, scount, stype, block_at(recvbuf, root, rcount, rtype), rcount, rtype);
        return;
    }
    const int sub = subtree_size(rel, n);
    const int parent = real_rank(rel - lowbit(rel), root, n);
    if (sub == 1) {
        s.send(sendbuf, scount, stype, parent);
        return;
    }
    // My subtree's blocks, packed in relative order, mine first.
    char* data = s.scratch(block * static_cast<size_t>(sub));
    std::vector<Step> have{s.copy(sendbuf, scount, stype, data, as_count(block), bt)};
    for (int mask = 1; mask < lowbit(rel) && rel + mask < n; mask <<= 1) {
        const int len = subtree_size(rel + mask, n);
        have.push_back(s.recv(data + block * static_cast<size_t>(mask),
                              as_count(block * static_cast<size_t>(len)), bt,
                              real_rank(rel + mask, root, n)));
    }
    const Step all = join_all(s, have);
    if (rel - lowbit(rel) != 0) {
        s.send(data, as_count(block * static_cast<size_t>(sub)), bt, parent, {all});
        return;
    }
    const Runs runs = runs_of(rel, sub, root, n);
    s.send(data, as_count(block * static_cast<size_t>(runs.first)), bt, parent, {all});
    if (runs.second > 0)
        s.send(data + block * static_cast<size_t>(runs.first),
               as_count(block * static_cast<size_t>(runs.second)), bt, parent, {all});
}

void scatter_binomial(Schedule& s, const void* sendbuf, int scount, Datatype* stype, void* recvbuf,
                      int rcount, Datatype* rtype, int root, size_t block) {
    Comm* c = s.comm();
    const int n = c->size;
    const int rel = (c->rank - root + n) % n;
    Datatype* bt = byte_type();
    if (rel == 0) {
        for (int mask = floor_pof2(n - 1); mask > 0; mask >>= 1) {
            const Runs runs = runs_of(mask, subtree_size(mask, n), root, n);
            const int child = real_rank(mask, root, n);
            s.send(block_at(sendbuf, runs.start, scount, stype), runs.first * scount, stype, child);
            if (runs.second > 0) s.send(sendbuf, runs.second * scount, stype, child);
        }
        if (recvbuf != MPI_IN_PLACE)
            s.copy(block_at(sendbuf, root, scount, stype), scount, stype, recvbuf, rcount, rtype);
        return;
    }
    const int sub = subtree_size(rel, n);
    const int parent = real_rank(rel - lowbit(rel), root, n);
    if (sub == 1) {
        s.recv(recvbuf, rcount, rtype, parent);
        return;
    }
    char* data = s.scratch(block * static_cast<size_t>(sub));
    Step got;
    if (rel - lowbit(rel) != 0) {
        got = s.recv(data, as_count(block * static_cast<size_t>(sub)), bt, parent);
    } else {
        const Runs runs = runs_of(rel, sub, root, n);
        got = s.recv(data, as_count(block * static_cast<size_t>(runs.first)), bt, parent);
        if (runs.second > 0) {
            Step second = s.recv(data + block * static_cast<size_t>(runs.first),
                                 as_count(block * static_cast<size_t>(runs.second)), bt, parent);
            got = s.join({got, second});
        }
    }
    s.copy(data, as_count(block), bt, recvbuf, rcount, rtype, {got});
    for (int mask = lowbit(rel) / 2; mask > 0; mask >>= 1) {
        const int child = rel + mask;
        if (child >= n) continue;
        s.send(data + block * static_cast<size_t>(mask),
               as_count(block * static_cast<size_t>(subtree_size(child, n))), bt,
               real_rank(child, root, n), {got});
    }
}

bool use_binomial(size_t block, int n) {
    return n > 2 && block < tuning::kGatherBinomialMaxBlock &&
           fits_int(block * static_cast<size_t>(n));
}

}  // namespace

SchedulePtr make_gather(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                        int recvcount, Datatype* recvtype, int root, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    const bool is_root = c->rank == root;
    const size_t block =
        is_root ? data_bytes(recvcount, recvtype) : data_bytes(sendcount, sendtype);
    if (block == 0) return s;
    if (use_binomial(block, c->size)) {
        gather_binomial(*s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                        block);
        return s;
    }
    if (!is_root) {
        s->send(sendbuf, sendcount, sendtype, root);
        return s;
    }
    for (int r = 0; r < c->size; ++r)
        if (r != root) s->recv(block_at(recvbuf, r, recvcount, recvtype), recvcount, recvtype, r);
    if (sendbuf != MPI_IN_PLACE)
        s->copy(sendbuf, sendcount, sendtype, block_at(recvbuf, root, recvcount, recvtype),
                recvcount, recvtype);
    return s;
}

SchedulePtr make_gatherv(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                         const int* recvcounts, const int* displs, Datatype* recvtype, int root,
                         Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    if (c->rank != root) {
        if (data_bytes(sendcount, sendtype) > 0) s->send(sendbuf, sendcount, sendtype, root);
        return s;
    }
    for (int r = 0; r < c->size; ++r) {
        if (r == root || data_bytes(recvcounts[r], recvtype) == 0) continue;
        s->recv(at(recvbuf, displs[r] * recvtype->extent), recvcounts[r], recvtype, r);
    }
    if (sendbuf != MPI_IN_PLACE && data_bytes(sendcount, sendtype) > 0)
        s->copy(sendbuf, sendcount, sendtype, at(recvbuf, displs[root] * recvtype->extent),
                recvcounts[root], recvtype);
    return s;
}

SchedulePtr make_scatter(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                         int recvcount, Datatype* recvtype, int root, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    const bool is_root = c->rank == root;
    const size_t block =
        is_root ? data_bytes(sendcount, sendtype) : data_bytes(recvcount, recvtype);
    if (block == 0) return s;
    if (use_binomial(block, c->size)) {
        scatter_binomial(*s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                         block);
        return s;
    }
    if (!is_root) {
        s->recv(recvbuf, recvcount, recvtype, root);
        return s;
    }
    // Pairwise order from the root, so that the first ranks served are not
    // always the same.
    for (int k = 1; k < c->size; ++k) {
        const int r = (root + k) % c->size;
        s->send(block_at(sendbuf, r, sendcount, sendtype), sendcount, sendtype, r);
    }
    if (recvbuf != MPI_IN_PLACE)
        s->copy(block_at(sendbuf, root, sendcount, sendtype), sendcount, sendtype, recvbuf,
                recvcount, recvtype);
    return s;
}

SchedulePtr make_scatterv(const void* sendbuf, const int* sendcounts, const int* displs,
                          Datatype* sendtype, void* recvbuf, int recvcount, Datatype* recvtype,
                          int root, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    if (c->rank != root) {
        if (data_bytes(recvcount, recvtype) > 0) s->recv(recvbuf, recvcount, recvtype, root);
        return s;
    }
    for (int k = 1; k < c->size; ++k) {
        const int r = (root + k) % c->size;
        if (data_bytes(sendcounts[r], sendtype) == 0) continue;
        s->send(at(sendbuf, displs[r] * sendtype->extent), sendcounts[r], sendtype, r);
    }
    if (recvbuf != MPI_IN_PLACE && data_bytes(sendcounts[root], sendtype) > 0)
        s->copy(at(sendbuf, displs[root] * sendtype->extent), sendcounts[root], sendtype, recvbuf,
                recvcount, recvtype);
    return s;
}

}  // namespace mpc::coll
