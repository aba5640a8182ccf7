// runtime/stash: a per-thread stash of reusable items (free memory blocks,
// free handle indices) with a shared overflow that every thread can reach.
//
// A thread takes from and gives back to its own Stash without a lock or an
// atomic; only when the stash runs empty or full does it go to the Overflow
// (one mutex). At thread exit the stash hands everything to the overflow and
// stays closed: code that still runs on the exiting thread (other
// thread-locals' destructors) goes to the overflow directly instead of
// keeping items nobody would return.
//
// The stash is an array, not a list threaded through the items: giving back a
// block another core wrote moments ago must not write to it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace mpc::runtime {

// The shared part: items any thread may take.
template <class T>
class Overflow {
public:
    void put(T item) {
        std::lock_guard<std::mutex> g(mutex_);
        items_.push_back(item);
    }
    void put(const T* items, size_t n) {
        if (n == 0) return;
        std::lock_guard<std::mutex> g(mutex_);
        items_.insert(items_.end(), items, items + n);
    }
    bool take(T* out) {
        std::lock_guard<std::mutex> g(mutex_);
        if (items_.empty()) return false;
        *out = items_.back();
        items_.pop_back();
        return true;
    }
    // Up to n items in one go; returns how many.
    size_t take(T* out, size_t n) {
        std::lock_guard<std::mutex> g(mutex_);
        n = std::min(n, items_.size());
        std::copy(items_.end() - static_cast<std::ptrdiff_t>(n), items_.end(), out);
        items_.resize(items_.size() - n);
        return n;
    }
    // For tests and diagnostics.
    size_t size() const {
        std::lock_guard<std::mutex> g(mutex_);
        return items_.size();
    }

private:
    mutable std::mutex mutex_;
    std::vector<T> items_;
};

// The per-thread part: up to N items, last in first out. Not synchronised:
// one per thread (thread_local), or owned by one thread.
template <class T, uint32_t N>
class Stash {
public:
    static constexpr uint32_t kCapacity = N;

    // An item from the stash; false when it is empty (or closed).
    bool take(T* out) {
        if (n_ == 0 || n_ > N) return false;
        *out = items_[--n_];
        return true;
    }
    // The item the next take will return, or nullptr.
    const T* next() const { return n_ == 0 || n_ > N ? nullptr : &items_[n_ - 1]; }
    // Keeps item; false when the stash is full (or closed): the caller puts
    // it in the overflow, or spills first.
    bool keep(T item) {
        if (n_ >= N) return false;
        items_[n_++] = item;
        return true;
    }
    // An item from the stash, refilling an empty one with up to half its
    // capacity from the overflow in one go (one lock for many items: where
    // items flow one way, from the threads that free them to those that take
    // them, a lock per item would be paid at both ends). False when both are
    // empty.
    // (The stash's own part inline, the overflow's out of line: a request
    // handle is taken and given back at every nonblocking call.)
    bool take_or_refill(T* out, Overflow<T>& overflow) {
        return take(out) || refill_and_take(out, overflow);
    }
    // Keeps item, spilling the newer half to the overflow first when full.
    void keep_or_spill(T item, Overflow<T>& overflow) {
        if (!keep(item)) spill_and_keep(item, overflow);
    }
    // Moves the newer half of a full stash to the overflow, making room.
    void spill_half(Overflow<T>& overflow) {
        if (n_ > N) return;
        overflow.put(items_ + n_ / 2, n_ - n_ / 2);
        n_ /= 2;
    }
    // Hands everything to the overflow and closes the stash for good.
    void close(Overflow<T>& overflow) {
        if (n_ <= N) overflow.put(items_, n_);
        n_ = N + 1;
    }
    // Back to empty and open, forgetting the items (their owner went away).
    void reset() { n_ = 0; }
    uint32_t size() const { return n_ > N ? 0 : n_; }
    bool open() const { return n_ <= N; }

private:
    __attribute__((noinline)) bool refill_and_take(T* out, Overflow<T>& overflow) {
        if (n_ > N) return overflow.take(out);
        n_ = static_cast<uint32_t>(overflow.take(items_, N / 2));
        return take(out);
    }
    __attribute__((noinline)) void spill_and_keep(T item, Overflow<T>& overflow) {
        if (n_ > N) return overflow.put(item);
        spill_half(overflow);
        items_[n_++] = item;
    }

    uint32_t n_ = 0;  // N + 1 once closed
    T items_[N];
};

}  // namespace mpc::runtime
