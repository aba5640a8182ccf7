// The pack engine: a cursor over the packed stream of (buf, count, type) that
// walks the Layout tree lazily, and pack / unpack / typed_copy on top of it.
// Contiguous types never build a cursor; uniform runs (vectors of contiguous
// blocks) are moved by tight strided loops with fixed-size copies.
#include <algorithm>
#include <cstring>

#include "datatype_layout.hpp"
#include "runtime/log.hpp"

namespace mpc::mpi {
namespace {

inline uintptr_t offset_by(uintptr_t base, MPI_Aint off) {
    return base + static_cast<uintptr_t>(off);
}
inline char* as_ptr(uintptr_t a) {
    return reinterpret_cast<char*>(a);
}

// k runs of L bytes: source runs `sstride` apart, destination runs `dstride`
// apart. Fixed sizes let the compiler turn each memcpy into a move or two.
template <size_t L>
void copy_runs_fixed(uintptr_t dst, MPI_Aint dstride, uintptr_t src, MPI_Aint sstride, size_t k) {
    for (size_t i = 0; i < k; ++i) {
        memcpy(as_ptr(dst), as_ptr(src), L);
        dst = offset_by(dst, dstride);
        src = offset_by(src, sstride);
    }
}

void copy_runs(uintptr_t dst, MPI_Aint dstride, uintptr_t src, MPI_Aint sstride, size_t len,
               size_t k) {
    switch (len) {
        case 1:
            return copy_runs_fixed<1>(dst, dstride, src, sstride, k);
        case 2:
            return copy_runs_fixed<2>(dst, dstride, src, sstride, k);
        case 4:
            return copy_runs_fixed<4>(dst, dstride, src, sstride, k);
        case 8:
            return copy_runs_fixed<8>(dst, dstride, src, sstride, k);
        case 12:
            return copy_runs_fixed<12>(dst, dstride, src, sstride, k);
        case 16:
            return copy_runs_fixed<16>(dst, dstride, src, sstride, k);
        case 24:
            return copy_runs_fixed<24>(dst, dstride, src, sstride, k);
        case 32:
            return copy_runs_fixed<32>(dst, dstride, src, sstride, k);
        default:
            for (size_t i = 0; i < k; ++i) {
                memcpy(as_ptr(dst), as_ptr(src), len);
                dst = offset_by(dst, dstride);
                src = offset_by(src, sstride);
            }
    }
}

}  // namespace

// ---- Cursor ------------------------------------------------------------------

Cursor::Cursor(const void* buf, size_t count, const Datatype& t, size_t offset) {
    frames_ = inline_;
    const size_t total = count * t.size;
    if (offset >= total) return;  // empty stream, or positioned at its end
    const Layout* root = t.shape.layout.get();
    top_.kind = Layout::Kind::Vector;
    top_.stride = t.extent;
    top_.size = total;
    int need = 1;
    if (t.contiguous) {
        top_.nblocks = 1;
        top_.proto = Layout::Block{0, total, nullptr, 0};
        top_.block_size = total;
    } else {
        top_.nblocks = count;
        top_.block_size = t.size;
        if (root->kind == Layout::Kind::Bytes) {
            top_.proto = Layout::Block{0, t.size, nullptr, 0};
        } else {
            top_.proto = Layout::Block{0, 1, root, 0};
            need += static_cast<int>(root->depth);
        }
    }
    if (need > kInlineFrames) {
        heap_.reset(new Frame[static_cast<size_t>(need)]);
        frames_ = heap_.get();
    }
    frames_[0].node = &top_;
    frames_[0].base = offset_by(reinterpret_cast<uintptr_t>(buf), t.shape.layout_disp);
    enter(0, offset);
}

void Cursor::load_block(Frame& f) {
    const Layout& n = *f.node;
    switch (n.kind) {
        case Layout::Kind::Vector:
            f.addr = offset_by(f.base, static_cast<MPI_Aint>(f.b) * n.stride);
            f.count = n.proto.count;
            f.child = n.proto.child;
            f.child_stride = n.proto.child_stride;
            break;
        case Layout::Kind::Runs:
            f.addr = offset_by(f.base, n.disp[f.b]);
            f.count = n.run_length(f.b);
            f.child = nullptr;
            f.child_stride = 0;
            break;
        default: {
            const Layout::Block& k = n.blocks[f.b];
            f.addr = offset_by(f.base, k.disp);
            f.count = k.count;
            f.child = k.child;
            f.child_stride = k.child_stride;
        }
    }
}

// Positions frame `level` (node and base set) at packed offset off of its
// instance, and the frames below it, down to a run.
void Cursor::enter(int level, size_t off) {
    for (;;) {
        Frame& f = frames_[level];
        const Layout& n = *f.node;
        size_t r;
        if (n.kind == Layout::Kind::Vector) {
            f.b = off / n.block_size;
            r = off - f.b * n.block_size;
        } else {
            f.b = n.locate(off);
            r = off - n.block_start(f.b);
        }
        load_block(f);
        level_ = level;
        if (!f.child) {
            f.j = 0;
            ptr_ = f.addr + r;
            avail_ = f.count - r;
            return;
        }
        const size_t cs = f.child->size;
        f.j = r / cs;
        r -= f.j * cs;
        uintptr_t a = offset_by(f.addr, static_cast<MPI_Aint>(f.j) * f.child_stride);
        if (f.child->kind == Layout::Kind::Bytes) {
            ptr_ = a + r;
            avail_ = cs - r;
            return;
        }
        Frame& c = frames_[++level];
        c.node = f.child;
        c.base = a;
        off = r;
    }
}

// From frame `level` at (b, j) with its block loaded, down to the first run.
void Cursor::descend(int level) {
    for (;;) {
        Frame& f = frames_[level];
        level_ = level;
        if (!f.child) {
            ptr_ = f.addr;
            avail_ = f.count;
            return;
        }
        uintptr_t a = offset_by(f.addr, static_cast<MPI_Aint>(f.j) * f.child_stride);
        if (f.child->kind == Layout::Kind::Bytes) {
            ptr_ = a;
            avail_ = f.child->size;
            return;
        }
        Frame& c = frames_[++level];
        c.node = f.child;
        c.base = a;
        c.b = 0;
        c.j = 0;
        load_block(c);
    }
}

void Cursor::next_run() {
    int level = level_;
    for (;;) {
        Frame& f = frames_[level];
        if (f.child && ++f.j < f.count) return descend(level);
        if (++f.b < f.node->nblocks) {
            f.j = 0;
            load_block(f);
            return descend(level);
        }
        if (level == 0) {
            avail_ = 0;
            return;
        }
        --level;
    }
}

bool Cursor::uniform(size_t* len, MPI_Aint* stride, size_t* runs) const {
    const Frame& f = frames_[level_];
    if (!f.child) {
        if (f.node->kind != Layout::Kind::Vector || avail_ != f.count) return false;
        *len = f.count;
        *stride = f.node->stride;
        *runs = f.node->nblocks - f.b;
        return true;
    }
    if (f.child->kind != Layout::Kind::Bytes || avail_ != f.child->size) return false;
    *len = f.child->size;
    *stride = f.child_stride;
    *runs = f.count - f.j;
    return true;
}

void Cursor::skip_runs(size_t k) {
    Frame& f = frames_[level_];
    if (f.child)
        f.j += k - 1;
    else
        f.b += k - 1;
    avail_ = 0;
    next_run();
}

// Moves n bytes between the stream and `stream` (kPack: memory -> stream).
template <bool kPack>
void Cursor::transfer(char* stream, size_t n) {
    auto move = [](char* s, char* mem, size_t len) {
        if (kPack)
            memcpy(s, mem, len);
        else
            memcpy(mem, s, len);
    };
    while (n) {
        MPC_CHECK(avail_ != 0);
        size_t len, runs;
        MPI_Aint stride;
        if (n >= 2 * avail_ && uniform(&len, &stride, &runs) && runs > 1) {
            const size_t k = std::min(runs, n / len);
            const uintptr_t s = reinterpret_cast<uintptr_t>(stream);
            const MPI_Aint step = static_cast<MPI_Aint>(len);
            if (kPack)
                copy_runs(s, step, ptr_, stride, len, k);
            else
                copy_runs(ptr_, stride, s, step, len, k);
            stream += k * len;
            n -= k * len;
            skip_runs(k);
            continue;
        }
        Frame& f = frames_[level_];
        if (f.node->kind == Layout::Kind::Runs && avail_ == f.count && n > avail_) {
            // Whole runs of an indexed node, without a cursor step each.
            const Layout& l = *f.node;
            size_t b = f.b;
            for (; b < l.nblocks; ++b) {
                const size_t rl = l.run_length(b);
                if (rl > n) break;
                move(stream, as_ptr(offset_by(f.base, l.disp[b])), rl);
                stream += rl;
                n -= rl;
            }
            f.b = b - 1;
            avail_ = 0;
            next_run();
            continue;
        }
        const size_t m = std::min(n, avail_);
        move(stream, ptr(), m);
        stream += m;
        n -= m;
        consume(m);
    }
}

void Cursor::read(void* out, size_t n) {
    transfer<true>(static_cast<char*>(out), n);
}

void Cursor::write(const void* in, size_t n) {
    transfer<false>(const_cast<char*>(static_cast<const char*>(in)), n);
}

// ---- pack / unpack / typed_copy ------------------------------------------------

void pack_walk(const void* buf, size_t count, const Datatype& type, size_t offset, void* out,
               size_t len) {
    if (len == 0) return;
    Cursor c(buf, count, type, offset);
    c.read(out, len);
}

void unpack_walk(void* buf, size_t count, const Datatype& type, size_t offset, const void* in,
                 size_t len) {
    if (len == 0) return;
    Cursor c(buf, count, type, offset);
    c.write(in, len);
}

void for_each_run(const void* buf, size_t count, const Datatype& type, size_t offset, size_t len,
                  void (*fn)(void* ctx, uintptr_t address, size_t n), void* ctx) {
    if (len == 0) return;
    if (type.contiguous) return fn(ctx, contiguous_at(buf, type, offset), len);
    Cursor c(buf, count, type, offset);
    while (len) {
        MPC_CHECK(c.avail() != 0);
        const size_t n = std::min(len, c.avail());
        fn(ctx, reinterpret_cast<uintptr_t>(c.ptr()), n);
        len -= n;
        c.consume(n);
    }
}

void typed_copy(const void* sbuf, size_t scount, const Datatype& stype, void* rbuf, size_t rcount,
                const Datatype& rtype, size_t bytes) {
    if (bytes == 0) return;
    // Where the data starts, for the sides that are contiguous.
    const unsigned char* s0 = contiguous_data(sbuf, stype);
    unsigned char* r0 = contiguous_data(rbuf, rtype);
    if (stype.contiguous && rtype.contiguous) {
        memcpy(r0, s0, bytes);
        return;
    }
    if (stype.contiguous) return unpack(rbuf, rcount, rtype, 0, s0, bytes);
    if (rtype.contiguous) return pack(sbuf, scount, stype, 0, r0, bytes);
    Cursor s(sbuf, scount, stype, 0);
    Cursor r(rbuf, rcount, rtype, 0);
    while (bytes) {
        MPC_CHECK(s.avail() != 0 && r.avail() != 0);
        size_t sl, sk, rl, rk;
        MPI_Aint ss, rs;
        if (s.avail() == r.avail() && bytes >= 2 * s.avail() && s.uniform(&sl, &ss, &sk) &&
            r.uniform(&rl, &rs, &rk) && sk > 1 && rk > 1) {
            size_t k = std::min({sk, rk, bytes / sl});
            copy_runs(reinterpret_cast<uintptr_t>(r.ptr()), rs,
                      reinterpret_cast<uintptr_t>(s.ptr()), ss, sl, k);
            bytes -= k * sl;
            s.skip_runs(k);
            r.skip_runs(k);
            continue;
        }
        size_t n = std::min({bytes, s.avail(), r.avail()});
        memcpy(r.ptr(), s.ptr(), n);
        bytes -= n;
        s.consume(n);
        r.consume(n);
    }
}

}  // namespace mpc::mpi
