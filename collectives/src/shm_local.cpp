// The shared-address-space collectives among a group's members; the protocol
// of episodes and slots is in shm_group.hpp.
#include "shm_local.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "runtime/copy.hpp"
#include "shm_data.hpp"

namespace mpc::coll::shm {
namespace {

// acc = data_0 op data_1 op ... op data_{n-1} (the members' inline payloads
// of `bytes`, n basic elements each), folded from the right so that every
// member computes the same expression.
void fold(mpi::Kernel k, size_t n, size_t bytes, ShmGroup& g, int parity, unsigned char* acc) {
    const int members = g.size();
    runtime::copy_bytes(acc, g.slot(members - 1, parity, bytes), bytes);
    for (int m = members - 2; m >= 0; --m) k(g.slot(m, parity, bytes), acc, n);
}

// The fold through scratch, unpacked into a non-contiguous (recvbuf, count,
// type). Out of line: its scratch would make every caller's frame large.
[[gnu::noinline]] void fold_unpacked(mpi::Kernel k, size_t n, size_t bytes, ShmGroup& g, int parity,
                                     void* recvbuf, int count, const mpi::Datatype* type) {
    alignas(64) unsigned char acc[kInlineBytes];
    fold(k, n, bytes, g, parity, acc);
    mpi::unpack(recvbuf, static_cast<size_t>(count), *type, 0, acc, bytes);
}

// The fold of the inline payloads into (recvbuf, count, type): straight into
// the buffer when it is contiguous (the inputs are in the slots already).
void fold_into(const mpi::Op* op, ShmGroup& g, int parity, void* recvbuf, int count,
               const mpi::Datatype* type) {
    const mpi::Kernel k = mpi::op_kernel(*op, *type);
    const size_t n = static_cast<size_t>(count) * type->basic_count;
    const size_t bytes = static_cast<size_t>(count) * type->size;
    if (!type->contiguous) return fold_unpacked(k, n, bytes, g, parity, recvbuf, count, type);
    fold(k, n, bytes, g, parity, mpi::contiguous_data(recvbuf, *type));
}

// A single member: no one to wait for.
void copy_alone(const void* sendbuf, void* recvbuf, int count, const mpi::Datatype* type) {
    if (sendbuf == MPI_IN_PLACE || sendbuf == recvbuf) return;
    mpi::typed_copy(sendbuf, static_cast<size_t>(count), *type, recvbuf, static_cast<size_t>(count),
                    *type, static_cast<size_t>(count) * type->size);
}

// Member me's slice of the reduction of every member's published input
// (src[p]) into dst: member `first`'s input, then every other one folded in.
void reduce_my_slice(ShmGroup& g, int p, int me, int n, const Units& u, const mpi::Op* op,
                     int first, void* dst) {
    size_t lo, hi;
    slice_of(me, n, u, &lo, &hi);
    if (hi <= lo) return;
    const size_t offset = lo * u.unit;
    auto input_of = [&](int k) {
        return static_cast<const unsigned char*>(g.member(k).src[p]) + offset;
    };
    unsigned char* out = static_cast<unsigned char*>(dst) + offset;
    if (out != input_of(first)) memcpy(out, input_of(first), (hi - lo) * u.unit);
    for (int k = 0; k < n; ++k)
        if (k != first) mpi::op_apply(*op, input_of(k), out, hi - lo, *u.basic);
}

// Member me's input of an inline reduction, into its slot for episode e.
void publish_inline(ShmGroup& g, int me, uint64_t e, const void* in, int count,
                    const mpi::Datatype* type, size_t bytes) {
    mpi::pack(in, static_cast<size_t>(count), *type, 0, g.slot(me, static_cast<int>(e & 1), bytes),
              bytes);
    g.publish(me, e);
}

}  // namespace

void local_barrier(const Local& l) {
    if (l.size() == 1) return;
    const uint64_t e = ++*l.episode;
    l.group.publish(l.me, e);
    wait_everyone(l, e);
}

void local_arrive(const Local& l) {
    if (l.size() == 1) return;
    const uint64_t e = ++*l.episode;
    l.group.publish(l.me, e);
    if (l.me == 0) wait_everyone(l, e);
}

void local_depart(const Local& l) {
    if (l.size() == 1) return;
    const uint64_t e = ++*l.episode;
    if (l.me != 0) l.group.wait_one(0, e);
    l.group.publish(l.me, e);
}

void local_bcast(const Local& l, void* buf, int count, const mpi::Datatype* type, int root) {
    const size_t bytes = static_cast<size_t>(count) * type->size;
    if (bytes == 0 || l.size() == 1) return;
    if (bytes > kInlineBytes) {
        auto steps = bcast_steps(l, buf, count, type, root);
        return steps->run_all();
    }
    // The steps' inline path, straight.
    ShmGroup& g = l.group;
    const uint64_t e = ++*l.episode;
    const int p = static_cast<int>(e & 1);
    if (l.me == root) {
        wait_everyone(l, e - 1);
        mpi::pack(buf, static_cast<size_t>(count), *type, 0, g.slot(root, p, bytes), bytes);
    } else {
        g.wait_one(root, e);
        mpi::unpack(buf, static_cast<size_t>(count), *type, 0, g.slot(root, p, bytes), bytes);
    }
    g.publish(l.me, e);
}

void local_reduce(const Local& l, const void* sendbuf, void* recvbuf, int count,
                  const mpi::Datatype* type, const mpi::Op* op, int root) {
    const size_t bytes = static_cast<size_t>(count) * type->size;
    if (bytes == 0) return;
    if (l.size() == 1) return copy_alone(sendbuf, recvbuf, count, type);
    if (bytes > kInlineBytes) {
        auto steps = reduce_steps(l, sendbuf, recvbuf, count, type, op, root);
        return steps->run_all();
    }
    // The steps' inline path, straight.
    const uint64_t e = ++*l.episode;
    wait_everyone(l, e - 1);
    publish_inline(l.group, l.me, e, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, type,
                   bytes);
    if (l.me != root) return;
    wait_everyone(l, e);
    fold_into(op, l.group, static_cast<int>(e & 1), recvbuf, count, type);
}

namespace {

// How an Allreduce goes: alone (nothing, or a copy), through the inline
// slots, or in parallel slices of the members' buffers.
enum AllreducePath { kAlone, kInline, kSliced };
AllreducePath allreduce_path(const Local& l, int count, const mpi::Datatype* type) {
    const size_t bytes = static_cast<size_t>(count) * type->size;
    if (bytes == 0 || l.size() == 1) return kAlone;
    return bytes <= kInlineBytes ? kInline : kSliced;
}

// What the steps of Allreduce and Reduce share: the call's arguments, and
// the paths of data alone (a copy) or small enough for the inline slots
// (every member publishes its input, then folds everyone's).
class ReductionSteps : public Steps {
  protected:
    ReductionSteps(const Local& l, int episodes, int stages, const void* sendbuf, void* recvbuf,
                   int count, const mpi::Datatype* type, const mpi::Op* op)
        : Steps(l, episodes, stages),
          path_(allreduce_path(l, count, type)),
          in_(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf),
          sendbuf_(sendbuf),
          recvbuf_(recvbuf),
          count_(count),
          type_(type),
          op_(op),
          u_(units_of(count, type)) {
        if (path_ == kSliced) input_.emplace(in_, count, type, true);
    }
    Need needs(int k) const override {
        return path_ == kAlone ? Need{} : all(e_ - 1 + static_cast<uint64_t>(k));
    }
    // Stage k of the alone and inline paths.
    void run_small(int k) {
        const size_t bytes = u_.count * u_.unit;
        if (path_ == kAlone) {
            if (bytes) copy_alone(sendbuf_, recvbuf_, count_, type_);
        } else if (k == 0) {
            publish_inline(l_.group, l_.me, e_, in_, count_, type_, bytes);
        } else {
            fold_into(op_, l_.group, static_cast<int>(e_ & 1), recvbuf_, count_, type_);
        }
    }

