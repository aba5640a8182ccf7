// Hierarchical composition of the shared-address-space collectives across node
// processes (shm_hier.cpp): the blocking Gather(v), Scatter(v), Allgather(v),
// Alltoall, Reduce_scatter(_block), Scan and Exscan of a communicator spread
// over several node processes, as intra-node phases through shared memory
// around the leaders' schedules (shm.cpp's file comment). A shape that does
// not pay runs the communicator's schedule instead.
#pragma once

#include "shm_local.hpp"
#include "shm_view.hpp"

namespace mpc::coll::shm {

// m as shm_coll.cpp builds it from the MPI arguments (roots are communicator
// ranks). Return an MPI error code.
int hier_gather(Comm* c, View& v, const Movement& m);
int hier_scatter(Comm* c, View& v, const Movement& m);
int hier_allgather(Comm* c, View& v, const Movement& m);
int hier_alltoall(Comm* c, View& v, const Movement& m);
int hier_reduce_scatter(Comm* c, View& v, const Partial& r);
int hier_scan(Comm* c, View& v, const Partial& r);

}  // namespace mpc::coll::shm
