// Moves pieces between memory and a file with as few system calls as the
// pieces allow: pieces that continue each other in the file go in one
// vector call (pwritev/preadv, straight from and into their memory, no
// copy), or, when they are small (a copy then costs less than the kernel's
// per-segment work), through a staging buffer in one plain call. Reads
// also take small holes between pieces (into a discard buffer), so a
// strided read is one call instead of one per piece.
//
// Used by independent access (a rank's own pieces) and by the workers of a
// two-phase collective (the pieces of a file domain window, from all ranks of
// the node and from other nodes' messages). Blocks in system calls; never
// waits for anything else.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <vector>

#include "file.hpp"

namespace mpc::io {

// Writers of one file take turns on a local file system: its kernel
// serialises them on the inode's lock anyway, and the one waiting spins on
// it (two ranks writing 16 MiB each into one ext4 file here ran at a fifth
// of one writer's speed). The turn is an open file description lock on a
// byte no data can use, so waiting sleeps, across the ranks of a node process
// and across node processes alike, and it never meets atomic mode's locks.
// Returns an error code when the lock fails.
int write_gate(int fd, bool take, const std::string& filename);

class Mover {
  public:
    // hole_fill: reads take holes up to this size (0: none). gate: writes
    // take the file's write gate (see write_gate) around each system call.
    Mover(int fd, Dir dir, uint64_t hole_fill, const std::string* filename, bool gate = false);
    Mover(const Mover&) = delete;
    Mover& operator=(const Mover&) = delete;

    // Adds a piece; `stream` is its position in the caller's access (reads:
    // where a short read at the end of the file stopped is reported in it).
    void add(uint64_t off, uintptr_t mem, uint64_t len, uint64_t stream = 0);
    // Moves what is still batched. Returns the first error (MPI code).
    int finish();
    int error() const { return error_; }
    // Reads: the stream position of the first piece byte the file did not
    // hold (it ended first), or UINT64_MAX when every piece was read whole.
    uint64_t short_at() const { return short_at_; }

  private:
    struct Seg {
        uintptr_t mem;  // 0: a hole (reads)
        uint64_t len;
        uint64_t stream;
    };
    void flush();
    void flush_direct();
    void flush_staged();
    // One call of the batch's bytes [done, ...) into or from iov; returns the
    // bytes moved (short at the end of the file), or -1 with error_ set.
    int64_t call(const iovec* iov, int n, uint64_t off);
    int64_t call_ungated(const iovec* iov, int n, uint64_t off);
    void note_short(uint64_t moved);

    int fd_;
    Dir dir_;
    bool gate_;
    uint64_t hole_fill_;
    const std::string* filename_;
    uint64_t start_ = 0;  // file offset of the batch
    uint64_t bytes_ = 0;  // batch length (holes included)
    uint64_t data_ = 0;   // piece bytes in the batch
    std::vector<Seg> segs_;
    int error_ = MPI_SUCCESS;
    uint64_t short_at_ = UINT64_MAX;
};

}  // namespace mpc::io
