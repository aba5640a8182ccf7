// Sleeping until a driver's wait objects fire or someone interrupts.
//
// An epoll set over the driver's wait fds (libfabric CQ wait fds, a verbs
// completion channel, the tcp driver's sockets) plus an eventfd that
// interrupt() writes. An interrupt that comes before the wait is not lost:
// the eventfd stays readable until the next wait() consumes it.
#pragma once

#include <string>

#include "unique_fd.hpp"

namespace mpc::ib {

class WakeupSet {
  public:
    // False with *error set when the epoll set or eventfd cannot be made.
    bool open(std::string* error);
    bool add(int fd, std::string* error);
    // Changes the events watched on an added fd (EPOLLIN, EPOLLOUT, ...).
    void watch(int fd, unsigned events);
    void remove(int fd);
    // Returns when a watched fd is readable, interrupt() was called, or
    // timeout_ms (-1: none) passed. Consumes a pending interrupt.
    void wait(int timeout_ms);
    void interrupt();

  private:
    UniqueFd epoll_;
    UniqueFd event_;
};

}  // namespace mpc::ib
