// Collectives among the members of one ShmGroup (shm_group.hpp): the whole
// communicator when it lives in this node process, or the node's part of a
// larger one (the intra-node phases of the hierarchical collectives, shm.cpp).
// Ranks and roots are indexes in the group. Every member of the group calls
// the same operations in the same order.
#pragma once

#include <cstdint>
#include <memory>

#include "mpi_api/datatype.hpp"
#include "mpi_api/op.hpp"
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

// A collective as resumable steps: advance() does every step it can and
// returns true once the collective is finished, or false with *need set to the
// episode every member must reach before it can go on. Making the steps
// reserves their episodes, so they are made in the members' common order.
// A nonblocking collective (shm.cpp) is advanced by whoever polls its owner's
// operations, one thread at a time.
class Steps {
  public:
    virtual ~Steps() = default;
    // Runs stages below `until` only (stopping there leaves *need 0).
    bool advance(uint64_t* need, int until = 1 << 30);

  protected:
    Steps(const Local& l, int episodes);
    const Local l_;
    const uint64_t e_;  // my first episode
    const int stages_;  // steps: one per episode, and one after the last
    // Stage k may run once every member is at needs(k): by default the episode
    // before it (its parity's slots are free again); nothing for steps
    // without episodes (a lone member's copy).
    virtual uint64_t needs(int k) const {
        return stages_ == 1 ? 0 : e_ - 1 + static_cast<uint64_t>(k);
    }

  private:
    virtual void run(int k) = 0;
    int stage_ = 0;
};

std::unique_ptr<Steps> barrier_steps(const Local& l);
// sendbuf may be MPI_IN_PLACE. The buffers stay the caller's until finished.
std::unique_ptr<Steps> allreduce_steps(const Local& l, const void* sendbuf, void* recvbuf,
                                       int count, const mpi::Datatype* type, const mpi::Op* op);

void local_barrier(const Local& l);
void local_bcast(const Local& l, void* buf, int count, const mpi::Datatype* type, int root);
// recvbuf is significant at the root only; sendbuf may be MPI_IN_PLACE there.
void local_reduce(const Local& l, const void* sendbuf, void* recvbuf, int count,
                  const mpi::Datatype* type, const mpi::Op* op, int root);
void local_allreduce(const Local& l, const void* sendbuf, void* recvbuf, int count,
                     const mpi::Datatype* type, const mpi::Op* op);

// The leader (index 0) got a "go" from outside (the inter-node phase) that
// the others wait for: arrive() before it, depart() after. Everyone calls both.
void local_arrive(const Local& l);
void local_depart(const Local& l);

// Moves the packed bytes `data` of member `from` into (buf, count, type) of
// member `to`; the others only keep count. buf and data are significant at
// `to` and `from` respectively.
void local_handoff(const Local& l, int from, const void* data, int to, void* buf, int count,
                   const mpi::Datatype* type);

}  // namespace mpc::coll::shm
