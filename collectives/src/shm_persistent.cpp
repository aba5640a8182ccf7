// Persistent Barrier and Allreduce of a communicator living in this node
// process (shm.hpp), through the shared address space. Barrier and small
// Allreduce runs are shm_combine.cpp's (the last member to start does the
// work); this file keeps the Allreduce of larger data.
//
// Each persistent request has a group of its own (shm_group.hpp), found by
// its members under a key made of the communicator's context and the
// collective tag the initialization took. Its episodes count only its own
// starts, so its starts need no order against the communicator's other
// collectives, persistent or not. Everything a run needs is fixed at
// initialization (the reduction kernel, the slices, scratch for data that is
// not contiguous): a start publishes what it can at once and finishes when
// every member has published, on the caller's thread if they already have,
// otherwise through the progress engine (whoever polls the owner's
// operations, notified by the publisher it waits for).
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "collectives/persistent.hpp"
#include "collectives/shm.hpp"
#include "mpi_api/internal_coll.hpp"
#include "mpi_api/rank.hpp"
#include "runtime/copy.hpp"
#include "shm_combine.hpp"
#include "shm_group.hpp"
#include "shm_local.hpp"

namespace mpc::coll::shm {
namespace {

// The group of persistent request `tag` of communicator c (every member
// computes the same key and member list).
std::shared_ptr<ShmGroup> private_group(Comm* c, int tag) {
    std::vector<int> ranks(static_cast<size_t>(c->size));
    for (int r = 0; r < c->size; ++r) ranks[static_cast<size_t>(r)] = c->group->world_rank(r);
    const uint64_t key =
        (uint64_t{1} << 63) | (uint64_t{c->context} << 32) | static_cast<uint32_t>(tag);
    return group_for(key, std::move(ranks));
}

// Runs `stages` stages per start; stage k may run once every member is at
// episode needs(k) of this request's group.
class ShmPersistent : public Persistent {
  public:
    ShmPersistent(Comm* c, int episodes) : owner_(c->owner), me_(c->rank), episodes_(episodes) {
        const int tag = mpi::next_coll_tag(c);
        if (c->size > 1) {
            group_ = private_group(c, tag);
            group_->watch_nonblocking(me_, owner_);
        }
    }

    void start(mpi::Request* r) override {
        request = r;
        e_ = episode_ + 1;
        episode_ += static_cast<uint64_t>(episodes_);
        stage_ = 0;
        if (advance()) {
            finish(r);
            mpi::complete(r);
            return;
        }
        mpi::progress_add(owner_, this, false);
    }

    bool progress() override {
        if (!advance()) return false;
        finish(request);
        return true;
    }

  protected:
    ShmGroup& group() { return *group_; }
    int me() const { return me_; }
    int members() const { return group_ ? group_->size() : 1; }
    uint64_t first_episode() const { return e_; }
    // Episode every member must reach before stage k (0: none).
    virtual uint64_t needs(int k) const = 0;
    virtual void run(int k) = 0;
    virtual int stages() const = 0;

  private:
    bool advance() {
        while (stage_ < stages()) {
            const uint64_t need = needs(stage_);
            if (need > all_at_) {
                const Need everyone{need, 0, group_->size(), -1};
                if (!group_->all_at_least(need) && !group_->need_nonblocking(me_, everyone))
                    return false;
                group_->need_nonblocking(me_, Need{});
                all_at_ = need;
            }
            run(stage_++);
        }
        return true;
    }
    static void finish(mpi::Request* r) {
        r->status.MPI_SOURCE = MPI_ANY_SOURCE;
        r->status.MPI_TAG = MPI_ANY_TAG;
        r->status.MPI_ERROR = MPI_SUCCESS;
        r->status.mpc_count = 0;
    }

