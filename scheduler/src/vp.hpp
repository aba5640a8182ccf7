// Private to the scheduler: tasks, their queues, and the virtual processor that
// runs them.
#pragma once

#include <boost/context/detail/fcontext.hpp>

#include <atomic>
#include <memory>
#include <thread>

#include "runtime/sync.hpp"
#include "sanitizer_fiber.hpp"
#include "scheduler/scheduler.hpp"
#include "stack.hpp"

namespace mpc::sched {

namespace ctx = boost::context::detail;

// A place execution can be resumed: a task, or a VP's own (idle) stack.
struct Context {
    ctx::fcontext_t fctx = nullptr;
    Task* task = nullptr;  // null for a VP's idle context
    FiberSanitizerState san;
};

class Task {
public:
    Context context;
    Vp* vp = nullptr;
    void (*fn)(void*) = nullptr;
    void* arg = nullptr;
    void* owner = nullptr;
    Stack stack;
    Waiter waiter;
    std::unique_ptr<char[]> tls;  // this task's copies of the private TLS regions, in order
    bool finished = false;
    Task* next = nullptr;  // intrusive run-queue link
};

// Intrusive FIFO of tasks; not synchronised.
class TaskQueue {
public:
    bool empty() const { return head_ == nullptr; }
    void push(Task* t) {
        t->next = nullptr;
        if (tail_) tail_->next = t; else head_ = t;
        tail_ = t;
    }
    Task* pop() {
        Task* t = head_;
        if (t) {
            head_ = t->next;
            if (!head_) tail_ = nullptr;
            t->next = nullptr;
        }
        return t;
    }
    void append(TaskQueue& other) {
        if (other.empty()) return;
        if (tail_) tail_->next = other.head_; else head_ = other.head_;
        tail_ = other.tail_;
        other.head_ = other.tail_ = nullptr;
    }

private:
    Task* head_ = nullptr;
    Task* tail_ = nullptr;
};

class Vp {
public:
    Vp(Scheduler* sched, int index, int core);

    // Owner-thread operations.
    void run_loop();                          // the idle loop; returns when all tasks are done
    // Leaves cur, after running the progress hook if poll_first; requeue=true
    // keeps it runnable.
    void switch_out(Task* cur, bool requeue, bool poll_first = true);
    bool poll(bool idle);
    bool has_runnable() const {
        return !ready_.empty() || inbox_nonempty_.load(std::memory_order_relaxed);
    }

    // Any thread.
    void make_runnable(Task* t);
    void wake();  // wake the VP if it sleeps

    Scheduler* sched() const { return sched_; }
    int index() const { return index_; }
    int core() const { return core_; }
    Task* current() const { return current_; }
    std::thread thread;

private:
    Task* pick_next();
    void tsan_inbox_acquire();  // no-ops unless under ThreadSanitizer (vp.cpp)
    void tsan_inbox_release();
    void jump(Context* from, Context* to);
    void sleep();

    Scheduler* sched_;
    int index_;
    int core_;
    Context idle_;
    Task* current_ = nullptr;
    const TlsRegion* tls_;  // the task-private TLS regions (Options::task_tls)
    size_t tls_count_;
    TaskQueue ready_;  // only the VP's thread touches it

    alignas(runtime::kCacheLine) runtime::SpinLock inbox_lock_;
    TaskQueue inbox_;  // tasks made runnable by other threads
    std::atomic<bool> inbox_nonempty_{false};
    alignas(runtime::kCacheLine) std::atomic<uint32_t> sleeping_{0};
};

// The calling thread's VP and current task (null when not a VP thread).
extern constinit thread_local Vp* tl_vp;

}  // namespace mpc::sched
