// The shared file pointer (MPI 3.1 section 13.4.4): one counter, in etypes of
// the view, kept by node 0 of the file (the node of communicator rank 0).
// Ranks of that node advance it with an atomic add; ranks of other nodes send
// a request to communicator rank 0, whose server (a Progressable, so any rank
// polling on that node answers it in collaborative mode) adds and replies.
// Requests of one rank carry their own reply tag, so threads of a rank
// sharing the file never take each other's answer.
#pragma once

#include <cstdint>

#include "file.hpp"

namespace mpc::io {

// Adds delta to the shared pointer; *old gets its value before. Blocks for
// the round trip when the pointer lives on another node.
void sfp_fetch_add(File* f, int64_t delta, int64_t* old);
// Sets it (node 0 only: collective operations set it there).
void sfp_store(File* f, int64_t value);
int64_t sfp_load(File* f);

// Communicator rank 0 runs the server while the file is open (when the file
// spans several nodes); stop waits until it has answered its last request.
void sfp_server_start(File* f);
void sfp_server_stop(File* f);

}  // namespace mpc::io
