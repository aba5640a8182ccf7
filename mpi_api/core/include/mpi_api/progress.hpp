// mpi_api/progress: how a rank waits inside MPI.
//
// A waiting rank polls (the progress hook runs at every context switch, so
// yielding to the other tasks of its VP is polling too) for a bounded time,
// then parks until whoever completes what it waits for unparks it. Ranks that
// wait thus poll for the ranks that compute, and a VP whose ranks all wait
// ends up in its idle loop, which polls and finally sleeps.
#pragma once

#include <atomic>
#include <cstdint>

#include "mpi_api/progress_engine.hpp"
#include "mpi_api/rank.hpp"
#include "runtime/sync.hpp"
#include "runtime/tools.hpp"
#include "scheduler/scheduler.hpp"

namespace mpc::mpi {

// How long a waiting rank polls before it parks (MPC_WAIT_SPIN, default 50us).
// Read at every wait: an MPI_T tool may change it while ranks run.
extern std::atomic<int64_t> g_wait_spin_ns;
// How long it polls at most while the VPs share their cores (with each other,
// or with threads the ranks created): spinning then keeps the core from the
// thread that would end the wait.
inline constexpr int64_t kSharedWaitSpinNs = 5000;
// How long a thread a rank created (not a fiber) stays parked before it polls
// again. Network completions ring no doorbell until someone polls the
// network, and when the rank's own tasks are blocked (in pthread_join, say)
// no idle VP does: the parked threads must look themselves now and then.
inline constexpr int64_t kThreadParkNs = 1'000'000;

// Runs the MPI layer's poll function for the calling rank (its inbox, its
// network work, its operations in progress, and others' when collaborative).
bool poll_current();
// The same for a rank already known (me may be null: not a rank's thread);
// steal=false leaves the others' work alone this time. Polls are counted
// while the transport gate is open (MPI_T, MPC_STATS, the hang watch).
inline bool poll_rank(RankState* me, bool steal = true) {
    if (__builtin_expect(runtime::tools::g_transport.on(), 0) && me)
        me->polls.fetch_add(1, std::memory_order_relaxed);
    return poll(me ? me->local_index : -1, steal);
}

// A waiting rank starts serving the other ranks of its node process after this
// long. A short wait (a ping-pong's) is better spent on its own messages only:
// looking at the others' queues pulls their cache lines away from their owners
// and back, on every message.
inline constexpr int64_t kStealAfterNs = 2000;

// A rank that has waited kStealAfterNs tells the progress thread (progress
// mode thread) it may owe it work: the thread keeps polling, or wakes.
void nudge_progress_thread();

// The calling rank's doorbell (see RankState::doorbell), with the caller's
// entry. arm_doorbell returns false when the rank has operations to progress
// (progress_engine.hpp) that were flagged before the doorbell was armed: the
// caller must not park then.
bool arm_doorbell(Doorbell::Entry* entry, sched::Waiter* w);
void disarm_doorbell(Doorbell::Entry* entry);

// What a test (MPI_Test*, MPI_Iprobe, ...) that found nothing done does before
// it looks again: lets the other tasks of the caller's VP run, since the rank it
// waits for may be one of them (a rank spinning on MPI_Test would otherwise
// starve the ranks sharing its VP forever), or polls when none is runnable
// (and, on a thread of the rank's own, lets the kernel run another).
inline void progress_for_test() {
    poll_current();
    if (sched::others_runnable()) sched::yield();
    else sched::relax();
}

// Counts one wait of the calling rank and its length (TransportCounters)
// when the transport gate is open as it starts; costs a load otherwise.
class WaitRecord {
  public:
    WaitRecord() : start_(runtime::tools::g_transport.on() ? started() : 0) {}
    ~WaitRecord() {
        if (start_) finish();
    }
    // Counts nothing: the wait goes on under another record.
    void discard() { start_ = 0; }
    WaitRecord(const WaitRecord&) = delete;
    WaitRecord& operator=(const WaitRecord&) = delete;

  private:
    // Out of line: the waits of every MPI call inline this constructor.
    static int64_t started();
    void finish();
    int64_t start_;
};

// Waits until done(). arm(w) must arrange for w->unpark() to be called after
// done() becomes true; disarm(w) undoes it. Both may be called several times.
// own_operations: what it waits for are operations of the caller's rank
// (collectives, progress_engine.hpp) that the others then leave to it while
// it polls (RankState::self_polling).
template <class Done, class Arm, class Disarm>
void block_until(Done&& done, Arm&& arm, Disarm&& disarm, bool own_operations = false) {
    const WaitRecord record;
    RankState* const me = current_rank();
    int64_t start = -1;
    bool steal = false;
    struct SelfPolling {
        explicit SelfPolling(RankState* r) : rank(r) { set(true); }
        ~SelfPolling() { set(false); }
        void set(bool on) const {
            if (rank) rank->self_polling.store(on, std::memory_order_relaxed);
        }
        RankState* rank;
    } const self_polling(own_operations ? me : nullptr);
    for (unsigned spins = 0;; ++spins) {
        poll_rank(me, steal);
        if (done()) return;
        if (sched::others_runnable()) {
            sched::yield();
            if (done()) return;
        }
        // The clock every few rounds only: a round is a few cache misses.
        if (spins % 8 == 0 || start < 0) {
            int64_t now = runtime::now_ns();
            if (start < 0) start = now;
            steal = now - start >= kStealAfterNs;
            if (steal) nudge_progress_thread();
            if (now - start >= g_wait_spin_ns.load(std::memory_order_relaxed) ||
                (now - start >= kSharedWaitSpinNs && sched::cores_shared())) {
                sched::Waiter* w = sched::current_waiter();
                arm(w);
                Doorbell::Entry bell;
                if (arm_doorbell(&bell, w)) {
                    // Work that arrived between the last poll and the arming
                    // rang no bell: poll once more; anything later rings it.
                    poll_rank(me, true);
                    if (!done()) {
                        self_polling.set(false);  // parked: the others may serve it
                        sched::park_for(kThreadParkNs);
                        self_polling.set(true);
                    }
                }
                disarm_doorbell(&bell);
                disarm(w);
                if (done()) return;
                continue;
            }
        }
        runtime::cpu_relax();
    }
}

}  // namespace mpc::mpi
