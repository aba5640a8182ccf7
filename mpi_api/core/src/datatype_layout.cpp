// Building and normalising Layout trees, and the bounds rules of MPI 3.1
// section 4.1.6 (data bounds, sticky lb/ub markers, epsilon alignment padding).
#include "datatype_layout.hpp"

#include <algorithm>
#include <cstdint>

namespace mpc::mpi {
namespace {

using LayoutPtr = std::shared_ptr<const Layout>;

// Largest packed size of one element we accept: the count of an MPI_Count.
constexpr size_t kMaxBytes = static_cast<size_t>(INT64_MAX);

bool mul(size_t a, size_t b, size_t* r) {
    return !__builtin_mul_overflow(a, b, r) && *r <= kMaxBytes;
}
bool add(size_t a, size_t b, size_t* r) {
    return !__builtin_add_overflow(a, b, r) && *r <= kMaxBytes;
}
// Displacements and bounds: false when the result leaves MPI_Aint.
bool add(MPI_Aint a, MPI_Aint b, MPI_Aint* r) { return !__builtin_add_overflow(a, b, r); }
bool sub(MPI_Aint a, MPI_Aint b, MPI_Aint* r) { return !__builtin_sub_overflow(a, b, r); }
bool mul(MPI_Aint a, MPI_Aint b, MPI_Aint* r) { return !__builtin_mul_overflow(a, b, r); }

LayoutPtr bytes_node(size_t n) {
    auto l = std::make_shared<Layout>();
    l->kind = Layout::Kind::Bytes;
    l->size = n;
    return l;
}

uint32_t child_depth(const Layout* c) {
    return c && c->kind != Layout::Kind::Bytes ? c->depth : 0;
}

// A block under construction: count instances of child at stride, or (child
// null) a run of count bytes. size = its packed bytes.
struct Piece {
    MPI_Aint disp = 0;
    size_t count = 0;
    LayoutPtr child;
    MPI_Aint stride = 0;
    size_t size = 0;
    bool is_run() const { return !child; }
    bool same_shape(const Piece& o) const {
        return is_run() ? o.is_run() && count == o.count
                        : child == o.child && count == o.count && stride == o.stride;
    }
};

// count instances of shape s at disp. size == 0 when it holds no data.
bool make_piece(MPI_Aint disp, size_t count, const Shape& s, Piece* out) {
    *out = Piece{};
    if (count == 0 || s.size == 0) return true;
    size_t bytes;
    if (!mul(count, s.size, &bytes)) return false;
    const LayoutPtr& l = s.layout;
    disp += s.layout_disp;
    if (l->kind == Layout::Kind::Bytes &&
        (count == 1 || s.extent == static_cast<MPI_Aint>(l->size))) {
        *out = Piece{disp, bytes, nullptr, 0, bytes};
        return true;
    }
    MPI_Aint span_of_blocks;
    if (count > 1 && l->kind == Layout::Kind::Vector &&
        mul(static_cast<MPI_Aint>(l->nblocks), l->stride, &span_of_blocks) &&
        s.extent == span_of_blocks) {
        // The instances continue the child's own block pattern: one longer vector.
        auto v = std::make_shared<Layout>(*l);
        v->nblocks *= count;
        v->size = bytes;
        *out = Piece{disp, 1, v, 0, bytes};
        return true;
    }
    *out = Piece{disp, count, l, s.extent, bytes};
    return true;
}

Layout::Block block_of(const Piece& p, MPI_Aint disp) {
    return Layout::Block{disp, p.count, p.child.get(), p.stride};
}

// The layout of a single piece, its origin at p.disp.
LayoutPtr node_of(const Piece& p) {
    if (p.is_run()) return bytes_node(p.count);
    if (p.count == 1) return p.child;
    auto v = std::make_shared<Layout>();
    v->kind = Layout::Kind::Vector;
    v->nblocks = p.count;
    v->stride = p.stride;
    v->proto = Layout::Block{0, 1, p.child.get(), 0};
    v->block_size = p.child->size;
    v->size = p.size;
    v->depth = 1 + child_depth(p.child.get());
    v->owned.push_back(p.child);
    return v;
}

// count copies of piece p, copy i at i*stride from p.
LayoutPtr vector_node(size_t count, MPI_Aint stride, const Piece& p, size_t total) {
    auto v = std::make_shared<Layout>();
    v->kind = Layout::Kind::Vector;
    v->nblocks = count;
    v->stride = stride;
    v->proto = block_of(p, 0);
    v->block_size = p.size;
    v->size = total;
    v->depth = 1 + child_depth(p.child.get());
    if (p.child) v->owned.push_back(p.child);
    return v;
}

// Accumulates the bounds of copies of child shapes placed at displacements
// ranging over [lo, hi]; ok turns false when a bound leaves MPI_Aint.
struct BoundsAcc {
    bool has_data = false;
    bool ok = true;
    TypeBounds b;

