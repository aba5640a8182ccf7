// Broadcast: binomial tree, or scatter + ring allgather (tuning.hpp).
#include <algorithm>

#include "builders.hpp"

namespace mpc::coll {
namespace {

// Receive from the parent, then send to the children, largest subtree first.
Step bcast_binomial(Schedule& s, void* buf, int count, Datatype* type, int root, Step after) {
    Comm* c = s.comm();
    const int n = c->size;
    const int rel = (c->rank - root + n) % n;
    Step have = after;
    if (rel != 0) have = s.recv(buf, count, type, real_rank(rel - lowbit(rel), root, n), {after});
    const int top = rel == 0 ? floor_pof2(n - 1) : lowbit(rel) / 2;
    for (int mask = top; mask > 0; mask >>= 1)
        if (rel + mask < n) s.send(buf, count, type, real_rank(rel + mask, root, n), {have});
    return rel == 0 ? after : have;
}

// van de Geijn: the packed data is cut into n chunks (chunk j for relative
// rank j); a binomial scatter gives each rank the chunks of its subtree, then
// a ring passes every chunk around. A rank never receives a chunk it already
// holds from the scatter (both ends know which those are), so the ring's
// receives can all be posted at the start without racing the scatter.
Step bcast_scatter_allgather(Schedule& s, void* buf, int count, Datatype* type, int root,
                             Step after) {
    Comm* c = s.comm();
    const int n = c->size;
    const int rel = (c->rank - root + n) % n;
    const size_t bytes = data_bytes(count, type);
    Datatype* bt = byte_type();
    char* data;
    Step ready = after;
    if (type->contiguous) {
        data = at(buf, type->true_lb);
    } else {
        data = s.scratch(bytes);
        if (rel == 0) ready = s.copy(buf, count, type, data, as_count(bytes), bt, {after});
    }
    const size_t cs = (bytes + static_cast<size_t>(n) - 1) / static_cast<size_t>(n);
    // Byte range of chunks [a, a+k).
    auto lo = [&](int a) { return std::min(static_cast<size_t>(a) * cs, bytes); };
    auto has = [&](int x, int j) { return j >= x && j < x + subtree_size(x, n); };
    std::vector<Step> got;

    // Scatter: my subtree's chunks from my parent, then my children's parts.
    Step mine = ready;
    if (rel != 0) {
        const size_t a = lo(rel), b = lo(rel + subtree_size(rel, n));
        mine = kNone;
        if (b > a) {
            mine = s.recv(data + a, as_count(b - a), bt, real_rank(rel - lowbit(rel), root, n),
                          {after});
            got.push_back(mine);
        }
    }
    const int top = rel == 0 ? floor_pof2(n - 1) : lowbit(rel) / 2;
    for (int mask = top; mask > 0; mask >>= 1) {
        const int child = rel + mask;
        if (child >= n) continue;
        const size_t a = lo(child), b = lo(child + subtree_size(child, n));
        if (b > a) s.send(data + a, as_count(b - a), bt, real_rank(child, root, n), {mine});
    }

    // Ring: at step k, chunk rel-k goes right and chunk rel-k-1 comes from the left.
    const int right = (rel + 1) % n, left = (rel - 1 + n) % n;
    Step prev_recv = kNone;
    for (int k = 0; k + 1 < n; ++k) {
        const int js = ((rel - k) % n + n) % n;
        if (!has(right, js) && lo(js + 1) > lo(js))
            s.send(data + lo(js), as_count(lo(js + 1) - lo(js)), bt, real_rank(right, root, n),
                   {has(rel, js) ? mine : prev_recv});
        const int jr = ((rel - k - 1) % n + n) % n;
        prev_recv = kNone;
        if (!has(rel, jr) && lo(jr + 1) > lo(jr)) {
            prev_recv = s.recv(data + lo(jr), as_count(lo(jr + 1) - lo(jr)), bt,
                               real_rank(left, root, n), {after});
            got.push_back(prev_recv);
        }
    }
    if (rel == 0) return after;
    Step all = join_all(s, got);
    if (type->contiguous) return all;
    return s.copy(data, as_count(bytes), bt, buf, count, type, {all});
}

}  // namespace

Step add_bcast(Schedule& s, void* buf, int count, Datatype* type, int root, Step after) {
    const size_t bytes = data_bytes(count, type);
    if (s.comm()->size == 1 || bytes == 0) return after;
    if (bytes >= tuning::kBcastLongMin && s.comm()->size >= tuning::kBcastMinRanks &&
        fits_int(bytes))
        return bcast_scatter_allgather(s, buf, count, type, root, after);
    return bcast_binomial(s, buf, count, type, root, after);
}

SchedulePtr make_bcast(void* buf, int count, Datatype* type, int root, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    add_bcast(*s, buf, count, type, root, kNone);
    return s;
}

}  // namespace mpc::coll
