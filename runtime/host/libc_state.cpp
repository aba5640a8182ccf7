#include "libc_state.hpp"

#include <getopt.h>

#include <atomic>
#include <cstring>
#include <memory>

#include "elf_loaded.hpp"
#include "mpi_api/rank.hpp"
#include "scheduler/scheduler.hpp"

extern char** environ;

namespace mpc::host {
namespace {

// Never freed: a thread of a rank may call in after the ranks are gone.
std::atomic<RankLibc*>* g_states = nullptr;
std::atomic<int> g_nlocal{0};
// Per local rank, the images only it runs (program copy first); set once
// they are loaded, before any rank runs.
const std::vector<std::vector<uintptr_t>>* g_images = nullptr;
char** g_startup_env = nullptr;

mpi::RankState* caller() {
    return static_cast<mpi::RankState*>(sched::current_owner());
}

RankLibc* state_of(const mpi::RankState* rank) {
    const int local = rank->local_index;
    if (!g_states || local < 0 || local >= g_nlocal.load(std::memory_order_relaxed))
        return nullptr;
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
        {"optind"}, {"optarg"}, {"opterr"}, {"optopt"}, {"environ", "__environ", "_environ"}};
    return names[v];
}

// The process's own variables: libc's, or the program's copies of them
// (the program's definition comes first in the lookup, libc uses it too).
void* process_variable(LibcVariable v) {
    switch (v) {
        case kOptind: return &optind;
        case kOptarg: return &optarg;
        case kOpterr: return &opterr;
        case kOptopt: return &optopt;
        case kEnviron: return &environ;
        case kLibcVariables: break;
    }
    return nullptr;
}

void* cell_of(RankLibc& r, LibcVariable v) {
    switch (v) {
        case kOptind: return &r.optind_cell;
        case kOptarg: return &r.optarg_cell;
        case kOpterr: return &r.opterr_cell;
        case kOptopt: return &r.optopt_cell;
        case kEnviron: return &r.environ_cell;
        case kLibcVariables: break;
    }
    return nullptr;
}

// A rank with images of its own: its program copy's copy of each variable
// (the program reads it directly), else a cell of ours; then every data
// reference to the variable in the rank's images (GOT entries of code
// compiled -fPIC, of the user's libraries; the loader bound them to rank 0's)
// points there.
void find_variables(RankLibc& r) {
    const std::vector<uintptr_t>& bases = (*g_images)[static_cast<size_t>(r.local)];
    const std::vector<elf::LoadedObject> objects = elf::loaded_objects_at(bases);
    const elf::LoadedObject* program = nullptr;
    for (const elf::LoadedObject& o : objects)
        if (o.base == bases[0]) program = &o;
    for (int i = 0; i < kLibcVariables; ++i) {
        const auto v = static_cast<LibcVariable>(i);
        uintptr_t where = 0;
        for (const char* name : names_of(v))
            if (const Elf64_Sym* s = program ? program->find(name) : nullptr)
                if (!where) where = program->base + s->st_value;
        if (!where) where = reinterpret_cast<uintptr_t>(cell_of(r, v));
        for (const elf::LoadedObject& o : objects)
            for (const char* name : names_of(v)) elf::redirect_data_references(o, name, where);
        r.variables[i] = reinterpret_cast<void*>(where);
    }
}

bool has_own_images(const RankLibc& r) {
    return r.local > 0 && g_images && static_cast<size_t>(r.local) < g_images->size() &&
           !(*g_images)[static_cast<size_t>(r.local)].empty();
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
    g_nlocal.store(nlocal, std::memory_order_release);
}

void libc_ranks_images(const std::vector<std::vector<uintptr_t>>& images) {
    g_images = &images;
    // An environment a copy's constructor changed: its program sees it now.
    for (int i = 1; i < g_nlocal.load(std::memory_order_relaxed); ++i) {
        RankLibc* r = g_states[i].load(std::memory_order_acquire);
        if (r && r->env_private && has_own_images(*r))
            *rank_variable_as<char**>(*r, kEnviron) = r->environ_cell;
    }
}

bool rank_has_own_images(const RankLibc& r) {
    return has_own_images(r);
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
    if (!g_states || local < 0 || local >= g_nlocal.load(std::memory_order_relaxed))
        return nullptr;
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

void* program_copy_of(RankLibc& r, const char* name) {
    if (!has_own_images(r)) return nullptr;
    const std::vector<uintptr_t>& bases = (*g_images)[static_cast<size_t>(r.local)];
    for (const elf::LoadedObject& o : elf::loaded_objects_at({bases[0]}))
        if (const Elf64_Sym* s = o.find(name)) return reinterpret_cast<void*>(o.base + s->st_value);
    return nullptr;
}

void* rank_variable(RankLibc& r, LibcVariable which) {
    // Before the images are known (a copy's constructor), the rank's cell.
    if (r.local > 0 && !g_images) return cell_of(r, which);
    if (!has_own_images(r)) return process_variable(which);
    std::call_once(r.variables_once, [&] { find_variables(r); });
    return r.variables[which];
}

}  // namespace mpc::host
