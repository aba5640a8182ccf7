// How the shared-address-space collectives (shm_local.hpp) see user data:
// contiguous views of typed buffers, the slices members reduce in parallel,
// and the blocks of a data-movement call as its MPI arguments lay them out.
// Pure functions of memory: nothing here waits or publishes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

#include "mpi_api/datatype.hpp"
#include "mpi_api/op.hpp"
#include "runtime/copy.hpp"

namespace mpc::coll::shm {

// A contiguous view of (buf, count, type): the buffer itself when the type is
// contiguous, otherwise packed scratch (filled from buf when `load`), which
// unload() unpacks back into buf.
class Contiguous {
  public:
    Contiguous(const void* buf, int count, const mpi::Datatype* type, bool load)
        : buf_(const_cast<void*>(buf)), count_(static_cast<size_t>(count)), type_(type) {
        bytes_ = count_ * type->size;
        if (type->contiguous) {
            data_ = mpi::contiguous_data(buf_, *type);
            return;
        }
        scratch_.reset(new unsigned char[std::max<size_t>(bytes_, 1)]);
        data_ = scratch_.get();
        if (load) mpi::pack(buf_, count_, *type_, 0, data_, bytes_);
    }
    unsigned char* data() const { return data_; }
    void unload() const {
        if (scratch_) mpi::unpack(buf_, count_, *type_, 0, data_, bytes_);
    }

  private:
    void* buf_;
    size_t count_;
    const mpi::Datatype* type_;
    size_t bytes_ = 0;
    unsigned char* data_ = nullptr;
    std::unique_ptr<unsigned char[]> scratch_;
};

// The unit predefined operations combine (the type's basic type) and how many
// of them count elements of type hold.
struct Units {
    const mpi::Datatype* basic;
    size_t unit;   // bytes of one
    size_t count;  // in the message
};
inline Units units_of(int count, const mpi::Datatype* type) {
    const mpi::Datatype* basic = mpi::datatype_lookup(type->basic);
    return {basic, basic->size, static_cast<size_t>(count) * type->basic_count};
}

// Member r's share [lo, hi) of u.count units over `members`, in cache-line
// multiples where the unit allows it (no two members write the same line).
inline void slice_of(int r, int members, const Units& u, size_t* lo, size_t* hi) {
    const size_t align = 64 % u.unit == 0 ? 64 / u.unit : 1;
    size_t chunk = (u.count + static_cast<size_t>(members) - 1) / static_cast<size_t>(members);
    chunk = (chunk + align - 1) / align * align;
    *lo = std::min(u.count, chunk * static_cast<size_t>(r));
    *hi = std::min(u.count, *lo + chunk);
}

// base + offset bytes, in integers: base may be MPI_BOTTOM (null) with the
// offset an absolute address.
inline unsigned char* offset_by(const void* base, MPI_Aint offset) {
    return reinterpret_cast<unsigned char*>(reinterpret_cast<uintptr_t>(base) +
                                            static_cast<uintptr_t>(offset));
}

// The blocks of one side (send or receive) of a member's data-movement call,
// as its arguments lay them out: block k is
//   One     the buffer itself (count, type), whatever k;
//   Even    count elements of type at k * count extents (Gather's receive side...);
//   V       counts[k] elements of type at displs[k] extents;
//   W       counts[k] elements of types[k] at byte_displs[k];
//   Packed  the packed bytes [offsets[k], offsets[k+1]) of buf (staged or
//           copied-aside data), or [k * block, (k+1) * block) without offsets.
struct Blocks {
    enum Form : unsigned char { One, Even, V, W, Packed };
    Form form = One;
    const void* buf = nullptr;
    int count = 0;
    const mpi::Datatype* type = nullptr;
    const int* counts = nullptr;
    const int* displs = nullptr;
    const MPI_Aint* byte_displs = nullptr;
    const mpi::Datatype* const* types = nullptr;
    const size_t* offsets = nullptr;
    size_t block = 0;

