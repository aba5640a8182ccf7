// runtime/sync: the asymmetric fences keep a Dekker handshake correct.
#include <atomic>
#include <thread>

#include <catch2/catch.hpp>

#include "runtime/sync.hpp"

using namespace mpc::runtime;

namespace {

// Each round: one side stores x then reads y across a light fence, the other
// stores y then reads x across a heavy fence. With working fences at least
// one side sees the other's store; without them x86 lets both loads pass
// their stores (both read 0) within a few thousand rounds.
int rounds_where_both_missed(int rounds) {
    alignas(64) std::atomic<int> x{0};
    alignas(64) std::atomic<int> y{0};
    alignas(64) std::atomic<int> go{0};
    alignas(64) std::atomic<int> done{0};
    int seen_by_light = 0, seen_by_heavy = 0, both_missed = 0;
    std::thread heavy([&] {
        for (int r = 1; r <= rounds; ++r) {
            while (go.load(std::memory_order_acquire) != r) cpu_relax();
            y.store(1, std::memory_order_relaxed);
            heavy_fence();
            seen_by_heavy = x.load(std::memory_order_relaxed);
            done.store(r, std::memory_order_release);
        }
    });
    for (int r = 1; r <= rounds; ++r) {
        x.store(0, std::memory_order_relaxed);
        y.store(0, std::memory_order_relaxed);
        go.store(r, std::memory_order_release);
        x.store(1, std::memory_order_relaxed);
        light_fence();
        seen_by_light = y.load(std::memory_order_relaxed);
        while (done.load(std::memory_order_acquire) != r) cpu_relax();
        if (!seen_by_light && !seen_by_heavy) ++both_missed;
    }
    heavy.join();
    return both_missed;
}

}  // namespace

TEST_CASE("light and heavy fences order a store before a load on both sides", "[sync]") {
    CHECK(rounds_where_both_missed(20000) == 0);
}
