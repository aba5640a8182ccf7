#include "host.hpp"

#include <dlfcn.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ib/network.hpp"
#include "images.hpp"
#include "libc_state.hpp"
#include "openmp.hpp"
#include "mpi_api/hang_watch.hpp"
#include "mpi_api/net.hpp"
#include "mpi_api/process.hpp"
#include "mpi_api/progress.hpp"
#include "mpi_api/progress_engine.hpp"
#include "mpi_api/rank.hpp"
#include "runtime/auth.hpp"
#include "runtime/bootstrap.hpp"
#include "runtime/env.hpp"
#include "runtime/log.hpp"
#include "runtime/topology.hpp"
#include "scheduler/scheduler.hpp"

namespace mpc::host {
namespace {

struct RankArgs {
    MainFn main = nullptr;
    mpi::RankState* rank = nullptr;
    std::vector<std::string> args;  // this rank's own copy of argv
    std::vector<char*> argv;
    char** envp = nullptr;
};

std::atomic<int> g_max_status{0};
std::vector<std::vector<uintptr_t>> g_rank_images;  // by local rank
ib::Network* g_net = nullptr;

// ---- Progress hooks: the scheduler calls the network's poll function at every
// context switch and in idle loops; an idle VP blocks in the network's wait
// object (one at a time) or on its own futex.

struct VpSleep {
    alignas(64) std::atomic<uint32_t> word{0};
};
std::unique_ptr<VpSleep[]> g_vp_sleep;
std::atomic<int> g_net_blocker{-1};

int caller_local() {
    auto* r = static_cast<mpi::RankState*>(sched::current_owner());
    return r ? r->local_index : -1;
}

std::vector<int> g_vp_numa;  // NUMA node of each VP's core

bool hook_poll(void*, int vp, bool) {
    const int caller = caller_local();
    return mpi::poll(caller, true, caller < 0 ? g_vp_numa[static_cast<size_t>(vp)] : -1);
}

// How long an idle VP sleeps at most: wakes are not lost (see ProgressHooks),
// but a bound costs nothing and caps the damage of any that would be.
constexpr int kIdleBlockMs = 100;

void hook_block(void*, int vp, const std::atomic<uint32_t>* sleeping) {
    int none = -1;
    if (g_net->mode() != ib::ProgressMode::Thread &&
        g_net_blocker.compare_exchange_strong(none, vp)) {
        // Announced as the blocker first, then the flag: a waker that cleared
        // the flag after our look sees us as the blocker and interrupts.
        if (sleeping->load(std::memory_order_seq_cst)) g_net->block(kIdleBlockMs);
        g_net_blocker.store(-1);
        return;
    }
    std::atomic<uint32_t>& word = g_vp_sleep[static_cast<size_t>(vp)].word;
    const uint32_t seen = word.load(std::memory_order_seq_cst);
    if (!sleeping->load(std::memory_order_seq_cst)) return;  // woken before `seen`
    runtime::futex_wait(&word, seen, int64_t{kIdleBlockMs} * 1'000'000);
}

void hook_wake(void*, int vp) {
    g_vp_sleep[static_cast<size_t>(vp)].word.fetch_add(1, std::memory_order_seq_cst);
    runtime::futex_wake_one(&g_vp_sleep[static_cast<size_t>(vp)].word);
    if (g_net_blocker.load(std::memory_order_seq_cst) == vp) g_net->interrupt();
}
std::atomic<bool> g_hosting{false};
runtime::Bootstrap* g_boot = nullptr;

void record_status(int status) {
    int s = status & 0xff;
    int cur = g_max_status.load();
    while (s > cur && !g_max_status.compare_exchange_weak(cur, s)) {
    }
}

// A rank ended (returned from main or called exit) with status.
void rank_done(mpi::RankState* rank, int status) {
    record_status(status);
    if (!mpi::rank_ended(rank, status))
        runtime::fatal_status(status ? status : 1,
                              "rank %d ended (status %d) without calling MPI_Finalize; ending "
                              "the job",
                              rank->world_rank, status);
}

void rank_main(void* p) {
    auto* a = static_cast<RankArgs*>(p);
    start_openmp_rank(a->rank->local_index);
    int status = a->main(static_cast<int>(a->args.size()), a->argv.data(), a->envp);
    // as exit() does
    run_rank_exit(g_rank_images[static_cast<size_t>(a->rank->local_index)], status);
    rank_done(a->rank, status);
}

size_t default_stack_size() {
    rlimit rl{};
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= 65536)
        return rl.rlim_cur;
    return 8u << 20;
}

// Job killer for fatal errors: tell the launcher, which ends every node process.
void kill_job(int status, const char* message) {
    if (g_boot) g_boot->abort(status, message);
}

// MPC_CORES: hwloc logical core indexes, "0-3,6".
std::vector<int> parse_cores(const char* text) {
    std::vector<int> cores;
    if (!text) return cores;
    const std::string s(text);
    size_t pos = 0;
    while (pos <= s.size()) {
        size_t end = s.find(',', pos);
        if (end == std::string::npos) end = s.size();
        const std::string item = s.substr(pos, end - pos);
        char* stop = nullptr;
        long lo = strtol(item.c_str(), &stop, 10);
        long hi = lo;
        if (stop != item.c_str() && *stop == '-') hi = strtol(stop + 1, &stop, 10);
        if (item.empty() || !isdigit(static_cast<unsigned char>(item[0])) || *stop || lo < 0 ||
            hi < lo || hi > 65535)
            runtime::fatal("MPC_CORES=%s is not a list of cores (as 0-3,6)", text);
        for (long c = lo; c <= hi; ++c) cores.push_back(static_cast<int>(c));
        pos = end + 1;
    }
    return cores;
}

// Where this node process stands among those sharing its machine (same host
// name in the bootstrap's store): its index and their count.
struct HostShare {
    int index = 0, count = 1;
};
HostShare host_share(runtime::Bootstrap& boot) {
    HostShare share;
    if (boot.size() == 1) return share;
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    boot.put("mpc-host-" + std::to_string(boot.rank()), host);
    boot.fence();
    share.count = 0;
    for (int n = 0; n < boot.size(); ++n) {
        if (boot.get("mpc-host-" + std::to_string(n)) != host) continue;
        if (n < boot.rank()) ++share.index;
        ++share.count;
    }
    return share;
}

// Node processes sharing a machine split the cores they may use (all, or a
// batch system's allocation) into blocks, one each, so that their VPs never
// spin on one core while another idles. More node processes than cores: no
// block (and no binding).
std::vector<int> core_block(const HostShare& share, const std::vector<int>& allowed) {
    std::vector<int> block;
    const int ncores = static_cast<int>(allowed.size());
    if (share.count > ncores) return block;
    const int lo = static_cast<int>(static_cast<long>(ncores) * share.index / share.count);
    const int hi = static_cast<int>(static_cast<long>(ncores) * (share.index + 1) / share.count);
    for (int c = lo; c < hi; ++c) block.push_back(allowed[static_cast<size_t>(c)]);
    return block;
}

// A digest of the job's secret (which must not leave the job), for
// MPI_Comm_join to recognise a rank of the same job across a socket.
uint64_t job_token(const runtime::auth::Secret& secret) {
    runtime::auth::Sha256 h;
    h.update(secret.bytes.data(), secret.bytes.size());
    static constexpr char kLabel[] = "fibermpi MPI_Comm_join";
    h.update(kLabel, sizeof(kLabel) - 1);
    const runtime::auth::Digest d = h.finish();
    uint64_t token;
    memcpy(&token, d.data(), sizeof(token));
    return token;
}

void vp_start(int vp) {
    setup_signal_stack();
    start_openmp_vp(vp);
}

}  // namespace

