// Persistent collectives of small data whose last member to start does the
// whole operation for everyone (shm.hpp): Barrier, Bcast, Reduce, Allreduce,
// Allgather and Alltoall of a communicator living in this node process.
//
// A persistent request's buffers are fixed at initialization and, while it is
// active, belong to the operation: a member that has started reads none of
// them and writes none of them until its request completes. So once every
// member has started, one thread may read all the send buffers and write all
// the receive buffers of the run. Each start takes a ticket from the
// request's arrival counter (shared by its members, found under the
// communicator's context and the collective tag the initialization took);
// the member that takes the last ticket of a run moves or reduces the data of
// everyone, then completes every member's request. No member waits for
// another inside MPI_Start, nobody has to progress anything, and a waiting
// member reads one line (its request's state) instead of every member's
// progress. Starts of a run follow the previous run's completions, so the
// counter alone tells the runs apart and the buffers need no double
// buffering. Each request has its own counter: its starts need no order
// against the communicator's other collectives, persistent or not.
//
// The completer does n reads and n writes one after the other, so this path
// is for small data only (kCombineBytes in all); larger runs take the
// sliced shared-memory operation (Allreduce) or the nonblocking form's steps
// (shm_persistent.cpp). A reduction's result is the right fold of the
// members' inputs, the same expression the blocking call computes.
// User-defined operations never come here: they belong to their rank's
// program image.
//
// This file must never make a member wait inside a start, and never touch an
// operation of another member after completing that member's request (it
// may be freed at once).
#include "shm_combine.hpp"

#include <atomic>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "collectives/persistent.hpp"
#include "collectives/shm.hpp"
#include "mpi_api/internal_coll.hpp"
#include "mpi_api/rank.hpp"
#include "runtime/copy.hpp"
#include "shm_group.hpp"
#include "shm_local.hpp"

namespace mpc::coll::shm {
namespace {

// At most this many bytes move (or are reduced) per run on this path.
constexpr size_t kCombineBytes = 16 * 1024;

// Bytes of inputs staged next to the arrival counter (one line in all).
constexpr size_t kLineStage = 64 - sizeof(uint64_t);

class Combining;

// What the members of one persistent request share.
struct Arrivals {
    explicit Arrivals(std::vector<int> ranks)
        : members(ranks.size(), nullptr), ranks_(std::move(ranks)) {}
    const std::vector<int>& world_ranks() const { return ranks_; }
    alignas(64) std::atomic<uint64_t> tickets{0};
    // Small inputs, staged by their members in the line their ticket takes
    // anyway: the last one finds them all in the line it holds.
    unsigned char staged[kLineStage];
    // Each member's operation, set at its initialization (before its first
    // ticket: the last taker of a run sees every member's).
    alignas(64) std::vector<Combining*> members;
    std::vector<int> ranks_;
};

// Arrivals by (context, tag), as shm_group.cpp's groups.
std::shared_ptr<Arrivals> arrivals_for(Comm* c, int tag) {
    static auto* arrivals = new SharedByMembers<Arrivals>();  // lives as long as the process
    std::vector<int> ranks(static_cast<size_t>(c->size));
    for (int r = 0; r < c->size; ++r) ranks[static_cast<size_t>(r)] = c->group->world_rank(r);
    return arrivals->find_or_make((uint64_t{c->context} << 32) | static_cast<uint32_t>(tag),
                                  std::move(ranks));
}

class Combining : public Persistent {
  public:
    explicit Combining(Comm* c) : me_(c->rank), n_(static_cast<uint64_t>(c->size)) {
        shared_ = arrivals_for(c, mpi::next_coll_tag(c));
        shared_->members[static_cast<size_t>(me_)] = this;
    }

