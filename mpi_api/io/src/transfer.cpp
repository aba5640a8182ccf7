// Independent transfers (transfer.hpp).
#include "transfer.hpp"

#include <fcntl.h>

#include <cerrno>

#include "mover.hpp"

namespace mpc::io {
namespace {

// Locks [lo, hi) of f's file for dir (blocking) or unlocks it.
int range_lock(File* f, Dir dir, uint64_t lo, uint64_t hi, bool lock) {
    struct flock fl {};
    fl.l_type = static_cast<short>(!lock ? F_UNLCK : dir == Dir::Write ? F_WRLCK : F_RDLCK);
    fl.l_whence = SEEK_SET;
    fl.l_start = static_cast<off_t>(lo);
    fl.l_len = static_cast<off_t>(hi - lo);
    while (fcntl(f->fd, F_OFD_SETLKW, &fl) != 0) {
        if (errno == EINTR) continue;
        return io_error(errno, lock ? "locking" : "unlocking", f->filename);
    }
    return MPI_SUCCESS;
}

}  // namespace

int transfer_range(File* f, Dir dir, const View& v, uint64_t s0, const Memory& m, uint64_t from,
                   uint64_t len, uint64_t* moved) {
    *moved = 0;
    if (!len) return MPI_SUCCESS;
    const uint64_t s = s0 + from;
    uint64_t lo = 0, hi = 0;
    if (f->atomic) {
        lo = v.file_offset(s);
        hi = v.file_offset(s + len - 1) + 1;
        if (int e = range_lock(f, dir, lo, hi, true)) return e;
    }
    // Atomic mode's range lock already gives the writer its turn.
    Mover mover(f->fd, dir, f->hints.ind_rd_buffer_size, &f->filename,
                f->hints.serialize_writes && !f->atomic);
    PieceWalk walk(v, s, m, from, len);
    Piece p;
    for (uint64_t at = walk.stream(); walk.next(&p); at = walk.stream())
        mover.add(p.off, p.mem, p.len, at);
    int err = mover.finish();
    if (f->atomic) {
        const int e = range_lock(f, dir, lo, hi, false);
        if (!err) err = e;
    }
    if (err) return err;
    *moved = mover.short_at() == UINT64_MAX ? len : mover.short_at() - s;
    return MPI_SUCCESS;
}

}  // namespace mpc::io
