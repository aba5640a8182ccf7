// The compact type map of a datatype (a Layout tree), its builders, and the
// cursor that walks it. Private to the datatype files of mpi_api (and the unit
// tests); see mpi_api/datatype.hpp for the design.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "mpi_api/datatype.hpp"

namespace mpc::mpi {

// One instance of a Layout covers `size` packed bytes. Kinds:
//   Bytes   one run of `size` bytes at offset 0 (a leaf; never has a frame)
//   Vector  `nblocks` blocks, block b at b*stride, each shaped like `proto`
//   Runs    run b of run_length(b) bytes at disp[b] (indexed contiguous data)
//   Blocks  blocks[b] (struct, or indexed of non-contiguous data)
// A block is `count` instances of `child` spaced by `child_stride`, or, when
// child is null, one run of `count` bytes. A block whose child is Bytes and
// whose instances touch is always stored as a run.
struct Layout {
    enum class Kind : uint8_t { Bytes, Vector, Runs, Blocks };
    struct Block {
        MPI_Aint disp = 0;
        size_t count = 0;
        const Layout* child = nullptr;
        MPI_Aint child_stride = 0;
    };

    Kind kind = Kind::Bytes;
    uint32_t depth = 0;  // cursor frames needed inside one instance
    size_t size = 0;
    size_t nblocks = 0;

    // Vector
    MPI_Aint stride = 0;
    Block proto;            // disp is 0
    size_t block_size = 0;  // packed bytes of one block
    // Runs: disp[b]; lengths are uniform (run_len) when start is empty.
    std::vector<MPI_Aint> disp;
    size_t run_len = 0;
    // Runs and Blocks: start[b] = packed offset of block b (nblocks+1 entries).
    std::vector<size_t> start;
    // Blocks
    std::vector<Block> blocks;

    std::vector<std::shared_ptr<const Layout>> owned;  // keeps children alive

    size_t block_start(size_t b) const { return start.empty() ? b * run_len : start[b]; }
    size_t run_length(size_t b) const { return start.empty() ? run_len : start[b + 1] - start[b]; }
    // The block holding packed offset `off` of an instance (Runs, Blocks).
    size_t locate(size_t off) const;
};

// ---- Builders ------------------------------------------------------------
// Each returns false when the result would exceed the address space (sizes
// overflow); `out` is then unspecified.

// A predefined type of `size` contiguous bytes with C alignment `align`.
Shape shape_basic(size_t size, MPI_Aint align);
// count instances of child spaced by child extent, at displacement disp.
struct BlockSpec {
    MPI_Aint disp;
    size_t count;
    const Shape* child;
};
bool shape_blocks(const std::vector<BlockSpec>& blocks, Shape* out);
// count blocks at `stride` bytes, each of blocklen instances of child.
bool shape_vector(size_t count, size_t blocklen, MPI_Aint stride, const Shape& child, Shape* out);
// child with explicit lower bound and extent.
Shape shape_resized(const Shape& child, MPI_Aint lb, MPI_Aint extent);

// Fills the Datatype fields mirrored from its shape (size, bounds, contiguity).
void apply_shape(Datatype& t, Shape shape);

// ---- Cursor --------------------------------------------------------------
// A position in the packed stream of (buf, count, type) and the contiguous run
// of memory there. Runs always hold whole basic elements.
class Cursor {
  public:
    Cursor(const void* buf, size_t count, const Datatype& t, size_t offset);
    Cursor(const Cursor&) = delete;
    Cursor& operator=(const Cursor&) = delete;

    char* ptr() const { return reinterpret_cast<char*>(ptr_); }
    size_t avail() const { return avail_; }  // 0 at the end of the stream
    void consume(size_t n) {
        ptr_ += n;
        avail_ -= n;
        if (!avail_) next_run();
    }
    // When the next runs are uniform (same length, fixed stride) and the cursor
    // is at the start of one: their length, stride and number (>= 1).
    bool uniform(size_t* len, MPI_Aint* stride, size_t* runs) const;
    // Skips k uniform runs (k <= runs reported by uniform()).
    void skip_runs(size_t k);

    // Copies n bytes of the stream to out / from in, advancing.
    void read(void* out, size_t n);
    void write(const void* in, size_t n);

  private:
    struct Frame {
        const Layout* node;
        uintptr_t base;
        size_t b, j;  // block, instance within the block
        // Block b of node at base:
        uintptr_t addr;
        size_t count;
        const Layout* child;
        MPI_Aint child_stride;
    };
    static constexpr int kInlineFrames = 8;

    void load_block(Frame& f);
    void enter(int level, size_t off);
    void descend(int level);
    void next_run();
    template <bool kPack>
    void transfer(char* stream, size_t n);

    Layout top_;  // count elements at extent stride
    Frame inline_[kInlineFrames];
    std::unique_ptr<Frame[]> heap_;
    Frame* frames_;
    int level_ = 0;
    uintptr_t ptr_ = 0;
    size_t avail_ = 0;
};

// ---- Objects (datatype.cpp, datatype_external.cpp) ---------------------------

// A new derived datatype holding one reference (its handle's). The caller sets
// combiner, ints, aints and children, then calls datatype_complete.
Datatype* datatype_create(int combiner);
// Sets the shape-derived fields and the signature-derived ones (elements,
// external size, basic type) and takes a reference on every child.
void datatype_complete(Datatype* t, Shape shape, std::vector<SigPart> signature);
// Size in "external32" of one primitive predefined type.
size_t external32_size(int handle);

}  // namespace mpc::mpi
