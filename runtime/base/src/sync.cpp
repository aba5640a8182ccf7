#include "runtime/sync.hpp"

#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace mpc::runtime {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

void yield_core() { sched_yield(); }

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, int64_t timeout_ns) {
    timespec ts{};
    timespec* tsp = nullptr;
    if (timeout_ns > 0) {
        ts.tv_sec = timeout_ns / 1000000000;
        ts.tv_nsec = timeout_ns % 1000000000;
        tsp = &ts;
    }
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, tsp,
            nullptr, 0);
}

void futex_wake_one(std::atomic<uint32_t>* word) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, 1, nullptr,
            nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>* word) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, 0x7fffffff,
            nullptr, nullptr, 0);
}

std::atomic<bool> g_membarrier_ready{false};

namespace {

long membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0, 0); }

// Registers the process for private expedited barriers; false where the
// kernel (or a seccomp filter) does not offer them.
bool register_membarrier() {
    const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
    return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

// At load, before any thread of ours runs: from here on every heavy fence is
// a membarrier, so light fences may stop fencing.
[[maybe_unused]] const bool g_registered = [] {
    g_membarrier_ready.store(register_membarrier(), std::memory_order_relaxed);
    return true;
}();

}  // namespace

void heavy_fence() {
    if (g_membarrier_ready.load(std::memory_order_relaxed)) {
        if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
        // (A forked child inherits the flag, not the registration: register again.)
        if (register_membarrier() && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace mpc::runtime
