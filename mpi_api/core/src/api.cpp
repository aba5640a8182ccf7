#include "mpi_api/api.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>

#include "runtime/log.hpp"
#include "runtime/sync.hpp"

namespace mpc::mpi {

std::atomic<bool> g_stats_enabled{false};

FnStats* rank_fn_stats(RankState* rank) {
    FnStats* s = rank->fn_stats.load(std::memory_order_acquire);
    if (s) return s;
    // Threads of the rank may get here at once: one table wins.
    auto* made = new FnStats[static_cast<size_t>(gen::Fn::kCount)]();
    if (rank->fn_stats.compare_exchange_strong(s, made, std::memory_order_acq_rel)) return made;
    delete[] made;
    return s;
}

void set_stats_report(bool on) {
    static std::mutex mutex;
    std::lock_guard<std::mutex> g(mutex);
    if (g_stats_enabled.load() == on) return;
    g_stats_enabled.store(on);
    for (runtime::tools::Gate* gate :
         {&runtime::tools::g_transport, &runtime::tools::g_functions}) {
        if (on)
            gate->open();
        else
            gate->close();
    }
}

namespace {

// The function each thread a rank created is in (see ApiScope).
thread_local int tl_thread_fn = -1;

int read_fn(RankState* me) {
    return sched::in_task() ? me->current_fn.load(std::memory_order_relaxed) : tl_thread_fn;
}

}  // namespace

int ApiScope::swap_thread_fn(int fn) {
    return std::exchange(tl_thread_fn, fn);
}

void ApiScope::start_stats() {
    start_ = std::max<int64_t>(runtime::now_ns(), 1);  // 0 means "not timed"
}

void ApiScope::end_stats() {
    // Threads of one rank may count at the same time.
    FnStats& s = rank_fn_stats(me_)[static_cast<size_t>(fn_)];
    std::atomic_ref<uint64_t>(s.calls).fetch_add(1, std::memory_order_relaxed);
    std::atomic_ref<uint64_t>(s.ns).fetch_add(static_cast<uint64_t>(runtime::now_ns() - start_),
                                              std::memory_order_relaxed);
}

const char* current_fn_name(RankState* me) {
    if (!me) return "MPI";
    const int fn = read_fn(me);
    return fn < 0 ? "MPI" : gen::kFnNames[fn];
}

void not_initialized(RankState* me, gen::Fn fn) {
    const char* name = gen::kFnNames[static_cast<int>(fn)];
    if (me && me->phase.load() == RankState::Finalized)
        runtime::fatal("%s was called after MPI_Finalize", name);
    if (!me && sched::current_scheduler())
        runtime::fatal("%s was called from a thread that belongs to no MPI rank", name);
    runtime::fatal("%s was called before MPI_Init", name);
}

int check_comm(MPI_Comm handle, Comm** out) {
    Comm* c = comm_lookup(handle);
    if (!c) {
        if (handle == MPI_COMM_NULL) return make_error(MPI_ERR_COMM, "MPI_COMM_NULL passed");
        if (Comm* other = comm_lookup_any(handle); other && other->owner)
            return make_error(MPI_ERR_COMM,
                              "communicator 0x%x belongs to MPI_COMM_WORLD rank %d, not to the "
                              "calling rank (ranks of a node process share global variables: "
                              "keep communicator handles per rank)",
                              handle, other->owner->world_rank);
        return make_error(MPI_ERR_COMM, "0x%x is not a valid communicator of this rank", handle);
    }
    *out = c;
    return MPI_SUCCESS;
}

int check_type(MPI_Datatype handle, Datatype** out, bool need_commit) {
    Datatype* t = datatype_lookup(handle);
    if (!t) {
        if (handle == MPI_DATATYPE_NULL)
            return make_error(MPI_ERR_TYPE, "MPI_DATATYPE_NULL passed");
        return make_error(MPI_ERR_TYPE, "0x%x is not a valid datatype", handle);
    }
    if (need_commit && !t->committed)
        return make_error(MPI_ERR_TYPE, "datatype %s is not committed",
                          t->name.empty() ? "(unnamed)" : t->name.c_str());
    *out = t;
    return MPI_SUCCESS;
}

int check_count(MPI_Count count) {
    if (count < 0) return make_error(MPI_ERR_COUNT, "negative count %lld", count);
    return MPI_SUCCESS;
}

int check_buffer(const void* buf, MPI_Count count, const Datatype* type) {
    // NULL is MPI_BOTTOM, legitimate with absolute addresses in the datatype.
    if (!buf && count > 0 && type->size > 0 && type->true_lb == 0)
        return make_error(MPI_ERR_BUFFER, "NULL buffer with count %lld", count);
    if (!count_fits(count, *type))
        return make_error(MPI_ERR_COUNT, "%lld elements of %llu bytes exceed the address space",
                          count, static_cast<unsigned long long>(bytes_per_element(*type)));
    return MPI_SUCCESS;
}

int check_send_rank(const Comm* comm, int rank) {
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    int n = comm->remote_size();
    if (rank < 0 || rank >= n)
        return make_error(MPI_ERR_RANK, "invalid rank %d: the communicator has %d ranks", rank,
                          n);
    return MPI_SUCCESS;
}

int check_recv_rank(const Comm* comm, int rank) {
    if (rank == MPI_ANY_SOURCE) return MPI_SUCCESS;
    return check_send_rank(comm, rank);
}

int check_tag(int tag, bool allow_any) {
    if (allow_any && tag == MPI_ANY_TAG) return MPI_SUCCESS;
    if (tag < 0 || tag > kTagUpperBound)
        return make_error(MPI_ERR_TAG, "invalid tag %d: tags lie in [0, %d]%s", tag,
                          kTagUpperBound, allow_any ? " or are MPI_ANY_TAG" : "");
    return MPI_SUCCESS;
}

int check_root(const Comm* comm, int root) {
    if (root < 0 || root >= comm->size)
        return make_error(MPI_ERR_ROOT, "invalid root %d: the communicator has %d ranks", root,
                          comm->size);
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi
