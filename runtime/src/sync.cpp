#include "runtime/sync.hpp"

#include <linux/futex.h>
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

}  // namespace mpc::runtime
