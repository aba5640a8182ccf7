// A task's stack: reserved (not committed) memory with a PROT_NONE guard page
// below it, so that an overflow faults instead of corrupting a neighbour.
#pragma once

#include <cstddef>

namespace mpc::sched {

class Stack {
public:
    Stack() = default;
    explicit Stack(size_t size);
    ~Stack();
    Stack(Stack&& o) noexcept { swap(o); }
    Stack& operator=(Stack&& o) noexcept {
        swap(o);
        return *this;
    }
    Stack(const Stack&) = delete;
    Stack& operator=(const Stack&) = delete;

    void* top() const { return static_cast<char*>(base_) + guard_ + size_; }
    size_t size() const { return size_; }
    bool in_guard(const void* addr) const {
        auto a = static_cast<const char*>(addr);
        auto b = static_cast<const char*>(base_);
        return base_ && a >= b && a < b + guard_;
    }

private:
    void swap(Stack& o) noexcept;
    void* base_ = nullptr;
    size_t size_ = 0;
    size_t guard_ = 0;
};

}  // namespace mpc::sched
