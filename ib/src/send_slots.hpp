// Bookkeeping of the sends and writes posted on one connection.
//
// Every post takes a slot that travels as the operation's context and comes
// back with its completion: it bounds the operations in flight per connection
// to send_queue_depth (libfabric's tcp provider queues without limit, so the
// bound must be ours) and remembers what the caller needs in the completion,
// even when the provider reports a failure without saying which kind of
// operation failed (verbs gives no opcode for failed work requests).
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "ib/driver.hpp"
#include "runtime/sync.hpp"

namespace mpc::ib {

class SendSlots;

struct SendSlot {
    uint64_t context = 0;
    Completion::Type type = Completion::Type::Send;
    SendSlots* owner = nullptr;
};

class SendSlots {
  public:
    explicit SendSlots(uint32_t depth) : slots_(depth) {
        free_.reserve(depth);
        for (uint32_t i = depth; i-- > 0;) {
            slots_[i].owner = this;
            free_.push_back(i);
        }
    }
    SendSlots(const SendSlots&) = delete;
    SendSlots& operator=(const SendSlots&) = delete;

    // Null when depth operations are outstanding (the caller answers Again).
    SendSlot* acquire(Completion::Type type, uint64_t context) {
        std::lock_guard<runtime::SpinLock> guard(lock_);
        if (free_.empty()) return nullptr;
        SendSlot* slot = &slots_[free_.back()];
        free_.pop_back();
        slot->type = type;
        slot->context = context;
        return slot;
    }

    // Called when the operation completed, or when posting it failed.
    void release(SendSlot* slot) {
        std::lock_guard<runtime::SpinLock> guard(lock_);
        free_.push_back(static_cast<uint32_t>(slot - slots_.data()));
    }

    uint32_t in_flight() {
        std::lock_guard<runtime::SpinLock> guard(lock_);
        return static_cast<uint32_t>(slots_.size() - free_.size());
    }

  private:
    runtime::SpinLock lock_;
    std::vector<SendSlot> slots_;  // never resized: completions point into it
    std::vector<uint32_t> free_;
};

}  // namespace mpc::ib