    mpi::RankState* owner_;
    int me_;
    int episodes_;
    std::shared_ptr<ShmGroup> group_;  // null when alone
    uint64_t episode_ = 0;             // episodes taken by my starts
    uint64_t all_at_ = 0;              // every member known to be at least here
    uint64_t e_ = 0;                   // the current run's first episode
    int stage_ = 0;
};

// Every member publishes its input, then folds everyone's (small data: one
// episode), or reduces its slice of everyone's input into its own output and
// copies the others' slices from theirs (large: three episodes).
class Allreduce final : public ShmPersistent {
  public:
    Allreduce(const void* sendbuf, void* recvbuf, int count, const Datatype* type, const Op& op,
              Comm* c)
        : ShmPersistent(c, episodes_for(c, count, type)),
          in_(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf),
          in_place_(sendbuf == MPI_IN_PLACE || sendbuf == recvbuf),
          recvbuf_(recvbuf),
          count_(static_cast<size_t>(count)),
          type_(type),
          bytes_(static_cast<size_t>(count) * type->size),
          path_(path_for(c, count, type)),
          op_(op) {
        if (bytes_ == 0) return;
        const Datatype* basic = mpi::datatype_lookup(type->basic);
        unit_ = basic->size;
        units_ = count_ * type->basic_count;
        basic_ = basic;
        kernel_ = mpi::op_kernel(op_, *type);
        if (!type->contiguous && path_ != kAlone) {
            // Packed copies of the input and the output, kept for every run.
            scratch_in_.reset(new unsigned char[bytes_]);
            scratch_out_.reset(new unsigned char[bytes_]);
        }
    }

  private:
    enum Path { kAlone, kInline, kSliced };
    static Path path_for(Comm* c, int count, const Datatype* type) {
        const size_t bytes = static_cast<size_t>(count) * type->size;
        if (bytes == 0 || c->size == 1) return kAlone;
        return bytes <= kInlineBytes ? kInline : kSliced;
    }
    static int episodes_for(Comm* c, int count, const Datatype* type) {
        static constexpr int kEpisodes[] = {0, 1, 3};
        return kEpisodes[path_for(c, count, type)];
    }
    int stages() const override {
        static constexpr int kStages[] = {1, 2, 4};
        return kStages[path_];
    }
    uint64_t needs(int k) const override {
        return path_ == kAlone ? 0 : first_episode() - 1 + static_cast<uint64_t>(k);
    }

    // The data as contiguous bytes: the user's buffers, or the scratch.
    const unsigned char* input() {
        if (!scratch_in_) return mpi::contiguous_data(in_, *type_);
        mpi::pack(in_, count_, *type_, 0, scratch_in_.get(), bytes_);
        return scratch_in_.get();
    }
    unsigned char* output() {
        return scratch_out_ ? scratch_out_.get() : mpi::contiguous_data(recvbuf_, *type_);
    }

    // Member m's share [lo, hi) of the units, in cache-line multiples where
    // the unit allows (no two members write one line).
    void slice(int m, size_t* lo, size_t* hi) const {
        const size_t n = static_cast<size_t>(members());
        const size_t align = 64 % unit_ == 0 ? 64 / unit_ : 1;
        size_t chunk = (units_ + n - 1) / n;
        chunk = (chunk + align - 1) / align * align;
        *lo = std::min(units_, chunk * static_cast<size_t>(m));
        *hi = std::min(units_, *lo + chunk);
    }

