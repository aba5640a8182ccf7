// Collectives among the members of one ShmGroup (shm_group.hpp): the whole
// communicator when it lives in this node process, or the node's part of a
// larger one (the intra-node phases of the hierarchical collectives, shm.cpp).
// Ranks and roots are indexes in the group. Every member of the group calls
// the same operations in the same order.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>

#include "mpi_api/datatype.hpp"
#include "mpi_api/op.hpp"
#include "shm_data.hpp"
#include "shm_group.hpp"

namespace mpc::coll::shm {

struct Local {
    ShmGroup& group;
    int me;             // my index in the group
    uint64_t* episode;  // my count of this group's episodes
    // The highest episode every member is known to have reached: a wait it
    // covers needs no look at the shared line (a read before this member's
    // own write costs a second transfer of the line).
    uint64_t* all_at;
    int size() const { return group.size(); }
};

// Waits until every member is at episode >= e.
inline void wait_everyone(const Local& l, uint64_t e) {
    if (*l.all_at >= e) return;
    l.group.wait_all(e);
    *l.all_at = e;
}

// A collective as resumable steps: advance() does every step it can and
// returns true once the collective is finished, or false with *need set to
// what it waits for (the episode some members must reach) before it can go
// on. Making the steps reserves their episodes, so they are made in the
// members' common order. A blocking collective runs them with run_all(); a
// nonblocking one (shm.cpp) is advanced by whoever polls its owner's
// operations, one thread at a time.
class Steps {
  public:
    virtual ~Steps() = default;
    // Runs stages below `until` only (stopping there leaves need->episode 0).
    bool advance(Need* need, int until = 1 << 30);
    // Runs every stage left on the caller, waiting for what each needs.
    void run_all();
    // The first error met (a receive block smaller than the data for it).
    int error() const { return error_; }

  protected:
    // Takes `episodes` episodes; runs in stages (by default one per episode
    // and one after the last).
    Steps(const Local& l, int episodes, int stages = -1);
    const Local l_;
    const uint64_t e_;  // my first episode
    const int stages_;  // steps: one per episode, and one after the last
    int error_ = MPI_SUCCESS;
    // Stage k may run once needs(k) is met: by default every member at the
    // episode before it (its parity's slots are free again); nothing for
    // steps without episodes (a lone member's copy).
    virtual Need needs(int k) const {
        return stages_ == 1 ? Need{} : all(e_ - 1 + static_cast<uint64_t>(k));
    }
    Need all(uint64_t e) const { return {e, 0, l_.size()}; }
    Need all_but_me(uint64_t e) const { return {e, 0, l_.size(), l_.me}; }
    Need one(int k, uint64_t e) const { return {e, k, k + 1}; }
    Need below_me(uint64_t e) const { return {e, 0, l_.me}; }

  private:
    virtual void run(int k) = 0;
    bool met(const Need& need);
    int stage_ = 0;
};

// For a nonblocking or persistent collective of member `me` of g: runs the
// stages below `until` that can run now. What the steps then wait for is
// left with the group, whose member that moves notifies the owner
// (ShmGroup::need_nonblocking). True once the steps are finished.
bool poll_steps(ShmGroup& g, int me, Steps& steps, int until = 1 << 30);

std::unique_ptr<Steps> barrier_steps(const Local& l);
// sendbuf may be MPI_IN_PLACE. The buffers stay the caller's until finished.
std::unique_ptr<Steps> allreduce_steps(const Local& l, const void* sendbuf, void* recvbuf,
                                       int count, const mpi::Datatype* type, const mpi::Op* op);
// buf is significant everywhere; recvbuf at the root only.
std::unique_ptr<Steps> bcast_steps(const Local& l, void* buf, int count, const mpi::Datatype* type,
                                   int root);
std::unique_ptr<Steps> reduce_steps(const Local& l, const void* sendbuf, void* recvbuf, int count,
                                    const mpi::Datatype* type, const mpi::Op* op, int root);

void local_barrier(const Local& l);
void local_bcast(const Local& l, void* buf, int count, const mpi::Datatype* type, int root);
// recvbuf is significant at the root only; sendbuf may be MPI_IN_PLACE there.
void local_reduce(const Local& l, const void* sendbuf, void* recvbuf, int count,
                  const mpi::Datatype* type, const mpi::Op* op, int root);
void local_allreduce(const Local& l, const void* sendbuf, void* recvbuf, int count,
                     const mpi::Datatype* type, const mpi::Op* op);

// Data movement (shm_move.cpp): every member gives its own call's blocks
// (shm_data.hpp) and whether its data is in place (the root's block of a
// Gather or Scatter, an Allgather's or Alltoall's receive buffer); send or
// receive blocks the standard calls insignificant on a member are ignored
// there. `varying`: block sizes are known only to the two members a block
// joins (Gatherv, Scatterv, Alltoallv, Alltoallw). Gather: every member's
// send block 0 to the root's receive block k; Scatter the reverse; Allgather:
// send block 0 to everyone's receive block k; Alltoall: member k's send block
// j to member j's receive block k.
enum class MoveKind { Gather, Scatter, Allgather, Alltoall };
struct Movement {
    Blocks send, recv;
    bool in_place = false;
    bool varying = false;
    int root = 0;
};
// Nonblocking: keeps what the call's arguments point to that the caller may
// not keep (the w form's arrays) and references on the datatypes.
std::unique_ptr<Steps> move_steps(const Local& l, MoveKind kind, const Movement& m);
// Blocking; returns MPI_SUCCESS or MPI_ERR_TRUNCATE.
int local_move(const Local& l, MoveKind kind, const Movement& m);

// Reductions whose result differs per member (shm_scan.cpp), predefined
// operations: Reduce_scatter (member k gets counts[k] elements, or count
// each for Reduce_scatter_block when counts is null), Scan and Exscan (count
// elements). sendbuf may be MPI_IN_PLACE.
enum class PartKind { ReduceScatter, Scan, Exscan };
struct Partial {
    PartKind kind;
    const void* sendbuf;
    void* recvbuf;
    int count;
    const int* counts;
    const mpi::Datatype* type;
    const mpi::Op* op;
};
std::unique_ptr<Steps> partial_steps(const Local& l, const Partial& r);
void local_partial(const Local& l, const Partial& r);

// The leader (index 0) got a "go" from outside (the inter-node phase) that
// the others wait for: arrive() before it, depart() after. Everyone calls both.
void local_arrive(const Local& l);
void local_depart(const Local& l);

// Moves the packed bytes `data` of member `from` into (buf, count, type) of
// member `to`; the others only keep count. buf and data are significant at
// `to` and `from` respectively.
void local_handoff(const Local& l, int from, const void* data, int to, void* buf, int count,
                   const mpi::Datatype* type);

// Member `from` lends `data` (significant there) to member `to`, or to every
// member (`from` too) when to < 0: they run use(data) on it while `from`
// waits for them (one episode). Everyone calls it with the same from and to.
void local_lend_steps(const Local& l, int from, const void* data, int to,
                      void (*use)(void*, const void*), void* context);
template <class Use>
void local_lend(const Local& l, int from, const void* data, int to, Use&& use) {
    if (l.size() == 1) return use(data);
    local_lend_steps(
        l, from, data, to,
        [](void* u, const void* d) { (*static_cast<std::remove_reference_t<Use>*>(u))(d); }, &use);
}

}  // namespace mpc::coll::shm
