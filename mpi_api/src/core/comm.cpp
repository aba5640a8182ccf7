#include "mpi_api/comm.hpp"

#include "mpi_api/handles.hpp"
#include "mpi_api/rank.hpp"

namespace mpc::mpi {

Comm* comm_lookup(MPI_Comm handle) {
    RankState* me = current_rank();
    if (!me) return nullptr;
    if (handle == MPI_COMM_WORLD) return &me->world;
    if (handle == MPI_COMM_SELF) return &me->self;
    return nullptr;  // derived communicators: see the collectives issue
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

    Comm& cs = rank->self;
    cs.handle = MPI_COMM_SELF;
    cs.owner = rank;
    cs.context = kSelfContext;
    cs.group = GroupData::make_identity(1, rank->world_rank);
    cs.rank = 0;
    cs.size = 1;
    cs.name = "MPI_COMM_SELF";
    cs.predefined = true;
}

}  // namespace mpc::mpi