    void start(mpi::Request* r) override {
        // The same request at every start: a store would only take the
        // line away from the readers.
        if (request != r) {
            request = r;
            r->peer_completes = true;
        }
        // My status now, in my own line: the last member only flips states.
        r->status.MPI_SOURCE = MPI_ANY_SOURCE;
        r->status.MPI_TAG = MPI_ANY_TAG;
        r->status.MPI_ERROR = MPI_SUCCESS;
        r->status.mpc_count = 0;
        stage(shared_->staged);
        // Releases my buffers' contents (and request) to the last taker;
        // acquires everyone's when I am the last.
        const uint64_t ticket = shared_->tickets.fetch_add(1, std::memory_order_acq_rel);
        if (ticket % n_ != n_ - 1) return;  // the run's last member completes r
        mpi::Request* done[kMaxInline];
        std::unique_ptr<mpi::Request*[]> many;
        mpi::Request** list = done;
        if (n_ > kMaxInline) {
            many.reset(new mpi::Request*[n_]);
            list = many.get();
        }
        // The others' request lines are on their way while the data moves
        // (each completion is a locked write: one miss after the other
        // otherwise).
        for (uint64_t m = 0; m < n_; ++m) {
            list[m] = shared_->members[m]->request;
            __builtin_prefetch(&list[m]->state, 1);
        }
        run();
        // Mine last: completing the others' requests may free their
        // operations, never mine before I am done here.
        for (uint64_t m = 0; m < n_; ++m)
            if (static_cast<int>(m) != me_) mpi::complete(list[m]);
        mpi::complete(r);
    }

    bool progress() override { return true; }  // never registered

  protected:
    int me() const { return me_; }
    int members() const { return static_cast<int>(n_); }
    template <class T>
    T& member(int m) {
        return *static_cast<T*>(shared_->members[static_cast<size_t>(m)]);
    }
    // Moves everyone's data (the last member of a run, on its thread).
    virtual void run() = 0;
    // Stages my input in the arrival line, when it is small enough.
    virtual void stage(unsigned char*) {}
    const unsigned char* staged() const { return shared_->staged; }

  private:
    static constexpr uint64_t kMaxInline = 64;
    int me_;
    uint64_t n_;
    std::shared_ptr<Arrivals> shared_;
};

class Barrier final : public Combining {
  public:
    using Combining::Combining;

  private:
    void run() override {}
};

// A typed buffer of one member, referenced for the request's life.
struct Typed {
    Typed(const void* b, int c, Datatype* t)
        : buf(b), count(static_cast<size_t>(c)), type(t ? mpi::datatype_retain(t) : nullptr) {}
    ~Typed() {
        if (type) mpi::datatype_release(type);
    }
    Typed(const Typed&) = delete;
    Typed& operator=(const Typed&) = delete;
    size_t bytes() const { return type ? count * type->size : 0; }
    // Block k of an array of blocks like this one.
    void* block(int k) const {
        return static_cast<unsigned char*>(const_cast<void*>(buf)) +
               static_cast<MPI_Aint>(k) * static_cast<MPI_Aint>(count) * type->extent;
    }
    const void* buf;
    size_t count;
    Datatype* type;
};

// Bcast: the root's data into every other member's buffer.
class Bcast final : public Combining {
  public:
    Bcast(void* buf, int count, Datatype* type, int root, Comm* c)
        : Combining(c), data_(buf, count, type), root_(root) {}

  private:
    void run() override {
        const Typed& from = member<Bcast>(root_).data_;
        for (int m = 0; m < members(); ++m) {
            if (m == root_) continue;
            const Typed& to = member<Bcast>(m).data_;
            mpi::typed_copy(from.buf, from.count, *from.type, const_cast<void*>(to.buf), to.count,
                            *to.type, from.bytes());
        }
    }
    Typed data_;
    int root_;
};

// Reduce and Allreduce: everyone's input folded from the right (as the
// blocking calls), into the root's output or everyone's.
class Reduction final : public Combining {
  public:
    Reduction(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op& op, int root,
              Comm* c)
        : Combining(c),
          in_(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, type),
          out_(recvbuf, count, type),
          root_(root),
          op_(op) {
        const size_t bytes = in_.bytes();
        if (bytes == 0) return;
        units_ = in_.count * type->basic_count;
        kernel_ = mpi::op_kernel(op_, *type);
        // The completer's accumulator, and a packed copy of my input for
        // when it is not contiguous.
        acc_.reset(new unsigned char[bytes]);
        staging_ = bytes * static_cast<size_t>(c->size) <= kLineStage;
        if (!type->contiguous && !staging_) packed_.reset(new unsigned char[bytes]);
    }

