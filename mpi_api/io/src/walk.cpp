// Runs of a typed region and the pieces of an access (walk.hpp).
#include "walk.hpp"

#include <algorithm>

namespace mpc::io {

Runs::Runs(uintptr_t base, size_t count, const Datatype& type, uint64_t offset, uint64_t n)
    : left_(n) {
    if (!n) return;
    if (type.contiguous) {
        at_ = mpi::contiguous_at(reinterpret_cast<const void*>(base), type, offset);
        avail_ = n;
        left_ = 0;
        return;
    }
    walk_.emplace(base, count, type, offset);
    load();
}

Runs::Runs(uintptr_t at, uint64_t n) : at_(at), avail_(n) {}

void Runs::load() {
    if (!walk_ || !left_) return;
    mpi::TypeWalk& w = *walk_;
    if (!w.avail()) {
        left_ = 0;
        return;
    }
    at_ = w.addr();
    avail_ = 0;
    // Take whole runs of the type map while they continue the current one.
    while (left_ && w.avail() && w.addr() == at_ + avail_) {
        const uint64_t k = std::min<uint64_t>(w.avail(), left_);
        avail_ += k;
        left_ -= k;
        w.consume(k);
    }
}

Runs file_runs(const View& v, uint64_t s, uint64_t n) {
    if (v.contiguous) return Runs(static_cast<uintptr_t>(v.disp + v.true_lb) + s, n);
    // Enough filetype instances to hold the stream's end.
    const uint64_t instances = (s + n + v.tsize - 1) / v.tsize;
    return Runs(static_cast<uintptr_t>(v.disp), instances, *v.file_filetype, s, n);
}

PieceWalk::PieceWalk(const View& v, uint64_t s, const Memory& m, uint64_t mo, uint64_t n)
    : file_(file_runs(v, s, n)), mem_(m.buf, m.count, *m.type, mo, n), stream_(s) {}

bool PieceWalk::next(Piece* p, uint64_t limit) {
    if (!file_.avail() || !mem_.avail()) return false;
    const uint64_t off = file_.at();
    if (off >= limit) return false;
    const uint64_t len = std::min({file_.avail(), mem_.avail(), limit - off});
    *p = Piece{off, mem_.at(), len};
    file_.consume(len);
    mem_.consume(len);
    stream_ += len;
    return true;
}

}  // namespace mpc::io
