// Scan and Exscan: recursive doubling in rank order (tuning.hpp).
//
// Round k pairs rank me with me ^ 2^k. Both send their partial result (the
// reduction of their group of 2^k ranks); the one above adds the lower
// group's on the left of its result and of its partial, the one below adds
// the upper group's on the right of its partial only. Operands therefore
// always combine in rank order. Every round receives into its own buffer, so
// every receive is posted at the start.
#include "builders.hpp"

namespace mpc::coll {
namespace {

SchedulePtr scan(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op,
                 Comm* c, bool exclusive) {
    auto s = std::make_unique<Schedule>(c);
    const int n = c->size, me = c->rank;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (data_bytes(count, type) == 0) return s;
    if (n == 1) {
        if (!exclusive && !in_place) s->copy(sendbuf, count, type, recvbuf, count, type);
        return s;
    }
    RedLayout L(*s, count, type, op);
    char* final_buf = L.direct(recvbuf);
    // The partial result (my group's reduction) and the result proper.
    char* partial;
    Step partial_ready;
    bool partial_writable;
    char* result = final_buf ? final_buf : L.alloc(count);
    Step result_ready = kNone;
    if (in_place) {
        // My input is the receive buffer, which the result overwrites: copy it.
        partial = L.alloc(count);
        partial_ready = L.load(recvbuf, partial, {});
        partial_writable = true;
        result_ready = partial_ready;
        if (!exclusive && !final_buf)
            result_ready = s->join({partial_ready, L.load(recvbuf, result, {})});
    } else {
        partial = L.input(sendbuf, &partial_ready);
        partial_writable = partial_ready != kNone;
        if (!exclusive)
            result_ready = final_buf ? s->copy(sendbuf, count, type, recvbuf, count, type)
                                     : L.load(sendbuf, result, {});
    }
    bool have_result = !exclusive;
    auto partial_needed_after = [&](int mask) {
        for (int m = mask << 1; m < n; m <<= 1)
            if ((me ^ m) < n) return true;
        return false;
    };
    for (int mask = 1; mask < n; mask <<= 1) {
        const int partner = me ^ mask;
        if (partner >= n) continue;
        char* tmp = L.alloc(count);
        Step got = L.recv(tmp, 0, count, partner, {});
        Step sent = L.send(partial, 0, count, partner, {partial_ready});
        const bool keep_partial = partial_needed_after(mask);
        if (partner < me) {
            if (have_result) {
                result_ready = L.calc(tmp, result, 0, count, {got, result_ready});
            } else {
                result_ready = L.copy(tmp, result, 0, count, {got, result_ready});
                have_result = true;
            }
            if (keep_partial) {
                if (!partial_writable) {
                    char* w = L.alloc(count);
                    partial_ready = L.copy(partial, w, 0, count, {partial_ready});
                    partial = w;
                    partial_writable = true;
                }
                partial_ready = L.calc(tmp, partial, 0, count, {got, partial_ready, sent});
            }
        } else if (keep_partial) {
            partial_ready = L.calc(partial, tmp, 0, count, {got, partial_ready});
            partial = tmp;
            partial_writable = true;
        }
    }
    if (have_result && result != final_buf) L.store(result, recvbuf, {result_ready});
    return s;
}

}  // namespace

SchedulePtr make_scan(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op,
                      Comm* c) {
    return scan(sendbuf, recvbuf, count, type, op, c, false);
}

SchedulePtr make_exscan(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op,
                        Comm* c) {
    return scan(sendbuf, recvbuf, count, type, op, c, true);
}

}  // namespace mpc::coll