  private:
    // Member m's input as contiguous bytes (packed by the completer if need be).
    const unsigned char* input(int m) {
        if (staging_) return staged() + static_cast<size_t>(m) * in_.bytes();
        Reduction& r = member<Reduction>(m);
        if (!r.packed_) return mpi::contiguous_data(r.in_.buf, *r.in_.type);
        mpi::pack(r.in_.buf, r.in_.count, *r.in_.type, 0, r.packed_.get(), r.in_.bytes());
        return r.packed_.get();
    }
    void stage(unsigned char* line) override {
        const size_t bytes = in_.bytes();
        if (staging_ && bytes)
            mpi::pack(in_.buf, in_.count, *in_.type, 0, line + static_cast<size_t>(me()) * bytes,
                      bytes);
    }
    void run() override {
        const size_t bytes = in_.bytes();
        if (bytes == 0) return;
        const int n = members();
        // The outputs' lines are on their way while the inputs fold (one
        // miss after the other in the unpack below otherwise).
        for (int m = 0; m < n; ++m)
            if (root_ < 0 || m == root_) __builtin_prefetch(member<Reduction>(m).out_.buf, 1);
        unsigned char* acc = acc_.get();
        runtime::copy_bytes(acc, input(n - 1), bytes);
        for (int m = n - 2; m >= 0; --m) kernel_(input(m), acc, units_);
        for (int m = 0; m < n; ++m) {
            if (root_ >= 0 && m != root_) continue;
            const Typed& out = member<Reduction>(m).out_;
            mpi::unpack(const_cast<void*>(out.buf), out.count, *out.type, 0, acc, bytes);
        }
    }
    Typed in_, out_;
    int root_;  // -1: Allreduce
    Op op_;     // a copy: the handle may be freed meanwhile
    size_t units_ = 0;
    mpi::Kernel kernel_ = nullptr;
    bool staging_ = false;  // inputs in the arrival line
    std::unique_ptr<unsigned char[]> acc_, packed_;
};

// Allgather (send block to everyone's receive block `me`) and Alltoall
// (send block j to member j's receive block `me`).
class Exchange final : public Combining {
  public:
    Exchange(bool all_to_all, const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
             int recvcount, Datatype* recvtype, Comm* c)
        : Combining(c),
          all_to_all_(all_to_all),
          in_place_(sendbuf == MPI_IN_PLACE),
          send_(in_place_ ? nullptr : sendbuf, sendcount, in_place_ ? nullptr : sendtype),
          recv_(recvbuf, recvcount, recvtype) {}

