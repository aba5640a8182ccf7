// A table of in-flight operations addressed by 64-bit ids (index + generation)
// that travel on the wire: a stale or forged id is detected, never followed.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "runtime/sync.hpp"

namespace mpc::ib {

template <class T>
class OpTable {
public:
    // Stores a new operation; returns its id.
    uint64_t add(T* op) {
        std::lock_guard<runtime::SpinLock> g(lock_);
        uint32_t index;
        if (!free_.empty()) {
            index = free_.back();
            free_.pop_back();
        } else {
            index = static_cast<uint32_t>(slots_.size());
            slots_.push_back(Slot{});
        }
        Slot& s = slots_[index];
        s.op = op;
        return (static_cast<uint64_t>(s.generation) << 32) | index;
    }
    // The operation for id, or null when the id is unknown or stale.
    T* find(uint64_t id) {
        std::lock_guard<runtime::SpinLock> g(lock_);
        uint32_t index = static_cast<uint32_t>(id);
        if (index >= slots_.size()) return nullptr;
        Slot& s = slots_[index];
        if (s.generation != static_cast<uint32_t>(id >> 32)) return nullptr;
        return s.op;
    }
    // Removes id; returns its operation (null when unknown).
    T* remove(uint64_t id) {
        std::lock_guard<runtime::SpinLock> g(lock_);
        uint32_t index = static_cast<uint32_t>(id);
        if (index >= slots_.size()) return nullptr;
        Slot& s = slots_[index];
        if (s.generation != static_cast<uint32_t>(id >> 32) || !s.op) return nullptr;
        T* op = s.op;
        s.op = nullptr;
        s.generation++;
        free_.push_back(index);
        return op;
    }
    // 32-bit form of an id (for RDMA immediate data): 24 bits of index and the
    // low 8 bits of the generation. Requires fewer than 2^24 slots.
    static uint32_t compact(uint64_t id) {
        return (static_cast<uint32_t>(id >> 32) & 0xffu) << 24 | (static_cast<uint32_t>(id) & 0xffffffu);
    }
    // The full id of a compact one, or 0 when it names no live operation.
    uint64_t expand(uint32_t compact_id) {
        std::lock_guard<runtime::SpinLock> g(lock_);
        uint32_t index = compact_id & 0xffffffu;
        if (index >= slots_.size()) return 0;
        const Slot& s = slots_[index];
        if (!s.op || (s.generation & 0xffu) != compact_id >> 24) return 0;
        return (static_cast<uint64_t>(s.generation) << 32) | index;
    }
    // Removes every operation and returns them (teardown).
    std::vector<T*> take_all() {
        std::lock_guard<runtime::SpinLock> g(lock_);
        std::vector<T*> ops;
        for (uint32_t i = 0; i < slots_.size(); ++i) {
            Slot& s = slots_[i];
            if (!s.op) continue;
            ops.push_back(s.op);
            s.op = nullptr;
            s.generation++;
            free_.push_back(i);
        }
        return ops;
    }
    // Calls f(op) for every live operation, under the table's lock: an
    // operation is removed before it is freed, so none goes away meanwhile.
    // For diagnostics; f must not take other locks.
    template <class F>
    void for_each(F f) {
        std::lock_guard<runtime::SpinLock> g(lock_);
        for (const Slot& s : slots_)
            if (s.op) f(s.op);
    }
    size_t live() {
        std::lock_guard<runtime::SpinLock> g(lock_);
        return slots_.size() - free_.size();
    }

private:
    struct Slot {
        T* op = nullptr;
        uint32_t generation = 1;
    };
    runtime::SpinLock lock_;
    std::deque<Slot> slots_;  // deque: slots never move
    std::vector<uint32_t> free_;
};

}  // namespace mpc::ib
