// The exposed side of windows: the registry naming target states in
// messages, where an offset lies in target memory, and the passive-target
// lock with its FIFO queue (target.hpp).
#include "target.hpp"

#include <mutex>

#include "remote.hpp"

namespace mpc::rma {
namespace {

// An id is generation << 20 | index: a window freed and its slot reused gets
// another id, so a late message for the old one is dropped.
constexpr uint32_t kIndexBits = 20;
constexpr uint32_t kIndexMask = (1u << kIndexBits) - 1;

struct Registry {
    runtime::SpinLock lock;
    struct Slot {
        TargetState* target = nullptr;
        uint32_t generation = 1;
    };
    std::vector<Slot> slots;
    std::vector<uint32_t> free;
};
Registry g_registry;

uint32_t make_id(uint32_t index, uint32_t generation) {
    return ((generation & ((1u << (32 - kIndexBits)) - 1)) << kIndexBits) | index;
}

}  // namespace

uint32_t register_target(TargetState* t) {
    std::lock_guard<runtime::SpinLock> g(g_registry.lock);
    uint32_t index;
    if (!g_registry.free.empty()) {
        index = g_registry.free.back();
        g_registry.free.pop_back();
    } else {
        index = static_cast<uint32_t>(g_registry.slots.size());
        if (index > kIndexMask) runtime::fatal("more than a million windows alive");
        g_registry.slots.emplace_back();
    }
    Registry::Slot& s = g_registry.slots[index];
    s.target = t;
    // Generation 0 never appears: id 0 names no window.
    if ((s.generation & ((1u << (32 - kIndexBits)) - 1)) == 0) s.generation++;
    return make_id(index, s.generation);
}

void unregister_target(uint32_t id) {
    std::lock_guard<runtime::SpinLock> g(g_registry.lock);
    const uint32_t index = id & kIndexMask;
    if (index >= g_registry.slots.size()) return;
    Registry::Slot& s = g_registry.slots[index];
    if (make_id(index, s.generation) != id) return;
    s.target = nullptr;
    s.generation++;
    g_registry.free.push_back(index);
}

TargetState* find_target(uint32_t id) {
    std::lock_guard<runtime::SpinLock> g(g_registry.lock);
    const uint32_t index = id & kIndexMask;
    if (index >= g_registry.slots.size()) return nullptr;
    const Registry::Slot& s = g_registry.slots[index];
    return make_id(index, s.generation) == id ? s.target : nullptr;
}

bool TargetState::locate(uint64_t offset, uint64_t len, uintptr_t* addr) {
    if (!dynamic) {
        const uint64_t limit = static_cast<uint64_t>(size);
        if (offset > limit || len > limit - offset) return false;
        *addr = base + static_cast<uintptr_t>(offset);
        return true;
    }
    std::lock_guard<runtime::SpinLock> g(regions_lock);
    for (const auto& [start, n] : regions) {
        if (offset >= start && offset - start <= n && len <= n - (offset - start)) {
            *addr = static_cast<uintptr_t>(offset);
            return true;
        }
    }
    return false;
}

// ---- The lock ------------------------------------------------------------------

bool lock_acquire(TargetState& t, const LockWaiter& w) {
    std::lock_guard<runtime::SpinLock> g(t.lock);
    const bool free_for_it = w.exclusive ? !t.writer && t.readers == 0 : !t.writer;
    if (t.waiters.empty() && free_for_it) {
        if (w.exclusive)
            t.writer = true;
        else
            t.readers++;
        return true;
    }
    t.waiters.push_back(w);
    return false;
}

void lock_release(TargetState& t, bool exclusive) {
    // Grants are told after the lock is released: a message may block briefly.
    LockWaiter granted[16];
    int n = 0;
    std::vector<LockWaiter> more;
    {
        std::lock_guard<runtime::SpinLock> g(t.lock);
        if (exclusive)
            t.writer = false;
        else if (t.readers > 0)
            t.readers--;
        while (!t.waiters.empty()) {
            const LockWaiter& head = t.waiters.front();
            if (head.exclusive) {
                if (t.writer || t.readers > 0) break;
                t.writer = true;
            } else {
                if (t.writer) break;
                t.readers++;
            }
            if (n < 16)
                granted[n++] = head;
            else
                more.push_back(head);
            t.waiters.pop_front();
            if (t.writer) break;
        }
    }
    auto tell = [&](const LockWaiter& w) {
        if (w.granted) {
            w.granted->store(true, std::memory_order_release);
            w.origin->doorbell.ring();
            return;
        }
        AmHeader h{};
        h.type = Am::Grant;
        h.from_rank = t.win->rank;
        h.from_id = t.id;
        h.to_id = w.origin_id;
        send_am(w.node, h, nullptr, nullptr, 0);
    };
    for (int i = 0; i < n; ++i) tell(granted[i]);
    for (const LockWaiter& w : more) tell(w);
}

}  // namespace mpc::rma
