// ib/rcache: the registration cache.
//
// Registering memory with the NIC is expensive, and rendezvous transfers
// register user buffers over and over: the cache keeps registrations after
// their last use (lazy deregistration, least recently used first out beyond a
// byte budget) and hands them out again for any range they cover. Memory that
// is freed or unmapped invalidates every registration overlapping it, so a
// stale registration (to pages the range no longer has) is never used again;
// an invalidated registration in use is deregistered when released.
#pragma once

#include <cstddef>
#include <cstdint>
#include <atomic>
#include <functional>
#include <list>
#include <map>
#include <mutex>

#include "ib/driver.hpp"

namespace mpc::ib {

class RegistrationCache {
public:
    using RegisterFn = std::function<bool(void* addr, size_t len, MemoryRegion* out)>;
    using DeregisterFn = std::function<void(MemoryRegion& mr)>;

    RegistrationCache(RegisterFn reg, DeregisterFn dereg, size_t max_cached_bytes);
    ~RegistrationCache();
    RegistrationCache(const RegistrationCache&) = delete;
    RegistrationCache& operator=(const RegistrationCache&) = delete;

    struct Entry;
    // A registration covering [addr, addr+len), cached or new; null when the
    // driver refuses to register the range, even after the cache dropped its
    // unused registrations to make room.
    Entry* acquire(const void* addr, size_t len);
    static const MemoryRegion& region(const Entry* e);
    void release(Entry* e);
    // [addr, addr+len) is being freed or unmapped.
    void invalidate(const void* addr, size_t len);

    struct Counters {
        uint64_t hits = 0, misses = 0, invalidated = 0, evicted = 0;
        uint64_t failures = 0;    // acquires the driver refused
        size_t cached_bytes = 0;  // registered bytes kept with no user
        size_t entries = 0;
    };
    Counters counters();
    // The byte budget of unused registrations; a smaller one evicts at once.
    size_t max_cached();
    void set_max_cached(size_t bytes);
    // True when at least one registration exists (cheap, lock-free).
    bool has_entries() const { return entries_.load(std::memory_order_relaxed) > 0; }

private:
    void drop_locked(Entry* e);   // remove from the map (and LRU)
    void evict_locked();
    void drop_unused_locked();  // deregister every registration nobody uses

    RegisterFn reg_;
    DeregisterFn dereg_;
    size_t max_cached_;
    std::mutex mutex_;
    std::multimap<uintptr_t, Entry*> by_start_;  // valid entries
    std::list<Entry*> lru_;                      // valid entries nobody uses, oldest first
    size_t max_length_ = 0;                      // longest entry: bounds overlap searches
    Counters counters_;
    std::atomic<size_t> entries_{0};
};

// The process's cache, for the memory hooks (null when no network runs).
void set_global_rcache(RegistrationCache* cache);

}  // namespace mpc::ib
