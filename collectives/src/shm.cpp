// Shared-address-space collectives (shm.hpp); the protocol of episodes and
// slots is in shm_group.hpp.
#include "collectives/shm.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "mpi_api/rank.hpp"
#include "runtime/env.hpp"
#include "shm_group.hpp"

namespace mpc::coll::shm {
namespace {

bool enabled() {
    static const bool on = runtime::env::get_bool("MPC_COLL_SHM", true);
    return on;
}

// A contiguous view of (buf, count, type): the buffer itself when the type is
// contiguous, otherwise packed scratch (filled from buf when `load`), which
// unload() unpacks back into buf.
class Contiguous {
  public:
    Contiguous(const void* buf, int count, const Datatype* type, bool load)
        : buf_(const_cast<void*>(buf)), count_(static_cast<size_t>(count)), type_(type) {
        bytes_ = count_ * type->size;
        if (type->contiguous) {
            data_ = static_cast<unsigned char*>(buf_) + type->true_lb;
            return;
        }
        scratch_.reset(new unsigned char[bytes_]);
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
    const Datatype* type_;
    size_t bytes_ = 0;
    unsigned char* data_ = nullptr;
    std::unique_ptr<unsigned char[]> scratch_;
};

// The unit predefined operations combine (the type's basic type) and how many
// of them count elements of type hold.
struct Units {
    const Datatype* basic;
    size_t unit;   // bytes of one
    size_t count;  // in the message
};
Units units_of(int count, const Datatype* type) {
    const Datatype* basic = mpi::datatype_lookup(type->basic);
    return {basic, basic->size, static_cast<size_t>(count) * type->basic_count};
}

// Member r's share [lo, hi) of n units over `members`, in cache-line multiples
// where the unit allows it (no two members write the same line).
void slice_of(int r, int members, const Units& u, size_t* lo, size_t* hi) {
    const size_t align = 64 % u.unit == 0 ? 64 / u.unit : 1;
    size_t chunk = (u.count + static_cast<size_t>(members) - 1) / static_cast<size_t>(members);
    chunk = (chunk + align - 1) / align * align;
    *lo = std::min(u.count, chunk * static_cast<size_t>(r));
    *hi = std::min(u.count, *lo + chunk);
}

// acc = data_0 op data_1 op ... op data_{n-1}, folded from the right so that
// every member computes the same expression.
void fold(const Op* op, const Units& u, ShmGroup& g, int parity, unsigned char* acc) {
    const int n = g.size();
    memcpy(acc, g.member(n - 1).data[parity], u.count * u.unit);
    for (int k = n - 2; k >= 0; --k)
        mpi::op_apply(*op, g.member(k).data[parity], acc, u.count, *u.basic);
}

}  // namespace

bool eligible(Comm* c) {
    if (c->is_inter() || c->size < 2 || !enabled()) return false;
    if (c->all_local < 0) {
        bool local = true;
        for (int r = 0; r < c->size && local; ++r)
            local = mpi::world().local(c->group->world_rank(r)) != nullptr;
        c->all_local = local ? 1 : 0;
    }
    return c->all_local == 1;
}

bool eligible(Comm* c, const Op* op) {
    return op->predefined && eligible(c);
}

int barrier(Comm* c) {
    ShmGroup& g = group_of(c);
    const uint64_t e = ++c->shm_episode;
    g.publish(c->rank, e);
    g.wait_all(e);
    return MPI_SUCCESS;
}

int bcast(void* buf, int count, Datatype* type, int root, Comm* c) {
    const size_t bytes = static_cast<size_t>(count) * type->size;
    if (bytes == 0) return MPI_SUCCESS;
    ShmGroup& g = group_of(c);
    const int me = c->rank;
    const uint64_t e = ++c->shm_episode;
    const int p = static_cast<int>(e & 1);
    MemberSlots& mine = g.member(me);
    MemberSlots& from = g.member(root);
    if (bytes <= kInlineBytes) {
        if (me == root) {
            g.wait_all(e - 1);
            mpi::pack(buf, static_cast<size_t>(count), *type, 0, mine.data[p], bytes);
        } else {
            g.wait_one(root, e);
            mpi::unpack(buf, static_cast<size_t>(count), *type, 0, from.data[p], bytes);
        }
        g.publish(me, e);
        return MPI_SUCCESS;
    }
    if (me == root) {
        // Every member copies straight from the root's buffer; the root waits
        // until they all did.
        Contiguous src(buf, count, type, true);
        g.wait_all(e - 1);
        mine.src[p] = src.data();
        g.publish(me, e);
        g.wait_all(e);
    } else {
        g.wait_one(root, e);
        mpi::unpack(buf, static_cast<size_t>(count), *type, 0, from.src[p], bytes);
        g.publish(me, e);
    }
    return MPI_SUCCESS;
}

int reduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op, int root,
           Comm* c) {
    const size_t bytes = static_cast<size_t>(count) * type->size;
    if (bytes == 0) return MPI_SUCCESS;
    ShmGroup& g = group_of(c);
    const int me = c->rank, n = c->size;
    const void* in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    const Units u = units_of(count, type);
    const uint64_t e = c->shm_episode + 1;
    const int p = static_cast<int>(e & 1);
    MemberSlots& mine = g.member(me);
    if (bytes <= kInlineBytes) {
        c->shm_episode = e;
        g.wait_all(e - 1);
        mpi::pack(in, static_cast<size_t>(count), *type, 0, mine.data[p], bytes);
        g.publish(me, e);
        if (me != root) return MPI_SUCCESS;
        g.wait_all(e);
        alignas(64) unsigned char acc[kInlineBytes];
        fold(op, u, g, p, acc);
        mpi::unpack(recvbuf, static_cast<size_t>(count), *type, 0, acc, bytes);
        return MPI_SUCCESS;
    }
    // Each member reduces its slice of everyone's input straight into the
    // root's output; nobody leaves before all slices are done (they read its
    // input).
    c->shm_episode = e + 1;
    Contiguous input(in, count, type, true);
    std::unique_ptr<Contiguous> output;
    if (me == root) output = std::make_unique<Contiguous>(recvbuf, count, type, false);
    g.wait_all(e - 1);
    mine.src[p] = input.data();
    mine.dst[p] = output ? output->data() : nullptr;
    g.publish(me, e);
    g.wait_all(e);
    size_t lo, hi;
    slice_of(me, n, u, &lo, &hi);
    if (hi > lo) {
        const MemberSlots& r = g.member(root);
        unsigned char* out = static_cast<unsigned char*>(r.dst[p]) + lo * u.unit;
        const unsigned char* root_in = static_cast<const unsigned char*>(r.src[p]) + lo * u.unit;
        if (out != root_in) memcpy(out, root_in, (hi - lo) * u.unit);
        for (int k = 0; k < n; ++k) {
            if (k == root) continue;
            const auto* src = static_cast<const unsigned char*>(g.member(k).src[p]) + lo * u.unit;
            mpi::op_apply(*op, src, out, hi - lo, *u.basic);
        }
    }
    g.publish(me, e + 1);
    g.wait_all(e + 1);
    if (output) output->unload();
    return MPI_SUCCESS;
}

int allreduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op,
              Comm* c) {
    const size_t bytes = static_cast<size_t>(count) * type->size;
    if (bytes == 0) return MPI_SUCCESS;
    ShmGroup& g = group_of(c);
    const int me = c->rank, n = c->size;
    const void* in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    const Units u = units_of(count, type);
    const uint64_t e = c->shm_episode + 1;
    const int p = static_cast<int>(e & 1);
    MemberSlots& mine = g.member(me);
    if (bytes <= kInlineBytes) {
        // One synchronisation: everyone publishes a copy, everyone folds all.
        c->shm_episode = e;
        g.wait_all(e - 1);
        mpi::pack(in, static_cast<size_t>(count), *type, 0, mine.data[p], bytes);
        g.publish(me, e);
        g.wait_all(e);
        alignas(64) unsigned char acc[kInlineBytes];
        fold(op, u, g, p, acc);
        mpi::unpack(recvbuf, static_cast<size_t>(count), *type, 0, acc, bytes);
        return MPI_SUCCESS;
    }
    // Slices: each member reduces its slice into its own output (only it reads
    // that slice of anyone's input, so in place is safe), then copies the
    // others' slices from their outputs.
    c->shm_episode = e + 2;
    Contiguous input(in, count, type, true);
    Contiguous output(recvbuf, count, type, false);
    g.wait_all(e - 1);
    mine.src[p] = input.data();
    mine.dst[p] = output.data();
    g.publish(me, e);
    g.wait_all(e);
    size_t lo, hi;
    slice_of(me, n, u, &lo, &hi);
    if (hi > lo) {
        unsigned char* out = output.data() + lo * u.unit;
        if (out != input.data() + lo * u.unit)
            memcpy(out, input.data() + lo * u.unit, (hi - lo) * u.unit);
        for (int k = 0; k < n; ++k) {
            if (k == me) continue;
            const auto* src = static_cast<const unsigned char*>(g.member(k).src[p]) + lo * u.unit;
            mpi::op_apply(*op, src, out, hi - lo, *u.basic);
        }
    }
    g.publish(me, e + 1);
    g.wait_all(e + 1);
    for (int k = 0; k < n; ++k) {
        if (k == me) continue;
        size_t klo, khi;
        slice_of(k, n, u, &klo, &khi);
        if (khi > klo)
            memcpy(output.data() + klo * u.unit,
                   static_cast<const unsigned char*>(g.member(k).dst[p]) + klo * u.unit,
                   (khi - klo) * u.unit);
    }
    g.publish(me, e + 2);
    g.wait_all(e + 2);
    output.unload();
    return MPI_SUCCESS;
}

}  // namespace mpc::coll::shm