int run(MainFn user_main, int argc, char** argv, char** envp) {
    output_setup();  // before the rank images copy stdout and stderr
    std::unique_ptr<runtime::Bootstrap> boot = runtime::Bootstrap::create();
    g_boot = boot.get();
    runtime::set_job_killer(kill_job);
    runtime::set_node_id(boot->size() > 1 ? boot->rank() : -1);

    // The layout: MPC_NRANKS ranks (set by mpcrun) over the node processes, in
    // blocks or cyclically (MPC_MAP); a launcher that knows nothing of us
    // (srun) gives one rank per process.
    const int nodes = boot->size();
    const int ranks = static_cast<int>(runtime::env::get_int("MPC_NRANKS", nodes, nodes, 1 << 22));
    mpi::JobLayout layout;
    layout.world_size = ranks;
    layout.num_nodes = nodes;
    layout.node_id = boot->rank();
    layout.node_of = runtime::rank_layout(ranks, nodes, runtime::rank_map_from_env());
    layout.appnum = boot->appnum();
    mpi::process_setup(layout);
    const auto& locals = mpi::world().locals;
    const int nlocal = static_cast<int>(locals.size());

    sched::Options opts;
    // A fence: every node process takes part, whatever its MPC_CORES says.
    const HostShare share = host_share(*boot);
    // After that fence: under other launchers the secret travels in it.
    mpi::world().job_token = job_token(boot->job_secret());
    static const mpi::NameService names = {
        [](const std::string& n, const std::string& p, std::string* e) {
            return g_boot->name_publish(n, p, e);
        },
        [](const std::string& n, std::string* e) { return g_boot->name_unpublish(n, e); },
        [](const std::string& n, std::string* p, bool* f, std::string* e) {
            return g_boot->name_lookup(n, p, f, e);
        }};
    mpi::set_name_service(&names);
    opts.bind = runtime::env::get_bool("MPC_BIND", true);
    opts.cores = parse_cores(runtime::env::get("MPC_CORES"));
    if (opts.cores.empty()) {
        opts.cores = core_block(share, runtime::Topology::instance().allowed_cores());
        if (opts.cores.empty()) opts.bind = false;  // oversubscribed machine
    }
    // By default one VP per core of ours, at most one per rank.
    const int our_cores = opts.cores.empty() ? 1 : static_cast<int>(opts.cores.size());
    opts.num_vps =
        static_cast<int>(runtime::env::get_int("MPC_VPS", std::min(our_cores, nlocal), 1, 4096));
    opts.num_vps = std::max(1, std::min(opts.num_vps, nlocal));
    // OpenMP programs: their ranks' VPs, cores and thread-local state.
    plan_rank_threads(&opts, nlocal, runtime::env::get("MPC_VPS") != nullptr);
    // No cores of our own (more node processes than cores), or more threads
    // that poll than them: the VPs, and in thread mode the progress thread
    // (there is one when several node processes run).
    const bool progress_thread = nodes > 1 && mpi::poll_mode() == mpi::PollMode::Thread;
    opts.shared_cores = opts.cores.empty() ||
                        opts.num_vps + (progress_thread ? 1 : 0) > static_cast<int>(opts.cores.size());
    opts.stack_size = runtime::env::get_size("MPC_STACK_SIZE", default_stack_size());
    if (opts.stack_size < 64 * 1024) runtime::fatal("MPC_STACK_SIZE must be at least 64K");
    // Where VPs share cores, spinning takes the core from the thread that
    // would end the wait: waits and idle VPs sleep (in the network's wait
    // object, woken by its events) almost at once.
    const double spin_default = opts.shared_cores ? 5e-6 : 200e-6;
    opts.idle_spin_ns =
        static_cast<int64_t>(runtime::env::get_seconds("MPC_IDLE_SPIN", spin_default) * 1e9);
    if (opts.shared_cores && !runtime::env::get("MPC_WAIT_SPIN")) mpi::g_wait_spin_ns = 5000;
    opts.on_vp_start = vp_start;

    setup_signal_stack();
    install_crash_handlers();

    // Per-rank libc state (libc_state.hpp), ready before the copies'
    // constructors run as their ranks.
    libc_ranks_open(nlocal);
    watch_forks();
    // Private globals per rank (rank images), unless the user opted out.
    ImageSet images = load_images(user_main, std::vector<void*>(locals.begin(), locals.end()),
                                  runtime::env::get_bool("MPC_SHARED_GLOBALS", false));
    if (images.tls_size)
        opts.task_tls.push_back({images.tls_offset, images.tls_size, images.tls_init.data()});
    g_rank_images = images.objects;

    for (int vp = 0; vp < opts.num_vps; ++vp)
        g_vp_numa.push_back(
            runtime::Topology::instance().numa_of_core(sched::core_of_vp(opts, vp)));

    std::unique_ptr<ib::Network> net;
    if (nodes > 1) {
        ib::NetworkLayout nl;
        nl.node_id = layout.node_id;
        nl.num_nodes = nodes;
        nl.node_of = layout.node_of;
        nl.one_host = share.count == nodes;  // the network listens on loopback only
        nl.local_of.assign(layout.node_of.size(), 0);
        std::vector<int> count(static_cast<size_t>(nodes), 0);
        for (size_t r = 0; r < layout.node_of.size(); ++r)
            nl.local_of[r] = count[static_cast<size_t>(layout.node_of[r])]++;
        const auto& topo = runtime::Topology::instance();
        for (int i = 0; i < nlocal; ++i) {
            int vp = static_cast<int>(static_cast<long>(i) * opts.num_vps / nlocal);
            nl.local_numa.push_back(topo.numa_of_core(sched::core_of_vp(opts, vp)));
        }
        std::string error;
        ib::NetworkConfig config = ib::NetworkConfig::from_env();
        if (opts.shared_cores) config.thread_grace_ns = 0;
        net = ib::Network::start(config, nl, mpi::network_upcalls(), *boot, &error);
        if (!net) runtime::fatal("the network could not start: %s", error.c_str());
        g_net = net.get();
        mpi::attach_network(g_net);
        g_vp_sleep.reset(new VpSleep[static_cast<size_t>(opts.num_vps)]);
    }

    HostSettings settings;
    settings.ranks = ranks;
    settings.vps = opts.num_vps;
    settings.bind = opts.bind;
    if (opts.bind) settings.cores = opts.cores;
    settings.stack_size = opts.stack_size;
    settings.shared_globals = !images.private_globals;
    settings.map = static_cast<int>(runtime::rank_map_from_env());
    register_tool_variables(settings);

    std::vector<std::unique_ptr<RankArgs>> args;
    {
        sched::Scheduler scheduler(opts);
        // The poll function runs at every context switch and in idle loops, with
        // or without a network (collective schedules progress through it too).
        sched::ProgressHooks hooks;
        hooks.poll = hook_poll;
        if (g_net) {
            hooks.block = hook_block;
            hooks.wake = hook_wake;
        }
        scheduler.set_hooks(hooks);
        for (int i = 0; i < nlocal; ++i) {
            auto a = std::make_unique<RankArgs>();
            a->main = images.mains[static_cast<size_t>(i)];
            a->rank = locals[static_cast<size_t>(i)];
            if (images.private_globals && i > 0)
                a->rank->image = images.handles[static_cast<size_t>(i - 1)];
            a->args.assign(argv, argv + argc);
            for (auto& s : a->args) a->argv.push_back(s.data());
            a->argv.push_back(nullptr);
            a->envp = envp;
            int vp = static_cast<int>(static_cast<long>(i) * opts.num_vps / nlocal);
            a->rank->vp = vp;
            scheduler.spawn(vp, rank_main, a.get(), a->rank);
            args.push_back(std::move(a));
        }
        g_hosting.store(true);
        mpi::hang_watch_start();
        scheduler.run();
        mpi::hang_watch_stop();
        g_hosting.store(false);
        // The progress thread stops while the tasks' waiters still exist: a
        // late completion it makes must not unpark a freed task.
        if (g_net) g_net->shutdown();
    }
    output_finish();
    if (g_net) boot->fence();  // no node process closes its connections while others still send
    report_statistics(g_net);
    unload_images(images);
    mpi::attach_network(nullptr);
    g_net = nullptr;
    net.reset();
    mpi::process_teardown();
    boot->finalize();
    g_boot = nullptr;
    return g_max_status.load();
}

