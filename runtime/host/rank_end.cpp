// What exit() does in a process, done per rank when the rank ends (see
// host.hpp): its C++ thread_local destructors, then its atexit and on_exit
// handlers and static destructors.
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "host.hpp"
#include "scheduler/scheduler.hpp"

extern "C" void __cxa_finalize(void* dso);
extern "C" int __cxa_atexit(void (*fn)(void*), void* arg, void* dso);

namespace mpc::host {
namespace {

// ---- thread_local destructors ----------------------------------------------------

struct Destructor {
    void (*dtor)(void*);
    void* object;
};

std::ptrdiff_t g_tls_offset = 0;
size_t g_tls_size = 0;
// Registrations are rare (once per object and rank): one lock is enough.
std::mutex g_mutex;
std::unordered_map<void*, std::vector<Destructor>> g_pending;  // by rank (task owner)

bool in_program_tls(const void* object) {
    if (!g_tls_size) return false;
    const char* block = static_cast<const char*>(__builtin_thread_pointer()) - g_tls_offset;
    const char* p = static_cast<const char*>(object);
    return p >= block && p < block + g_tls_size;
}

// A rank's copy of the program or of a user library: loaded from a memfd.
bool in_rank_copy(void* dso) {
    Dl_info info{};
    if (!dladdr(dso, &info) || !info.dli_fname) return false;
    return strncmp(info.dli_fname, "/proc/self/fd/", 14) == 0 ||
           strncmp(info.dli_fname, "/dev/fd/", 8) == 0;
}

void run_thread_locals() {
    void* rank = sched::current_owner();
    // One at a time, unlocked: a destructor may touch (and register) another.
    for (;;) {
        Destructor d{};
        {
            std::lock_guard<std::mutex> g(g_mutex);
            auto it = g_pending.find(rank);
            if (it == g_pending.end()) return;
            if (it->second.empty()) {
                g_pending.erase(it);
                return;
            }
            d = it->second.back();
            it->second.pop_back();
        }
        d.dtor(d.object);
    }
}

// ---- atexit handlers and static destructors ---------------------------------------

// Every object that registered an exit handler (its __dso_handle). Pushed
// from the first constructors on, before ours have run: a constant-initialised
// list of malloc'd nodes, never freed.
struct DsoNode {
    void* dso;
    DsoNode* next;
};
std::atomic<DsoNode*> g_dsos{nullptr};

uintptr_t load_base_of(void* dso) {
    Dl_info info{};
    link_map* map = nullptr;
    if (!dladdr1(dso, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) || !map) return 0;
    return map->l_addr;
}

// ---- on_exit handlers ---------------------------------------------------------------

// glibc keeps on_exit handlers for the process alone. A rank's become exit
// handlers of its program image (through __cxa_atexit, so that they run in
// registration order with its atexit handlers) and receive its status.
struct OnExit {
    void (*fn)(int, void*);
    void* arg;
};
std::unordered_map<void*, int> g_exit_status;  // by rank (task owner), under g_mutex
std::atomic<bool> g_any_on_exit{false};         // kept only once some rank has one

void run_on_exit(void* p) {
    auto* h = static_cast<OnExit*>(p);
    int status = 0;
    {
        std::lock_guard<std::mutex> g(g_mutex);
        auto it = g_exit_status.find(sched::current_owner());
        if (it != g_exit_status.end()) status = it->second;
    }
    void (*fn)(int, void*) = h->fn;
    void* arg = h->arg;
    free(h);
    fn(status, arg);
}

// The handle the image at `base` registers its atexit handlers with (its
// __dso_handle, hidden in it), if it registered one already; else any
// address inside it. Either way run_rank_exit finds it: the object's
// handlers registered later come first in g_dsos, and run first, as they
// would in a process.
void* exit_handle_of(uintptr_t base) {
    for (DsoNode* n = g_dsos.load(std::memory_order_acquire); n; n = n->next)
        if (load_base_of(n->dso) == base) return n->dso;
    return reinterpret_cast<void*>(base);
}

}  // namespace

void set_program_tls(std::ptrdiff_t offset, size_t size) {
    g_tls_offset = offset;
    g_tls_size = size;
}

bool defer_rank_thread_local(void (*dtor)(void*), void* object, void* dso) {
    // Only a rank's own fiber: the threads a rank creates are real threads,
    // whose thread-locals glibc destroys at their exit.
    if (!sched::in_task()) return false;
    void* rank = sched::current_owner();
    // The runtime's own thread-locals (and those of shared libraries) belong
    // to the VP thread, not to the rank that happened to touch them first.
    if (!rank || !(in_program_tls(object) || in_rank_copy(dso))) return false;
    std::lock_guard<std::mutex> g(g_mutex);
    g_pending[rank].push_back({dtor, object});
    return true;
}

void note_exit_handler(void* dso) {
    if (!dso) return;
    for (DsoNode* n = g_dsos.load(std::memory_order_acquire); n; n = n->next)
        if (n->dso == dso) return;
    auto* node = static_cast<DsoNode*>(malloc(sizeof(DsoNode)));  // lives as long as the process
    if (!node) return;
    node->dso = dso;
    node->next = g_dsos.load(std::memory_order_relaxed);
    // A racing push of the same handle leaves a duplicate: harmless, see below.
    while (!g_dsos.compare_exchange_weak(node->next, node, std::memory_order_release,
                                         std::memory_order_relaxed)) {
    }
}

bool defer_on_exit(void (*fn)(int, void*), void* arg) {
    const std::vector<uintptr_t>* objects = caller_images();
    if (!objects || objects->empty()) return false;  // the process's (shared images)
    auto* h = static_cast<OnExit*>(malloc(sizeof(OnExit)));
    if (!h) return false;
    h->fn = fn;
    h->arg = arg;
    g_any_on_exit.store(true, std::memory_order_relaxed);
    // Ours: it notes the handle, then glibc keeps the handler.
    return __cxa_atexit(run_on_exit, h, exit_handle_of(objects->front())) == 0;
}

void run_rank_exit(const std::vector<uintptr_t>& objects, int status) {
    if (!sched::in_task()) return;
    if (g_any_on_exit.load(std::memory_order_relaxed)) {
        std::lock_guard<std::mutex> g(g_mutex);
        g_exit_status[sched::current_owner()] = status;
    }
    run_thread_locals();
    if (objects.empty()) return;
    // glibc runs (and forgets) the handlers an object registered, as dlclose
    // would; a second call for the same object finds none.
    for (DsoNode* n = g_dsos.load(std::memory_order_acquire); n; n = n->next)
        if (std::find(objects.begin(), objects.end(), load_base_of(n->dso)) != objects.end())
            __cxa_finalize(n->dso);
}

}  // namespace mpc::host
