// The registration cache with fake register/deregister callbacks: hits,
// lazy deregistration within the byte budget, eviction, and invalidation when
// memory is freed or unmapped and re-allocated at the same address; a full
// NIC makes the cache drop what nobody uses before it gives up.
#include <sys/mman.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <set>

#include "../../../ib/src/rcache.hpp"

using mpc::ib::MemoryRegion;
using mpc::ib::RegistrationCache;

namespace {

struct FakeNic {
    std::map<uint64_t, std::pair<uintptr_t, size_t>> live;  // key -> range
    uint64_t next = 1;
    int regs = 0, deregs = 0;
    size_t limit = SIZE_MAX;  // bytes the NIC can hold registered (a locked-memory limit)
    size_t pinned = 0;

    RegistrationCache make(size_t budget) {
        return RegistrationCache(
            [this](void* addr, size_t len, MemoryRegion* out) {
                if (len > limit - pinned) return false;
                pinned += len;
                out->addr = addr;
                out->length = len;
                out->remote_key = next++;
                live[out->remote_key] = {reinterpret_cast<uintptr_t>(addr), len};
                ++regs;
                return true;
            },
            [this](MemoryRegion& mr) {
                REQUIRE(live.count(mr.remote_key) == 1);  // never deregistered twice
                pinned -= live[mr.remote_key].second;
                live.erase(mr.remote_key);
                ++deregs;
            },
            budget);
    }
};

}  // namespace

TEST_CASE("a cached registration is reused for any range it covers", "[rcache]") {
    FakeNic nic;
    RegistrationCache cache = nic.make(1 << 30);
    std::vector<char> buf(1 << 20);
    auto* a = cache.acquire(buf.data(), buf.size());
    REQUIRE(a);
    cache.release(a);
    auto* b = cache.acquire(buf.data() + 4096, 8192);  // inside: a hit
    REQUIRE(b == a);
    cache.release(b);
    CHECK(nic.regs == 1);
    CHECK(nic.deregs == 0);  // lazily kept
    CHECK(cache.counters().hits == 1);
}

TEST_CASE("unused registrations beyond the budget are evicted oldest first", "[rcache]") {
    FakeNic nic;
    RegistrationCache cache = nic.make(3 * 65536);
    std::vector<std::vector<char>> bufs(5, std::vector<char>(60000));
    for (auto& b : bufs) cache.release(cache.acquire(b.data(), b.size()));
    CHECK(nic.regs == 5);
    CHECK(nic.deregs >= 2);
    CHECK(cache.counters().cached_bytes <= 3 * 65536);
}

TEST_CASE("unmapping and mapping again at the same address invalidates", "[rcache]") {
    FakeNic nic;
    RegistrationCache cache = nic.make(1 << 30);
    const size_t len = 1 << 20;
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    auto* e1 = cache.acquire(p, len);
    uint64_t key1 = RegistrationCache::region(e1).remote_key;
    cache.release(e1);
    // What the memory hooks report when the program unmaps the buffer.
    cache.invalidate(p, len);
    munmap(p, len);
    CHECK(nic.deregs == 1);
    void* q = mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    REQUIRE(q == p);  // same address, new pages
    auto* e2 = cache.acquire(q, len);
    CHECK(RegistrationCache::region(e2).remote_key != key1);  // a fresh registration
    CHECK(nic.regs == 2);
    cache.release(e2);
    munmap(q, len);
}

TEST_CASE("a registration invalidated while in use is deregistered on release", "[rcache]") {
    FakeNic nic;
    RegistrationCache cache = nic.make(1 << 30);
    std::vector<char> buf(100000);
    auto* e = cache.acquire(buf.data(), buf.size());
    cache.invalidate(buf.data() + 50000, 10);  // overlaps
    CHECK(nic.deregs == 0);                      // still in use
    auto* f = cache.acquire(buf.data(), buf.size());
    CHECK(f != e);                               // never handed out again
    cache.release(e);
    CHECK(nic.deregs == 1);
    cache.release(f);
    CHECK(cache.counters().invalidated == 1);
}

TEST_CASE("invalidation of unrelated memory keeps registrations", "[rcache]") {
    FakeNic nic;
    RegistrationCache cache = nic.make(1 << 30);
    std::vector<char> a(100000), b(100000);
    cache.release(cache.acquire(a.data(), a.size()));
    const uintptr_t pa = reinterpret_cast<uintptr_t>(a.data()), pb = reinterpret_cast<uintptr_t>(b.data());
    // Only test when the two buffers do not share pages.
    if (pb > pa + a.size() + 8192 || pa > pb + b.size() + 8192) {
        cache.invalidate(b.data(), b.size());
        CHECK(nic.deregs == 0);
        auto* e = cache.acquire(a.data(), a.size());
        CHECK(cache.counters().hits == 1);
        cache.release(e);
    }
}

TEST_CASE("a refused registration drops unused ones and retries, then fails cleanly", "[rcache]") {
    FakeNic nic;
    nic.limit = 4 * 65536;
    RegistrationCache cache = nic.make(1 << 30);  // the budget alone would keep them all
    std::vector<std::vector<char>> bufs(4, std::vector<char>(60000));
    for (auto& b : bufs) cache.release(cache.acquire(b.data(), b.size()));
    CHECK(cache.counters().cached_bytes > 0);
    // The NIC is full of unused registrations: a new one still succeeds.
    std::vector<char> big(3 * 65536);
    auto* e = cache.acquire(big.data(), big.size());
    REQUIRE(e);
    CHECK(cache.counters().cached_bytes == 0);
    CHECK(cache.counters().failures == 0);
    // Held registrations cannot be dropped: now it fails, and says so.
    std::vector<char> more(2 * 65536);
    CHECK(cache.acquire(more.data(), more.size()) == nullptr);
    CHECK(cache.counters().failures == 1);
    cache.release(e);
    auto* again = cache.acquire(more.data(), more.size());
    CHECK(again);
    if (again) cache.release(again);
}
