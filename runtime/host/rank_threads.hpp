// runtime/host/rank_threads: the threads a rank creates, as their joiners see
// them. A rank's task that joins one of them parks until the thread's end
// wakes it, so that its virtual processor runs the other ranks of the VP or
// goes idle (and sleeps in the network's wait) instead of spinning: a VP that
// spun through the join kept a core from the very threads it waited for
// (a thread receiving four messages took 10 ms instead of microseconds).
//
// Never blocks a thread on anything but its own record; never calls MPI.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <atomic>

namespace mpc {
namespace sched {
class Waiter;
}

namespace host {

// One per thread a rank created: how it starts (read by the new thread, so
// that its creator need not wait for it), and what its joiner needs.
struct RankThread {
    void* (*fn)(void*);
    void* arg;
    void* owner;                // the rank the thread belongs to
    // Set first thing in the new thread, if has_affinity (a copy: the
    // creator's set may live on its stack, and it does not wait).
    cpu_set_t affinity;
    bool has_affinity = false;
    // Owned by the thread (until its end) and by the creator, whose reference
    // goes to the registry once the thread's id is known; a joiner takes one
    // more while it waits.
    std::atomic<int> refs{2};
    bool ended = false;               // under the registry's lock
    sched::Waiter* joiner = nullptr;  // likewise
};

// Before pthread_create: the record of the thread about to be created.
RankThread* rank_thread_prepare(void* (*fn)(void*), void* arg, void* owner,
                                const cpu_set_t* affinity);
// In the new thread, first thing (not instrumented by ThreadSanitizer, see
// interpose.cpp): the record is told when the thread ends, whichever way.
void rank_thread_started(RankThread* t);
// After pthread_create (created: whether it succeeded), by the creator.
void rank_thread_created(RankThread* t, pthread_t thread, bool created);
// pthread_join from a rank's task: parks until `thread` has ended if it is
// a rank's thread this registry knows; false when it does not (the caller
// then waits its own way). The real join follows either way.
bool rank_thread_await(pthread_t thread);

}  // namespace host
}  // namespace mpc
