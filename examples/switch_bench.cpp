// Context-switch micro-benchmark of the scheduler (scheduler/scheduler.hpp),
// without MPI: what a blocked rank costs the others.
//   yield, 1 VP        two tasks yield to each other: ns per switch
//   park/unpark, 1 VP  two tasks hand a token back and forth by unparking the
//                      other and parking: ns per hand-off (one switch each)
//   park/unpark, 2 VPs the same across two VPs (cores): ns per hand-off, that
//                      is the cross-core wake-up latency (one cache-line
//                      transfer each way plus the remote VP picking the task)
// usage: switch_bench [iterations [SIZES]]   (default 1000000; a tenth across
//   VPs). SIZES: task-private TLS regions every switch saves and installs,
//   comma-separated byte counts (as a node process swaps the program's TLS
//   block and, for OpenMP programs, libgomp's 136 bytes and libstdc++'s 32:
//   64,136,32). Default: none.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime/sync.hpp"
#include "scheduler/scheduler.hpp"

using namespace mpc::sched;

namespace {

struct PingPong {
    long rounds = 0;
    std::atomic<int> turn{0};
    std::atomic<Waiter*> waiter[2]{};
};

struct Side {
    PingPong* game;
    int me;
};

void yielder(void* p) {
    const long n = *static_cast<long*>(p);
    for (long i = 0; i < n; ++i) yield();
}

void player(void* p) {
    auto* s = static_cast<Side*>(p);
    PingPong* g = s->game;
    g->waiter[s->me].store(current_waiter());
    while (!g->waiter[1 - s->me].load()) yield();
    for (long i = 0; i < g->rounds; ++i) {
        while (g->turn.load(std::memory_order_acquire) != s->me) park();
        g->turn.store(1 - s->me, std::memory_order_release);
        g->waiter[1 - s->me].load()->unpark();
    }
}

// Stands for the static TLS blocks a node process swaps (regions carved out
// of it, 64 bytes apart).
thread_local char tl_area[8192];
std::vector<TlsRegion> g_regions;
std::vector<std::vector<char>> g_inits;

void parse_regions(const char* text) {
    size_t at = 0;
    for (const char* p = text; *p;) {
        char* end = nullptr;
        const size_t size = strtoul(p, &end, 10);
        if (end == p || size == 0 || at + size > sizeof(tl_area)) {
            fprintf(stderr, "switch_bench: bad TLS region sizes '%s'\n", text);
            exit(2);
        }
        g_inits.emplace_back(size, 0);
        g_regions.push_back({static_cast<char*>(__builtin_thread_pointer()) - (tl_area + at), size,
                             nullptr});
        at += (size + 127) / 64 * 64;
        p = *end == ',' ? end + 1 : end;
    }
    for (size_t i = 0; i < g_regions.size(); ++i) g_regions[i].init = g_inits[i].data();
}

Options options(int vps) {
    Options o;
    o.task_tls = g_regions;
    o.num_vps = vps;
    o.stack_size = 64 * 1024;
    o.bind = true;
    o.idle_spin_ns = 1000000;  // idle VPs spin 1 ms before sleeping
    return o;
}

double run_yield(long n) {
    Scheduler s(options(1));
    s.spawn(0, yielder, &n, nullptr);
    s.spawn(0, yielder, &n, nullptr);
    int64_t start = mpc::runtime::now_ns();
    s.run();
    return static_cast<double>(mpc::runtime::now_ns() - start) / static_cast<double>(2 * n);
}

double run_pingpong(long n, int vps) {
    PingPong g;
    g.rounds = n;
    Side a{&g, 0}, b{&g, 1};
    Scheduler s(options(vps));
    s.spawn(0, player, &a, nullptr);
    s.spawn(vps - 1, player, &b, nullptr);
    int64_t start = mpc::runtime::now_ns();
    s.run();
    return static_cast<double>(mpc::runtime::now_ns() - start) / static_cast<double>(2 * n);
}

}  // namespace

int main(int argc, char** argv) {
    const long n = argc > 1 ? atol(argv[1]) : 1000000;
    if (argc > 2) parse_regions(argv[2]);
    // Warm up (page in stacks, settle the frequency), then measure.
    run_yield(n / 10);
    printf("yield, 1 VP:        %7.1f ns per switch\n", run_yield(n));
    printf("park/unpark, 1 VP:  %7.1f ns per hand-off\n", run_pingpong(n, 1));
    printf("park/unpark, 2 VPs: %7.1f ns per hand-off\n", run_pingpong(n / 10, 2));
    return 0;
}
