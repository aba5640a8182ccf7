// Where the bytes of an access lie: in the file (a view's runs) and in memory
// (a typed buffer's runs), and the pieces where both are contiguous.
//
// Views have monotonically nondecreasing displacements (MPI 3.1 section
// 13.3), so pieces come out in file order, and a file range [a, b) holds a
// contiguous range of an access's stream: collective windows cut accesses at
// stream offsets found by View::stream_before.
#pragma once

#include <cstdint>
#include <optional>

#include "file.hpp"
#include "mpi_api/type_walk.hpp"

namespace mpc::io {

// Maximal contiguous runs of n stream bytes of (base, count, type) from
// packed offset `offset` on (adjacent runs of the type map merged).
class Runs {
  public:
    Runs(uintptr_t base, size_t count, const Datatype& type, uint64_t offset, uint64_t n);
    // n bytes at `at`.
    Runs(uintptr_t at, uint64_t n);

    uintptr_t at() const { return at_; }
    uint64_t avail() const { return avail_; }  // 0 at the end
    void consume(uint64_t k) {
        at_ += k;
        avail_ -= k;
        if (!avail_) load();
    }

  private:
    void load();
    std::optional<mpi::TypeWalk> walk_;
    uintptr_t at_ = 0;
    uint64_t avail_ = 0;
    uint64_t left_ = 0;  // stream bytes not yet in a run
};

// The file runs of stream bytes [s, s + n) of view v.
Runs file_runs(const View& v, uint64_t s, uint64_t n);

// A typed buffer whose packed stream is an access's file stream: the user's
// (buf, count, type) when the representation is native, else a conversion
// buffer (as count bytes of MPI_BYTE).
struct Memory {
    uintptr_t buf = 0;
    size_t count = 0;
    const Datatype* type = nullptr;
};

struct Piece {
    uint64_t off;  // in the file
    uintptr_t mem;
    uint64_t len;
};

// The pieces of stream bytes [s, s + n) of view v and memory m, where m's
// packed offset mo holds stream byte s.
class PieceWalk {
  public:
    PieceWalk(const View& v, uint64_t s, const Memory& m, uint64_t mo, uint64_t n);
    // The next piece, cut so it ends at or before file offset `limit`; false
    // at the end of the access or when the next byte lies at or past limit.
    bool next(Piece* p, uint64_t limit = UINT64_MAX);
    uint64_t stream() const { return stream_; }  // stream offset of the next byte

  private:
    Runs file_, mem_;
    uint64_t stream_;
};

}  // namespace mpc::io
