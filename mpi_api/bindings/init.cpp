// Environment: initialisation, finalisation, version, timers, rank and size.
#include <cstring>
#include <ctime>
#include <mutex>

#include "collectives/collectives.hpp"
#include "mpi_api/api.hpp"
#include "mpi_api/attributes.hpp"
#include "mpi_api/process.hpp"
#include "mpi_api/progress.hpp"
#include "mpit.hpp"
#include "requests.hpp"
#include "runtime/log.hpp"

using namespace mpc::mpi;

// A program whose main was not hosted by the runtime (libfibermpi loaded with
// dlopen, say) gets a singleton world on the calling thread, without fibers.
RankState* mpc::mpi::attach_unhosted() {
    static std::once_flag once;
    std::call_once(once, [] {
        JobLayout layout;
        layout.node_of = {0};
        process_setup(layout);
    });
    RankState* r = world().locals.empty() ? nullptr : world().locals[0];
    mpc::sched::set_thread_owner(r);
    return r;
}

namespace {

int init_rank(RankState* me, int required, int* provided) {
    if (!me && !mpc::sched::current_scheduler()) me = attach_unhosted();
    if (!me)
        mpc::runtime::fatal(
            "MPI_Init was called from a thread that belongs to no MPI rank (was the program "
            "linked with mpicc and started normally?)");
    int expected = RankState::NotInitialized;
    if (!me->phase.compare_exchange_strong(expected, RankState::Initialized)) {
        return raise(&me->world, make_error(MPI_ERR_OTHER, expected == RankState::Initialized
                                                               ? "MPI is already initialized"
                                                               : "MPI was already finalized"));
    }
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        required = MPI_THREAD_MULTIPLE;
    me->thread_level = required;
    me->main_thread = mpc::sched::current_waiter();
    if (provided) *provided = required;
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Init(int* argc, char*** argv) {
    (void)argc;
    (void)argv;
    MPC_ENTER(Init);
    return init_rank(me, MPI_THREAD_SINGLE, nullptr);
}

int PMPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
    (void)argc;
    (void)argv;
    MPC_ENTER(Init_thread);
    if (!provided) {
        int rc = init_rank(me, required, nullptr);
        if (rc) return rc;
        return raise(&me->world, make_error(MPI_ERR_ARG, "provided is NULL"));
    }
    return init_rank(me, required, provided);
}

int PMPI_Initialized(int* flag) {
    MPC_ENTER(Initialized);
    if (!flag) return raise(nullptr, make_error(MPI_ERR_ARG, "flag is NULL"));
    *flag = me && me->phase.load() != RankState::NotInitialized;
    return MPI_SUCCESS;
}

int PMPI_Finalized(int* flag) {
    MPC_ENTER(Finalized);
    if (!flag) return raise(nullptr, make_error(MPI_ERR_ARG, "flag is NULL"));
    *flag = me && me->phase.load() == RankState::Finalized;
    return MPI_SUCCESS;
}

int PMPI_Finalize(void) {
    MPC_ENTER_ACTIVE(Finalize);
    // MPI 3.1 section 8.7.1: MPI_COMM_SELF's attributes are deleted first, so
    // that libraries can hook their own finalization on them.
    if (int e = comm_attrs_delete_all(&me->self)) return raise(&me->world, e);
    // Buffered sends still in an attached buffer leave first: an implicit
    // MPI_Buffer_detach (which also frees the rank's bookkeeping of it).
    if (me->bsend) {
        void* buffer = nullptr;
        MPI_Count size = 0;
        bsend_detach(me->bsend, &buffer, &size);
    }
    // The same for buffers still attached to the predefined communicators
    // (MPI 4.1); those of other communicators went with MPI_Comm_free.
    for (Comm* c : {&me->world, &me->self}) {
        bsend_flush(c->bsend.get());
        c->bsend.reset();
    }
    // Every rank reaches this point before any leaves MPI: no message can still
    // be on its way to a finalized rank.
    mpc::coll::barrier(&me->world);
    me->phase.store(RankState::Finalized);
    return MPI_SUCCESS;
}

int PMPI_Abort(MPI_Comm comm, int errorcode) {
    MPC_ENTER(Abort);
    Comm* c = comm_lookup(comm);
    mpc::runtime::fatal_status(errorcode & 0xff ? errorcode & 0xff : 1,
                               "MPI_Abort(%s, %d) called: ending the job",
                               c ? (c->name.empty() ? "comm" : c->name.c_str()) : "invalid comm",
                               errorcode);
}

int PMPI_Query_thread(int* provided) {
    MPC_ENTER_ACTIVE(Query_thread);
    if (!provided) return raise(nullptr, make_error(MPI_ERR_ARG, "provided is NULL"));
    *provided = me->thread_level;
    return MPI_SUCCESS;
}

int PMPI_Is_thread_main(int* flag) {
    MPC_ENTER_ACTIVE(Is_thread_main);
    if (!flag) return raise(nullptr, make_error(MPI_ERR_ARG, "flag is NULL"));
    *flag = me->main_thread == mpc::sched::current_waiter();
    return MPI_SUCCESS;
}

int PMPI_Get_version(int* version, int* subversion) {
    MPC_ENTER(Get_version);
    if (!version || !subversion)
        return raise(nullptr, make_error(MPI_ERR_ARG, "version or subversion is NULL"));
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int PMPI_Get_library_version(char* version, int* resultlen) {
    MPC_ENTER(Get_library_version);
    if (!version || !resultlen)
        return raise(nullptr, make_error(MPI_ERR_ARG, "version or resultlen is NULL"));
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "fibermpi %s: thread-based MPI (ranks are fibers, collaborative polling)",
                     FIBERMPI_VERSION);
    *resultlen = n;
    return MPI_SUCCESS;
}

int PMPI_Get_processor_name(char* name, int* resultlen) {
    MPC_ENTER(Get_processor_name);
    if (!name || !resultlen)
        return raise(nullptr, make_error(MPI_ERR_ARG, "name or resultlen is NULL"));
    const std::string& p = world().processor_name;
    size_t n = std::min(p.size(), static_cast<size_t>(MPI_MAX_PROCESSOR_NAME - 1));
    memcpy(name, p.data(), n);
    name[n] = '\0';
    *resultlen = static_cast<int>(n);
    return MPI_SUCCESS;
}

double PMPI_Wtime(void) {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double PMPI_Wtick(void) {
    timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int PMPI_Pcontrol(const int level, ...) {
    (void)level;
    return MPI_SUCCESS;  // no profiling levels: the statistics are always collected or not
}

int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
    MPC_ENTER_ACTIVE(Comm_rank);
    Comm* c;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (!rank) return raise(c, make_error(MPI_ERR_ARG, "rank is NULL"));
    *rank = c->rank;
    return MPI_SUCCESS;
}

int PMPI_Comm_size(MPI_Comm comm, int* size) {
    MPC_ENTER_ACTIVE(Comm_size);
    Comm* c;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (!size) return raise(c, make_error(MPI_ERR_ARG, "size is NULL"));
    *size = c->size;
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_Init)
MPC_WEAK(MPI_Init_thread)
MPC_WEAK(MPI_Initialized)
MPC_WEAK(MPI_Finalized)
MPC_WEAK(MPI_Finalize)
MPC_WEAK(MPI_Abort)
MPC_WEAK(MPI_Query_thread)
MPC_WEAK(MPI_Is_thread_main)
MPC_WEAK(MPI_Get_version)
MPC_WEAK(MPI_Get_library_version)
MPC_WEAK(MPI_Get_processor_name)
MPC_WEAK(MPI_Wtime)
MPC_WEAK(MPI_Wtick)
MPC_WEAK(MPI_Pcontrol)
MPC_WEAK(MPI_Comm_rank)
MPC_WEAK(MPI_Comm_size)
