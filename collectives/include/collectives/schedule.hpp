// collectives/schedule: a collective operation as a DAG of steps.
//
// Steps are SEND, RECV, CALC (inout = in op inout), COPY and JOIN (a no-op
// that merges dependencies). A step is issued as soon as every step it
// depends on is done, so receives without dependencies are posted at the
// start and no round barrier delays any message. Nonblocking collectives
// return a request for the schedule; blocking ones run the same schedule and
// wait. Schedules are progressed by the poll machinery: by their owner, and in
// collaborative mode by any rank or idle VP of the node, which fires the next
// steps of a rank that is busy computing.
//
// All point-to-point traffic uses the communicator's collective context and
// one tag per schedule (collectives are started in the same order by every
// member, so members agree on it); a schedule may reserve a few consecutive
// tags and give each message a tag offset (neighbor collectives do).
//
// Matching rule. Between two ranks, the messages of one schedule with the same
// tag match in construction order: the engine issues the sends to a peer, and
// the receives from a peer, in the order they were added, whatever order their
// dependencies complete in. Builders therefore only have to add, at both ends
// of a pair, the messages in the same order (symmetric algorithms do).
//
// User functions. A CALC step with a user-defined operation runs only on its
// owner rank's thread (the function belongs to that rank and may call MPI);
// others progressing the schedule leave it to the owner and wake it.
//
// Lifetime. A schedule keeps a reference on every derived datatype its steps
// use and a copy of its reduction operation, so MPI_Type_free and MPI_Op_free
// during a nonblocking collective are harmless.
#pragma once

#include <cstddef>
#include <deque>
#include <initializer_list>
#include <memory>
#include <memory_resource>
#include <vector>

#include "mpi_api/comm.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/op.hpp"
#include "mpi_api/progress_engine.hpp"
#include "mpi_api/request.hpp"

namespace mpc::coll {

using mpi::Comm;
using mpi::Datatype;
using mpi::Op;

class Schedule final : public mpi::Progressable {
  public:
    static constexpr uint32_t kTagMask = 0x3fffffff;  // the collectives' tag range
    using Step = int;
    using Deps = std::initializer_list<Step>;

    // `tags` consecutive collective tags are reserved for the schedule (every
    // member must reserve the same number).
    explicit Schedule(Comm* comm, int tags = 1);
    ~Schedule() override;
    Schedule(const Schedule&) = delete;
    Schedule& operator=(const Schedule&) = delete;

    // In deps, a negative step means "nothing" (for optional dependencies).
    Step send(const void* buf, int count, Datatype* type, int peer, Deps deps = {});
    Step recv(void* buf, int count, Datatype* type, int peer, Deps deps = {});
    // inout = in op inout over count elements of type: packed streams for
    // predefined operations, buffers laid out as type describes for user ones
    // (op_apply). The operation is copied.
    Step calc(const Op* op, const void* in, void* inout, int count, Datatype* type, Deps deps = {});
    // Copies the scount elements of (src, stype) into (dst, dcount, dtype).
    Step copy(const void* src, int scount, Datatype* stype, void* dst, int dcount, Datatype* dtype,
              Deps deps = {});
    Step join(Deps deps);
    // Adds a dependency after the fact (for steps built in loops); no-op when
    // on is negative.
    void depend(Step step, Step on);
    // Uses tag offset k (in [0, tags)) for a send or receive.
    void set_tag_offset(Step step, int k);
    // Scratch memory living as long as the schedule.
    char* scratch(size_t bytes);

    size_t size() const { return steps_.size(); }
    Comm* comm() const { return comm_; }
    int tag() const { return static_cast<int>(sequence_ & kTagMask); }

    // Starts the schedule; `done` completes (status and error filled) when
    // every step is done. The schedule then belongs to the progress engine and,
    // once finished, to `done` (freed with it when done->operation == this).
    // A finished schedule may be started again (persistent collectives): every
    // step runs anew, on the same buffers, with the same tags.
    void start(mpi::Request* done);
    bool progress() override;

  private:
    enum class Kind : uint8_t { Send, Recv, Calc, Copy, Join };
    struct Node {
        explicit Node(std::pmr::memory_resource* arena) : next(arena) {}
        Kind kind;
        const void* src = nullptr;
        void* dst = nullptr;
        int count = 0, dcount = 0;
        Datatype* type = nullptr;
        Datatype* dtype = nullptr;
        Op op;  // Calc: a copy (the handle may be freed meanwhile)
        int peer = 0;
        int tag_offset = 0;
        int pending = 0;             // dependencies not done yet
        int deps = 0;                // dependencies in all (pending at the start)
        Step order_next = -1;        // next send (receive) with the same peer and tag
        bool order_blocked = false;  // an earlier one of those is not issued yet
        bool order_later = false;    // order_blocked at the start
        bool issued = false, done = false;
        std::pmr::vector<Step> next;  // steps depending on this one
        mpi::Request req;        // Send / Recv
    };
    // Appends a node in place (requests cannot move) and records its deps.
    Node& add(Kind kind, Deps deps, Step* id);
    void hold(Datatype* t);
    void link_message_order();
    void rewind();
    void make_ready(Step s);
    void issue(Step s);
    void finish_step(Step s);

    Comm* comm_;
    mpi::RankState* owner_;
    uint32_t sequence_;  // tag offset k uses tag (sequence_ + k) mod 2^30
    int tags_;
    uint32_t context_;
    // The schedule's bookkeeping lives in an arena inside it, released all at
    // once with it: a small collective allocated its nodes, their lists and
    // the work lists one by one, about a fifth of an 8-byte Iallreduce + Wait
    // in malloc and free. Larger schedules spill over into the heap.
    alignas(std::max_align_t) std::byte arena_buffer_[2048];
    std::pmr::monotonic_buffer_resource arena_{arena_buffer_, sizeof arena_buffer_};
    std::pmr::deque<Node> steps_{&arena_};       // deque: nodes (and their requests) never move
    std::pmr::vector<Step> in_flight_{&arena_};  // issued sends and receives not done yet
    std::pmr::vector<Step> ready_{&arena_};      // steps whose dependencies are done, to issue
    std::vector<std::unique_ptr<char[]>> scratch_;
    std::pmr::vector<Datatype*> held_{&arena_};   // derived datatypes referenced by steps
    std::pmr::vector<Step> owner_only_{&arena_};  // user-function steps waiting for the owner's thread
    bool by_owner_ = false;         // progress() runs on the owner's thread
    size_t done_count_ = 0;
    int error_ = MPI_SUCCESS;
    bool started_ = false;
    bool linked_ = false;  // link_message_order done (the first start)
};

// Runs a schedule to completion on the caller (blocking collectives).
int run_blocking(std::unique_ptr<Schedule> s);
// Starts a schedule behind a new nonblocking request; returns its handle.
MPI_Request run_nonblocking(std::unique_ptr<Schedule> s);

}  // namespace mpc::coll
