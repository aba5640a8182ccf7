// A function that runs until it has to wait, and goes on from there the next
// time someone resumes it: the I/O operations that progress in collaborative
// polling (a Progressable's progress() resumes one) are written as ordinary
// code with MPC_AWAIT(condition) where they would block, instead of as hand
// made state machines.
//
// A Resumable is a C++20 coroutine that suspends at its start and at every
// MPC_AWAIT whose condition is false; resume() runs it to the next such point
// and says whether it has finished. Only one thread resumes it at a time (the
// caller's lock says who); it may be a different thread every time, so the
// body must not keep thread-local state across an await. Never throws.
#pragma once

#include <coroutine>
#include <exception>
#include <utility>

namespace mpc::io {

class Resumable {
  public:
    struct promise_type {
        Resumable get_return_object() {
            return Resumable(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        std::suspend_always initial_suspend() noexcept { return {}; }
        std::suspend_always final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); }
    };

    Resumable() = default;
    Resumable(Resumable&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
    Resumable& operator=(Resumable&& o) noexcept {
        if (this != &o) {
            if (h_) h_.destroy();
            h_ = std::exchange(o.h_, nullptr);
        }
        return *this;
    }
    Resumable(const Resumable&) = delete;
    Resumable& operator=(const Resumable&) = delete;
    ~Resumable() {
        if (h_) h_.destroy();
    }

    // Runs to the next wait; true once the body has returned.
    bool resume() {
        if (!h_) return true;
        if (!h_.done()) h_.resume();
        return h_.done();
    }
    bool done() const { return !h_ || h_.done(); }
    explicit operator bool() const { return static_cast<bool>(h_); }

  private:
    explicit Resumable(std::coroutine_handle<promise_type> h) : h_(h) {}
    std::coroutine_handle<promise_type> h_;
};

}  // namespace mpc::io

// Inside a Resumable: waits (returns to the resumer) until cond holds.
#define MPC_AWAIT(cond)                                 \
    do {                                                \
        while (!(cond)) co_await std::suspend_always{}; \
    } while (0)
