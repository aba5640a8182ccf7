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
// member, so members agree on it).
#pragma once

#include <deque>
#include <initializer_list>
#include <memory>
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
    using Step = int;
    using Deps = std::initializer_list<Step>;

    explicit Schedule(Comm* comm);
    ~Schedule() override;

    Step send(const void* buf, int count, Datatype* type, int peer, Deps deps = {});
    Step recv(void* buf, int count, Datatype* type, int peer, Deps deps = {});
    // inout = in op inout, over count elements of type (contiguous buffers).
    Step calc(const Op* op, const void* in, void* inout, int count, Datatype* type, Deps deps = {});
    Step copy(const void* src, int scount, Datatype* stype, void* dst, int dcount, Datatype* dtype,
              Deps deps = {});
    Step join(Deps deps);
    // Adds a dependency after the fact (for steps built in loops).
    void depend(Step step, Step on);
    // Scratch memory living as long as the schedule.
    char* scratch(size_t bytes);

    size_t size() const { return steps_.size(); }
    Comm* comm() const { return comm_; }
    int tag() const { return tag_; }

    // Starts the schedule; `done` completes (status and error filled) when
    // every step is done. The schedule then belongs to the progress engine and,
    // once finished, to `done` (freed with it when done->operation == this).
    void start(mpi::Request* done);
    bool progress() override;

private:
    enum class Kind : uint8_t { Send, Recv, Calc, Copy, Join };
    struct Node {
        Kind kind;
        const void* src = nullptr;
        void* dst = nullptr;
        int count = 0, dcount = 0;
        Datatype* type = nullptr;
        Datatype* dtype = nullptr;
        const Op* op = nullptr;
        int peer = 0;
        int pending = 0;             // dependencies not done yet
        bool issued = false, done = false;
        std::vector<Step> next;      // steps depending on this one
        mpi::Request req;            // Send / Recv
    };
    // Appends a node in place (requests cannot move) and records its deps.
    Node& add(Kind kind, Deps deps, Step* id);
    void issue(Step s);
    void finish_step(Step s);

    Comm* comm_;
    mpi::RankState* owner_;
    int tag_;
    uint32_t context_;
    std::deque<Node> steps_;         // deque: nodes (and their requests) never move
    std::vector<Step> in_flight_;    // issued sends and receives not done yet
    std::vector<Step> ready_;        // steps whose dependencies are done, to issue
    std::vector<std::unique_ptr<char[]>> scratch_;
    size_t done_count_ = 0;
    int error_ = MPI_SUCCESS;
    bool started_ = false;
};

// Runs a schedule to completion on the caller (blocking collectives).
int run_blocking(std::unique_ptr<Schedule> s);
// Starts a schedule behind a new nonblocking request; returns its handle.
MPI_Request run_nonblocking(std::unique_ptr<Schedule> s);

}  // namespace mpc::coll
