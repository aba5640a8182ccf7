// The exposed side of a rank's window, shared with every origin that reaches
// it: origins of this node process touch it directly (locks, counters,
// memory), and the message handler does it for origins of other node
// processes. Also the table that names target states in messages, and the
// passive-target lock.
//
// Lock fairness: a lock is a FIFO queue. A request is granted at once only
// when the lock is free for it and nobody waits; otherwise it queues, and a
// release grants from the head: one exclusive request, or every shared
// request up to the next exclusive one. So shared lockers never starve an
// exclusive one, whatever the mix of local and remote origins.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "rma/window.hpp"
#include "runtime/sync.hpp"

namespace mpc::rma {

// An origin waiting for a lock: one of this node process (its grant flag and
// its rank to wake) or of another (where to send the grant).
struct LockWaiter {
    bool exclusive = false;
    std::atomic<bool>* granted = nullptr;  // local origin
    RankState* origin = nullptr;
    int node = -1;  // remote origin
    uint32_t origin_id = 0;
    int origin_rank = 0;  // its rank in the window
};

struct TargetState {
    Win* win = nullptr;         // its rank's window
    RankState* rank = nullptr;  // rung when a counter below moves
    uintptr_t base = 0;
    MPI_Aint size = 0;
    int disp_unit = 1;
    bool dynamic = false;
    uint32_t id = 0;  // its name in messages (registry)

    // Passive target lock.
    runtime::SpinLock lock;
    int readers = 0;
    bool writer = false;
    std::deque<LockWaiter> waiters;

    // Accumulates that cannot use a CPU atomic (accumulate.hpp).
    runtime::SpinLock acc_lock;

    // PSCW: Win_complete calls received (as a target), Win_post calls
    // received per target (as an origin).
    std::atomic<int> completes{0};
    std::unique_ptr<std::atomic<int>[]> posts;

    // Dynamic windows: the attached regions.
    runtime::SpinLock regions_lock;
    std::vector<std::pair<uintptr_t, size_t>> regions;

    // Whether [offset, offset+len) of the window (an absolute address for
    // dynamic windows) is target memory; where it is.
    bool locate(uint64_t offset, uint64_t len, uintptr_t* addr);
};

// ---- Registry: ids for messages ------------------------------------------------
uint32_t register_target(TargetState* t);
void unregister_target(uint32_t id);
// The live target state named by id, or null (stale or forged id).
TargetState* find_target(uint32_t id);

// ---- The lock ------------------------------------------------------------------
// Grants w now (true) or queues it (false).
bool lock_acquire(TargetState& t, const LockWaiter& w);
// Releases one hold (exclusive or shared) and grants the next waiters: local
// ones through their flag, remote ones with a Grant message.
void lock_release(TargetState& t, bool exclusive);

}  // namespace mpc::rma
