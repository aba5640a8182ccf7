// mpi_api/net: how the MPI layer rides on the network room.
//
// Sends to ranks of other node processes become ib::Network sends whose data
// source is the request's buffer and datatype; incoming messages are matched
// against the destination rank's posted receives through the match upcall,
// and those that find none wait in its unexpected queue as "network" messages
// that pull their data when a receive matches them.
#pragma once

#include "ib/network.hpp"

namespace mpc::mpi {

// The upcalls the network needs (matching, waking ranks).
ib::Upcalls network_upcalls();
// Routes remote sends through net (null: no network, a single node process).
void attach_network(ib::Network* net);
ib::Network* network();

}  // namespace mpc::mpi
