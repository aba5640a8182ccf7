// Ranks of an OpenMP program as the OpenMP runtime's processes (openmp.hpp
// says what and why): the plan (VPs, cores, TLS regions, default teams) and
// what the entry points of openmp_gomp.cpp and the OMPT tool of
// openmp_ompt.cpp ask of it.
#include "openmp.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "elf_loaded.hpp"
#include "mpi_api/rank.hpp"
#include "rank_lock.hpp"
#include "rank_tls.hpp"
#include "runtime/env.hpp"
#include "runtime/log.hpp"
#include "runtime/topology.hpp"

namespace mpc::host {
namespace {

struct RankCores {
    int cores = 1;                  // how many cores the block has
    std::vector<int> cpus;          // its processors, in order
    cpu_set_t set{};                // the same as a set
    std::atomic<unsigned> next{0};  // libgomp's bound threads take the block's cores in turn
    bool shares_vp = false;         // other ranks run on the rank's VP
};

struct Plan {
    bool openmp = false;                   // an OpenMP runtime is loaded
    bool bind = false;                     // threads go to their rank's cores
    bool team_from_env = false;            // OMP_NUM_THREADS is set: its teams, not ours
    std::vector<uintptr_t> runtime_bases;  // recognises the runtime's thread start routines
    std::vector<LibraryTls> tls;           // swapped per rank (kept for the scheduler's lifetime)
    std::unique_ptr<RankCores[]> cores;    // per local rank
    std::unique_ptr<RankLock[]> critical;  // the unnamed critical section, per local rank
    int nlocal = 0;
    bool vps_chosen = false;   // the user set the VP count
    bool vp_per_rank = false;  // VP i runs rank i alone
    void (*set_num_threads)(int) = nullptr;
};
Plan g_plan;

// The first number of OMP_NUM_THREADS (a list gives the nesting levels' sizes).
int team_size_from_env() {
    const char* text = getenv("OMP_NUM_THREADS");
    if (!text) return 0;
    char* end = nullptr;
    const long n = strtol(text, &end, 10);
    return end != text && n > 0 && n < 1 << 20 ? static_cast<int>(n) : 0;
}

bool program_is_cxx(const std::vector<elf::LoadedObject>& objects) {
    for (const std::string& name : objects[0].needed)
        if (name.rfind("libstdc++.so", 0) == 0) return true;
    return false;
}

// The cores of rank i: a contiguous block of the node process's cores when
// every rank has a VP and there are enough cores, else its VP's core.
void lay_out_cores(const sched::Options& opts, int nlocal) {
    const auto& topo = runtime::Topology::instance();
    const int ncores = static_cast<int>(opts.cores.size());
    g_plan.cores.reset(new RankCores[static_cast<size_t>(std::max(nlocal, 1))]);
    const int vps = opts.num_vps;
    for (int i = 0; i < nlocal; ++i) {
        RankCores& rc = g_plan.cores[static_cast<size_t>(i)];
        const long vp = static_cast<long>(i) * vps / nlocal;
        rc.shares_vp = (i > 0 && static_cast<long>(i - 1) * vps / nlocal == vp) ||
                       (i + 1 < nlocal && static_cast<long>(i + 1) * vps / nlocal == vp);
        std::vector<int> block;
        if (ncores > 0 && vps == nlocal && nlocal <= ncores) {
            for (int c = i * ncores / nlocal; c < (i + 1) * ncores / nlocal; ++c)
                block.push_back(opts.cores[static_cast<size_t>(c)]);
        } else if (ncores > 0) {
            block.push_back(sched::core_of_vp(opts, static_cast<int>(vp)));
        }
        rc.cores = std::max<int>(1, static_cast<int>(block.size()));
        CPU_ZERO(&rc.set);
        for (int core : block) {
            cpu_set_t one;
            if (!topo.core_cpus(core, &one)) {
                g_plan.bind = false;
                continue;
            }
            for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
                if (CPU_ISSET(cpu, &one)) {
                    CPU_SET(cpu, &rc.set);
                    rc.cpus.push_back(cpu);
                }
        }
        if (rc.cpus.empty()) g_plan.bind = false;
    }
}

void find_runtimes(const std::vector<elf::LoadedObject>& objects) {
    bool llvm = false;
    for (const elf::LoadedObject& o : objects) {
        if (!is_openmp_runtime(o.path)) continue;
        g_plan.runtime_bases.push_back(o.base);
        llvm = llvm || o.path.find("libgomp") == std::string::npos;
    }
    g_plan.openmp = !g_plan.runtime_bases.empty();
    // libomp takes the mask of the thread that first calls it (a rank's VP,
    // bound to one core) for the process's, and binds its workers to it:
    // unless the user chose places, it leaves their cores to us.
    if (llvm && !getenv("KMP_AFFINITY") && !getenv("OMP_PROC_BIND") && !getenv("OMP_PLACES") &&
        !getenv("GOMP_CPU_AFFINITY"))
        setenv("KMP_AFFINITY", "disabled", 0);
}

mpi::RankState* calling_rank() {
    auto* rank = static_cast<mpi::RankState*>(sched::current_owner());
    return rank && rank->local_index < g_plan.nlocal ? rank : nullptr;
}

}  // namespace

RankLock* rank_critical_lock() {
    mpi::RankState* rank = g_plan.critical ? calling_rank() : nullptr;
    return rank ? &g_plan.critical[static_cast<size_t>(rank->local_index)] : nullptr;
}

void check_team_size(int threads) {
    if (threads <= 1 || !g_plan.openmp || !sched::in_task()) return;
    mpi::RankState* rank = calling_rank();
    if (!rank || !g_plan.cores[static_cast<size_t>(rank->local_index)].shares_vp) return;
    static std::atomic<bool> warned{false};
    if (warned.exchange(true)) return;
    char remedy[96];
    if (g_plan.vps_chosen)
        snprintf(remedy, sizeof(remedy), "MPC_VPS=%d or -c %d", g_plan.nlocal, g_plan.nlocal);
    else
        snprintf(remedy, sizeof(remedy), "OMP_NUM_THREADS=%d", threads);
    runtime::warn(
        "rank %d starts an OpenMP team of %d threads on a virtual processor it shares with "
        "other ranks: while its master waits for the team inside the OpenMP runtime, they "
        "cannot run (%s gives each rank a VP of its own)",
        rank->world_rank, threads, remedy);
}

void plan_rank_threads(sched::Options* opts, int nlocal, bool vps_chosen) {
    const std::vector<elf::LoadedObject> objects = elf::loaded_objects();
    find_runtimes(objects);
    g_plan.nlocal = nlocal;
    g_plan.vps_chosen = vps_chosen;
    if (g_plan.openmp) {
        const int team = team_size_from_env();
        g_plan.team_from_env = team > 0;
        // A team of several threads waits for its workers inside the OpenMP
        // runtime, in the kernel: a VP of its own (openmp.hpp).
        if (!vps_chosen && team > 1 && opts->num_vps < nlocal) {
            opts->num_vps = nlocal;
            runtime::debug("OpenMP teams of %d threads: one virtual processor per rank (%d)", team,
                           nlocal);
        }
        // One VP per rank on enough cores: each VP on the first core of its
        // rank's block.
        const int ncores = static_cast<int>(opts->cores.size());
        g_plan.bind = opts->bind && ncores > 0;
        lay_out_cores(*opts, nlocal);
        g_plan.vp_per_rank = opts->num_vps == nlocal;
        if (opts->num_vps == nlocal && nlocal <= ncores && nlocal > 1) {
            std::vector<int> firsts;
            for (int i = 0; i < nlocal; ++i)
                firsts.push_back(opts->cores[static_cast<size_t>(i * ncores / nlocal)]);
            opts->cores = firsts;
        }
        g_plan.critical.reset(new RankLock[static_cast<size_t>(std::max(nlocal, 1))]);
        g_plan.set_num_threads =
            reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    }
    // Ranks sharing a VP share its kernel thread's TLS: the libraries whose
    // per-thread state belongs to the code that runs get a copy per rank.
    if (nlocal > opts->num_vps) {
        g_plan.tls = rank_private_library_tls(program_is_cxx(objects));
        for (const LibraryTls& lib : g_plan.tls) {
            opts->task_tls.push_back(lib.region);
            runtime::debug("the thread-local state of %s (%zu bytes) follows the ranks",
                           lib.path.c_str(), lib.region.size);
        }
    }
}

void start_openmp_vp(int vp) {
    if (!g_plan.openmp || !g_plan.bind || !g_plan.vp_per_rank || vp >= g_plan.nlocal) return;
    const RankCores& rc = g_plan.cores[static_cast<size_t>(vp)];
    if (rc.cores > 1) (void)sched_setaffinity(0, sizeof(rc.set), &rc.set);
}

void start_openmp_rank(int local) {
    if (!g_plan.openmp || g_plan.team_from_env || !g_plan.set_num_threads) return;
    g_plan.set_num_threads(g_plan.cores[static_cast<size_t>(local)].cores);
}

const cpu_set_t* openmp_thread_cores(void* owner, void* (*fn)(void*), const pthread_attr_t* attr,
                                     const cpu_set_t* fallback, cpu_set_t* scratch) {
    if (!g_plan.bind || !owner) return fallback;
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(fn), &info)) return fallback;
    bool runtime_thread = false;
    for (uintptr_t base : g_plan.runtime_bases)
        runtime_thread = runtime_thread || reinterpret_cast<uintptr_t>(info.dli_fbase) == base;
    if (!runtime_thread) return fallback;
    auto* rank = static_cast<mpi::RankState*>(owner);
    if (rank->local_index >= g_plan.nlocal) return fallback;
    RankCores& rc = g_plan.cores[static_cast<size_t>(rank->local_index)];
    // A place chosen by the runtime (OMP_PROC_BIND, OMP_PLACES): one core of
    // the block, in turn, after the master's.
    cpu_set_t chosen;
    if (attr && pthread_attr_getaffinity_np(attr, sizeof(chosen), &chosen) == 0 &&
        CPU_COUNT(&chosen) < CPU_SETSIZE && CPU_COUNT(&chosen) > 0) {
        const unsigned k = rc.next.fetch_add(1, std::memory_order_relaxed) + 1;
        CPU_ZERO(scratch);
        CPU_SET(rc.cpus[k % rc.cpus.size()], scratch);
        return scratch;
    }
    return &rc.set;
}

void move_openmp_worker(void* owner) {
    auto* rank = static_cast<mpi::RankState*>(owner);
    if (!g_plan.bind || rank->local_index >= g_plan.nlocal) return;
    const cpu_set_t& cores = g_plan.cores[static_cast<size_t>(rank->local_index)].set;
    (void)sched_setaffinity(0, sizeof(cores), &cores);
}

}  // namespace mpc::host
