// Stash and Overflow: last in first out, full and empty edges, spilling half,
// and a closed stash (a thread at its exit) that keeps nothing back.
#include <catch2/catch.hpp>
#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "runtime/stash.hpp"

using mpc::runtime::Overflow;
using mpc::runtime::Stash;

TEST_CASE("a stash gives back its items last in first out, up to its capacity", "[stash]") {
    Stash<int, 4> s;
    int v = -1;
    REQUIRE_FALSE(s.take(&v));
    for (int i = 0; i < 4; ++i) REQUIRE(s.keep(i));
    REQUIRE_FALSE(s.keep(99));  // full: the caller goes to the overflow
    REQUIRE(s.size() == 4);
    for (int i = 3; i >= 0; --i) {
        REQUIRE(s.take(&v));
        REQUIRE(v == i);
    }
    REQUIRE_FALSE(s.take(&v));
}

TEST_CASE("next() names the item the next take returns, and nothing when empty or closed",
          "[stash]") {
    Stash<int, 4> s;
    Overflow<int> o;
    REQUIRE(s.next() == nullptr);
    REQUIRE(s.keep(7));
    REQUIRE(s.keep(8));
    int v = -1;
    for (int want : {8, 7}) {
        REQUIRE(s.next() != nullptr);
        REQUIRE(*s.next() == want);
        REQUIRE(s.take(&v));
        REQUIRE(v == want);
    }
    REQUIRE(s.next() == nullptr);
    REQUIRE(s.keep(9));
    s.close(o);
    REQUIRE(s.next() == nullptr);
}

TEST_CASE("spilling half of a full stash moves its newer half to the overflow", "[stash]") {
    Stash<int, 6> s;
    Overflow<int> o;
    for (int i = 0; i < 6; ++i) REQUIRE(s.keep(i));
    s.spill_half(o);
    REQUIRE(s.size() == 3);
    REQUIRE(o.size() == 3);
    std::set<int> spilled;
    int v;
    while (o.take(&v)) spilled.insert(v);
    REQUIRE(spilled == std::set<int>{3, 4, 5});
    REQUIRE(s.keep(42));
    REQUIRE(s.take(&v));
    REQUIRE(v == 42);
}

TEST_CASE("a closed stash hands everything over and keeps nothing after", "[stash]") {
    Stash<int, 4> s;
    Overflow<int> o;
    REQUIRE(s.keep(1));
    REQUIRE(s.keep(2));
    s.close(o);
    REQUIRE_FALSE(s.open());
    REQUIRE(o.size() == 2);
    int v;
    REQUIRE_FALSE(s.take(&v));
    REQUIRE_FALSE(s.keep(3));  // the exiting thread's item goes to the overflow
    s.close(o);                // closing twice hands nothing over twice
    REQUIRE(o.size() == 2);
    REQUIRE(s.size() == 0);
}

TEST_CASE("threads exchanging through stashes and one overflow lose and duplicate nothing",
          "[stash]") {
    Overflow<int> o;
    constexpr int kThreads = 4, kPerThread = 5000;
    std::atomic<int> refused{0};  // Catch2's assertions are not for other threads
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            Stash<int, 8> s;
            // Put this thread's items through the stash, spilling when full.
            for (int i = 0; i < kPerThread; ++i) {
                const int item = t * kPerThread + i;
                if (!s.keep(item)) {
                    s.spill_half(o);
                    if (!s.keep(item)) refused.fetch_add(1);
                }
            }
            s.close(o);
        });
    }
    for (auto& th : threads) th.join();
    REQUIRE(refused.load() == 0);
    std::set<int> all;
    int v;
    while (o.take(&v)) REQUIRE(all.insert(v).second);
    REQUIRE(all.size() == static_cast<size_t>(kThreads * kPerThread));
}

TEST_CASE("an empty stash refills half its capacity from the overflow in one go", "[stash]") {
    Stash<int, 8> s;
    Overflow<int> o;
    for (int i = 0; i < 10; ++i) o.put(i);
    int v = -1;
    REQUIRE(s.take_or_refill(&v, o));
    REQUIRE(s.size() == 3);  // 4 came over, one was handed out
    REQUIRE(o.size() == 6);
    std::set<int> seen{v};
    while (s.take(&v)) seen.insert(v);
    REQUIRE(seen == std::set<int>{6, 7, 8, 9});
    // Both empty: nothing to hand out.
    Overflow<int> empty;
    REQUIRE_FALSE(s.take_or_refill(&v, empty));
}

TEST_CASE("a full stash spills its newer half before keeping one more", "[stash]") {
    Stash<int, 4> s;
    Overflow<int> o;
    for (int i = 0; i < 4; ++i) s.keep_or_spill(i, o);
    REQUIRE(o.size() == 0);
    s.keep_or_spill(4, o);
    REQUIRE(o.size() == 2);
    REQUIRE(s.size() == 3);
    int v;
    REQUIRE(s.take(&v));
    REQUIRE(v == 4);
    s.close(o);
    s.keep_or_spill(5, o);  // closed: straight to the overflow
    REQUIRE(o.size() == 5);
    REQUIRE(s.take_or_refill(&v, o));  // closed: from the overflow, nothing kept
    REQUIRE(s.size() == 0);
    REQUIRE(o.size() == 4);
}
