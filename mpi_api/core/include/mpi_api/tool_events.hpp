// mpi_api/tool_events: the events the MPI engine raises for the tools
// interface (MPI_T events, MPI 4.1 section 15.3.8), their sites and element
// layouts. A raise costs one relaxed load and a branch while no tool has a
// callback on the event (runtime/tool_events.hpp); never raise one with data
// that is not the struct named here.
#pragma once

#include <cstddef>

#include "runtime/tool_events.hpp"

namespace mpc::mpi::events {

// A message arrived before its receive and was queued as unexpected, for the
// receiving rank: sender's rank in the communicator, tag, bytes.
struct Unexpected {
    int source;
    int tag;
    unsigned long long bytes;
};
extern runtime::tools::EventSite g_unexpected;

// An intra-node send too large for a cell started a rendezvous, for the
// sending rank: destination's rank in the communicator, tag, bytes.
struct Rendezvous {
    int dest;
    int tag;
    unsigned long long bytes;
};
extern runtime::tools::EventSite g_rendezvous;

// Another rank or the progress thread drained a rank's inbox for it
// (collaborative polling), for the drained rank: the drained rank's and the
// helper's indices among the node process's ranks (-1: the progress thread).
struct Steal {
    int victim;
    int helper;
};
extern runtime::tools::EventSite g_steal;

// Registers the event types (once, with the tool variables).
void register_events();

}  // namespace mpc::mpi::events
