// Independent data movement: stream bytes of one rank's access between its
// memory and the file, on the calling thread, straight to the file (vector
// system calls over the view's runs; see mover.hpp). In atomic mode the
// range is locked meanwhile with an open file description lock, which
// excludes the other ranks' descriptors in this node process as well as other
// processes.
#pragma once

#include <cstdint>

#include "file.hpp"
#include "walk.hpp"

namespace mpc::io {

// Moves stream bytes [s0 + from, s0 + from + len) of view v between memory m
// (whose packed offset 0 holds stream byte s0) and f's file. *moved: the
// bytes moved (reads stop at the end of the file).
int transfer_range(File* f, Dir dir, const View& v, uint64_t s0, const Memory& m, uint64_t from,
                   uint64_t len, uint64_t* moved);
inline int transfer(File* f, Dir dir, const View& v, uint64_t s0, const Memory& m, uint64_t n,
                    uint64_t* moved) {
    return transfer_range(f, dir, v, s0, m, 0, n, moved);
}

// A blocking independent write, combined with the others of the node
// process: a rank that writes while another member of the node is writing
// hands its write to that member and waits (parked, not spinning), and the
// writer does every write handed to it, one after the other, on its own
// thread before it returns. The kernel would take them one at a time anyway
// (writers of one file serialise on the inode's lock); this way the writes
// follow each other without a wake-up of another thread in between, which
// on a busy host costs milliseconds each. Still straight from each rank's
// memory to the file, through each rank's descriptor. Only for writes of
// kCombineMin bytes or more, when the file's writes take turns
// (mpc_serialize_writes) and not in atomic mode; anything else is
// transfer(). Blocks the caller: not for operations progressed by polling.
inline constexpr uint64_t kCombineMin = 1u << 20;
int write_combined(File* f, const View& v, uint64_t s0, const Memory& m, uint64_t n,
                   uint64_t* moved);

}  // namespace mpc::io