    const AllreducePath path_;
    const void* in_;
    const void* sendbuf_;
    void* recvbuf_;
    int count_;
    const mpi::Datatype* type_;
    const mpi::Op* op_;
    Units u_;
    std::optional<Contiguous> input_, output_;  // sliced only (Reduce: output_ at the root)
};

// Small data: the inline path. Large: every member reduces its slice of
// everyone's input into its own output, then copies the others' slices from
// their outputs (only member k reads slice k of anyone's input, so in place
// is safe).
class AllreduceSteps final : public ReductionSteps {
  public:
    AllreduceSteps(const Local& l, const void* sendbuf, void* recvbuf, int count,
                   const mpi::Datatype* type, const mpi::Op* op)
        : ReductionSteps(l, kEpisodes[allreduce_path(l, count, type)], -1, sendbuf, recvbuf,
                         count, type, op) {
        if (path_ == kSliced) output_.emplace(recvbuf, count, type, false);
    }

  private:
    static constexpr int kEpisodes[] = {0, 1, 3};  // by path
    void run(int k) override {
        if (path_ != kSliced) return run_small(k);
        ShmGroup& g = l_.group;
        const int me = l_.me, n = l_.size(), p = static_cast<int>(e_ & 1);
        if (k == 0) {
            g.member(me).src[p] = input_->data();
            g.member(me).dst[p] = output_->data();
            g.publish(me, e_);
        } else if (k == 1) {
            reduce_my_slice(g, p, me, n, u_, op_, me, output_->data());
            g.publish(me, e_ + 1);
        } else if (k == 2) {
            for (int m = 0; m < n; ++m) {
                if (m == me) continue;
                size_t lo, hi;
                slice_of(m, n, u_, &lo, &hi);
                if (hi > lo)
                    memcpy(output_->data() + lo * u_.unit,
                           static_cast<const unsigned char*>(g.member(m).dst[p]) + lo * u_.unit,
                           (hi - lo) * u_.unit);
            }
            g.publish(me, e_ + 2);
        } else {
            output_->unload();
        }
    }
};

// The root publishes its data (inline, or a pointer to it: then it waits
// until every member has copied it); the others copy it and go.
class BcastSteps final : public Steps {
  public:
    BcastSteps(const Local& l, void* buf, int count, const mpi::Datatype* type, int root)
        : Steps(l, moves(l, count, type) ? 1 : 0, stages_of(l, count, type, root)),
          buf_(buf),
          count_(static_cast<size_t>(count)),
          type_(type),
          root_(root),
          bytes_(count_ * type->size),
          moves_(moves(l, count, type)) {
        if (moves_ && bytes_ > kInlineBytes && l.me == root) data_.emplace(buf, count, type, true);
    }

  private:
    // Whether anything moves at all.
    static bool moves(const Local& l, int count, const mpi::Datatype* type) {
        return static_cast<size_t>(count) * type->size > 0 && l.size() > 1;
    }
    // The root of large data has a second stage: waiting for the copies.
    static int stages_of(const Local& l, int count, const mpi::Datatype* type, int root) {
        const bool large = static_cast<size_t>(count) * type->size > kInlineBytes;
        return moves(l, count, type) && l.me == root && large ? 2 : 1;
    }
    Need needs(int k) const override {
        if (!moves_) return Need{};
        if (l_.me != root_) return one(root_, e_);
        return all(e_ - 1 + static_cast<uint64_t>(k));
    }
    void run(int k) override {
        if (!moves_ || k == 1) return;
        ShmGroup& g = l_.group;
        const int p = static_cast<int>(e_ & 1);
        if (l_.me == root_) {
            if (data_) {
                g.member(root_).src[p] = data_->data();
            } else {
                mpi::pack(buf_, count_, *type_, 0, g.slot(root_, p, bytes_), bytes_);
            }
        } else {
            const void* from =
                bytes_ > kInlineBytes ? g.member(root_).src[p] : g.slot(root_, p, bytes_);
            mpi::unpack(buf_, count_, *type_, 0, from, bytes_);
        }
        g.publish(l_.me, e_);
    }

    void* buf_;
    size_t count_;
    const mpi::Datatype* type_;
    int root_;
    size_t bytes_;
    bool moves_;
    std::optional<Contiguous> data_;  // the root's, large data only
};

// Small data: the inline path, the root alone folding. Large: each member
// reduces its slice of everyone's input straight into the root's output,
// and nobody goes before all slices are done (they read its input).
class ReduceSteps final : public ReductionSteps {
  public:
    ReduceSteps(const Local& l, const void* sendbuf, void* recvbuf, int count,
                const mpi::Datatype* type, const mpi::Op* op, int root)
        : ReductionSteps(l, kEpisodes[allreduce_path(l, count, type)],
                         stages_of(l, count, type, root), sendbuf, recvbuf, count, type, op),
          root_(root) {
        if (path_ == kSliced && l.me == root) output_.emplace(recvbuf, count, type, false);
    }

  private:
    static constexpr int kEpisodes[] = {0, 1, 2};  // by path
    static int stages_of(const Local& l, int count, const mpi::Datatype* type, int root) {
        static constexpr int kStages[] = {1, 1, 3};  // by path; the inline root folds too
        const AllreducePath path = allreduce_path(l, count, type);
        return path == kInline && l.me == root ? 2 : kStages[path];
    }
    void run(int k) override {
        if (path_ != kSliced) return run_small(k);
        ShmGroup& g = l_.group;
        const int p = static_cast<int>(e_ & 1);
        if (k == 0) {
            g.member(l_.me).src[p] = input_->data();
            g.member(l_.me).dst[p] = output_ ? output_->data() : nullptr;
            g.publish(l_.me, e_);
        } else if (k == 1) {
            reduce_my_slice(g, p, l_.me, l_.size(), u_, op_, root_, g.member(root_).dst[p]);
            g.publish(l_.me, e_ + 1);
        } else if (output_) {
            output_->unload();
        }
    }

    int root_;
};

class BarrierSteps final : public Steps {
  public:
    explicit BarrierSteps(const Local& l) : Steps(l, l.size() == 1 ? 0 : 1) {}

