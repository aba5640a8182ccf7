// A lock taken by the threads of one rank, its fiber among them: a waiting
// fiber parks (its virtual processor runs the other ranks meanwhile, so a
// holder that waits in MPI for one of them gets its message), a waiting
// kernel thread sleeps. For locks a rank may hold across MPI calls (the
// OpenMP runtime's unnamed critical section under MPI_THREAD_SERIALIZED).
// Never for the runtime's own short critical sections (runtime/sync.hpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "runtime/sync.hpp"
#include "scheduler/scheduler.hpp"

namespace mpc::host {

class RankLock {
  public:
    void lock() {
        for (int spin = 0; spin < kSpins; ++spin) {
            if (try_lock()) return;
            runtime::cpu_relax();
        }
        sched::Waiter* me = sched::current_waiter();
        for (;;) {
            guard_.lock();
            // Held from here on as "with waiters": the next unlock looks.
            if (state_.exchange(kContended, std::memory_order_acquire) == kFree) {
                waiters_.erase(std::remove(waiters_.begin(), waiters_.end(), me), waiters_.end());
                guard_.unlock();
                return;
            }
            if (std::find(waiters_.begin(), waiters_.end(), me) == waiters_.end())
                waiters_.push_back(me);
            guard_.unlock();
            sched::park();  // maybe spuriously: look again
        }
    }

    bool try_lock() {
        uint32_t free = kFree;
        return state_.load(std::memory_order_relaxed) == kFree &&
               state_.compare_exchange_strong(free, kHeld, std::memory_order_acquire);
    }

    void unlock() {
        if (state_.exchange(kFree, std::memory_order_release) == kHeld) return;
        guard_.lock();
        sched::Waiter* next = nullptr;
        if (!waiters_.empty()) {
            next = waiters_.front();
            waiters_.erase(waiters_.begin());
        }
        guard_.unlock();
        if (next) next->unpark();
    }

  private:
    static constexpr uint32_t kFree = 0, kHeld = 1, kContended = 2;
    static constexpr int kSpins = 100;
    std::atomic<uint32_t> state_{kFree};
    runtime::SpinLock guard_;
    std::vector<sched::Waiter*> waiters_;  // in arrival order
};

}  // namespace mpc::host
