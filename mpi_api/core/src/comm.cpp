#include "mpi_api/comm.hpp"

#include "mpi_api/comm_ops.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/handles.hpp"
#include "mpi_api/rank.hpp"

namespace mpc::mpi {
namespace {

// Derived communicators of every rank; indices 1 and 2 are the predefined
// handles, which resolve to the caller's own objects instead.
HandlePool<Comm, HandleKind::Comm>& pool() {
    // Outlives every thread (handles.hpp).
    static auto* p = new HandlePool<Comm, HandleKind::Comm>(3);
    return *p;
}

}  // namespace

Comm* comm_lookup(MPI_Comm handle) {
    RankState* me = current_rank();
    return me ? comm_lookup(me, handle) : nullptr;
}

Comm* comm_lookup_created(const RankState* me, MPI_Comm handle) {
    Comm* c = pool().lookup(handle);
    return c && c->owner == me ? c : nullptr;
}

Comm* comm_lookup_any(MPI_Comm handle) {
    if (handle == MPI_COMM_WORLD || handle == MPI_COMM_SELF) return comm_lookup(handle);
    return pool().lookup(handle);
}

Comm* comm_allocate(RankState* owner) {
    int h;
    Comm* c = pool().allocate(&h);
    *c = Comm{};
    c->handle = h;
    c->owner = owner;
    return c;
}

void comm_release(Comm* c) {
    const int h = c->handle;
    *c = Comm{};  // frees groups, attributes, topology now
    pool().release(h);
}

void comm_init_rank(RankState* rank) {
    const World& w = world();
    Comm& cw = rank->world;
    cw.handle = MPI_COMM_WORLD;
    cw.owner = rank;
    cw.context = kWorldContext;
    cw.group = GroupData::make_identity(w.size);
    cw.rank = rank->world_rank;
    cw.size = w.size;
    cw.name = "MPI_COMM_WORLD";
    cw.predefined = true;
    cw.errhandler = initial_errhandler();

    Comm& cs = rank->self;
    cs.handle = MPI_COMM_SELF;
    cs.owner = rank;
    cs.context = kSelfContext;
    cs.group = GroupData::make_identity(1, rank->world_rank);
    cs.rank = 0;
    cs.size = 1;
    cs.name = "MPI_COMM_SELF";
    cs.predefined = true;
    cs.errhandler = initial_errhandler();
}

}  // namespace mpc::mpi
