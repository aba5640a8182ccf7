// scheduler: the two-level scheduler of a node process.
//
// Level 1 are virtual processors (VPs): kernel threads, one per core by default,
// bound with hwloc. Level 2 are tasks: user-level fibers (Boost.Context) with
// their own guard-paged stacks, each bound to one VP for its whole life (its TLS
// and cache stay put). A task that waits yields its VP to the other tasks of that
// VP; a VP with nothing to run polls through the progress hook, spins a bounded
// time, then sleeps until woken.
//
// The progress hook runs at every context switch and in the idle loop: the more
// tasks wait, the more polling happens. The scheduler knows nothing about MPI:
// a rank is a task with an opaque owner pointer, which threads created by the
// rank inherit.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mpc::sched {

class Task;
class Vp;
class Scheduler;

// A parking spot for whoever waits: a fiber, or an OS thread that is not a fiber
// (a thread a rank created, or any thread outside the scheduler).
//
// park() returns after an unpark(), possibly spuriously, and several unparks may
// coalesce into one wake-up: callers always re-check what they wait for.
class Waiter {
public:
    void unpark();

private:
    friend class Vp;
    friend class Scheduler;
    friend Waiter* current_waiter();
    friend void park_for(int64_t timeout_ns, bool poll_first);
    enum : uint32_t { kEmpty = 0, kNotified = 1, kParked = 2 };
    std::atomic<uint32_t> state_{kEmpty};
    Task* task_ = nullptr;  // null for an OS thread (parks on a futex)
};

// Progress hooks, set once by the layer that owns progress (the network room).
struct ProgressHooks {
    // Called at every context switch (idle=false) and repeatedly by an idle VP
    // (idle=true). Must not switch fibers or block. Returns whether it did
    // something: an idle VP goes on polling while it does (a computing rank's
    // work taken over piece by piece), and sleeps after idle_spin_ns without.
    bool (*poll)(void* ctx, int vp, bool idle) = nullptr;
    // Optional: an idle VP about to sleep calls block() instead of sleeping on
    // its futex; block() returns when an external event arrived or wake() was
    // called for that VP. When absent the VP sleeps on a futex. `sleeping`
    // turns 0 before wake() is called: block() must look at it after arming
    // whatever wake() signals, and not sleep if it is 0 (else a wake() that
    // came before the arming is lost).
    void (*block)(void* ctx, int vp, const std::atomic<uint32_t>* sleeping) = nullptr;
    void (*wake)(void* ctx, int vp) = nullptr;
    void* ctx = nullptr;
};

// A region of the VP threads' static TLS that every task has its own copy of.
struct TlsRegion {
    std::ptrdiff_t offset = 0;   // the region starts this many bytes below the thread pointer
    size_t size = 0;
    const void* init = nullptr;  // every task starts from these `size` bytes
};

struct Options {
    int num_vps = 1;
    size_t stack_size = 8u << 20;     // per task, reserved; committed lazily
    bool bind = true;                 // bind VP threads to cores
    std::vector<int> cores;           // cores of the VPs, VP i on cores[i % size] (default: 0, 1, ...)
    int64_t idle_spin_ns = 200000;    // an idle VP polls this long before it sleeps
    // ... and this long at most while cores are shared (cores_shared()).
    int64_t shared_idle_spin_ns = 5000;
    // VPs share cores (with each other or other node processes' VPs): see
    // cores_shared().
    bool shared_cores = false;
    void (*on_vp_start)(int vp) = nullptr;  // runs first on every VP thread
    // Static TLS regions private to each task (the program's own TLS block,
    // which code addresses at a fixed offset from the thread pointer; the
    // per-thread state of libraries that must follow a rank, such as the
    // OpenMP runtime's): on every switch the VP saves the outgoing task's
    // bytes and installs the incoming task's. Empty: nothing is swapped.
    std::vector<TlsRegion> task_tls;
};

// The core VP `vp` runs on under these options.
inline int core_of_vp(const Options& o, int vp) {
    return o.cores.empty() ? vp : o.cores[static_cast<size_t>(vp) % o.cores.size()];
}

