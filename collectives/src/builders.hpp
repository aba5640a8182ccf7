// Helpers shared by the schedule builders (alg_*.cpp): buffer arithmetic,
// tree shapes, packed scratch, and the working-buffer layout of reductions.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "collectives/collectives.hpp"
#include "collectives/schedule.hpp"
#include "collectives/tuning.hpp"

namespace mpc::coll {

using Step = Schedule::Step;
using Deps = Schedule::Deps;
inline constexpr Step kNone = -1;  // "no step": ignored in dependency lists

// MPI_BYTE, for packed scratch data.
Datatype* byte_type();

// base + offset bytes, in integers: base may be MPI_BOTTOM (null) with the
// offset an absolute address.
inline char* at(const void* base, MPI_Aint offset) {
    return reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(base) +
                                   static_cast<uintptr_t>(offset));
}
// Address of block `index` of `count` elements of type t.
inline char* block_at(const void* base, int index, int count, const Datatype* t) {
    return at(base, static_cast<MPI_Aint>(index) * count * t->extent);
}
inline size_t data_bytes(int count, const Datatype* t) {
    return static_cast<size_t>(count) * t->size;
}
// Byte counts of packed scratch messages travel as int counts of MPI_BYTE;
// algorithms that pack only run when their sizes fit (callers check).
inline int as_count(size_t bytes) {
    return static_cast<int>(bytes);
}
inline bool fits_int(size_t bytes) {
    return bytes <= static_cast<size_t>(INT_MAX);
}

// A step done when all of steps are (kNone when there are none).
Step join_all(Schedule& s, const std::vector<Step>& steps);

inline bool is_pof2(int n) {
    return n > 0 && (n & (n - 1)) == 0;
}
inline int floor_pof2(int n) {
    int p = 1;
    while (p * 2 <= n) p *= 2;
    return p;
}
// Binomial trees over relative ranks (0 is the root): the parent of rel > 0
// is rel minus its lowest set bit; its subtree is [rel, rel + subtree(rel)).
inline int lowbit(int x) {
    return x & -x;
}
inline int subtree_size(int rel, int n) {
    if (rel == 0) return n;
    const int b = lowbit(rel);
    return b < n - rel ? b : n - rel;
}
inline int real_rank(int rel, int root, int n) {
    return (rel + root) % n;
}

// Where the elements of a reduction live while it runs, and how to move and
// combine ranges of them. A working buffer holds element i at base + i*stride.
//  - Predefined operations combine packed streams (op.hpp): the user's buffer
//    itself when its type is contiguous (base = buf + true_lb), otherwise a
//    packed scratch copy that is unpacked at the end. Packed ranges travel as
//    the type's basic predefined type (or bytes).
//  - User operations must see their data laid out as the datatype describes
//    (MPI 3.1 section 5.9.5), so their working buffers are the user's own or
//    scratch laid out the same way (extent stride, holes left alone), and
//    ranges travel as the user's type.
class RedLayout {
  public:
    RedLayout(Schedule& s, int count, Datatype* type, const Op* op);

    int count() const { return count_; }
    Datatype* type() const { return type_; }
    const Op* op() const { return op_; }
    size_t bytes() const { return data_bytes(count_, type_); }
    // The user's buffer as a working buffer, or null when it must be packed.
    char* direct(const void* user) const;
    // Scratch for elements [0, n).
    char* alloc(int n);
    // The base of a working buffer whose element `first` is at p.
    char* shift(char* p, int first) const { return p - static_cast<MPI_Aint>(first) * stride_; }
    // A working buffer holding the user's data: the buffer itself (ready
    // needs nothing, *ready = kNone) or a scratch copy (*ready = its load step).
    char* input(const void* user, Step* ready, Deps deps = {});

    Step send(const char* base, int first, int n, int peer, Deps deps);
    Step recv(char* base, int first, int n, int peer, Deps deps);
    // inout[first, first+n) = in op inout.
    Step calc(const char* in, char* inout, int first, int n, Deps deps);
    // Working buffer to working buffer.
    Step copy(const char* src, char* dst, int first, int n, Deps deps);
    // User buffer (count elements) to a working buffer, and back.
    Step load(const void* user, char* dst, Deps deps);
    Step store(const char* src, void* user, Deps deps);
    // Elements [first, first+n) of a working buffer to a user buffer of n elements.
    Step store_range(const char* src, int first, int n, void* user, Deps deps);

  private:
    char* elem(const char* base, int i) const {
        return const_cast<char*>(base) + static_cast<MPI_Aint>(i) * stride_;
    }

    Schedule& s_;
    int count_;
    Datatype* type_;
    const Op* op_;
    bool typed_;       // user operation: working buffers in the user's layout
    MPI_Aint stride_;  // bytes from one element to the next in a working buffer
    Datatype* unit_;   // packed: what ranges travel as
    int units_per_elem_;
};

// The elements [first, first + n) of chunk c when count elements are cut into
// `parts` nearly equal chunks (the first count % parts one element longer).
struct Chunk {
    int first, n;
};
inline Chunk chunk_of(int c, int count, int parts) {
    const int q = count / parts, r = count % parts;
    return {c * q + (c < r ? c : r), q + (c < r ? 1 : 0)};
}

// Ring reduce-scatter over element chunks: chunk j (elements given by
// chunks[j]) ends fully reduced at rank j, in result(j)'s buffer. `mine` is
// the caller's data (read only). `last` is where the caller's own chunk is
// reduced into (a working buffer with the chunk at chunks[me]), or null for
// scratch. Valid for commutative operations only (the ring combines in a
// rotated order). reads[j] is the last step reading mine's chunk j, for
// callers that overwrite mine (MPI_IN_PLACE).
struct RingResult {
    char* result;  // working buffer holding the caller's chunk
    Step done;     // step producing it
    std::vector<Step> reads;
};
RingResult ring_reduce_scatter(RedLayout& L, const char* mine, Step mine_ready,
                               const std::vector<Chunk>& chunks, char* last, Comm* c);

// Binomial reduction of `mine` to root over relative ranks: at each level a
// rank combines its partial result (relative ranks [rel, rel+2^k)) on the
// left of its child's, so with root 0 the operands are combined in rank order
// (valid for non-commutative operations). The root gets its result buffer and
// the step producing it; the others get null and their send to the parent
// (their last step). `into`, if not null, is where the root receives its last
// operand and so finds the result (it must not alias mine).
struct TreeResult {
    char* result;
    Step done;
};
TreeResult binomial_reduce(RedLayout& L, const char* mine, Step mine_ready, char* into, int root,
                           Comm* c);

// Broadcast of (buf, count, type) from root, chosen by size (tuning.hpp):
// the root's data is ready after `after`, and the others' buffers are free
// after it. Returns the step after which the caller's buffer holds the data.
Step add_bcast(Schedule& s, void* buf, int count, Datatype* type, int root, Step after);

}  // namespace mpc::coll