  private:
    // Publishing overwrites no slot: no need to wait for the previous episode.
    Need needs(int k) const override { return k == 0 ? Need{} : all(e_); }
    void run(int k) override {
        if (k == 0 && stages_ == 2) l_.group.publish(l_.me, e_);
    }
};

}  // namespace

Steps::Steps(const Local& l, int episodes, int stages)
    : l_(l), e_(*l.episode + 1), stages_(stages < 0 ? episodes + 1 : stages) {
    *l.episode += static_cast<uint64_t>(episodes);
}

bool Steps::met(const Need& need) {
    if (need.episode == 0) return true;
    if (need.lo == 0 && need.hi == l_.size() && need.except < 0) {
        if (*l_.all_at >= need.episode) return true;
        if (!l_.group.all_at_least(need.episode)) return false;
        *l_.all_at = need.episode;
        return true;
    }
    return l_.group.met(need);
}

bool Steps::advance(Need* need, int until) {
    *need = Need{};
    while (stage_ < std::min(stages_, until)) {
        const Need want = needs(stage_);
        if (!met(want)) {
            *need = want;
            return false;
        }
        run(stage_++);
    }
    return stage_ == stages_;
}

// The waits look before they spin: no look of met() first (a blocking v
// or w movement of 8 bytes on 2 ranks spent a tenth of its instructions in
// advance()'s looks and their repetition after each wait).
void Steps::run_all() {
    for (; stage_ < stages_; ++stage_) {
        const Need want = needs(stage_);
        if (want.lo == 0 && want.hi == l_.size() && want.except < 0)
            wait_everyone(l_, want.episode);
        else if (want.episode != 0)
            l_.group.wait_for(want);
        run(stage_);
    }
}

bool poll_steps(ShmGroup& g, int me, Steps& steps, int until) {
    Need need;
    while (!steps.advance(&need, until)) {
        if (need.episode == 0) return false;  // stopped at `until`
        if (!g.need_nonblocking(me, need)) return false;
    }
    g.need_nonblocking(me, Need{});
    return true;
}

std::unique_ptr<Steps> barrier_steps(const Local& l) {
    return std::make_unique<BarrierSteps>(l);
}

std::unique_ptr<Steps> allreduce_steps(const Local& l, const void* sendbuf, void* recvbuf,
                                       int count, const mpi::Datatype* type, const mpi::Op* op) {
    return std::make_unique<AllreduceSteps>(l, sendbuf, recvbuf, count, type, op);
}

std::unique_ptr<Steps> bcast_steps(const Local& l, void* buf, int count, const mpi::Datatype* type,
                                   int root) {
    return std::make_unique<BcastSteps>(l, buf, count, type, root);
}

std::unique_ptr<Steps> reduce_steps(const Local& l, const void* sendbuf, void* recvbuf, int count,
                                    const mpi::Datatype* type, const mpi::Op* op, int root) {
    return std::make_unique<ReduceSteps>(l, sendbuf, recvbuf, count, type, op, root);
}

void local_allreduce(const Local& l, const void* sendbuf, void* recvbuf, int count,
                     const mpi::Datatype* type, const mpi::Op* op) {
    if (allreduce_path(l, count, type) == kInline) {
        // The steps' inline path, straight: the most frequent collective of
        // many programs (a residual, a time step) spends no time on the
        // resumable machinery.
        const uint64_t e = ++*l.episode;
        wait_everyone(l, e - 1);
        publish_inline(l.group, l.me, e, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, type,
                       static_cast<size_t>(count) * type->size);
        wait_everyone(l, e);
        fold_into(op, l.group, static_cast<int>(e & 1), recvbuf, count, type);
        return;
    }
    AllreduceSteps steps(l, sendbuf, recvbuf, count, type, op);
    steps.run_all();
}

void local_handoff(const Local& l, int from, const void* data, int to, void* buf, int count,
                   const mpi::Datatype* type) {
    const size_t bytes = static_cast<size_t>(count) * type->size;
    auto unpack = [&](const void* in) {
        if (bytes) mpi::unpack(buf, static_cast<size_t>(count), *type, 0, in, bytes);
    };
    if (from == to) {
        if (l.me == to) unpack(data);
        return;
    }
    local_lend(l, from, data, to, unpack);
}

void local_lend_steps(const Local& l, int from, const void* data, int to,
                      void (*use)(void*, const void*), void* context) {
    ShmGroup& g = l.group;
    const uint64_t e = ++*l.episode;
    const int p = static_cast<int>(e & 1);
    const bool uses = to < 0 || l.me == to;
    if (l.me == from) {
        wait_everyone(l, e - 1);
        g.member(from).src[p] = data;
        g.publish(from, e);
        if (uses) use(context, data);
        // data stays valid until they have used it
        if (to < 0) {
            wait_everyone(l, e);
        } else if (to != from) {
            g.wait_one(to, e);
        }
    } else if (uses) {
        g.wait_one(from, e);
        use(context, g.member(from).src[p]);
        g.publish(l.me, e);
    } else {
        g.publish(l.me, e);
    }
}

}  // namespace mpc::coll::shm
