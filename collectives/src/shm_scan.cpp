// Reductions whose result differs from member to member (Reduce_scatter,
// Reduce_scatter_block, Scan, Exscan) among a group's members, through the
// shared address space; the protocol of episodes and slots is in
// shm_group.hpp. Predefined operations only: members combine each other's
// data, and a user function belongs to its own rank.
//
// Small vectors (up to kStageBytes) are staged: every member packs its input
// into its staging memory and folds the others' straight from theirs, one
// episode. Larger ones are read from the members' buffers: Reduce_scatter
// has each member reduce its own block from everyone's input; Scan and Exscan
// cut the vector in slices, and each member computes the prefixes of its
// slice for every member's output (the same amount of work each, where
// folding one's own prefix would give the last member all of it). Operands
// are always combined in rank order.
#include <cstring>
#include <memory>
#include <optional>

#include "shm_data.hpp"
#include "shm_local.hpp"

namespace mpc::coll::shm {
namespace {

// Where a Partial's result lies in the vector every member contributes:
// elements [first, first + count) of total.
struct Share {
    int total = 0, first = 0, count = 0;
};
Share share_of(const Partial& r, int me, int n) {
    if (r.kind != PartKind::ReduceScatter) return {r.count, 0, r.count};
    Share s;
    for (int k = 0; k < n; ++k) {
        const int block = r.counts ? r.counts[k] : r.count;
        if (k == me) s.first = s.total, s.count = block;
        s.total += block;
    }
    return s;
}

// The members whose input a result folds: all (Reduce_scatter), those up to
// me (Scan) or below me (Exscan).
int fold_end(const Partial& r, int me, int n) {
    return r.kind == PartKind::Scan ? me + 1 : r.kind == PartKind::Exscan ? me : n;
}

// My result from the staged inputs (parity p), folded from the right, into
// recvbuf (straight when its type is contiguous).
void fold_staged(ShmGroup& g, int p, int me, const Partial& r, const Share& s, mpi::Kernel kernel) {
    const int hi = fold_end(r, me, g.size());
    if (hi <= 0 || s.count == 0) return;
    const mpi::Datatype& t = *r.type;
    const size_t total = static_cast<size_t>(s.total) * t.size;
    const size_t offset = static_cast<size_t>(s.first) * t.size;
    const size_t bytes = static_cast<size_t>(s.count) * t.size;
    const size_t units = static_cast<size_t>(s.count) * t.basic_count;
    std::unique_ptr<unsigned char[]> scratch;
    unsigned char* out;
    if (t.contiguous) {
        out = mpi::contiguous_data(r.recvbuf, t);
    } else {
        scratch.reset(new unsigned char[bytes]);
        out = scratch.get();
    }
    runtime::copy_bytes(out, g.staged(hi - 1, p, total) + offset, bytes);
    for (int m = hi - 2; m >= 0; --m) kernel(g.staged(m, p, total) + offset, out, units);
    if (scratch) mpi::unpack(r.recvbuf, static_cast<size_t>(s.count), t, 0, out, bytes);
}

class PartialSteps final : public Steps {
  public:
    PartialSteps(const Local& l, const Partial& r, bool staged)
        : Steps(l, l.size() == 1 ? 0 : (staged ? 1 : 2), 3),
          r_(r),
          op_(*r.op),
          staged_(staged),
          in_place_(r.sendbuf == MPI_IN_PLACE),
          in_(in_place_ ? r.recvbuf : r.sendbuf),
          kernel_(mpi::op_kernel(op_, *r.type)) {
        const Share s = share_of(r, l.me, l.size());
        total_ = s.total;
        first_ = s.first;
        mine_ = s.count;
    }

  private:
    size_t size() const { return r_.type->size; }
    int n() const { return l_.size(); }
    int me() const { return l_.me; }
    int parity() const { return static_cast<int>(e_ & 1); }
    bool exscan() const { return r_.kind == PartKind::Exscan; }

    Need needs(int k) const override {
        if (n() == 1 || k == 2 + (staged_ ? 0 : 1)) return {};
        if (k == 0) return all(e_ - 1);
        if (k == 1) return staged_ && r_.kind != PartKind::ReduceScatter ? below_me(e_) : all(e_);
        return all(e_ + 1);
    }
    void run(int k) override;
    void alone();
    void reduce_my_block();
    void prefix_my_slice();

    // Where a result of `count` elements goes: the receive buffer when it is
    // contiguous (and no one reads it), otherwise scratch unpacked at the end.
    unsigned char* result_buffer(bool direct) {
        const size_t bytes = static_cast<size_t>(mine_) * size();
        if (direct && r_.type->contiguous) return mpi::contiguous_data(r_.recvbuf, *r_.type);
        scratch_.reset(new unsigned char[std::max<size_t>(bytes, 1)]);
        return scratch_.get();
    }
    void unload_result() {
        if (scratch_)
            mpi::unpack(r_.recvbuf, static_cast<size_t>(mine_), *r_.type, 0, scratch_.get(),
                        static_cast<size_t>(mine_) * size());
    }