    void run(int k) override {
        if (path_ == kAlone) {
            if (bytes_ && !in_place_)
                mpi::typed_copy(in_, count_, *type_, recvbuf_, count_, *type_, bytes_);
            return;
        }
        ShmGroup& g = group();
        const int n = members();
        const uint64_t e = first_episode();
        const int p = static_cast<int>(e & 1);
        if (path_ == kInline) {
            if (k == 0) {
                mpi::pack(in_, count_, *type_, 0, g.slot(me(), p, bytes_), bytes_);
                g.publish(me(), e);
                return;
            }
            // Folded from the right, so that every member computes the same
            // expression.
            unsigned char* acc = output();
            runtime::copy_bytes(acc, g.slot(n - 1, p, bytes_), bytes_);
            for (int m = n - 2; m >= 0; --m) kernel_(g.slot(m, p, bytes_), acc, units_);
            if (scratch_out_) mpi::unpack(recvbuf_, count_, *type_, 0, acc, bytes_);
            return;
        }
        size_t lo, hi;
        if (k == 0) {
            g.member(me()).src[p] = input();
            g.member(me()).dst[p] = output();
            g.publish(me(), e);
        } else if (k == 1) {
            slice(me(), &lo, &hi);
            if (hi > lo) {
                const size_t off = lo * unit_;
                unsigned char* out = output() + off;
                auto in = [&](int m) {
                    return static_cast<const unsigned char*>(g.member(m).src[p]) + off;
                };
                if (out != in(me())) memcpy(out, in(me()), (hi - lo) * unit_);
                for (int m = 0; m < n; ++m)
                    if (m != me()) mpi::op_apply(op_, in(m), out, hi - lo, *basic_);
            }
            g.publish(me(), e + 1);
        } else if (k == 2) {
            for (int m = 0; m < n; ++m) {
                if (m == me()) continue;
                slice(m, &lo, &hi);
                if (hi > lo)
                    memcpy(output() + lo * unit_,
                           static_cast<const unsigned char*>(g.member(m).dst[p]) + lo * unit_,
                           (hi - lo) * unit_);
            }
            g.publish(me(), e + 2);
        } else if (scratch_out_) {
            mpi::unpack(recvbuf_, count_, *type_, 0, scratch_out_.get(), bytes_);
        }
    }

    const void* in_;
    bool in_place_;
    void* recvbuf_;
    size_t count_;
    const Datatype* type_;
    size_t bytes_;
    Path path_;
    Op op_;  // a copy: the handle may be freed meanwhile
    const Datatype* basic_ = nullptr;
    size_t unit_ = 1, units_ = 0;
    mpi::Kernel kernel_ = nullptr;
    std::unique_ptr<unsigned char[]> scratch_in_, scratch_out_;
};

// A nonblocking form's steps, made anew at every start on the request's group.
class StepsPersistent final : public Persistent {
  public:
    StepsPersistent(Comm* c, MakeSteps make, std::initializer_list<Datatype*> types)
        : owner_(c->owner),
          me_(c->rank),
          make_(std::move(make)),
          group_(private_group(c, mpi::next_coll_tag(c))) {
        group_->watch_nonblocking(me_, owner_);
        for (Datatype* t : types)
            if (t) types_.push_back(mpi::datatype_retain(t));
    }
    ~StepsPersistent() override {
        for (Datatype* t : types_) mpi::datatype_release(t);
    }

    void start(mpi::Request* r) override {
        request = r;
        steps_ = make_(Local{*group_, me_, &episode_, &all_at_});
        // What the others need from me goes out now; the rest at the polls.
        if (poll_steps(*group_, me_, *steps_, 1)) {
            finish();
            mpi::complete(r);
            return;
        }
        mpi::progress_add(owner_, this, false);
    }

    bool progress() override {
        if (!poll_steps(*group_, me_, *steps_)) return false;
        finish();
        return true;
    }

  private:
    void finish() {
        mpi::set_status(&request->status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
        request->status.MPI_ERROR = steps_->error();
    }

    mpi::RankState* owner_;
    int me_;
    MakeSteps make_;
    std::shared_ptr<ShmGroup> group_;
    std::vector<Datatype*> types_;  // referenced
    std::unique_ptr<Steps> steps_;  // the current run's
    uint64_t episode_ = 0;          // episodes taken by my starts
    uint64_t all_at_ = 0;           // every member known to be at least here
};

}  // namespace

std::unique_ptr<Persistent> persistent_steps(Comm* c, MakeSteps make,
                                             std::initializer_list<Datatype*> types) {
    if (c->size < 2 || !eligible_nonblocking(c)) return nullptr;
    return std::make_unique<StepsPersistent>(c, std::move(make), types);
}

std::unique_ptr<Persistent> persistent_barrier(Comm* c) {
    return combining_barrier(c);
}

std::unique_ptr<Persistent> persistent_allreduce(const void* sendbuf, void* recvbuf, int count,
                                                 Datatype* type, const Op* op, Comm* c) {
    if (auto p = combining_reduction(sendbuf, recvbuf, count, type, op, -1, c)) return p;
    return std::make_unique<Allreduce>(sendbuf, recvbuf, count, type, *op, c);
}

}  // namespace mpc::coll::shm
