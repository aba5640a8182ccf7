// The registry of the threads ranks create, for their joiners (rank_threads.hpp).
#include "rank_threads.hpp"

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "runtime/log.hpp"
#include "runtime/sanitizers.hpp"
#include "scheduler/scheduler.hpp"

namespace mpc::host {
namespace {

std::mutex g_mutex;
// Never destroyed: threads may end after static destructors ran.
std::unordered_map<pthread_t, RankThread*>& registry() {
    static auto* m = new std::unordered_map<pthread_t, RankThread*>();
    return *m;
}

void unref(RankThread* t) {
    if (t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete t;
}

// Runs in the ending thread, after its function returned (or pthread_exit,
// or cancellation) and its C++ thread_local objects were destroyed.
void thread_ended(void* p) {
    auto* t = static_cast<RankThread*>(p);
    sched::Waiter* joiner = nullptr;
    bool listed = false;
    {
        std::lock_guard<std::mutex> g(g_mutex);
        t->ended = true;
        joiner = t->joiner;
        auto it = registry().find(pthread_self());
        if (it != registry().end() && it->second == t) {
            registry().erase(it);
            listed = true;
        }
    }
    // Waiters are never freed: a wake-up of a joiner that already saw the end
    // is only a spurious one.
    if (joiner) joiner->unpark();
    sched::guest_threads_add(-1);
    if (listed) unref(t);
    unref(t);
}

pthread_key_t g_key;
std::once_flag g_key_once;

// The joiner parks inside ThreadSanitizer's pthread_join interceptor, where
// TSan ignores the caller's memory accesses, atomics and locks: the progress
// hook its park would run first (delivering and freeing other ranks'
// messages, freeing inbox slots) was hidden from TSan, which then reported
// races between rank fibers that never were (two senders writing one inbox
// slot, a recycled cell). Under TSan the joiner leaves the polling to the
// VP's other tasks and idle loop, as interpose.cpp's polling join does.
constexpr bool kPollWhileJoining = !runtime::kUnderTsan;

}  // namespace

RankThread* rank_thread_prepare(void* (*fn)(void*), void* arg, void* owner,
                                const cpu_set_t* affinity) {
    std::call_once(g_key_once, [] {
        if (pthread_key_create(&g_key, thread_ended) != 0)
            runtime::fatal("no pthread key left for the threads of ranks");
    });
    // The thread will share the VPs' cores: they spin less while it lives.
    sched::guest_threads_add(1);
    auto* t = new RankThread();
    t->fn = fn;
    t->arg = arg;
    t->owner = owner;
    if (affinity) {
        t->affinity = *affinity;
        t->has_affinity = true;
    }
    return t;
}

// (pthread_setspecific of a key below PTHREAD_KEY_2NDLEVEL_SIZE writes the
// thread's static block: no allocation, no interceptor.)
__attribute__((no_sanitize("thread"))) void rank_thread_started(RankThread* t) {
    (void)pthread_setspecific(g_key, t);
}

void rank_thread_created(RankThread* t, pthread_t thread, bool created) {
    if (!created) {
        sched::guest_threads_add(-1);
        delete t;  // no thread holds it
        return;
    }
    bool listed = false;
    {
        std::lock_guard<std::mutex> g(g_mutex);
        if (!t->ended) {
            registry()[thread] = t;
            listed = true;
        }
    }
    if (!listed) unref(t);
}

bool rank_thread_await(pthread_t thread) {
    RankThread* t = nullptr;
    sched::Waiter* self = sched::current_waiter();
    {
        std::lock_guard<std::mutex> g(g_mutex);
        auto it = registry().find(thread);
        if (it == registry().end()) return false;
        t = it->second;
        t->refs.fetch_add(1, std::memory_order_relaxed);
        t->joiner = self;
    }
    for (;;) {
        {
            std::lock_guard<std::mutex> g(g_mutex);
            if (t->ended) {
                t->joiner = nullptr;
                break;
            }
        }
        sched::park_for(0, kPollWhileJoining);
    }
    unref(t);
    return true;
}

}  // namespace mpc::host
