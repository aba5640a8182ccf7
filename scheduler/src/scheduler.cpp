#include "scheduler/scheduler.hpp"

#include <sched.h>

#include <cstring>
#include <memory>
#include <mutex>

#include "runtime/log.hpp"
#include "runtime/sanitizers.hpp"
#include "vp.hpp"

#ifdef MPC_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace mpc::sched {
namespace {

std::atomic<Scheduler*> g_scheduler{nullptr};
std::mutex g_tasks_mutex;
std::vector<std::unique_ptr<Task>> g_tasks;  // kept until the scheduler ends (waiters outlive wake-ups)

// Waiters of OS threads come from a pool and are never freed, so that a late
// unpark() aimed at a thread that has exited touches valid memory (it only
// causes a spurious wake-up of the waiter's next user).
// The pool itself is never destroyed either: a thread may exit (and return its
// waiter) after static destructors have run, and leak checkers must still see
// the pooled waiters as reachable.
std::mutex g_waiter_pool_mutex;
std::vector<Waiter*>& waiter_pool() {
    static auto* pool = new std::vector<Waiter*>();
    return *pool;
}

struct ThreadWaiter {
    Waiter* waiter = nullptr;
    ~ThreadWaiter() {
        if (!waiter) return;
        std::lock_guard<std::mutex> g(g_waiter_pool_mutex);
        waiter_pool().push_back(waiter);
    }
};
thread_local ThreadWaiter tl_thread_waiter;
constinit thread_local void* tl_thread_owner = nullptr;

Task* current_task_or_null() {
    Vp* vp = tl_vp;
    return vp ? vp->current() : nullptr;
}

}  // namespace

// ---- Waiter -------------------------------------------------------------------

// Under ThreadSanitizer, a task that parks inside an intercepted blocking call
// (pthread_join: rank_thread_await in runtime/host) parks where TSan ignores
// its atomics and locks: TSan saw neither its state_ change to kParked nor the
// lock under which it had published its waiter, so the unparker (a rank's
// thread ending) had no happens-before with what the task and its VP did
// before the park, and TSan reported make_runnable's write of Task::next as
// racing with the VP's pick_next / switch_out. The release before the task
// announces kParked, and the acquire once an unparker has seen it, say what
// the atomics do. Empty without TSan.
namespace {
void tsan_park_release([[maybe_unused]] Waiter* w) {
#ifdef MPC_TSAN
    __tsan_release(w);
#endif
}
void tsan_unpark_acquire([[maybe_unused]] Waiter* w) {
#ifdef MPC_TSAN
    __tsan_acquire(w);
#endif
}
}  // namespace

void Waiter::unpark() {
    if (state_.exchange(kNotified, std::memory_order_acq_rel) != kParked) return;
    tsan_unpark_acquire(this);
    if (task_) task_->vp->make_runnable(task_);
    else runtime::futex_wake_one(&state_);
}

Waiter* current_waiter() {
    if (Task* t = current_task_or_null()) return &t->waiter;
    if (!tl_thread_waiter.waiter) {
        std::lock_guard<std::mutex> g(g_waiter_pool_mutex);
        if (!waiter_pool().empty()) {
            tl_thread_waiter.waiter = waiter_pool().back();
            waiter_pool().pop_back();
        } else {
            tl_thread_waiter.waiter = new Waiter();  // pooled forever, see above
        }
    }
    return tl_thread_waiter.waiter;
}

void park_for(int64_t timeout_ns, bool poll_first) {
    Waiter* w = current_waiter();
    if (w->state_.exchange(Waiter::kEmpty, std::memory_order_acquire) == Waiter::kNotified) return;
    uint32_t expected = Waiter::kEmpty;
    tsan_park_release(w);
    if (!w->state_.compare_exchange_strong(expected, Waiter::kParked, std::memory_order_acq_rel)) {
        w->state_.store(Waiter::kEmpty, std::memory_order_relaxed);
        return;
    }
    if (Task* t = w->task_) {
        t->vp->switch_out(t, false, poll_first);
    } else if (timeout_ns > 0) {
        // One wait: whether unparked or timed out, the caller re-checks.
        if (w->state_.load(std::memory_order_acquire) == Waiter::kParked)
            runtime::futex_wait(&w->state_, Waiter::kParked, timeout_ns);
    } else {
        while (w->state_.load(std::memory_order_acquire) == Waiter::kParked)
            runtime::futex_wait(&w->state_, Waiter::kParked);
    }
    w->state_.store(Waiter::kEmpty, std::memory_order_relaxed);
}

void park() { park_for(0); }

// ---- The calling context --------------------------------------------------------

Scheduler* current_scheduler() { return g_scheduler.load(std::memory_order_acquire); }
bool in_task() { return current_task_or_null() != nullptr; }

int current_vp_index() {
    Vp* vp = tl_vp;
    return vp ? vp->index() : -1;
}

