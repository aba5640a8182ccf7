#include "vp.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runtime/log.hpp"
#include "runtime/topology.hpp"

namespace mpc::sched {

constinit thread_local Vp* tl_vp = nullptr;

namespace {

// Every place where execution resumes after a jump records the context it came
// from, and releases the stack of a task that has just finished (it could not
// free its own stack while running on it).
void after_resume(ctx::transfer_t from) {
    auto* prev = static_cast<Context*>(from.data);
    prev->fctx = from.fctx;
    if (prev->task && prev->task->finished) {
        fiber_sanitizer_destroy(prev->san);
        prev->task->stack = Stack();
    }
}

[[noreturn]] void finish(Task* self) {
    self->finished = true;
    Vp* vp = self->vp;
    vp->sched()->task_finished();
    vp->switch_out(self, false);
    __builtin_unreachable();
}

void task_entry(ctx::transfer_t from) {
    Task* self = tl_vp->current();
    fiber_sanitizer_after_switch(self->context.san, static_cast<Context*>(from.data)->san);
    after_resume(from);
    errno = 0;  // as in a new thread, not the value the previous task left
    self->fn(self->arg);
    finish(self);
}

}  // namespace

Vp::Vp(Scheduler* sched, int index, int core)
    : sched_(sched),
      index_(index),
      core_(core),
      tls_(sched->options().task_tls.data()),
      tls_count_(sched->options().task_tls.size()) {}

void Vp::jump(Context* from, Context* to) {
    Task* self = from->task;
    if (const size_t n = tls_count_) {
        char* tp = static_cast<char*>(__builtin_thread_pointer());
        if (self) {
            char* save = self->tls.get();
            for (size_t i = 0; i < n; ++i) {
                memcpy(save, tp - tls_[i].offset, tls_[i].size);
                save += tls_[i].size;
            }
        }
        if (to->task) {
            const char* load = to->task->tls.get();
            for (size_t i = 0; i < n; ++i) {
                memcpy(tp - tls_[i].offset, load, tls_[i].size);
                load += tls_[i].size;
            }
        }
    }
    if (to->fctx == nullptr) {
        // First run of a task: build its initial frame on its stack.
        Task* t = to->task;
        to->fctx = ctx::make_fcontext(t->stack.top(), t->stack.size(), task_entry);
    }
    fiber_sanitizer_before_switch(from->san, to->san, self && self->finished);
    ctx::transfer_t back = ctx::jump_fcontext(to->fctx, from);
    fiber_sanitizer_after_switch(from->san, static_cast<Context*>(back.data)->san);
    after_resume(back);
}

// Under TSan, a task waiting in pthread_join runs this inside TSan's
// pthread_join interceptor (interpose.cpp), where TSan does not see atomics,
// hence not the inbox lock: the explicit acquire (and make_runnable's release)
// keep the happens-before from whoever made a task runnable to the task this
// VP then resumes. Without it TSan reported races on Task::next between an
// unparker and the resumed task.
void Vp::tsan_inbox_acquire() {
#ifdef MPC_TSAN
    __tsan_acquire(&inbox_);
#endif
}
void Vp::tsan_inbox_release() {
#ifdef MPC_TSAN
    __tsan_release(&inbox_);
#endif
}

Task* Vp::pick_next() {
    if (inbox_nonempty_.load(std::memory_order_acquire)) {
        inbox_lock_.lock();
        tsan_inbox_acquire();
        ready_.append(inbox_);
        inbox_nonempty_.store(false, std::memory_order_relaxed);
        inbox_lock_.unlock();
    }
    return ready_.pop();
}

bool Vp::poll(bool idle) {
    const ProgressHooks& h = sched_->hooks();
    return h.poll && h.poll(h.ctx, index_, idle);
}

// errno is the VP thread's, hence shared by its tasks: a switch keeps the
// task's value, whatever the progress hook and the tasks run meanwhile did to
// it (a rank checking errno after an MPI call must not see another rank's).
void Vp::switch_out(Task* cur, bool requeue, bool poll_first) {
    const int saved_errno = errno;
    if (poll_first) poll(false);
    if (requeue) ready_.push(cur);
    Task* next = pick_next();
    if (next != cur) {  // else still runnable, or unparked meanwhile
        current_ = next;
        jump(&cur->context, next ? &next->context : &idle_);
    }
    errno = saved_errno;
}

void Vp::make_runnable(Task* t) {
    if (tl_vp == this) {
        ready_.push(t);
        return;
    }
    inbox_lock_.lock();
    inbox_.push(t);
    inbox_nonempty_.store(true, std::memory_order_seq_cst);
    tsan_inbox_release();
    inbox_lock_.unlock();
    wake();
}

void Vp::wake() {
    if (sleeping_.load(std::memory_order_seq_cst) && sleeping_.exchange(0) == 1) {
        const ProgressHooks& h = sched_->hooks();
        if (h.block && h.wake) h.wake(h.ctx, index_);
        else runtime::futex_wake_one(&sleeping_);
    }
}

void Vp::sleep() {
    sleeping_.store(1, std::memory_order_seq_cst);
    // Re-check after announcing the sleep: a waker either sees the flag or we see its work.
    if (inbox_nonempty_.load(std::memory_order_seq_cst) || sched_->all_done()) {
        sleeping_.store(0);
        return;
    }
    sched_->count_sleep();
    const ProgressHooks& h = sched_->hooks();
    if (h.block && h.wake) h.block(h.ctx, index_, &sleeping_);
    else runtime::futex_wait(&sleeping_, 1);
    sleeping_.store(0);
}

void Vp::run_loop() {
    tl_vp = this;
    fiber_sanitizer_init(idle_.san, nullptr, 0, true);
    if (sched_->options().bind) runtime::Topology::instance().bind_thread_to_core(core_);
    if (sched_->options().on_vp_start) sched_->options().on_vp_start(index_);
    const int64_t shared_spin_ns = sched_->options().shared_idle_spin_ns;
    int64_t idle_since = -1;
    for (;;) {
        if (Task* next = pick_next()) {
            current_ = next;
            jump(&idle_, &next->context);
            current_ = nullptr;
            idle_since = -1;
            continue;
        }
        if (sched_->all_done()) break;
        const bool did = poll(true);
        if (has_runnable()) continue;
        int64_t now = runtime::now_ns();
        if (idle_since < 0 || did) {
            idle_since = now;
        } else if (now - idle_since > (cores_shared() ? std::min(sched_->idle_spin_ns(), shared_spin_ns)
                                                      : sched_->idle_spin_ns())) {
            sleep();
            idle_since = -1;
        } else {
            runtime::cpu_relax();
        }
    }
    tl_vp = nullptr;
}

}  // namespace mpc::sched
