// runtime/sync: the few synchronisation primitives every room shares.
//
// A spin lock for short critical sections (matching queues, run-queue inboxes),
// futex wait/wake for sleeping without a condition variable, asymmetric
// fences, and a monotonic clock. Nothing here allocates or blocks except
// futex_wait.
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>

namespace mpc::runtime {

inline constexpr std::size_t kCacheLine = 64;

// sched_yield(): lets another thread of this core run, if any.
void yield_core();

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

// Asks for the cache line at p in the exclusive state, to be written soon: a
// line another core reads is then taken over while this one goes on, instead
// of in the store that needs it (where a later fence would wait for it).
inline void prefetch_for_write(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
    asm volatile("prefetchw %0" ::"m"(*static_cast<const char*>(p)));  // (no -mprfchw needed)
#else
    __builtin_prefetch(p, 1);
#endif
}

// Spins until done(), for waits of a few microseconds at most: a waiter that
// spun long gives its core to the OS, since where threads outnumber cores the
// one it waits for may be preempted (in a system call waking a thread, say),
// and spinning would only burn the rest of the time slice it needs.
template <class Done>
void spin_until(Done&& done) {
    constexpr int kSpinsBeforeYield = 256;
    for (int spins = 0; !done(); ++spins) {
        if (spins < kSpinsBeforeYield) {
            cpu_relax();
        } else {
            yield_core();
            spins = 0;
        }
    }
}

// Test-and-test-and-set lock. Holders must not block or switch fibers.
class SpinLock {
public:
    void lock() {
        while (flag_.exchange(true, std::memory_order_acquire))
            spin_until([this] { return !flag_.load(std::memory_order_relaxed); });
    }
    bool try_lock() {
        return !flag_.load(std::memory_order_relaxed) &&
               !flag_.exchange(true, std::memory_order_acquire);
    }
    void unlock() { flag_.store(false, std::memory_order_release); }

private:
    std::atomic<bool> flag_{false};
};

// Sleeps while *word == expected (or until timeout_ns elapses, if > 0). Spurious
// wake-ups are possible; callers re-check their condition.
void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, int64_t timeout_ns = 0);
void futex_wake_one(std::atomic<uint32_t>* word);
void futex_wake_all(std::atomic<uint32_t>* word);

// Asymmetric fences, for a Dekker handshake whose two sides are unequal: a
// fast side that runs often (a publisher: store its progress, then look
// whether anyone sleeps) and a slow side that runs rarely (a waiter about to
// sleep: register, then look at the progress). Each side needs a full fence
// between its store and its load; light_fence() costs the fast side only a
// compiler barrier, because heavy_fence() makes every running thread of the
// process execute a full barrier (membarrier(2), private expedited). Where the
// kernel lacks membarrier, both are full fences.
extern std::atomic<bool> g_membarrier_ready;
inline void light_fence() {
    if (g_membarrier_ready.load(std::memory_order_relaxed))
        std::atomic_signal_fence(std::memory_order_seq_cst);
    else
        std::atomic_thread_fence(std::memory_order_seq_cst);
}
void heavy_fence();

inline int64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace mpc::runtime
