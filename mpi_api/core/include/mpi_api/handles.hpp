// mpi_api/handles: integer handles <-> objects.
//
// A handle is 0x40000000 | kind << 24 | index, the same value in C and Fortran.
// Objects live in chunks that never move or get freed, so a lookup is two loads
// without a lock, and a stale handle never points at unmapped memory.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/log.hpp"
#include "runtime/stash.hpp"

namespace mpc::mpi {

enum class HandleKind : int {
    Comm = 1, Group = 2, Datatype = 3, Op = 4, Errhandler = 5, Request = 6, Info = 7,
    Win = 8, File = 9, Message = 10, Session = 11,
};

constexpr int make_handle(HandleKind kind, uint32_t index) {
    return static_cast<int>(0x40000000u | (static_cast<uint32_t>(kind) << 24) | index);
}
constexpr bool handle_is(int h, HandleKind kind) {
    return (static_cast<uint32_t>(h) & 0xff000000u) ==
           (0x40000000u | (static_cast<uint32_t>(kind) << 24));
}
constexpr uint32_t handle_index(int h) { return static_cast<uint32_t>(h) & 0x00ffffffu; }

// Pool of T addressed by index. Index 0 is never allocated (null handle);
// indices below `reserved` are for predefined objects, set up with at().
template <class T, HandleKind Kind>
class HandlePool {
    static constexpr uint32_t kChunkBits = 10;
    static constexpr uint32_t kChunk = 1u << kChunkBits;
    static constexpr uint32_t kMaxChunks = (1u << 24) / kChunk;

public:
    explicit HandlePool(uint32_t reserved = 1) : next_(reserved < 1 ? 1 : reserved) {}
    // Pools serving ranks live as long as the process (threads may free into
    // them at their exit); a shorter-lived one must only be used by the
    // thread that destroys it.
    ~HandlePool() {
        ThreadCache& tc = thread_cache();
        if (tc.pool == this) {
            tc.pool = nullptr;
            tc.stash.reset();
        }
        for (auto& c : chunks_) delete[] c.load();
    }

    // Object for index, creating its chunk if needed (for predefined objects).
    T* at(uint32_t index) {
        std::lock_guard<std::mutex> g(mutex_);
        return slot_locked(index);
    }

    // Allocates an object; returns it with its handle in *handle.
    T* allocate(int* handle) {
        ThreadCache& tc = thread_cache();
        if (!tc.pool) tc.pool = this;
        uint32_t index;
        T* obj;
        // An empty stash takes half its size from the overflow at once.
        if (tc.pool == this ? tc.stash.take_or_refill(&index, free_) : free_.take(&index)) {
            // Its chunk exists: it was allocated before.
            obj =
                &chunks_[index >> kChunkBits].load(std::memory_order_acquire)[index & (kChunk - 1)];
        } else {
            std::lock_guard<std::mutex> g(mutex_);
            index = fresh_locked(tc);
            obj = slot_locked(index);
        }
        live_[index >> kChunkBits]->flag[index & (kChunk - 1)].store(true,
                                                                     std::memory_order_release);
        *handle = make_handle(Kind, index);
        return obj;
    }

    void release(int handle) {
        uint32_t index = handle_index(handle);
        live_[index >> kChunkBits]->flag[index & (kChunk - 1)].store(false,
                                                                     std::memory_order_release);
        ThreadCache& tc = thread_cache();
        if (!tc.pool) tc.pool = this;
        if (tc.pool != this) {
            free_.put(index);
            return;
        }
        // Full: half of it goes back for the other threads (closed, at thread
        // exit: the index goes to them).
        tc.stash.keep_or_spill(index, free_);
    }

    // The live object behind handle, or nullptr (wrong kind, null, freed).
    T* lookup(int handle) const {
        if (!handle_is(handle, Kind)) return nullptr;
        uint32_t index = handle_index(handle);
        uint32_t c = index >> kChunkBits;
        if (c >= kMaxChunks) return nullptr;
        T* chunk = chunks_[c].load(std::memory_order_acquire);
        if (!chunk || !live_[c]->flag[index & (kChunk - 1)].load(std::memory_order_acquire))
            return nullptr;
        return &chunk[index & (kChunk - 1)];
    }

