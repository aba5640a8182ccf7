// Allreduce: recursive doubling, ring, or ordered reduce + broadcast
// (tuning.hpp).
#include "builders.hpp"

namespace mpc::coll {
namespace {

// The caller's running partial result during recursive doubling.
struct Partial {
    char* buf;
    Step ready;
    bool writable;  // scratch, or the user's receive buffer (MPI_IN_PLACE)
};

// Recursive doubling. With n = 2^k + rem, ranks 2i and 2i+1 (i < rem) first
// combine, and the odd one stands for both; the 2^k remaining ranks exchange
// partial results with partners at distance 1, 2, 4, ... of their new rank.
// Operands always combine lower ranks on the left, so every rank computes the
// same rank-ordered expression (exact for non-commutative operations, and
// identical on all ranks). Each round receives into its own buffer, so every
// receive is posted at the start; the result lands in the receive buffer
// directly when nothing else uses it.
void allreduce_doubling(Schedule& s, RedLayout& L, const void* sendbuf, void* recvbuf) {
    Comm* c = s.comm();
    const int n = c->size, me = c->rank;
    const int count = L.count();
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const bool commutative = L.op()->commutative;
    const int p = floor_pof2(n), rem = n - p;
    char* final_buf = L.direct(recvbuf);
    Partial cur;
    cur.buf = L.input(in_place ? recvbuf : sendbuf, &cur.ready);
    cur.writable = cur.ready != kNone || in_place;
    // In place, the receive buffer is my input: the final copy into it must
    // wait for the sends that read it.
    std::vector<Step> reads_of_final;
    auto send_cur = [&](int peer) {
        Step sent = L.send(cur.buf, 0, count, peer, {cur.ready});
        if (cur.buf == final_buf) reads_of_final.push_back(sent);
        return sent;
    };
    auto make_writable = [&] {
        if (cur.writable) return;
        char* w = L.alloc(count);
        cur.ready = L.copy(cur.buf, w, 0, count, {cur.ready});
        cur.buf = w;
        cur.writable = true;
    };
    // other is the partner's partial result; lower: it covers lower ranks.
    auto combine = [&](char* other, Step got, bool lower, Step sent) {
        if (commutative || !lower) {
            // other = cur op other; it becomes the partial result.
            cur.ready = L.calc(cur.buf, other, 0, count, {got, cur.ready});
            cur.buf = other;
            cur.writable = true;
        } else {
            make_writable();
            cur.ready = L.calc(other, cur.buf, 0, count, {got, cur.ready, sent});
        }
    };

    int newrank;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            Step sent = send_cur(me + 1);
            s.recv(recvbuf, count, L.type(), me + 1, {in_place ? sent : kNone});
            return;
        }
        char* tmp = L.alloc(count);
        Step got = L.recv(tmp, 0, count, me - 1, {});
        combine(tmp, got, true, kNone);
        newrank = me / 2;
    } else {
        newrank = me - rem;
    }
    auto real = [&](int nr) { return nr < rem ? nr * 2 + 1 : nr + rem; };
    for (int mask = 1; mask < p; mask <<= 1) {
        const int partner = real(newrank ^ mask);
        const bool lower = partner < me;
        const bool into_result = commutative || !lower;
        // The last round's operand can land in the receive buffer itself.
        char* tmp =
            mask * 2 == p && into_result && final_buf && !in_place ? final_buf : L.alloc(count);
        Step got = L.recv(tmp, 0, count, partner, {});
        Step sent = send_cur(partner);
        combine(tmp, got, lower, sent);
    }
    if (me < 2 * rem) send_cur(me - 1);
    if (cur.buf == final_buf) return;
    reads_of_final.push_back(cur.ready);
    if (final_buf)
        L.copy(cur.buf, final_buf, 0, count, {join_all(s, reads_of_final)});
    else
        L.store(cur.buf, recvbuf, {join_all(s, reads_of_final)});
}

// Commutative, large: ring reduce-scatter then ring allgather, each chunk
// moving straight into its place in the result buffer.
void allreduce_ring(Schedule& s, RedLayout& L, const void* sendbuf, void* recvbuf) {
    Comm* c = s.comm();
    const int n = c->size, me = c->rank;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    Step ready;
    char* mine = L.input(in_place ? recvbuf : sendbuf, &ready);
    char* final_buf = L.direct(recvbuf);
    const bool aliased = in_place && final_buf;  // mine is the result buffer
    char* target = final_buf ? final_buf : L.alloc(L.count());
    std::vector<Chunk> chunks(static_cast<size_t>(n));
    for (int j = 0; j < n; ++j) chunks[static_cast<size_t>(j)] = chunk_of(j, L.count(), n);
    auto chunk = [&](int j) { return chunks[static_cast<size_t>((j % n + n) % n)]; };
    RingResult rr = ring_reduce_scatter(L, mine, ready, chunks, aliased ? nullptr : target, c);
    std::vector<Step> got;
    const Chunk own = chunk(me);
    got.push_back(rr.result == target ? rr.done
                                      : L.copy(rr.result, target, own.first, own.n, {rr.done}));
    const int right = (me + 1) % n, left = (me - 1 + n) % n;
    Step prev = kNone;
    for (int k = 0; k + 1 < n; ++k) {
        const Chunk out = chunk(me - k);
        if (out.n) {
            if (k == 0)
                L.send(rr.result, out.first, out.n, right, {rr.done});
            else
                L.send(target, out.first, out.n, right, {prev});
        }
        const int jr = ((me - k - 1) % n + n) % n;
        const Chunk in = chunk(jr);
        prev = kNone;
        if (in.n) {
            prev = L.recv(target, in.first, in.n, left,
                          {aliased ? rr.reads[static_cast<size_t>(jr)] : kNone});
            got.push_back(prev);
        }
    }
    if (!final_buf) L.store(target, recvbuf, {join_all(s, got)});
}

// Non-commutative, large: ordered binomial reduce to rank 0, then Bcast.
void allreduce_reduce_bcast(Schedule& s, RedLayout& L, const void* sendbuf, void* recvbuf) {
    Comm* c = s.comm();
    const bool in_place = sendbuf == MPI_IN_PLACE;
    Step ready;
    char* mine = L.input(in_place ? recvbuf : sendbuf, &ready);
    char* final_buf = L.direct(recvbuf);
    TreeResult t =
        binomial_reduce(L, mine, ready, final_buf && !in_place ? final_buf : nullptr, 0, c);
    Step after = in_place ? t.done : kNone;
    if (c->rank == 0) after = t.result == final_buf ? t.done : L.store(t.result, recvbuf, {t.done});
    add_bcast(s, recvbuf, L.count(), L.type(), 0, after);
}

}  // namespace

SchedulePtr make_allreduce(const void* sendbuf, void* recvbuf, int count, Datatype* type,
                           const Op* op, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    const size_t bytes = data_bytes(count, type);
    if (bytes == 0) return s;
    if (c->size == 1) {
        if (sendbuf != MPI_IN_PLACE) s->copy(sendbuf, count, type, recvbuf, count, type);
        return s;
    }
    RedLayout L(*s, count, type, op);
    if (bytes < tuning::kAllreduceRingMin || count < c->size)
        allreduce_doubling(*s, L, sendbuf, recvbuf);
    else if (op->commutative)
        allreduce_ring(*s, L, sendbuf, recvbuf);
    else
        allreduce_reduce_bcast(*s, L, sendbuf, recvbuf);
    return s;
}

}  // namespace mpc::coll
