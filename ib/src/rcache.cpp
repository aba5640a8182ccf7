#include "rcache.hpp"

#include <unistd.h>

#include <atomic>

#include "ib/network.hpp"

namespace mpc::ib {

struct RegistrationCache::Entry {
    uintptr_t start = 0, end = 0;
    MemoryRegion mr;
    int users = 0;
    bool valid = true;
    std::list<Entry*>::iterator lru_pos;
    bool in_lru = false;
};

namespace {

uintptr_t page_size() {
    static const uintptr_t p = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    return p;
}

std::atomic<RegistrationCache*> g_cache{nullptr};
thread_local bool tl_in_cache = false;  // the cache's own frees must not re-enter it

struct Guard {
    bool entered;
    Guard() : entered(!tl_in_cache) { tl_in_cache = true; }
    ~Guard() {
        if (entered) tl_in_cache = false;
    }
};

}  // namespace

RegistrationCache::RegistrationCache(RegisterFn reg, DeregisterFn dereg, size_t max_cached_bytes)
    : reg_(std::move(reg)), dereg_(std::move(dereg)), max_cached_(max_cached_bytes) {}

RegistrationCache::~RegistrationCache() {
    Guard g;
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [start, e] : by_start_) {
        dereg_(e->mr);
        delete e;
    }
    by_start_.clear();
    lru_.clear();
}

const MemoryRegion& RegistrationCache::region(const Entry* e) { return e->mr; }

RegistrationCache::Entry* RegistrationCache::acquire(const void* addr, size_t len) {
    Guard g;
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    const uintptr_t end = a + (len ? len : 1);
    std::lock_guard<std::mutex> lock(mutex_);
    // Candidates start at most max_length_ before a.
    auto it = by_start_.upper_bound(a);
    while (it != by_start_.begin()) {
        --it;
        Entry* e = it->second;
        if (a - e->start > max_length_) break;
        if (e->start <= a && e->end >= end) {
            if (e->in_lru) {
                lru_.erase(e->lru_pos);
                e->in_lru = false;
                counters_.cached_bytes -= e->end - e->start;
            }
            e->users++;
            counters_.hits++;
            return e;
        }
    }
    counters_.misses++;
    // Register whole pages: neighbouring buffers then share registrations.
    const uintptr_t p = page_size();
    auto* e = new Entry();
    e->start = a & ~(p - 1);
    e->end = (end + p - 1) & ~(p - 1);
    if (!reg_(reinterpret_cast<void*>(e->start), e->end - e->start, &e->mr)) {
        // The NIC or the locked-memory limit may be full of registrations
        // nobody uses: drop them and try once more before giving up.
        const bool had_unused = !lru_.empty();
        drop_unused_locked();
        if (!had_unused || !reg_(reinterpret_cast<void*>(e->start), e->end - e->start, &e->mr)) {
            counters_.failures++;
            delete e;
            return nullptr;
        }
    }
    e->users = 1;
    by_start_.emplace(e->start, e);
    if (e->end - e->start > max_length_) max_length_ = e->end - e->start;
    counters_.entries = by_start_.size();
    entries_.store(counters_.entries, std::memory_order_relaxed);
    return e;
}

void RegistrationCache::release(Entry* e) {
    Guard g;
    std::lock_guard<std::mutex> lock(mutex_);
    if (--e->users > 0) return;
    if (!e->valid) {
        dereg_(e->mr);
        delete e;
        return;
    }
    lru_.push_back(e);
    e->lru_pos = std::prev(lru_.end());
    e->in_lru = true;
    counters_.cached_bytes += e->end - e->start;
    evict_locked();
}

size_t RegistrationCache::max_cached() {
    std::lock_guard<std::mutex> lock(mutex_);
    return max_cached_;
}

void RegistrationCache::set_max_cached(size_t bytes) {
    Guard g;
    std::lock_guard<std::mutex> lock(mutex_);
    max_cached_ = bytes;
    evict_locked();
}

void RegistrationCache::drop_locked(Entry* e) {
    auto range = by_start_.equal_range(e->start);
    for (auto it = range.first; it != range.second; ++it) {
        if (it->second == e) {
            by_start_.erase(it);
            break;
        }
    }
    if (e->in_lru) {
        lru_.erase(e->lru_pos);
        e->in_lru = false;
        counters_.cached_bytes -= e->end - e->start;
    }
    counters_.entries = by_start_.size();
    entries_.store(counters_.entries, std::memory_order_relaxed);
}

void RegistrationCache::evict_locked() {
    while (counters_.cached_bytes > max_cached_ && !lru_.empty()) {
        Entry* e = lru_.front();
        drop_locked(e);
        dereg_(e->mr);
        delete e;
        counters_.evicted++;
    }
}

void RegistrationCache::drop_unused_locked() {
    while (!lru_.empty()) {
        Entry* e = lru_.front();
        drop_locked(e);
        dereg_(e->mr);
        delete e;
        counters_.evicted++;
    }
}

void RegistrationCache::invalidate(const void* addr, size_t len) {
    if (!has_entries() || len == 0) return;
    Guard g;
    if (!g.entered) return;
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    const uintptr_t end = a + len;
    std::lock_guard<std::mutex> lock(mutex_);
    const uintptr_t from = a > max_length_ ? a - max_length_ : 0;
    for (auto it = by_start_.lower_bound(from); it != by_start_.end() && it->first < end;) {
        Entry* e = it->second;
        ++it;
        if (e->end <= a) continue;
        e->valid = false;
        drop_locked(e);
        counters_.invalidated++;
        if (e->users == 0) {
            dereg_(e->mr);
            delete e;
        }
    }
}

RegistrationCache::Counters RegistrationCache::counters() {
    std::lock_guard<std::mutex> lock(mutex_);
    return counters_;
}

void set_global_rcache(RegistrationCache* cache) { g_cache.store(cache); }

void memory_released(const void* addr, size_t len) {
    RegistrationCache* c = g_cache.load(std::memory_order_acquire);
    if (c && c->has_entries() && !tl_in_cache) c->invalidate(addr, len);
}

}  // namespace mpc::ib
