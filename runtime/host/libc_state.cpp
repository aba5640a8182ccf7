#include "libc_state.hpp"

#include <getopt.h>
#include <time.h>

#include <atomic>
#include <cstring>
#include <memory>

#include "elf_loaded.hpp"
#include "mpi_api/rank.hpp"
#include "scheduler/scheduler.hpp"

extern char** environ;

namespace mpc::host {

bool g_ranks_open = false;

namespace {

// Never freed: a thread of a rank may call in after the ranks are gone.
std::atomic<RankLibc*>* g_states = nullptr;
std::atomic<int> g_nlocal{0};
// Per local rank, the load base of the program copy only it runs (0: it runs
// the process's, as rank 0 and ranks sharing images do). Set by
// bind_rank_variables before the rank's constructors run.
std::atomic<uintptr_t>* g_program_base = nullptr;
char** g_startup_env = nullptr;

mpi::RankState* caller() {
    return static_cast<mpi::RankState*>(sched::current_owner());
}

RankLibc* state_of(const mpi::RankState* rank) {
    const int local = rank->local_index;
    if (!g_states || local < 0 || local >= g_nlocal.load(std::memory_order_relaxed)) return nullptr;
    std::atomic<RankLibc*>& slot = g_states[local];
    if (RankLibc* s = slot.load(std::memory_order_acquire)) return s;
    auto* fresh = new RankLibc;
    fresh->local = local;
    fresh->world_rank = rank->world_rank;
    fresh->environ_cell = g_startup_env;
    RankLibc* expected = nullptr;
    // Only the rank's own threads race here: the loser's copy goes.
    if (!slot.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) {
        delete fresh;
        return expected;
    }
    return fresh;
}

// The names a variable goes by (environ has two aliases in libc).
const std::vector<const char*>& names_of(LibcVariable v) {
    static const std::vector<const char*> names[kLibcVariables] = {
        {"optind"},
        {"optarg"},
        {"opterr"},
        {"optopt"},
        {"environ", "__environ", "_environ"},
        {"getdate_err"},
        {"tzname"},
        {"timezone"},
        {"daylight"}};
    return names[v];
}

// The variables a rank has its own of; the others (the time zone's) are the
// process's, and a rank's program copy only follows them.
bool owned(LibcVariable v) {
    return v < kTzname;
}

// How the rank images reach libc's variables: the same in every copy of one
// file, so found once, in rank 1's copies.
struct Layout {
    bool known = false;
    uintptr_t in_program[kLibcVariables] = {};  // the program's copy (relocation COPY), or 0
    std::vector<const char*> names;             // every name of every owned variable
    std::vector<LibcVariable> variable_of;      // by index in names
    std::vector<std::vector<elf::DataReference>> references;  // per copied object
};
Layout g_layout;

void learn_layout(const std::vector<const elf::LoadedObject*>& copies) {
    for (int i = 0; i < kLibcVariables; ++i) {
        const auto v = static_cast<LibcVariable>(i);
        for (const char* name : names_of(v)) {
            if (const Elf64_Sym* s = copies[0]->find(name))
                if (!g_layout.in_program[v]) g_layout.in_program[v] = s->st_value;
            if (owned(v)) {
                g_layout.names.push_back(name);
                g_layout.variable_of.push_back(v);
            }
        }
    }
    for (const elf::LoadedObject* o : copies)
        g_layout.references.push_back(elf::data_references(*o, g_layout.names));
    g_layout.known = true;
}

// The process's own variables: libc's, or the program's copies of them
// (the program's definition comes first in the lookup, libc uses it too).
void* process_variable(LibcVariable v) {
    switch (v) {
        case kOptind:
            return &optind;
        case kOptarg:
            return &optarg;
        case kOpterr:
            return &opterr;
        case kOptopt:
            return &optopt;
        case kEnviron:
            return &environ;
        case kGetdateErr:
            return &getdate_err;
        case kTzname:
            return &tzname;
        case kTimezone:
            return &timezone;
        case kDaylight:
            return &daylight;
        default:
            break;
    }
    return nullptr;
}

void* cell_of(RankLibc& r, LibcVariable v) {
    switch (v) {
        case kOptind:
            return &r.optind_cell;
        case kOptarg:
            return &r.optarg_cell;
        case kOpterr:
            return &r.opterr_cell;
        case kOptopt:
            return &r.optopt_cell;
        case kEnviron:
            return &r.environ_cell;
        case kGetdateErr:
            return &r.getdate_err_cell;
        default:
            break;
    }
    return nullptr;
}

}  // namespace

void libc_ranks_open(int nlocal) {
    // A copy: rank 0's changes go through glibc, which reallocates (and so
    // frees) the array it made when the program changed it earlier.
    size_t n = 0;
    while (environ && environ[n]) ++n;
    g_startup_env = static_cast<char**>(malloc((n + 1) * sizeof(char*)));
    if (n) memcpy(g_startup_env, environ, n * sizeof(char*));
    g_startup_env[n] = nullptr;
    g_states = new std::atomic<RankLibc*>[static_cast<size_t>(nlocal)]();
    g_program_base = new std::atomic<uintptr_t>[static_cast<size_t>(nlocal)]();
    g_nlocal.store(nlocal, std::memory_order_release);
    __atomic_store_n(&g_ranks_open, true, __ATOMIC_RELEASE);
}

void bind_rank_variables(void* owner, const std::vector<const elf::LoadedObject*>& copies) {
    const auto* rank = static_cast<const mpi::RankState*>(owner);
    if (!g_program_base || copies.empty() || rank->local_index <= 0) return;
    if (!g_layout.known) learn_layout(copies);
    g_program_base[rank->local_index].store(copies[0]->base, std::memory_order_release);
    // References the loader bound to rank 0's variables (code compiled
    // -fPIC, the user's libraries): to this rank's. Usually there are none,
    // and the rank's state is not even made.
    for (size_t k = 0; k < copies.size() && k < g_layout.references.size(); ++k)
        for (const elf::DataReference& ref : g_layout.references[k]) {
            RankLibc* r = state_of(rank);
            if (!r) return;
            const LibcVariable v = g_layout.variable_of[ref.name];
            elf::point_reference(*copies[k], ref,
                                 reinterpret_cast<uintptr_t>(rank_variable(*r, v)));
        }
}

bool rank_has_own_images(const RankLibc& r) {
    return r.local > 0 && g_program_base &&
           g_program_base[r.local].load(std::memory_order_acquire) != 0;
}

RankLibc* rank_libc() {
    mpi::RankState* r = caller();
    return r ? state_of(r) : nullptr;
}

RankLibc* private_libc() {
    mpi::RankState* r = caller();
    return r && r->local_index > 0 ? state_of(r) : nullptr;
}

int caller_local() {
    mpi::RankState* r = caller();
    return r ? r->local_index : -1;
}

RankLibc* existing_libc(int local) {
    if (!g_states || local < 0 || local >= g_nlocal.load(std::memory_order_relaxed)) return nullptr;
    return g_states[local].load(std::memory_order_acquire);
}

int calling_world_rank() {
    mpi::RankState* r = caller();
    return r ? r->world_rank : -1;
}

int local_rank_count() {
    return g_nlocal.load(std::memory_order_relaxed);
}

char** startup_environment() {
    return g_startup_env ? g_startup_env : environ;
}

RankLibc::Larger& larger(RankLibc& r) {
    if (RankLibc::Larger* l = r.larger.load(std::memory_order_acquire)) return *l;
    auto* fresh = new RankLibc::Larger;
    RankLibc::Larger* expected = nullptr;
    if (!r.larger.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) {
        delete fresh;
        return *expected;
    }
    return *fresh;
}

void* program_copy(RankLibc& r, LibcVariable which) {
    if (!rank_has_own_images(r) || !g_layout.in_program[which]) return nullptr;
    return reinterpret_cast<void*>(g_program_base[r.local].load(std::memory_order_acquire) +
                                   g_layout.in_program[which]);
}

void* rank_variable(RankLibc& r, LibcVariable which) {
    if (!rank_has_own_images(r)) return process_variable(which);
    if (void* copy = program_copy(r, which)) return copy;
    return owned(which) ? cell_of(r, which) : process_variable(which);
}

}  // namespace mpc::host