class Scheduler {
public:
    explicit Scheduler(const Options& options);
    ~Scheduler();
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    // Creates a task on VP `vp` that runs fn(arg). Allowed before and during run().
    Task* spawn(int vp, void (*fn)(void*), void* arg, void* owner);

    // Runs VP 0 on the calling thread and the other VPs on their own threads,
    // until every task has finished.
    void run();

    void set_hooks(const ProgressHooks& hooks) { hooks_ = hooks; }
    const ProgressHooks& hooks() const { return hooks_; }
    int num_vps() const { return static_cast<int>(vps_.size()); }
    Vp* vp(int i) const { return vps_[static_cast<size_t>(i)]; }
    const Options& options() const { return options_; }
    // How long an idle VP polls before it sleeps: options().idle_spin_ns until
    // changed (MPC_IDLE_SPIN, an MPI_T control variable); read at every idle round.
    int64_t idle_spin_ns() const { return idle_spin_ns_.load(std::memory_order_relaxed); }
    void set_idle_spin_ns(int64_t ns) { idle_spin_ns_.store(ns, std::memory_order_relaxed); }
    // Times a VP found nothing to do for idle_spin_ns and went to sleep.
    uint64_t sleeps() const { return sleeps_.load(std::memory_order_relaxed); }

    // Internal, for the VPs.
    void task_finished();
    bool all_done() const { return live_tasks_.load(std::memory_order_acquire) == 0; }
    void count_sleep() { sleeps_.fetch_add(1, std::memory_order_relaxed); }

  private:
    Options options_;
    std::atomic<int64_t> idle_spin_ns_{0};
    std::atomic<uint64_t> sleeps_{0};
    ProgressHooks hooks_;
    std::vector<Vp*> vps_;
    std::atomic<int> live_tasks_{0};
};

// ---- What the calling context can ask and do -------------------------------

// The scheduler the process runs under, or nullptr before one is running.
Scheduler* current_scheduler();
// True on a fiber (a task), false on an OS thread.
bool in_task();
// VP index of the calling task's VP, or -1.
int current_vp_index();
// Owner of the calling context: the task's, or the one a thread inherited.
void* current_owner();
// Both answers above in one look (every MPI call asks both).
struct Caller {
    void* owner;
    bool in_task;
};
Caller current_caller();
// Sets the owner of the calling OS thread (threads created by a rank).
void set_thread_owner(void* owner);

Waiter* current_waiter();
// Blocks until unparked (see Waiter). On a task the VP runs other tasks.
void park();
// Like park(), but an OS thread returns after timeout_ns (> 0) at the latest,
// even if nobody unparks it. Fibers ignore the timeout: when their VP has
// nothing to run, its idle loop polls for them. A fiber runs the progress
// hook before it leaves its VP unless `poll_first` is false.
void park_for(int64_t timeout_ns, bool poll_first = true);
// Lets the other runnable tasks of this VP run; runs the progress hook first
// unless `poll` is false.
void yield(bool poll = true);
// True when another task of the caller's VP is ready to run.
bool others_runnable();
// For a caller that found nothing to do and will look again (MPI_Test in a
// loop): an OS thread that is no task gives its core to the kernel's other
// threads while VPs share cores (spinning threads of a rank would otherwise
// starve the ones they wait for); nothing for tasks, or on cores of our own.
void relax();
// True when VPs share cores (Options::shared_cores), or while threads that are
// no VPs run beside them (guest_threads_add): a thread that spins then
// keeps the core from the one that would end its wait (a VP holding the
// network's lock, or the idle VP that would progress a computing rank's
// messages) for a whole time slice, so waits should sleep early instead.
bool cores_shared();
// Threads other than the VPs that run on the VPs' cores (the threads ranks
// create) come and go: while any lives, the cores count as shared.
void guest_threads_add(int delta);
// Runs the progress hook once (outside a context switch).
void poll();
// Ends the calling task now, without returning to its entry function.
[[noreturn]] void exit_task();

// For crash reports: when addr lies in the guard page of a task's stack, returns
// that task's owner and true.
bool guard_page_owner(const void* addr, void** owner);

}  // namespace mpc::sched
