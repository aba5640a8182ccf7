// Independent transfers, and blocking writes combined per node process
// (transfer.hpp).
#include "transfer.hpp"

#include <fcntl.h>

#include <cerrno>
#include <vector>

#include "mover.hpp"
#include "mpi_api/request.hpp"
#include "node.hpp"

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

// A write handed to the node's writer (write_combined). Lives on the stack of
// the rank that waits for it: the writer touches it no more once complete.
struct PendingWrite {
    File* f;
    const View* view;
    uint64_t s0;
    const Memory* mem;
    uint64_t n;
    uint64_t moved = 0;
    int error = MPI_SUCCESS;
    mpi::Request done;
};

int write_combined(File* f, const View& v, uint64_t s0, const Memory& m, uint64_t n,
                   uint64_t* moved) {
    if (f->atomic || !f->hints.serialize_writes || n < kCombineMin)
        return transfer(f, Dir::Write, v, s0, m, n, moved);
    NodeFile& node = *f->node;
    PendingWrite mine{f, &v, s0, &m, n, 0, MPI_SUCCESS, {}};
    mine.done.kind = mpi::Request::Kind::File;
    mine.done.rank = f->owner;
    mine.done.comm = f->comm;  // the hang report names the file
    node.writes_lock.lock();
    const bool writer = !node.writing;
    if (writer)
        node.writing = true;
    else
        node.writes.push_back(&mine);
    node.writes_lock.unlock();
    if (!writer) {
        mpi::wait_complete(&mine.done);
        *moved = mine.moved;
        return mine.error;
    }
    const int err = transfer(f, Dir::Write, v, s0, m, n, moved);
    // Then whatever the others handed over meanwhile, until none is left:
    // whoever finds the queue empty gives the role up in the same step.
    std::vector<PendingWrite*> batch;
    for (;;) {
        node.writes_lock.lock();
        batch.swap(node.writes);
        if (batch.empty()) node.writing = false;
        node.writes_lock.unlock();
        if (batch.empty()) break;
        for (PendingWrite* w : batch) {
            w->error = transfer(w->f, Dir::Write, *w->view, w->s0, *w->mem, w->n, &w->moved);
            mpi::complete(&w->done);  // w may be gone from here on
        }
        batch.clear();
    }
    return err;
}

}  // namespace mpc::io