void rank_exit(int status) {
    if (!g_hosting.load() || !sched::in_task()) return;
    auto* rank = static_cast<mpi::RankState*>(sched::current_owner());
    if (!rank) return;
    run_rank_exit(g_rank_images[static_cast<size_t>(rank->local_index)], status);
    rank_done(rank, status);
    sched::exit_task();
}

const std::vector<uintptr_t>* caller_images() {
    auto* rank = static_cast<mpi::RankState*>(sched::current_owner());
    if (!rank || static_cast<size_t>(rank->local_index) >= g_rank_images.size()) return nullptr;
    return &g_rank_images[static_cast<size_t>(rank->local_index)];
}

// ---- Crash reports ---------------------------------------------------------------

namespace {

void crash_handler(int sig, siginfo_t* info, void*) {
    char buf[512];
    void* owner = sched::current_owner();
    auto* rank = static_cast<mpi::RankState*>(owner);
    void* guard_owner = nullptr;
    bool overflow = info && sched::guard_page_owner(info->si_addr, &guard_owner);
    if (overflow && !rank) rank = static_cast<mpi::RankState*>(guard_owner);
    const char* what = sigdescr_np(sig);  // signal-safe, unlike strsignal
    if (!what) what = "unknown signal";
    int n;
    if (overflow)
        n = snprintf(
            buf, sizeof(buf),
            "mpcx: rank %d overflowed its stack (signal %d, %s); raise MPC_STACK_SIZE "
            "(now %zu bytes)\n",
            rank ? rank->world_rank : -1, sig, what,
            sched::current_scheduler() ? sched::current_scheduler()->options().stack_size : 0);
    else if (rank)
        n = snprintf(buf, sizeof(buf), "mpcx: rank %d (pid %d) crashed: signal %d (%s) at %p\n",
                     rank->world_rank, getpid(), sig, what, info ? info->si_addr : nullptr);
    else
        n = snprintf(buf, sizeof(buf), "mpcx: node process %d crashed: signal %d (%s)\n", getpid(),
                     sig, what);
    if (n > 0) {
        ssize_t ignored = write(STDERR_FILENO, buf, static_cast<size_t>(std::min(n, 511)));
        (void)ignored;
    }
    // Default action now: the node process dies of this signal, the launcher sees it.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    libc_sigaction(sig, &dfl, nullptr);
    raise(sig);
}

}  // namespace

