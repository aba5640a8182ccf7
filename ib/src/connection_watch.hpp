// Drivers that can tell when a connection breaks after start-up implement
// this beside Driver (the network finds it with a dynamic_cast, once).
//
// A broken connection may leave no trace in the completion queues: a node
// process whose ranks only wait for messages from the lost peer would wait
// forever. The network asks when its receive CQ is idle, and ends the job
// with the peer's name.
#pragma once

#include <string>

namespace mpc::ib {

class ConnectionWatch {
  public:
    // True with *peer and *why set for a connection that broke (the peer
    // closed or reset it, or the transport gave up on it), once per broken
    // connection. Cheap but not free (it may take a lock in the driver): not
    // for every poll. Same threading as Driver::poll_recv_cq. Wait objects
    // the driver sleeps on in Driver::wait include the one that reports it.
    virtual bool connection_lost(int* peer, std::string* why) = 0;

  protected:
    ~ConnectionWatch() = default;
};

}  // namespace mpc::ib