    void add_copies(MPI_Aint lo, MPI_Aint hi, const Shape& c) {
        if (c.size > 0) {
            MPI_Aint dl, du;
            if (!add(lo, c.bounds.data_lb, &dl) || !add(hi, c.bounds.data_ub, &du)) {
                ok = false;
                return;
            }
            b.data_lb = has_data ? std::min(b.data_lb, dl) : dl;
            b.data_ub = has_data ? std::max(b.data_ub, du) : du;
            b.align = std::max(b.align, c.bounds.align);
            has_data = true;
        }
        if (c.bounds.has_lb_mark) {
            MPI_Aint m;
            if (!add(lo, c.bounds.lb_mark, &m)) {
                ok = false;
                return;
            }
            b.lb_mark = b.has_lb_mark ? std::min(b.lb_mark, m) : m;
            b.has_lb_mark = true;
        }
        if (c.bounds.has_ub_mark) {
            MPI_Aint m;
            if (!add(hi, c.bounds.ub_mark, &m)) {
                ok = false;
                return;
            }
            b.ub_mark = b.has_ub_mark ? std::max(b.ub_mark, m) : m;
            b.has_ub_mark = true;
        }
    }
};

// Range of k*step for k in [0, n).
// The displacements of n copies step apart: [lo, hi]. False on overflow.
bool span(size_t n, MPI_Aint step, MPI_Aint* lo, MPI_Aint* hi) {
    MPI_Aint last = 0;
    if (n > 1 && __builtin_mul_overflow(static_cast<MPI_Aint>(n - 1), step, &last)) return false;
    *lo = std::min<MPI_Aint>(0, last);
    *hi = std::max<MPI_Aint>(0, last);
    return true;
}

// lb, ub and extent from the bounds: markers win; otherwise the data bounds,
// with the upper bound padded so the extent is a multiple of the largest
// alignment of the entries (the epsilon of MPI 3.1 section 4.1.6).
bool finish_bounds(Shape& s, const BoundsAcc& a) {
    if (!a.ok) return false;
    s.bounds = a.b;
    const TypeBounds& b = a.b;
    MPI_Aint lb = b.has_lb_mark ? b.lb_mark : (a.has_data ? b.data_lb : 0);
    MPI_Aint ub;
    if (b.has_ub_mark) {
        ub = b.ub_mark;
    } else {
        ub = a.has_data ? b.data_ub : lb;
        MPI_Aint ext;
        if (!sub(ub, lb, &ext)) return false;
        if (a.has_data && ext > 0 && b.align > 1 && ext % b.align &&
            !add(ub, b.align - ext % b.align, &ub))
            return false;
    }
    MPI_Aint true_extent;
    if (a.has_data && !sub(b.data_ub, b.data_lb, &true_extent)) return false;
    if (!a.has_data) s.bounds.data_lb = s.bounds.data_ub = 0;
    s.lb = lb;
    return sub(ub, lb, &s.extent);
}

}  // namespace

size_t Layout::locate(size_t off) const {
    if (start.empty()) return off / run_len;
    auto it = std::upper_bound(start.begin(), start.end(), off);
    return static_cast<size_t>(it - start.begin()) - 1;
}

Shape shape_basic(size_t size, MPI_Aint align) {
    Shape s;
    s.layout = bytes_node(size);
    s.size = size;
    BoundsAcc a;
    a.has_data = size > 0;
    a.b.data_lb = 0;
    a.b.data_ub = static_cast<MPI_Aint>(size);
    a.b.align = align;
    finish_bounds(s, a);  // a basic type's bounds cannot overflow
    return s;
}

bool shape_vector(size_t count, size_t blocklen, MPI_Aint stride, const Shape& child, Shape* out) {
    Shape s;
    BoundsAcc a;
    if (count && blocklen) {
        MPI_Aint vlo, vhi, blo, bhi, lo, hi;
        if (!span(count, stride, &vlo, &vhi) || !span(blocklen, child.extent, &blo, &bhi) ||
            !add(vlo, blo, &lo) || !add(vhi, bhi, &hi))
            return false;
        a.add_copies(lo, hi, child);
    }
    if (!finish_bounds(s, a)) return false;
    Piece p;
    if (!make_piece(0, blocklen, child, &p)) return false;
    MPI_Aint block_span;
    if (count && p.size) {
        if (!mul(count, p.size, &s.size)) return false;
        s.layout_disp = p.disp;
        if (count == 1) {
            s.layout = node_of(p);
        } else if (p.is_run() && stride == static_cast<MPI_Aint>(p.count)) {
            s.layout = bytes_node(s.size);
        } else if (!p.is_run() && mul(p.stride, static_cast<MPI_Aint>(p.count), &block_span) &&
                   block_span == stride) {
            Piece q = p;  // the blocks tile: one block of count*blocklen instances
            q.count *= count;
            q.size = s.size;
            s.layout = node_of(q);
        } else {
            s.layout = vector_node(count, stride, p, s.size);
        }
    }
    *out = std::move(s);
    return true;
}

bool shape_blocks(const std::vector<BlockSpec>& specs, Shape* out) {
    Shape s;
    BoundsAcc a;
    std::vector<Piece> ps;
    size_t total = 0;
    for (const BlockSpec& spec : specs) {
        if (spec.count) {
            MPI_Aint lo, hi;
            if (!span(spec.count, spec.child->extent, &lo, &hi) || !add(spec.disp, lo, &lo) ||
                !add(spec.disp, hi, &hi))
                return false;
            a.add_copies(lo, hi, *spec.child);
            if (!a.ok) return false;  // the piece's displacement would overflow too
        }
        Piece p;
        if (!make_piece(spec.disp, spec.count, *spec.child, &p)) return false;
        if (!p.size) continue;
        if (!add(total, p.size, &total)) return false;
        if (!ps.empty()) {
            Piece& last = ps.back();
            MPI_Aint next;  // where a continuation of the last piece would start
            bool merge = last.is_run()
                             ? p.is_run() &&
                                   add(last.disp, static_cast<MPI_Aint>(last.count), &next) &&
                                   p.disp == next
                             : !p.is_run() && last.child == p.child && last.stride == p.stride &&
                                   mul(static_cast<MPI_Aint>(last.count), last.stride, &next) &&
                                   add(last.disp, next, &next) && p.disp == next;
            if (merge) {
                last.count += p.count;
                last.size += p.size;
                continue;
            }
        }
        ps.push_back(std::move(p));
    }
    if (!finish_bounds(s, a)) return false;
    s.size = total;
    if (ps.empty()) {
        *out = std::move(s);
        return true;
    }
    const size_t n = ps.size();
    if (n == 1) {
        s.layout = node_of(ps[0]);
        s.layout_disp = ps[0].disp;
        *out = std::move(s);
        return true;
    }
    // Evenly spaced blocks of one shape: a vector.
    MPI_Aint step;
    bool regular = sub(ps[1].disp, ps[0].disp, &step);
    bool all_runs = true;
    for (size_t i = 0; i < n; ++i) {
        MPI_Aint want = ps[0].disp;
        regular = regular && ps[i].same_shape(ps[0]) &&
                  (i == 0 || add(ps[i - 1].disp, step, &want)) && ps[i].disp == want;
        all_runs = all_runs && ps[i].is_run();
    }
    s.layout_disp = ps[0].disp;
    if (regular) {
        s.layout = vector_node(n, step, ps[0], total);
        *out = std::move(s);
        return true;
    }
    auto l = std::make_shared<Layout>();
    l->nblocks = n;
    l->size = total;
    bool uniform = true;
    for (const Piece& p : ps) uniform = uniform && p.size == ps[0].size;
    if (!uniform || !all_runs) {
        l->start.resize(n + 1);
        size_t at = 0;
        for (size_t i = 0; i < n; ++i) {
            l->start[i] = at;
            at += ps[i].size;
        }
        l->start[n] = at;
    }
    if (all_runs) {
        l->kind = Layout::Kind::Runs;
        l->depth = 1;
        l->run_len = ps[0].size;
        l->disp.reserve(n);
        for (const Piece& p : ps) l->disp.push_back(p.disp - s.layout_disp);
    } else {
        l->kind = Layout::Kind::Blocks;
        l->blocks.reserve(n);
        uint32_t depth = 0;
        for (const Piece& p : ps) {
            l->blocks.push_back(block_of(p, p.disp - s.layout_disp));
            depth = std::max(depth, child_depth(p.child.get()));
            if (p.child && (l->owned.empty() || l->owned.back() != p.child))
                l->owned.push_back(p.child);
        }
        l->depth = 1 + depth;
    }
    s.layout = std::move(l);
    *out = std::move(s);
    return true;
}

Shape shape_resized(const Shape& child, MPI_Aint lb, MPI_Aint extent) {
    Shape s = child;
    s.bounds.has_lb_mark = s.bounds.has_ub_mark = true;
    s.bounds.lb_mark = lb;
    s.bounds.ub_mark = lb + extent;
    s.lb = lb;
    s.extent = extent;
    return s;
}

void apply_shape(Datatype& t, Shape shape) {
    t.size = shape.size;
    t.lb = shape.lb;
    t.extent = shape.extent;
    t.true_lb = shape.size ? shape.bounds.data_lb : 0;
    t.true_extent = shape.size ? shape.bounds.data_ub - shape.bounds.data_lb : 0;
    t.contiguous = shape.size == 0 || (shape.layout->kind == Layout::Kind::Bytes &&
                                       static_cast<MPI_Aint>(shape.size) == shape.extent);
    t.shape = std::move(shape);
}

}  // namespace mpc::mpi
