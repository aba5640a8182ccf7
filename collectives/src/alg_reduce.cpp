// Reduce, Reduce_scatter, Reduce_scatter_block and Reduce_local (tuning.hpp).
#include <algorithm>

#include "builders.hpp"

namespace mpc::coll {
namespace {

std::vector<Chunk> even_chunks(int count, int n) {
    std::vector<Chunk> chunks(static_cast<size_t>(n));
    for (int j = 0; j < n; ++j) chunks[static_cast<size_t>(j)] = chunk_of(j, count, n);
    return chunks;
}

// Commutative, large: ring reduce-scatter, then every chunk straight to the
// root (its receives posted at the start).
void reduce_ring(Schedule& s, RedLayout& L, const void* sendbuf, void* recvbuf, int root) {
    Comm* c = s.comm();
    const int n = c->size, me = c->rank;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    Step ready;
    char* mine = L.input(in_place ? recvbuf : sendbuf, &ready);
    const std::vector<Chunk> chunks = even_chunks(L.count(), n);
    char* final_buf = me == root ? L.direct(recvbuf) : nullptr;
    const bool aliased = in_place && final_buf;  // mine is the root's receive buffer
    RingResult rr =
        ring_reduce_scatter(L, mine, ready, chunks, final_buf && !aliased ? final_buf : nullptr, c);
    const Chunk own = chunks[static_cast<size_t>(me)];
    if (me != root) {
        L.send(rr.result, own.first, own.n, root, {rr.done});
        return;
    }
    char* target = final_buf ? final_buf : L.alloc(L.count());
    std::vector<Step> got;
    for (int j = 0; j < n; ++j) {
        const Chunk ch = chunks[static_cast<size_t>(j)];
        if (j == me || ch.n == 0) continue;
        got.push_back(L.recv(target, ch.first, ch.n, j,
                             {aliased ? rr.reads[static_cast<size_t>(j)] : kNone}));
    }
    got.push_back(rr.result == target ? rr.done
                                      : L.copy(rr.result, target, own.first, own.n, {rr.done}));
    if (!final_buf) L.store(target, recvbuf, {join_all(s, got)});
}

// Binomial: rooted at the root for commutative operations; in rank order to
// rank 0, then to the root, for the others.
void reduce_binomial(Schedule& s, RedLayout& L, const void* sendbuf, void* recvbuf, int root) {
    Comm* c = s.comm();
    const int me = c->rank;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const int tree_root = L.op()->commutative ? root : 0;
    Step ready;
    char* mine = L.input(in_place ? recvbuf : sendbuf, &ready);
    char* final_buf = me == root ? L.direct(recvbuf) : nullptr;
    char* into = me == tree_root && final_buf && !in_place ? final_buf : nullptr;
    TreeResult t = binomial_reduce(L, mine, ready, into, tree_root, c);
    if (me == tree_root && tree_root == root) {
        if (t.result != final_buf) L.store(t.result, recvbuf, {t.done});
    } else if (me == tree_root) {
        L.send(t.result, 0, L.count(), root, {t.done});
    } else if (me == root) {
        // Rank 0's working layout carries the same signature as the user's.
        s.recv(recvbuf, L.count(), L.type(), tree_root, {in_place ? t.done : kNone});
    }
}

// Ring reduce-scatter where chunk j is the block of rank j (commutative).
void reduce_scatter_ring(Schedule& s, RedLayout& L, const void* sendbuf, void* recvbuf,
                         const std::vector<Chunk>& chunks) {
    Comm* c = s.comm();
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const Chunk own = chunks[static_cast<size_t>(c->rank)];
    Step ready;
    char* mine = L.input(in_place ? recvbuf : sendbuf, &ready);
    char* final_buf = in_place ? nullptr : L.direct(recvbuf);
    char* last = final_buf ? L.shift(final_buf, own.first) : nullptr;
    RingResult rr = ring_reduce_scatter(L, mine, ready, chunks, last, c);
    if (last) return;
    // In place, recvbuf's first elements are also my input: wait for every read.
    std::vector<Step> reads = rr.reads;
    reads.push_back(rr.done);
    if (own.n) L.store_range(rr.result, own.first, own.n, recvbuf, {join_all(s, reads)});
}

// Ordered reduce to rank 0, which sends every rank its block.
void reduce_scatter_tree(Schedule& s, RedLayout& L, const void* sendbuf, void* recvbuf,
                         const std::vector<Chunk>& chunks) {
    Comm* c = s.comm();
    const int me = c->rank;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    Step ready;
    char* mine = L.input(in_place ? recvbuf : sendbuf, &ready);
    TreeResult t = binomial_reduce(L, mine, ready, nullptr, 0, c);
    const Chunk own = chunks[static_cast<size_t>(me)];
    if (me != 0) {
        if (own.n) s.recv(recvbuf, own.n, L.type(), 0, {in_place ? t.done : kNone});
        return;
    }
    for (int j = 1; j < c->size; ++j) {
        const Chunk ch = chunks[static_cast<size_t>(j)];
        if (ch.n) L.send(t.result, ch.first, ch.n, j, {t.done});
    }
    if (own.n) L.store_range(t.result, own.first, own.n, recvbuf, {t.done});
}

SchedulePtr reduce_scatter(const void* sendbuf, void* recvbuf, const std::vector<Chunk>& chunks,
                           Datatype* type, const Op* op, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    const int total = chunks.back().first + chunks.back().n;
    const size_t bytes = data_bytes(total, type);
    if (bytes == 0) return s;
    if (c->size == 1) {
        if (sendbuf != MPI_IN_PLACE) s->copy(sendbuf, total, type, recvbuf, total, type);
        return s;
    }
    RedLayout L(*s, total, type, op);
    if (op->commutative && bytes >= tuning::kReduceScatterRingMin)
        reduce_scatter_ring(*s, L, sendbuf, recvbuf, chunks);
    else
        reduce_scatter_tree(*s, L, sendbuf, recvbuf, chunks);
    return s;
}

}  // namespace

SchedulePtr make_reduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op,
                        int root, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    const size_t bytes = data_bytes(count, type);
    if (bytes == 0) return s;
    if (c->size == 1) {
        if (sendbuf != MPI_IN_PLACE) s->copy(sendbuf, count, type, recvbuf, count, type);
        return s;
    }
    RedLayout L(*s, count, type, op);
    if (op->commutative && bytes >= tuning::kReduceRingMin && count >= c->size)
        reduce_ring(*s, L, sendbuf, recvbuf, root);
    else
        reduce_binomial(*s, L, sendbuf, recvbuf, root);
    return s;
}

