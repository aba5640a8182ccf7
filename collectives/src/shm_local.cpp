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
    ShmGroup& g = l.group;
    const int me = l.me;
    const uint64_t e = ++*l.episode;
    const int p = static_cast<int>(e & 1);
    MemberSlots& mine = g.member(me);
    MemberSlots& from = g.member(root);
    if (bytes <= kInlineBytes) {
        if (me == root) {
            wait_everyone(l, e - 1);
            mpi::pack(buf, static_cast<size_t>(count), *type, 0, g.slot(me, p, bytes), bytes);
        } else {
            g.wait_one(root, e);
            mpi::unpack(buf, static_cast<size_t>(count), *type, 0, g.slot(root, p, bytes), bytes);
        }
        g.publish(me, e);
        return;
    }
    if (me == root) {
        // Every member copies straight from the root's buffer; the root waits
        // until they all did.
        Contiguous src(buf, count, type, true);
        wait_everyone(l, e - 1);
        mine.src[p] = src.data();
        g.publish(me, e);
        wait_everyone(l, e);
    } else {
        g.wait_one(root, e);
        mpi::unpack(buf, static_cast<size_t>(count), *type, 0, from.src[p], bytes);
        g.publish(me, e);
    }
}

void local_reduce(const Local& l, const void* sendbuf, void* recvbuf, int count,
                  const mpi::Datatype* type, const mpi::Op* op, int root) {
    const size_t bytes = static_cast<size_t>(count) * type->size;
    if (bytes == 0) return;
    if (l.size() == 1) return copy_alone(sendbuf, recvbuf, count, type);
    ShmGroup& g = l.group;
    const int me = l.me, n = l.size();
    const void* in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    const uint64_t e = *l.episode + 1;
    const int p = static_cast<int>(e & 1);
    MemberSlots& mine = g.member(me);
    if (bytes <= kInlineBytes) {
        *l.episode = e;
        wait_everyone(l, e - 1);
        publish_inline(g, me, e, in, count, type, bytes);
        if (me != root) return;
        wait_everyone(l, e);
        fold_into(op, g, p, recvbuf, count, type);
        return;
    }
    // Each member reduces its slice of everyone's input straight into the
    // root's output; nobody leaves before all slices are done (they read its
    // input).
    *l.episode = e + 1;
    Contiguous input(in, count, type, true);
    std::unique_ptr<Contiguous> output;
    if (me == root) output = std::make_unique<Contiguous>(recvbuf, count, type, false);
    wait_everyone(l, e - 1);
    mine.src[p] = input.data();
    mine.dst[p] = output ? output->data() : nullptr;
    g.publish(me, e);
    wait_everyone(l, e);
    reduce_my_slice(g, p, me, n, units_of(count, type), op, root, g.member(root).dst[p]);
    g.publish(me, e + 1);
    wait_everyone(l, e + 1);
    if (output) output->unload();
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

// Every member publishes its input and folds everyone's (small), or reduces
// its slice of everyone's input into its own output and then copies the
// others' slices from their outputs (large; only member k reads slice k of
// anyone's input, so in place is safe).
class AllreduceSteps final : public Steps {
  public:
    AllreduceSteps(const Local& l, const void* sendbuf, void* recvbuf, int count,
                   const mpi::Datatype* type, const mpi::Op* op)
        : Steps(l, kEpisodes[allreduce_path(l, count, type)]),
          path_(allreduce_path(l, count, type)),
          in_(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf),
          sendbuf_(sendbuf),
          recvbuf_(recvbuf),
          count_(count),
          type_(type),
          op_(op),
          u_(units_of(count, type)) {
        if (path_ == kSliced) {
            input_.emplace(in_, count, type, true);
            output_.emplace(recvbuf, count, type, false);
        }
    }

  private:
    static constexpr int kEpisodes[] = {0, 1, 3};  // by path
    void run(int k) override {
        ShmGroup& g = l_.group;
        const int me = l_.me, n = l_.size(), p = static_cast<int>(e_ & 1);
        const size_t bytes = u_.count * u_.unit;
        if (path_ == kAlone) {
            if (bytes) copy_alone(sendbuf_, recvbuf_, count_, type_);
        } else if (path_ == kInline) {
            if (k == 0) {
                publish_inline(g, me, e_, in_, count_, type_, bytes);
            } else {
                fold_into(op_, g, p, recvbuf_, count_, type_);
            }
        } else if (k == 0) {
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

    const AllreducePath path_;
    const void* in_;
    const void* sendbuf_;
    void* recvbuf_;
    int count_;
    const mpi::Datatype* type_;
    const mpi::Op* op_;
    Units u_;
    std::optional<Contiguous> input_, output_;  // sliced only
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

void run_steps(const Local& l, Steps& steps) {
    Need need;
    while (!steps.advance(&need)) {
        if (need.lo == 0 && need.hi == l.size() && need.except < 0) {
            wait_everyone(l, need.episode);
        } else {
            l.group.wait_for(need);
        }
    }
}

std::unique_ptr<Steps> barrier_steps(const Local& l) {
    return std::make_unique<BarrierSteps>(l);
}

std::unique_ptr<Steps> allreduce_steps(const Local& l, const void* sendbuf, void* recvbuf,
                                       int count, const mpi::Datatype* type, const mpi::Op* op) {
    return std::make_unique<AllreduceSteps>(l, sendbuf, recvbuf, count, type, op);
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
    run_steps(l, steps);
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