  private:
    void run() override {
        const int n = members();
        for (int from = 0; from < n; ++from) {
            const Exchange& f = member<Exchange>(from);
            for (int to = 0; to < n; ++to) {
                const Exchange& t = member<Exchange>(to);
                void* dst = t.recv_.block(from);
                if (f.in_place_) {  // Allgather only: the block is in place at `from`
                    if (to == from) continue;
                    const void* src = f.recv_.block(from);
                    mpi::typed_copy(src, f.recv_.count, *f.recv_.type, dst, t.recv_.count,
                                    *t.recv_.type, f.recv_.bytes());
                    continue;
                }
                const void* src = all_to_all_ ? f.send_.block(to) : f.send_.buf;
                mpi::typed_copy(src, f.send_.count, *f.send_.type, dst, t.recv_.count,
                                *t.recv_.type, f.send_.bytes());
            }
        }
    }
    bool all_to_all_;
    bool in_place_;
    Typed send_, recv_;
};

}  // namespace

bool combines(Comm* c, size_t bytes) {
    return bytes <= kCombineBytes && eligible_nonblocking(c);
}

std::unique_ptr<Persistent> combining_barrier(Comm* c) {
    return std::make_unique<Barrier>(c);
}

std::unique_ptr<Persistent> persistent_bcast(void* buf, int count, Datatype* type, int root,
                                             Comm* c) {
    const size_t bytes = static_cast<size_t>(count) * type->size;
    if (combines(c, bytes * static_cast<size_t>(c->size)))
        return std::make_unique<Bcast>(buf, count, type, root, c);
    // Too much data to combine: the nonblocking form's steps at every start.
    return persistent_steps(
        c, [=](const Local& l) { return bcast_steps(l, buf, count, type, root); }, {type});
}

std::unique_ptr<Persistent> combining_reduction(const void* sendbuf, void* recvbuf, int count,
                                                Datatype* type, const Op* op, int root, Comm* c) {
    const size_t bytes = static_cast<size_t>(count) * type->size;
    if (!op->predefined || !combines(c, bytes * static_cast<size_t>(c->size))) return nullptr;
    return std::make_unique<Reduction>(sendbuf, recvbuf, count, type, *op, root, c);
}

std::unique_ptr<Persistent> persistent_reduce(const void* sendbuf, void* recvbuf, int count,
                                              Datatype* type, const Op* op, int root, Comm* c) {
    if (auto p = combining_reduction(sendbuf, recvbuf, count, type, op, root, c)) return p;
    if (!op->predefined) return nullptr;
    // A predefined operation lives as long as the library: a pointer will do.
    return persistent_steps(
        c,
        [=](const Local& l) { return reduce_steps(l, sendbuf, recvbuf, count, type, op, root); },
        {type});
}

namespace {

// Too much data to combine: the nonblocking form's steps at every start
// (Alltoall: `even` send blocks).
std::unique_ptr<Persistent> moving(Comm* c, MoveKind kind, const void* sendbuf, int sendcount,
                                   Datatype* sendtype, void* recvbuf, int recvcount,
                                   Datatype* recvtype, bool even) {
    Movement m;
    m.in_place = sendbuf == MPI_IN_PLACE;
    if (!m.in_place)
        m.send = even ? Blocks::even(sendbuf, sendcount, sendtype)
                      : Blocks::one(sendbuf, sendcount, sendtype);
    m.recv = Blocks::even(recvbuf, recvcount, recvtype);
    return persistent_steps(
        c, [kind, m](const Local& l) { return move_steps(l, kind, m); },
        {m.in_place ? nullptr : sendtype, recvtype});
}

}  // namespace

std::unique_ptr<Persistent> persistent_allgather(const void* sendbuf, int sendcount,
                                                 Datatype* sendtype, void* recvbuf, int recvcount,
                                                 Datatype* recvtype, Comm* c) {
    const size_t n = static_cast<size_t>(c->size);
    const size_t block = static_cast<size_t>(recvcount) * recvtype->size;
    if (!combines(c, block * n * n)) return moving(c, MoveKind::Allgather, sendbuf, sendcount,
                                                   sendtype, recvbuf, recvcount, recvtype, false);
    return std::make_unique<Exchange>(false, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                      recvtype, c);
}

std::unique_ptr<Persistent> persistent_alltoall(const void* sendbuf, int sendcount,
                                                Datatype* sendtype, void* recvbuf, int recvcount,
                                                Datatype* recvtype, Comm* c) {
    const size_t n = static_cast<size_t>(c->size);
    const size_t block = static_cast<size_t>(recvcount) * recvtype->size;
    // In place, a block would be read after its place was written.
    if (sendbuf == MPI_IN_PLACE || !combines(c, block * n * n))
        return moving(c, MoveKind::Alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                      recvtype, true);
    return std::make_unique<Exchange>(true, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                      recvtype, c);
}

}  // namespace mpc::coll::shm