    // Calls f(T*) on every live object, under the pool's lock (diagnostics).
    template <class F>
    void for_each_live(F&& f) const {
        std::lock_guard<std::mutex> g(mutex_);
        for (uint32_t c = 0; c < kMaxChunks; ++c) {
            T* chunk = chunks_[c].load(std::memory_order_acquire);
            if (!chunk) break;
            for (uint32_t i = 0; i < kChunk; ++i)
                if (live_[c]->flag[i].load(std::memory_order_acquire)) f(&chunk[i]);
        }
    }

    // Marks a predefined (reserved) index live.
    void mark_live(uint32_t index) {
        std::lock_guard<std::mutex> g(mutex_);
        slot_locked(index);
        live_[index >> kChunkBits]->flag[index & (kChunk - 1)].store(true,
                                                                     std::memory_order_release);
    }

private:
    static constexpr uint32_t kBatch = 64;

    // The next n indices (n <= kBatch, and a batch never crosses a chunk).
    uint32_t fresh_locked(uint32_t n) {
        const uint32_t index = next_;
        next_ += n;
        if (next_ > (kMaxChunks << kChunkBits))
            runtime::fatal("out of MPI handles (more than 16 million objects alive)");
        return index;
    }

    T* slot_locked(uint32_t index) {
        uint32_t c = index >> kChunkBits;
        T* chunk = chunks_[c].load(std::memory_order_relaxed);
        if (!chunk) {
            chunk = new T[kChunk];
            live_[c].reset(new LiveFlags());
            chunks_[c].store(chunk, std::memory_order_release);
        }
        return &chunk[index & (kChunk - 1)];
    }

    // Free indices a thread keeps for itself (for one pool per type: the
    // first it allocates from or frees into). Requests come and go with every
    // nonblocking call, mostly on one thread; without this every rank of the
    // node process would take the pool's lock twice per call (it cost 2 us per
    // Iallreduce + Wait between two ranks, most of it in futex calls). Room
    // for a window of 64 receives and 64 sends with some to spare: with 64,
    // each such window went to the overflow for half its requests, and two
    // ranks exchanging windows both ways met in its lock.
    static constexpr uint32_t kCacheSize = 256;
    static_assert(kBatch - 1 <= kCacheSize && kChunk % kBatch == 0);
    struct ThreadCache {
        HandlePool* pool = nullptr;
        runtime::Stash<uint32_t, kCacheSize> stash;
        ~ThreadCache() {
            if (pool) stash.close(pool->free_);
        }
    };
    // A function-local thread_local: GCC 12 with UBSan saw a null address
    // for the same cache as an inline static member of this template.
    static ThreadCache& thread_cache() {
        static thread_local ThreadCache cache;
        return cache;
    }

    // A fresh index. The pool's own threads get a batch of them whose live
    // flags fill a cache line, the rest kept in their stash: two threads'
    // handles (the flags they write at every allocation and release, and
    // mostly the objects) never share a line.
    uint32_t fresh_locked(ThreadCache& tc) {
        if (tc.pool != this || tc.stash.size() != 0 || !tc.stash.open()) return fresh_locked(1);
        next_ = (next_ + kBatch - 1) / kBatch * kBatch;
        const uint32_t index = fresh_locked(kBatch);
        for (uint32_t i = kBatch - 1; i >= 1; --i) (void)tc.stash.keep(index + i);
        return index;
    }

    mutable std::mutex mutex_;  // chunks and fresh indices
    uint32_t next_;
    runtime::Overflow<uint32_t> free_;  // released indices no thread keeps
    std::array<std::atomic<T*>, kMaxChunks> chunks_{};
    struct alignas(64) LiveFlags {
        std::atomic<bool> flag[kChunk] = {};
    };
    std::array<std::unique_ptr<LiveFlags>, kMaxChunks> live_{};
};

}  // namespace mpc::mpi