void* current_owner() {
    if (Task* t = current_task_or_null()) return t->owner;
    return tl_thread_owner;
}

Caller current_caller() {
    if (Task* t = current_task_or_null()) return {t->owner, true};
    return {tl_thread_owner, false};
}

// Not instrumented: called first thing on a new thread, before ThreadSanitizer
// has set the thread up (see runtime/host/interpose.cpp).
__attribute__((no_sanitize("thread"))) void set_thread_owner(void* owner) {
    tl_thread_owner = owner;
}

void yield(bool poll_first) {
    Vp* vp = tl_vp;
    if (vp && vp->current()) vp->switch_out(vp->current(), true, poll_first);
    else if (poll_first) poll();
}

namespace {
std::atomic<bool> g_shared_cores{false};
std::atomic<int> g_guest_threads{0};
}  // namespace

bool cores_shared() {
    return g_shared_cores.load(std::memory_order_relaxed) ||
           g_guest_threads.load(std::memory_order_relaxed) > 0;
}

void guest_threads_add(int delta) { g_guest_threads.fetch_add(delta, std::memory_order_relaxed); }

bool others_runnable() {
    Vp* vp = tl_vp;
    return vp && vp->has_runnable();
}

void relax() {
    if (!tl_vp && cores_shared()) sched_yield();
}

void poll() {
    Scheduler* s = current_scheduler();
    if (!s) return;
    const ProgressHooks& h = s->hooks();
    if (h.poll) h.poll(h.ctx, current_vp_index(), false);
}

void exit_task() {
    Task* t = current_task_or_null();
    MPC_CHECK(t != nullptr);
    t->finished = true;
    t->vp->sched()->task_finished();
    t->vp->switch_out(t, false);
    __builtin_unreachable();
}

bool guard_page_owner(const void* addr, void** owner) {
    // Called from a signal handler: no lock; tasks are only added, never removed, during a run.
    for (auto& t : g_tasks) {
        if (t->stack.in_guard(addr)) {
            *owner = t->owner;
            return true;
        }
    }
    return false;
}

// ---- Scheduler --------------------------------------------------------------------

Scheduler::Scheduler(const Options& options)
    : options_(options), idle_spin_ns_(options.idle_spin_ns) {
    if (options_.num_vps < 1) options_.num_vps = 1;
    for (int i = 0; i < options_.num_vps; ++i) {
        vps_.push_back(new Vp(this, i, core_of_vp(options_, i)));
    }
    g_shared_cores.store(options_.shared_cores);
    Scheduler* none = nullptr;
    if (!g_scheduler.compare_exchange_strong(none, this))
        runtime::fatal("internal error: a second scheduler was created");
}

Scheduler::~Scheduler() {
    for (Vp* vp : vps_) {
        if (vp->thread.joinable()) vp->thread.join();
        delete vp;
    }
    {
        std::lock_guard<std::mutex> g(g_tasks_mutex);
        g_tasks.clear();
    }
    g_scheduler.store(nullptr);
}

Task* Scheduler::spawn(int vp_index, void (*fn)(void*), void* arg, void* owner) {
    MPC_CHECK(vp_index >= 0 && vp_index < num_vps());
    auto task = std::make_unique<Task>();
    Task* t = task.get();
    t->vp = vps_[static_cast<size_t>(vp_index)];
    t->fn = fn;
    t->arg = arg;
    t->owner = owner;
    t->stack = Stack(options_.stack_size);
    if (!options_.task_tls.empty()) {
        size_t total = 0;
        for (const TlsRegion& r : options_.task_tls) total += r.size;
        t->tls.reset(new char[total]);
        char* at = t->tls.get();
        for (const TlsRegion& r : options_.task_tls) {
            memcpy(at, r.init, r.size);
            at += r.size;
        }
    }
    t->context.task = t;
    fiber_sanitizer_init(t->context.san, static_cast<char*>(t->stack.top()) - t->stack.size(),
                         t->stack.size(), false);
    t->waiter.task_ = t;
    {
        std::lock_guard<std::mutex> g(g_tasks_mutex);
        g_tasks.push_back(std::move(task));
    }
    live_tasks_.fetch_add(1, std::memory_order_acq_rel);
    t->vp->make_runnable(t);
    return t;
}

void Scheduler::task_finished() {
    if (live_tasks_.fetch_sub(1, std::memory_order_acq_rel) == 1)
        for (Vp* vp : vps_) vp->wake();
}

void Scheduler::run() {
    for (size_t i = 1; i < vps_.size(); ++i) {
        Vp* vp = vps_[i];
        vp->thread = std::thread([vp] { vp->run_loop(); });
    }
    vps_[0]->run_loop();
    for (size_t i = 1; i < vps_.size(); ++i) vps_[i]->thread.join();
}

}  // namespace mpc::sched
