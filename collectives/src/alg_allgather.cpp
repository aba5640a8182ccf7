// Allgather and Allgatherv: recursive doubling, Bruck, ring (tuning.hpp).
#include <algorithm>

#include "builders.hpp"

namespace mpc::coll {
namespace {

// One rank's block in the receive buffer.
struct Slot {
    char* buf;
    int count;
    size_t bytes;
};

// Round k exchanges the 2^k blocks gathered so far with rank me ^ 2^k, in
// place in the receive buffer (consecutive blocks are consecutive elements).
// Every receive is posted at the start; a send waits for the blocks it carries.
void allgather_doubling(Schedule& s, const void* sendbuf, int scount, Datatype* stype,
                        void* recvbuf, int rcount, Datatype* rtype, Step own) {
    Comm* c = s.comm();
    const int n = c->size, me = c->rank;
    Step have = own;
    for (int mask = 1; mask < n; mask <<= 1) {
        const int partner = me ^ mask;
        const int mine = me & ~(mask - 1), theirs = partner & ~(mask - 1);
        Step got = s.recv(block_at(recvbuf, theirs, rcount, rtype), mask * rcount, rtype, partner);
        if (mask == 1 && sendbuf != MPI_IN_PLACE)
            s.send(sendbuf, scount, stype, partner);
        else
            s.send(block_at(recvbuf, mine, rcount, rtype), mask * rcount, rtype, partner, {have});
        have = s.join({have, got});
    }
}

// Bruck: blocks gathered in relative order (position i holds rank me+i) in a
// packed scratch; at step k the first min(2^k, n-2^k) blocks go to me-2^k and
// as many arrive from me+2^k at position 2^k. Any n, ceil(log2 n) steps.
// `slot(j)` describes rank j's block; my block is at position 0 after `own`.
template <class SlotOf>
void allgather_bruck(Schedule& s, SlotOf&& slot, Datatype* rtype, const void* mine_buf,
                     int mine_count, Datatype* mine_type) {
    Comm* c = s.comm();
    const int n = c->size, me = c->rank;
    Datatype* bt = byte_type();
    std::vector<size_t> off(static_cast<size_t>(n) + 1, 0);
    for (int i = 0; i < n; ++i)
        off[static_cast<size_t>(i) + 1] = off[static_cast<size_t>(i)] + slot((me + i) % n).bytes;
    char* data = s.scratch(off.back());
    const size_t mine_bytes = off[1];
    Step have = mine_bytes ? s.copy(mine_buf, mine_count, mine_type, data, as_count(mine_bytes), bt)
                           : kNone;
    std::vector<Step> got;
    for (int dist = 1; dist < n; dist <<= 1) {
        const size_t cnt = static_cast<size_t>(std::min(dist, n - dist));
        const size_t d = static_cast<size_t>(dist);
        Step r = kNone;
        if (off[d + cnt] > off[d]) {
            r = s.recv(data + off[d], as_count(off[d + cnt] - off[d]), bt, (me + dist) % n);
            got.push_back(r);
        }
        if (off[cnt] > 0) s.send(data, as_count(off[cnt]), bt, (me - dist + n) % n, {have});
        have = join_all(s, {have, r});
    }
    const Step all = join_all(s, got);
    for (int i = 1; i < n; ++i) {
        const Slot b = slot((me + i) % n);
        if (b.bytes)
            s.copy(data + off[static_cast<size_t>(i)], as_count(b.bytes), bt, b.buf, b.count, rtype,
                   {all});
    }
}

// Ring: at step k, block me-k goes right and block me-k-1 comes from the left,
// straight into its place; every receive is posted at the start.
template <class SlotOf>
void allgather_ring(Schedule& s, SlotOf&& slot, Datatype* rtype, const void* sendbuf, int scount,
                    Datatype* stype) {
    Comm* c = s.comm();
    const int n = c->size, me = c->rank;
    const int right = (me + 1) % n, left = (me - 1 + n) % n;
    Step prev = kNone;
    for (int k = 0; k + 1 < n; ++k) {
        const Slot out = slot(((me - k) % n + n) % n);
        if (out.bytes) {
            if (k == 0 && sendbuf != MPI_IN_PLACE)
                s.send(sendbuf, scount, stype, right);
            else
                s.send(out.buf, out.count, rtype, right, {prev});
        }
        const Slot in = slot(((me - k - 1) % n + n) % n);
        prev = in.bytes ? s.recv(in.buf, in.count, rtype, left) : kNone;
    }
}

}  // namespace

SchedulePtr make_allgather(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                           int recvcount, Datatype* recvtype, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    const int n = c->size, me = c->rank;
    const size_t block = data_bytes(recvcount, recvtype);
    if (block == 0) return s;
    char* my_slot = block_at(recvbuf, me, recvcount, recvtype);
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const Step own =
        in_place ? kNone : s->copy(sendbuf, sendcount, sendtype, my_slot, recvcount, recvtype);
    if (n == 1) return s;
    auto slot = [&](int j) {
        return Slot{block_at(recvbuf, j, recvcount, recvtype), recvcount, block};
    };
    const size_t total = block * static_cast<size_t>(n);
    if (total < tuning::kAllgatherLongMin && is_pof2(n))
        allgather_doubling(*s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, own);
    else if (total < tuning::kAllgatherShortMax)
        allgather_bruck(*s, slot, recvtype, in_place ? my_slot : sendbuf,
                        in_place ? recvcount : sendcount, in_place ? recvtype : sendtype);
    else
        allgather_ring(*s, slot, recvtype, sendbuf, sendcount, sendtype);
    return s;
}

SchedulePtr make_allgatherv(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                            const int* recvcounts, const int* displs, Datatype* recvtype, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    const int n = c->size, me = c->rank;
    auto slot = [&](int j) {
        return Slot{at(recvbuf, displs[j] * recvtype->extent), recvcounts[j],
                    data_bytes(recvcounts[j], recvtype)};
    };
    const Slot mine = slot(me);
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (!in_place && mine.bytes)
        s->copy(sendbuf, sendcount, sendtype, mine.buf, mine.count, recvtype);
    size_t total = 0;
    for (int j = 0; j < n; ++j) total += slot(j).bytes;
    if (n == 1 || total == 0) return s;
    if (total < tuning::kAllgatherShortMax)
        allgather_bruck(*s, slot, recvtype, in_place ? mine.buf : sendbuf,
                        in_place ? mine.count : sendcount, in_place ? recvtype : sendtype);
    else
        allgather_ring(*s, slot, recvtype, sendbuf, sendcount, sendtype);
    return s;
}

}  // namespace mpc::coll
