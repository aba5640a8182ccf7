// runtime/netif: which address of this host a job's listeners bind to.
//
// Listeners bind only where they are needed (never every address): the
// loopback address when the whole job runs on this host, else the IPv4
// address of the interface MPC_NET_IF names, or of the first interface that
// is up and not loopback (127.0.0.1 on a host without a network). The tcp
// driver (ib) and mpcrun's PMI port use the same choice.
#pragma once

#include <string>

namespace mpc::runtime::netif {

constexpr const char* kLoopback = "127.0.0.1";

// The address (dotted IPv4) as described above for a job spanning hosts;
// empty with *error when MPC_NET_IF names no interface with an IPv4 address.
std::string job_address(std::string* error);

// The first address of this host that `host` (an address or a name) stands
// for, one a socket can bind; empty with *error when none is.
std::string local_address_of(const std::string& host, std::string* error);

// Whether `name` designates this host: localhost, a loopback address, or
// this host's name (full or up to its first dot).
bool is_this_host(const std::string& name);

}  // namespace mpc::runtime::netif
