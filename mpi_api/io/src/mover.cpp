// Mover: batches of file-contiguous pieces, moved by vector or staged calls.
#include "mover.hpp"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>

namespace mpc::io {
namespace {

// Pieces of at least this size on average go by iovec straight from and into
// memory; smaller ones are copied through a staging buffer (the kernel's cost
// per segment exceeds a copy of a few hundred bytes).
constexpr uint64_t kDirectMin = 512;
// A batch ends at this many bytes (vector calls) or staged bytes.
constexpr uint64_t kDirectBatch = 64u << 20;
constexpr uint64_t kStagedBatch = 4u << 20;
constexpr size_t kMaxSegs = 1u << 16;
// Writes of at least this much take the write turn (write_gate).
constexpr uint64_t kGateMin = 1u << 20;
constexpr int kIovMax = IOV_MAX;
// Holes of reads land here (read and dropped).
constexpr uint64_t kDiscard = 64u << 10;

char* discard_buffer() {
    static thread_local std::unique_ptr<char[]> buf(new char[kDiscard]);
    return buf.get();
}

// The calling thread's staging buffer (no suspension happens while it is in
// use, so the ranks sharing a virtual processor never see each other's).
char* staging(uint64_t bytes) {
    static thread_local std::unique_ptr<char[]> buf;
    static thread_local uint64_t size = 0;
    if (size < bytes) {
        buf.reset(new char[bytes]);
        size = bytes;
    }
    return buf.get();
}

}  // namespace

int write_gate(int fd, bool take, const std::string& filename) {
    struct flock fl {};
    fl.l_type = static_cast<short>(take ? F_WRLCK : F_UNLCK);
    fl.l_whence = SEEK_SET;
    fl.l_start = INT64_MAX - 1;
    fl.l_len = 1;
    while (fcntl(fd, F_OFD_SETLKW, &fl) != 0) {
        if (errno == EINTR) continue;
        return io_error(errno, take ? "waiting for the write turn of" : "ending the write turn of",
                        filename);
    }
    return MPI_SUCCESS;
}

Mover::Mover(int fd, Dir dir, uint64_t hole_fill, const std::string* filename, bool gate)
    : fd_(fd),
      dir_(dir),
      gate_(gate && dir == Dir::Write),
      hole_fill_(dir == Dir::Read ? hole_fill : 0),
      filename_(filename) {}

void Mover::add(uint64_t off, uintptr_t mem, uint64_t len, uint64_t stream) {
    if (error_ || !len) return;
    if (!segs_.empty()) {
        const uint64_t end = start_ + bytes_;
        if (off != end) {
            if (off > end && off - end <= hole_fill_) {
                segs_.push_back(Seg{0, off - end, 0});
                bytes_ = off - start_;
            } else {
                flush();
                if (error_) return;
            }
        }
    }
    if (segs_.empty()) {
        start_ = off;
        bytes_ = data_ = 0;
    }
    Seg& last = segs_.empty() ? segs_.emplace_back(Seg{0, 0, 0}) : segs_.back();
    if (last.mem && last.mem + last.len == mem) {
        last.len += len;
    } else if (!last.mem && !last.len) {
        last = Seg{mem, len, stream};
    } else {
        segs_.push_back(Seg{mem, len, stream});
    }
    bytes_ += len;
    data_ += len;
    const bool direct = data_ >= kDirectMin * segs_.size();
    if (segs_.size() >= kMaxSegs || bytes_ >= (direct ? kDirectBatch : kStagedBatch)) flush();
}

int Mover::finish() {
    if (!error_) flush();
    return error_;
}

void Mover::flush() {
    if (segs_.empty()) return;
    if (data_ >= kDirectMin * segs_.size() || bytes_ > kStagedBatch)
        flush_direct();
    else
        flush_staged();
    segs_.clear();
    bytes_ = data_ = 0;
}

int64_t Mover::call(const iovec* iov, int n, uint64_t off) {
    // Small writes hold the inode's lock briefly: two more system calls would
    // cost more than the wait they save.
    uint64_t bytes = 0;
    for (int i = 0; i < n; ++i) bytes += iov[i].iov_len;
    const bool gate = gate_ && bytes >= kGateMin;
    if (gate) {
        if (int e = write_gate(fd_, true, *filename_)) {
            error_ = e;
            return -1;
        }
    }
    const int64_t moved = call_ungated(iov, n, off);
    if (gate) {
        const int e = write_gate(fd_, false, *filename_);
        if (e && !error_) error_ = e;
        if (e) return -1;
    }
    return moved;
}

int64_t Mover::call_ungated(const iovec* iov, int n, uint64_t off) {
    // Moves all of iov (a copy is advanced over partial transfers).
    iovec local[kIovMax];
    std::copy(iov, iov + n, local);
    iovec* v = local;
    int64_t total = 0;
    while (n > 0) {
        const ssize_t r = dir_ == Dir::Write ? pwritev(fd_, v, n, static_cast<off_t>(off))
                                             : preadv(fd_, v, n, static_cast<off_t>(off));
        if (r < 0) {
            if (errno == EINTR) continue;
            error_ = io_error(errno, dir_ == Dir::Write ? "writing" : "reading", *filename_);
            return -1;
        }
        if (r == 0) {
            if (dir_ == Dir::Read) break;  // end of file
            error_ = io_error(ENOSPC, "writing", *filename_);
            return -1;
        }
        total += r;
        off += static_cast<uint64_t>(r);
        size_t left = static_cast<size_t>(r);
        while (n > 0 && left >= v->iov_len) {
            left -= v->iov_len;
            ++v;
            --n;
        }
        if (n > 0) {
            v->iov_base = static_cast<char*>(v->iov_base) + left;
            v->iov_len -= left;
        }
    }
    return total;
}

void Mover::note_short(uint64_t moved) {
    // The file ended at start_ + moved: the first piece byte at or past it.
    const uint64_t end = start_ + moved;
    uint64_t at = start_;
    for (const Seg& s : segs_) {
        if (s.mem && at + s.len > end) {
            const uint64_t pos = s.stream + (end > at ? end - at : 0);
            short_at_ = std::min(short_at_, pos);
            return;
        }
        at += s.len;
    }
}

void Mover::flush_direct() {
    iovec iov[kIovMax];
    int n = 0;
    uint64_t off = start_, chunk = 0;
    char* discard = dir_ == Dir::Read ? discard_buffer() : nullptr;
    auto issue = [&]() -> bool {
        const int64_t r = call(iov, n, off);
        if (r < 0) return false;
        if (static_cast<uint64_t>(r) < chunk) {
            note_short(off - start_ + static_cast<uint64_t>(r));
            return false;
        }
        off += chunk;
        n = 0;
        chunk = 0;
        return true;
    };
    for (const Seg& s : segs_) {
        uint64_t done = 0;
        while (done < s.len) {
            const uint64_t k = s.mem ? s.len - done : std::min(s.len - done, kDiscard);
            iov[n].iov_base = s.mem ? reinterpret_cast<void*>(s.mem + done) : discard;
            iov[n].iov_len = k;
            ++n;
            chunk += k;
            done += k;
            if (n == kIovMax && !issue()) return;
        }
    }
    if (n) issue();
}

void Mover::flush_staged() {
    char* buf = staging(bytes_);
    iovec iov{buf, bytes_};
    if (dir_ == Dir::Write) {
        char* p = buf;
        for (const Seg& s : segs_) {
            memcpy(p, reinterpret_cast<const void*>(s.mem), s.len);
            p += s.len;
        }
        call(&iov, 1, start_);
        return;
    }
    const int64_t r = call(&iov, 1, start_);
    if (r < 0) return;
    const uint64_t moved = static_cast<uint64_t>(r);
    uint64_t at = 0;
    for (const Seg& s : segs_) {
        if (s.mem && at < moved)
            memcpy(reinterpret_cast<void*>(s.mem), buf + at, std::min(s.len, moved - at));
        at += s.len;
    }
    if (moved < bytes_) note_short(moved);
}

}  // namespace mpc::io