    static Blocks one(const void* b, int c, const mpi::Datatype* t) { return {One, b, c, t}; }
    static Blocks even(const void* b, int c, const mpi::Datatype* t) { return {Even, b, c, t}; }
    static Blocks v(const void* b, const int* cs, const int* ds, const mpi::Datatype* t) {
        Blocks x{V, b, 0, t};
        x.counts = cs;
        x.displs = ds;
        return x;
    }
    static Blocks w(const void* b, const int* cs, const MPI_Aint* ds,
                    const mpi::Datatype* const* ts) {
        Blocks x{W, b};
        x.counts = cs;
        x.byte_displs = ds;
        x.types = ts;
        return x;
    }
    static Blocks packed(const void* b, size_t each) {
        Blocks x{Packed, b};
        x.block = each;
        return x;
    }
    static Blocks packed_at(const void* b, const size_t* offs) {
        Blocks x{Packed, b};
        x.offsets = offs;
        return x;
    }

    bool is_packed() const { return form == Packed; }
    int count_of(int k) const { return form == V || form == W ? counts[k] : count; }
    const mpi::Datatype& type_of(int k) const { return form == W ? *types[k] : *type; }
    size_t bytes_of(int k) const {
        if (form == Packed) return offsets ? offsets[k + 1] - offsets[k] : block;
        return static_cast<size_t>(count_of(k)) * type_of(k).size;
    }
    unsigned char* at(int k) const {
        switch (form) {
            case One:
                return offset_by(buf, 0);
            case Even:
                return offset_by(buf, static_cast<MPI_Aint>(k) * count * type->extent);
            case V:
                return offset_by(buf, static_cast<MPI_Aint>(displs[k]) * type->extent);
            case W:
                return offset_by(buf, byte_displs[k]);
            case Packed:
                break;
        }
        return offset_by(buf, static_cast<MPI_Aint>(offsets ? offsets[k] : k * block));
    }
};

// Copies block fk of `from` into block tk of `to` (as much as fits): one copy
// whatever the layouts. MPI_ERR_TRUNCATE when the receive block is smaller.
inline int move_block(const Blocks& from, int fk, const Blocks& to, int tk) {
    const size_t have = from.bytes_of(fk), room = to.bytes_of(tk);
    const size_t bytes = std::min(have, room);
    if (bytes) {
        const unsigned char* src = from.at(fk);
        unsigned char* dst = to.at(tk);
        if (from.is_packed() && to.is_packed()) {
            runtime::copy_bytes(dst, src, bytes);
        } else if (from.is_packed()) {
            mpi::unpack(dst, static_cast<size_t>(to.count_of(tk)), to.type_of(tk), 0, src, bytes);
        } else if (to.is_packed()) {
            mpi::pack(src, static_cast<size_t>(from.count_of(fk)), from.type_of(fk), 0, dst, bytes);
        } else if (from.type_of(fk).contiguous && to.type_of(tk).contiguous) {
            runtime::copy_bytes(mpi::contiguous_data(dst, to.type_of(tk)),
                                mpi::contiguous_data(src, from.type_of(fk)), bytes);
        } else {
            mpi::typed_copy(src, static_cast<size_t>(from.count_of(fk)), from.type_of(fk), dst,
                            static_cast<size_t>(to.count_of(tk)), to.type_of(tk), bytes);
        }
    }
    return have > room ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

// References on the derived datatypes a nonblocking collective's blocks use
// (the user may free them meanwhile); released with the collective.
class HeldTypes {
  public:
    HeldTypes() = default;
    HeldTypes(const HeldTypes&) = delete;
    HeldTypes& operator=(const HeldTypes&) = delete;
    ~HeldTypes() {
        for (mpi::Datatype* t : held_) mpi::datatype_release(t);
    }
    void hold(const mpi::Datatype* t) {
        if (t && !t->predefined)
            held_.push_back(mpi::datatype_retain(const_cast<mpi::Datatype*>(t)));
    }

  private:
    std::vector<mpi::Datatype*> held_;
};

}  // namespace mpc::coll::shm
