// Checks shared by the topology and neighbor-collective bindings.
#pragma once

#include "mpi_api/api.hpp"
#include "mpi_api/topology.hpp"

namespace mpc::mpi {

// c must carry a topology of `kind` (any kind when kind is MPI_UNDEFINED).
inline int check_topology(const Comm* c, int kind, const Topology** out) {
    static const char* const kNames[] = {"", "graph", "Cartesian", "distributed graph"};
    const Topology* t = c->topology.get();
    if (!t) return make_error(MPI_ERR_TOPOLOGY, "the communicator has no virtual topology");
    if (kind != MPI_UNDEFINED && t->kind != kind)
        return make_error(MPI_ERR_TOPOLOGY,
                          "a %s topology is required, the communicator has a %s "
                          "topology",
                          kNames[kind], kNames[t->kind]);
    *out = t;
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi
