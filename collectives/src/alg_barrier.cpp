// Barrier: dissemination (tuning.hpp).
#include "builders.hpp"

namespace mpc::coll {

// Round k: a zero-byte message to rank me + 2^k, sent once the messages of
// rounds 0..k-1 have arrived (then the caller knows that ranks me-2^k+1..me
// have entered). Every receive is posted at the start, so a rank that arrives
// late finds its messages already matched.
SchedulePtr make_barrier(Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    const int n = c->size, me = c->rank;
    Datatype* bt = byte_type();
    Step prev = kNone;
    for (int dist = 1; dist < n; dist <<= 1) {
        Step got = s->recv(nullptr, 0, bt, (me - dist + n) % n);
        s->send(nullptr, 0, bt, (me + dist) % n, {prev});
        prev = prev == kNone ? got : s->join({prev, got});
    }
    return s;
}

int barrier(Comm* c) {
    return run_blocking(make_barrier(c));
}

}  // namespace mpc::coll
