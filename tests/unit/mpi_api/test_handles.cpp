// mpi_api/handles: handle pools with per-thread caches of free indices.
#include <algorithm>
#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "mpi_api/handles.hpp"

using namespace mpc::mpi;

namespace {

struct Obj {
    int value = 0;
};
using Pool = HandlePool<Obj, HandleKind::Info>;

std::vector<int> allocate_n(Pool& pool, int n) {
    std::vector<int> handles(static_cast<size_t>(n));
    for (int& h : handles) {
        Obj* o = pool.allocate(&h);
        o->value = h;
    }
    return handles;
}

}  // namespace

TEST_CASE("handles allocated at once by several threads are distinct and live", "[handles]") {
    Pool pool(1);
    std::vector<std::vector<int>> got(4);
    std::vector<std::thread> threads;
    for (auto& mine : got)
        threads.emplace_back([&pool, &mine] {
            // Churn first, so that every thread's cache holds indices.
            for (int round = 0; round < 50; ++round)
                for (int h : allocate_n(pool, 100)) pool.release(h);
            mine = allocate_n(pool, 1000);
        });
    for (auto& t : threads) t.join();
    std::set<int> all;
    for (const auto& mine : got)
        for (int h : mine) {
            CHECK(all.insert(h).second);
            Obj* o = pool.lookup(h);
            REQUIRE(o != nullptr);
            CHECK(o->value == h);  // nobody else wrote into it
        }
    for (const auto& mine : got)
        for (int h : mine) pool.release(h);
    for (int h : all) CHECK(pool.lookup(h) == nullptr);
}

TEST_CASE("indices freed by one thread are reused by another", "[handles]") {
    Pool pool(1);
    std::vector<int> handles = allocate_n(pool, 10000);
    std::thread freer([&] {
        for (int h : handles) pool.release(h);
    });
    freer.join();  // its cache goes back to the pool at its exit
    std::vector<int> again = allocate_n(pool, 10000);
    uint32_t first = 0, highest = 0;
    for (int h : handles) first = std::max(first, handle_index(h));
    for (int h : again) highest = std::max(highest, handle_index(h));
    // No fresh batch: all came back (the allocating thread still holds the
    // rest of its last batch).
    CHECK(highest < first + 64);
}

TEST_CASE("two threads' handles never share a cache line of live flags", "[handles]") {
    Pool pool(1);
    std::vector<int> got[2];
    std::vector<std::thread> threads;
    std::atomic<int> finished{0};
    for (auto& mine : got)
        threads.emplace_back([&pool, &mine, &finished] {
            for (int round = 0; round < 1000; ++round) {
                std::vector<int> handles = allocate_n(pool, 3);
                mine.insert(mine.end(), handles.begin(), handles.end());
                for (int h : handles) pool.release(h);
            }
            // A thread's cache goes back to the pool when it exits, for any
            // thread to reuse: both stay until both are done.
            finished.fetch_add(1);
            while (finished.load() < 2) std::this_thread::yield();
        });
    for (auto& t : threads) t.join();
    std::set<uint32_t> lines;
    for (int h : got[0]) lines.insert(handle_index(h) / 64);
    for (int h : got[1]) CHECK(lines.count(handle_index(h) / 64) == 0);
}

TEST_CASE("a pool destroyed by the thread that used it leaves no stale cache", "[handles]") {
    for (int i = 0; i < 3; ++i) {
        Pool pool(1);
        for (int h : allocate_n(pool, 10)) pool.release(h);
        std::vector<int> handles = allocate_n(pool, 10);
        for (int h : handles) CHECK(pool.lookup(h) != nullptr);
    }
}