    const Partial r_;
    const mpi::Op op_;  // (a copy: the handle may be freed meanwhile)
    const bool staged_, in_place_;
    const void* in_;
    const mpi::Kernel kernel_;
    int total_ = 0;  // elements of every member's input
    int first_ = 0;  // Reduce_scatter: my block's first element
    int mine_ = 0;   // elements of my result
    std::unique_ptr<unsigned char[]> scratch_;
    std::optional<Contiguous> input_, output_;  // read straight (large)
};

void PartialSteps::run(int k) {
    if (n() == 1) return k == 0 ? alone() : void();
    const int p = parity();
    ShmGroup& g = l_.group;
    const size_t bytes = static_cast<size_t>(total_) * size();
    if (k == 0) {
        if (staged_) {
            mpi::pack(in_, static_cast<size_t>(total_), *r_.type, 0, g.stage(me(), p, bytes),
                      bytes);
        } else {
            input_.emplace(in_, total_, r_.type, true);
            g.member(me()).src[p] = input_->data();
            if (r_.kind != PartKind::ReduceScatter) {
                output_.emplace(r_.recvbuf, total_, r_.type, false);
                g.member(me()).dst[p] = output_->data();
            }
        }
        g.publish(me(), e_);
        return;
    }
    if (k == 1) {
        if (staged_) return fold_staged(g, p, me(), r_, Share{total_, first_, mine_}, kernel_);
        if (r_.kind == PartKind::ReduceScatter) {
            reduce_my_block();
        } else {
            prefix_my_slice();
        }
        g.publish(me(), e_ + 1);
        return;
    }
    if (k == 2 && !staged_) {
        if (r_.kind == PartKind::ReduceScatter) {
            unload_result();
        } else if (!(exscan() && me() == 0)) {
            output_->unload();
        }
    }
}

void PartialSteps::alone() {
    // Reduce_scatter and Scan of one member: its input; Exscan: nothing.
    if (exscan() || in_place_ || mine_ == 0) return;
    mpi::typed_copy(r_.sendbuf, static_cast<size_t>(mine_), *r_.type, r_.recvbuf,
                    static_cast<size_t>(mine_), *r_.type, static_cast<size_t>(mine_) * size());
}

// My block of everyone's input, straight from their buffers (rank order).
void PartialSteps::reduce_my_block() {
    ShmGroup& g = l_.group;
    const int p = parity();
    // In place, the others read my receive buffer (my input) until the end.
    unsigned char* out = result_buffer(!in_place_);
    if (mine_ == 0) return;
    const size_t offset = static_cast<size_t>(first_) * size();
    const size_t units = static_cast<size_t>(mine_) * r_.type->basic_count;
    auto input_of = [&](int m) {
        return static_cast<const unsigned char*>(g.member(m).src[p]) + offset;
    };
    memcpy(out, input_of(n() - 1), static_cast<size_t>(mine_) * size());
    for (int m = n() - 2; m >= 0; --m) kernel_(input_of(m), out, units);
}

// The prefixes of my slice of the vector, for every member's output.
void PartialSteps::prefix_my_slice() {
    ShmGroup& g = l_.group;
    const int p = parity();
    const Units u = units_of(total_, r_.type);
    size_t lo, hi;
    slice_of(me(), n(), u, &lo, &hi);
    if (hi <= lo) return;
    const size_t units = hi - lo, offset = lo * u.unit, bytes = units * u.unit;
    auto src = [&](int m) {
        return static_cast<const unsigned char*>(g.member(m).src[p]) + offset;
    };
    auto dst = [&](int m) { return static_cast<unsigned char*>(g.member(m).dst[p]) + offset; };
    if (!exscan()) {
        // out_m = out_{m-1} op in_m (an output may be its member's input).
        for (int m = 0; m < n(); ++m) {
            if (dst(m) != src(m)) memcpy(dst(m), src(m), bytes);
            if (m > 0) kernel_(dst(m - 1), dst(m), units);
        }
        return;
    }
    // out_m = in_0 op ... op in_{m-1}, carried in acc; the input of m is set
    // aside before its output overwrites it.
    std::unique_ptr<unsigned char[]> acc(new unsigned char[2 * bytes]);
    unsigned char* a = acc.get();
    unsigned char* t = a + bytes;
    memcpy(a, src(0), bytes);
    for (int m = 1; m < n(); ++m) {
        if (m + 1 < n()) memcpy(t, src(m), bytes);
        memcpy(dst(m), a, bytes);
        if (m + 1 == n()) break;
        kernel_(a, t, units);
        std::swap(a, t);
    }
}

bool staged_partial(const Partial& r, int n) {
    size_t elements = static_cast<size_t>(r.count);
    if (r.kind == PartKind::ReduceScatter) {
        elements = 0;
        for (int k = 0; k < n; ++k)
            elements += static_cast<size_t>(r.counts ? r.counts[k] : r.count);
    }
    return elements * r.type->size <= kStageBytes;
}

}  // namespace

std::unique_ptr<Steps> partial_steps(const Local& l, const Partial& r) {
    return std::make_unique<PartialSteps>(l, r, staged_partial(r, l.size()));
}

void local_partial(const Local& l, const Partial& r) {
    const bool staged = staged_partial(r, l.size());
    if (staged && l.size() > 1) {
        // The steps' staged path, straight.
        ShmGroup& g = l.group;
        const uint64_t e = ++*l.episode;
        const Share s = share_of(r, l.me, l.size());
        const size_t bytes = static_cast<size_t>(s.total) * r.type->size;
        wait_everyone(l, e - 1);
        mpi::pack(r.sendbuf == MPI_IN_PLACE ? r.recvbuf : r.sendbuf, static_cast<size_t>(s.total),
                  *r.type, 0, g.stage(l.me, static_cast<int>(e & 1), bytes), bytes);
        g.publish(l.me, e);
        if (r.kind == PartKind::ReduceScatter) {
            wait_everyone(l, e);
        } else {
            g.wait_for(Need{e, 0, l.me});
        }
        fold_staged(g, static_cast<int>(e & 1), l.me, r, s, mpi::op_kernel(*r.op, *r.type));
        return;
    }
    PartialSteps steps(l, r, staged);
    steps.run_all();
}

}  // namespace mpc::coll::shm