namespace {

// This thread's alternate signal stack, when we installed it: uninstalled
// before it is freed at thread exit.
struct SignalStack {
    std::unique_ptr<char[]> memory;
    ~SignalStack() {
        if (!memory) return;
        stack_t off{};
        off.ss_flags = SS_DISABLE;
        sigaltstack(&off, nullptr);
    }
};

}  // namespace

void setup_signal_stack() {
    static thread_local SignalStack stack;
    if (stack.memory) return;
    const size_t size = 64 * 1024;
    // Keep a large enough stack someone else installed on this thread: sanitizer
    // runtimes install one per thread and unmap it themselves at thread exit
    // (replacing it makes them unmap our memory and abort).
    stack_t current{};
    if (sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE) &&
        current.ss_size >= 16 * 1024)
        return;
    stack.memory.reset(new char[size]);
    stack_t ss{};
    ss.ss_sp = stack.memory.get();
    ss.ss_size = size;
    sigaltstack(&ss, nullptr);
}

namespace {

// A handler found already installed is kept when the program or a tool the user
// chose installed it (sanitizer runtimes, LD_PRELOAD), and replaced when a
// library we link installed it at load time: libfabric's psm2 and infinipath
// providers print a backtrace and call exit(1), which would turn a crash into
// "rank ended without MPI_Finalize" with status 1.
bool keep_existing_handler(const struct sigaction& old) {
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) return false;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) return true;
    void* fn = (old.sa_flags & SA_SIGINFO) ? reinterpret_cast<void*>(old.sa_sigaction)
                                           : reinterpret_cast<void*>(old.sa_handler);
    Dl_info info{};
    if (!dladdr(fn, &info) || !info.dli_fname) return true;
    if (!strstr(info.dli_fname, ".so")) return true;  // the program itself
    const char* slash = strrchr(info.dli_fname, '/');
    const char* base = slash ? slash + 1 : info.dli_fname;
    if (strstr(base, "san")) return true;  // libasan, libtsan, libubsan, ...
    const char* preload = getenv("LD_PRELOAD");
    return preload && strstr(preload, base);
}

}  // namespace

void install_crash_handlers() {
    struct sigaction sa {};
    sa.sa_sigaction = crash_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
        struct sigaction old {};
        sigaction(sig, nullptr, &old);
        if (!keep_existing_handler(old)) sigaction(sig, &sa, nullptr);
    }
}

}  // namespace mpc::host