SchedulePtr make_reduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts,
                                Datatype* type, const Op* op, Comm* c) {
    std::vector<Chunk> chunks(static_cast<size_t>(c->size));
    int first = 0;
    for (int j = 0; j < c->size; ++j) {
        chunks[static_cast<size_t>(j)] = {first, recvcounts[j]};
        first += recvcounts[j];
    }
    return reduce_scatter(sendbuf, recvbuf, chunks, type, op, c);
}

SchedulePtr make_reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                      Datatype* type, const Op* op, Comm* c) {
    std::vector<Chunk> chunks(static_cast<size_t>(c->size));
    for (int j = 0; j < c->size; ++j) chunks[static_cast<size_t>(j)] = {j * recvcount, recvcount};
    return reduce_scatter(sendbuf, recvbuf, chunks, type, op, c);
}

void reduce_local(const void* in, void* inout, int count, Datatype* type, const Op* op) {
    if (count == 0) return;
    if (op->is_user()) {
        mpi::op_apply(*op, in, inout, static_cast<size_t>(count), *type);
        return;
    }
    if (type->contiguous) {
        mpi::op_apply(*op, at(in, type->true_lb), at(inout, type->true_lb),
                      static_cast<size_t>(count), *type);
        return;
    }
    // Predefined operations combine packed streams.
    const size_t bytes = data_bytes(count, type);
    std::vector<char> a(bytes), b(bytes);
    mpi::pack(in, static_cast<size_t>(count), *type, 0, a.data(), bytes);
    mpi::pack(inout, static_cast<size_t>(count), *type, 0, b.data(), bytes);
    mpi::op_apply(*op, a.data(), b.data(), static_cast<size_t>(count), *type);
    mpi::unpack(inout, static_cast<size_t>(count), *type, 0, b.data(), bytes);
}

}  // namespace mpc::coll
