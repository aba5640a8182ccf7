// Helpers shared by the schedule builders (builders.hpp).
#include "builders.hpp"

#include <algorithm>

namespace mpc::coll {

Datatype* byte_type() {
    static Datatype* const t = mpi::datatype_lookup(MPI_BYTE);
    return t;
}

Step join_all(Schedule& s, const std::vector<Step>& steps) {
    Step only = kNone;
    int live = 0;
    for (Step x : steps)
        if (x >= 0) {
            only = x;
            ++live;
        }
    if (live <= 1) return only;
    Step j = s.join({});
    for (Step x : steps) s.depend(j, x);
    return j;
}

// ---- RedLayout --------------------------------------------------------------

RedLayout::RedLayout(Schedule& s, int count, Datatype* type, const Op* op)
    : s_(s), count_(count), type_(type), op_(op), typed_(op->is_user()) {
    if (typed_) {
        stride_ = type->extent;
        unit_ = type;
        units_per_elem_ = 1;
        return;
    }
    stride_ = static_cast<MPI_Aint>(type->size);
    Datatype* basic = mpi::datatype_lookup(type->basic);
    if (basic && basic->contiguous && basic->size > 0 &&
        basic->size * type->basic_count == type->size) {
        unit_ = basic;
        units_per_elem_ = static_cast<int>(type->basic_count);
    } else {
        unit_ = byte_type();
        units_per_elem_ = static_cast<int>(type->size);
    }
}

char* RedLayout::direct(const void* user) const {
    if (typed_) return at(user, 0);
    return type_->contiguous ? at(user, type_->true_lb) : nullptr;
}

char* RedLayout::alloc(int n) {
    if (!typed_) return s_.scratch(static_cast<size_t>(n) * type_->size);
    // Elements at extent strides, each spanning [true_lb, true_lb + true_extent).
    const MPI_Aint last = static_cast<MPI_Aint>(n > 0 ? n - 1 : 0) * type_->extent;
    const MPI_Aint lo = std::min<MPI_Aint>(0, last) + type_->true_lb;
    const MPI_Aint hi = std::max<MPI_Aint>(0, last) + type_->true_lb + type_->true_extent;
    return s_.scratch(static_cast<size_t>(hi - lo)) - lo;
}

char* RedLayout::input(const void* user, Step* ready, Deps deps) {
    if (char* d = direct(user)) {
        *ready = kNone;
        return d;
    }
    char* buf = alloc(count_);
    *ready = load(user, buf, deps);
    return buf;
}

Step RedLayout::send(const char* base, int first, int n, int peer, Deps deps) {
    return s_.send(elem(base, first), n * units_per_elem_, unit_, peer, deps);
}

Step RedLayout::recv(char* base, int first, int n, int peer, Deps deps) {
    return s_.recv(elem(base, first), n * units_per_elem_, unit_, peer, deps);
}

Step RedLayout::calc(const char* in, char* inout, int first, int n, Deps deps) {
    return s_.calc(op_, elem(in, first), elem(inout, first), n, type_, deps);
}

Step RedLayout::copy(const char* src, char* dst, int first, int n, Deps deps) {
    const int units = n * units_per_elem_;
    return s_.copy(elem(src, first), units, unit_, elem(dst, first), units, unit_, deps);
}

Step RedLayout::load(const void* user, char* dst, Deps deps) {
    return s_.copy(user, count_, type_, dst, count_ * units_per_elem_, unit_, deps);
}

Step RedLayout::store(const char* src, void* user, Deps deps) {
    return store_range(src, 0, count_, user, deps);
}

Step RedLayout::store_range(const char* src, int first, int n, void* user, Deps deps) {
    return s_.copy(elem(src, first), n * units_per_elem_, unit_, user, n, type_, deps);
}

// ---- Ring reduce-scatter ----------------------------------------------------

RingResult ring_reduce_scatter(RedLayout& L, const char* mine, Step mine_ready,
                               const std::vector<Chunk>& chunks, char* last, Comm* c) {
    const int n = c->size, r = c->rank;
    const int left = (r - 1 + n) % n, right = (r + 1) % n;
    auto chunk = [&](int j) { return chunks[static_cast<size_t>((j % n + n) % n)]; };
    RingResult out;
    out.reads.assign(static_cast<size_t>(n), kNone);
    // Partial results of the chunks passing through, each at its own place.
    char* partial = L.alloc(L.count());
    Step prev_calc = kNone;
    for (int k = 0; k + 1 < n; ++k) {
        // Send the chunk combined at the previous step (at step 0: mine).
        const int sj = ((r - k - 1) % n + n) % n;
        const Chunk sc = chunk(sj);
        if (sc.n > 0) {
            Step sent = k == 0 ? L.send(mine, sc.first, sc.n, right, {mine_ready})
                               : L.send(partial, sc.first, sc.n, right, {prev_calc});
            if (k == 0) out.reads[static_cast<size_t>(sj)] = sent;
        }
        // Receive the left neighbor's partial result of the next chunk and add mine.
        const int rj = ((r - k - 2) % n + n) % n;
        const Chunk rc = chunk(rj);
        char* into = k + 2 == n && last ? last : partial;
        prev_calc = kNone;
        if (rc.n > 0) {
            Step got = L.recv(into, rc.first, rc.n, left, {});
            prev_calc = L.calc(mine, into, rc.first, rc.n, {got, mine_ready});
            out.reads[static_cast<size_t>(rj)] = prev_calc;
        }
        if (k + 2 == n) {
            out.result = into;
            out.done = prev_calc;
        }
    }
    return out;
}

// ---- Binomial reduce ---------------------------------------------------------

TreeResult binomial_reduce(RedLayout& L, const char* mine, Step mine_ready, char* into, int root,
                           Comm* c) {
    const int n = c->size;
    const int rel = (c->rank - root + n) % n;
    const char* cur = mine;
    Step cur_ready = mine_ready;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (rel & mask) {
            const int parent = real_rank(rel - mask, root, n);
            return {nullptr, L.send(cur, 0, L.count(), parent, {cur_ready})};
        }
        if (rel + mask >= n) continue;
        // The child's partial result (ranks [rel+mask, rel+2*mask)) goes on the
        // right: tmp = cur op tmp. The root's last level lands in `into`.
        const bool last_level = rel == 0 && mask * 2 >= n;
        char* tmp = last_level && into ? into : L.alloc(L.count());
        Step got = L.recv(tmp, 0, L.count(), real_rank(rel + mask, root, n), {});
        cur_ready = L.calc(cur, tmp, 0, L.count(), {got, cur_ready});
        cur = tmp;
    }
    return {const_cast<char*>(cur), cur_ready};
}

}  // namespace mpc::coll
