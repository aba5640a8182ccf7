// Datatype constructors and the pack engine against the naive type-map model
// (datatype_reference.hpp): bounds, sizes, pack / unpack / typed_copy of whole
// streams and of fragments, element counts, on hand-picked and on random
// nested types (negative displacements, resized types, holes, overlaps).
#include <catch2/catch.hpp>
#include <random>

#include "datatype_reference.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/errors.hpp"
#include "../../../mpi_api/core/src/datatype_layout.hpp"

using mpc::mpi::Datatype;
namespace mm = mpc::mpi;

namespace {

Datatype* dt(MPI_Datatype h) {
    mm::datatype_init_predefined();
    Datatype* t = mm::datatype_lookup(h);
    REQUIRE(t);
    return t;
}

// A type built both ways. Owns one reference on t.
struct Both {
    Datatype* t = nullptr;
    ref::Type r;
};

void drop(Both& b) {
    if (b.t && !b.t->predefined) REQUIRE(mm::type_free(b.t) == MPI_SUCCESS);
    b.t = nullptr;
}

Both prim(int which) {
    switch (which) {
        case 0:
            return {dt(MPI_CHAR), ref::basic(1, 1)};
        case 1:
            return {dt(MPI_SHORT), ref::basic(2, 2)};
        case 2:
            return {dt(MPI_INT), ref::basic(4, 4)};
        case 3:
            return {dt(MPI_DOUBLE), ref::basic(8, 8)};
        default:
            return {dt(MPI_DOUBLE_INT), ref::double_int()};
    }
}

// A buffer covering everything (count, t) touches, filled with a pattern.
struct Buffer {
    std::vector<unsigned char> mem;
    unsigned char* base;
    Buffer(const ref::Type& t, size_t count, unsigned seed) {
        MPI_Aint lo, hi;
        ref::touched(t, count, &lo, &hi);
        mem.resize(static_cast<size_t>(hi - lo) + 16);
        base = mem.data() + 8 - lo;
        for (size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<unsigned char>(i * 131 + seed);
    }
};

void check_bounds(const Both& b) {
    INFO("type size " << b.r.size());
    CHECK(b.t->size == b.r.size());
    CHECK(b.t->lb == b.r.lb());
    CHECK(b.t->extent == b.r.extent());
    CHECK(b.t->true_lb == b.r.true_lb());
    CHECK(b.t->true_extent == b.r.true_ub() - b.r.true_lb());
    // Claimed contiguity must be real.
    if (b.t->contiguous && b.t->size)
        CHECK((ref::contiguous_memory(b.r, 3) && b.r.extent() == MPI_Aint(b.r.size())));
}

// Whole-stream and fragment pack, unpack and element counts of (count, b).
void check_data(const Both& b, size_t count, std::mt19937& rng) {
    Buffer in(b.r, count, 7);
    const auto want = ref::pack(in.base, count, b.r);
    const size_t total = want.size();
    REQUIRE(total == count * b.t->size);
    std::vector<unsigned char> got(total + 1, 0xee);
    mm::pack(in.base, count, *b.t, 0, got.data(), total);
    CHECK(std::equal(want.begin(), want.end(), got.begin()));
    CHECK(got[total] == 0xee);
    for (int k = 0; k < 6 && total; ++k) {
        size_t off = rng() % total, len = rng() % (total - off + 1);
        std::vector<unsigned char> part(len + 1, 0xee);
        mm::pack(in.base, count, *b.t, off, part.data(), len);
        INFO("fragment at " << off << " of " << len << " bytes");
        CHECK(std::equal(part.begin(), part.begin() + static_cast<long>(len),
                         want.begin() + static_cast<long>(off)));
    }
    for (size_t bytes = 0; bytes <= total; bytes += 1 + rng() % 5) {
        long long n = ref::elements_in(b.r, count, bytes);
        MPI_Count e = mm::type_elements_in(*b.t, static_cast<MPI_Count>(bytes));
        INFO("elements in " << bytes << " bytes");
        CHECK(e == (n < 0 ? MPI_UNDEFINED : n));
        if (n >= 0) CHECK(mm::type_bytes_for_elements(*b.t, n) == static_cast<MPI_Count>(bytes));
    }
    if (!ref::disjoint(b.r, count)) return;
    // Unpack in three fragments equals the reference unpack of the stream.
    Buffer expect(b.r, count, 3), out(b.r, count, 3);
    ref::unpack(expect.base, count, b.r, want.data(), total);
    size_t cut1 = total ? rng() % (total + 1) : 0, cut2 = cut1 + (total - cut1) / 2;
    mm::unpack(out.base, count, *b.t, 0, want.data(), cut1);
    mm::unpack(out.base, count, *b.t, cut1, want.data() + cut1, cut2 - cut1);
    mm::unpack(out.base, count, *b.t, cut2, want.data() + cut2, total - cut2);
    CHECK(out.mem == expect.mem);
}

void check_copy(const Both& s, size_t scount, const Both& r, size_t rcount) {
    if (!ref::disjoint(r.r, rcount)) return;
    Buffer in(s.r, scount, 11), expect(r.r, rcount, 5), out(r.r, rcount, 5);
    const auto stream = ref::pack(in.base, scount, s.r);
    const size_t bytes = std::min(stream.size(), rcount * r.t->size);
    ref::unpack(expect.base, rcount, r.r, stream.data(), bytes);
    mm::typed_copy(in.base, scount, *s.t, out.base, rcount, *r.t, bytes);
    CHECK(out.mem == expect.mem);
}

// A random type of at most `depth` constructor levels, both ways.
Both random_type(std::mt19937& rng, int depth) {
    auto pick = [&](int lo, int hi) {
        return lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1));
    };
    if (depth == 0 || pick(0, 4) == 0) return prim(pick(0, 4));
    Both c = random_type(rng, depth - 1);
    Both out;
    const MPI_Aint ext = c.r.extent();
    int kind = pick(0, 9);
    int count = pick(0, 4), bl = pick(0, 3);
    std::vector<int> bls, ds;
    std::vector<MPI_Aint> hds;
    std::vector<size_t> sbl;
    for (int i = 0; i < count; ++i) {
        bls.push_back(pick(0, 3));
        ds.push_back(pick(-5, 8));
        hds.push_back(pick(-40, 60));
        sbl.push_back(static_cast<size_t>(bls.back()));
    }
    std::vector<MPI_Aint> eds;
    for (int d : ds) eds.push_back(d * ext);
    int err = MPI_SUCCESS;
    switch (kind) {
        case 0:
            err = mm::type_contiguous(count, c.t, &out.t);
            out.r = ref::contiguous(static_cast<size_t>(count), c.r);
            break;
        case 1: {
            int stride = pick(-3, 5);
            err = mm::type_vector(count, bl, stride, c.t, &out.t);
            out.r = ref::hvector(static_cast<size_t>(count), static_cast<size_t>(bl), stride * ext,
                                 c.r);
            break;
        }
        case 2: {
            MPI_Aint stride = pick(-40, 60);
            err = mm::type_hvector(count, bl, stride, c.t, &out.t);
            out.r = ref::hvector(static_cast<size_t>(count), static_cast<size_t>(bl), stride, c.r);
            break;
        }
        case 3:
            err = mm::type_indexed(count, bls.data(), ds.data(), c.t, &out.t);
            out.r = ref::hindexed(sbl, eds, c.r);
            break;
        case 4:
            err = mm::type_hindexed(count, bls.data(), hds.data(), c.t, &out.t);
            out.r = ref::hindexed(sbl, hds, c.r);
            break;
        case 5:
            err = mm::type_indexed_block(count, bl, ds.data(), c.t, &out.t);
            out.r = ref::hindexed(
                std::vector<size_t>(static_cast<size_t>(count), static_cast<size_t>(bl)), eds, c.r);
            break;
        case 6:
            err = mm::type_hindexed_block(count, bl, hds.data(), c.t, &out.t);
            out.r = ref::hindexed(
                std::vector<size_t>(static_cast<size_t>(count), static_cast<size_t>(bl)), hds, c.r);
            break;
        case 7: {
            Both other = random_type(rng, depth - 1);
            std::vector<Datatype*> ts;
            std::vector<ref::Type> rs;
            for (int i = 0; i < count; ++i) {
                ts.push_back(i % 2 ? other.t : c.t);
                rs.push_back(i % 2 ? other.r : c.r);
            }
            err = mm::type_struct(count, bls.data(), hds.data(), ts.data(), &out.t);
            out.r = ref::structure(sbl, hds, rs);
            drop(other);
            break;
        }
        case 8: {
            MPI_Aint lb = pick(-16, 16), extent = pick(0, 64);
            err = mm::type_resized(c.t, lb, extent, &out.t);
            out.r = ref::resized(c.r, lb, extent);
            break;
        }
        default:
            err = mm::type_dup(c.t, &out.t);
            out.r = c.r;
            break;
    }
    REQUIRE(err == MPI_SUCCESS);
    drop(c);  // the new type keeps its components alive
    return out;
}

}  // namespace

TEST_CASE("predefined types: sizes, extents and pair types with holes", "[datatype]") {
    CHECK(dt(MPI_INT)->size == 4);
    CHECK(dt(MPI_INT)->contiguous);
    Datatype* di = dt(MPI_DOUBLE_INT);
    CHECK(di->size == 12);
    CHECK(di->extent == 16);
    CHECK(di->true_extent == 12);
    CHECK_FALSE(di->contiguous);
    CHECK(di->elements == 2);
    Datatype* si = dt(MPI_SHORT_INT);
    CHECK(si->size == 6);
    CHECK(si->extent == 8);
    CHECK(dt(MPI_2INT)->contiguous);
    CHECK(dt(MPI_LONG_DOUBLE_INT)->size == 20);
    CHECK(dt(MPI_LONG_DOUBLE_INT)->extent == 32);
    // Pack of a SHORT_INT pair skips the two padding bytes.
    struct {
        short v;
        int i;
    } p[2] = {{1, 2}, {3, 4}};
    unsigned char out[12];
    mm::pack(p, 2, *si, 0, out, 12);
    short v;
    int i;
    memcpy(&v, out + 6, 2);
    memcpy(&i, out + 8, 4);
    CHECK(v == 3);
    CHECK(i == 4);
}

TEST_CASE("bounds follow MPI 3.1: epsilon padding, markers, negative strides", "[datatype]") {
    Datatype *t, *ints[2] = {dt(MPI_INT), dt(MPI_DOUBLE)};
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    REQUIRE(mm::type_struct(2, bl, d, ints, &t) == MPI_SUCCESS);
    CHECK(t->extent == 16);
    mm::type_free(t);
    Datatype* dc[2] = {dt(MPI_DOUBLE), dt(MPI_CHAR)};
    REQUIRE(mm::type_struct(2, bl, d, dc, &t) == MPI_SUCCESS);
    CHECK(t->size == 9);
    CHECK(t->extent == 16);  // padded to the double's alignment
    CHECK(t->true_extent == 9);
    mm::type_free(t);
    REQUIRE(mm::type_vector(2, 1, 2, dt(MPI_INT), &t) == MPI_SUCCESS);
    CHECK(t->extent == 12);
    mm::type_free(t);
    REQUIRE(mm::type_vector(3, 1, -2, dt(MPI_INT), &t) == MPI_SUCCESS);
    CHECK(t->lb == -16);
    CHECK(t->extent == 20);
    Datatype* r;
    REQUIRE(mm::type_resized(t, -4, 40, &r) == MPI_SUCCESS);
    CHECK(r->lb == -4);
    CHECK(r->extent == 40);
    CHECK(r->true_lb == -16);
    Datatype* c;  // markers are sticky: copies at 40-byte steps
    REQUIRE(mm::type_contiguous(2, r, &c) == MPI_SUCCESS);
    CHECK(c->lb == -4);
    CHECK(c->extent == 80);
    mm::type_free(c);
    mm::type_free(r);
    mm::type_free(t);
}

TEST_CASE("contiguity is detected for contiguous layouts only", "[datatype]") {
    Datatype* t;
    REQUIRE(mm::type_contiguous(10, dt(MPI_INT), &t) == MPI_SUCCESS);
    CHECK(t->contiguous);
    mm::type_free(t);
    REQUIRE(mm::type_vector(4, 2, 2, dt(MPI_INT), &t) == MPI_SUCCESS);
    CHECK(t->contiguous);
    mm::type_free(t);
    int bl[2] = {2, 3}, d[2] = {0, 2};
    REQUIRE(mm::type_indexed(2, bl, d, dt(MPI_INT), &t) == MPI_SUCCESS);
    CHECK(t->contiguous);
    mm::type_free(t);
    REQUIRE(mm::type_hvector(4, 1, 8, dt(MPI_INT), &t) == MPI_SUCCESS);
    CHECK_FALSE(t->contiguous);
    mm::type_free(t);
    REQUIRE(mm::type_resized(dt(MPI_INT), 0, 8, &t) == MPI_SUCCESS);
    CHECK_FALSE(t->contiguous);
    mm::type_free(t);
    int rev[2] = {2, 0}, one[2] = {2, 2};  // in memory order reversed: not contiguous
    REQUIRE(mm::type_indexed(2, one, rev, dt(MPI_INT), &t) == MPI_SUCCESS);
    CHECK_FALSE(t->contiguous);
    mm::type_free(t);
}

TEST_CASE("reduction basics of homogeneous types", "[datatype]") {
    Datatype *v, *s, *p;
    REQUIRE(mm::type_vector(3, 2, 5, dt(MPI_DOUBLE), &v) == MPI_SUCCESS);
    CHECK(v->basic == MPI_DOUBLE);
    CHECK(v->basic_count == 6);
    CHECK(v->category == mm::TypeCategory::Derived);
    Datatype* ts[2] = {dt(MPI_INT), dt(MPI_DOUBLE)};
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    REQUIRE(mm::type_struct(2, bl, d, ts, &s) == MPI_SUCCESS);
    CHECK(s->basic == MPI_DATATYPE_NULL);
    REQUIRE(mm::type_contiguous(3, dt(MPI_DOUBLE_INT), &p) == MPI_SUCCESS);
    CHECK(p->basic == MPI_DOUBLE_INT);
    CHECK(p->basic_count == 3);
    CHECK(p->elements == 6);
    for (Datatype* t : {v, s, p}) mm::type_free(t);
}

TEST_CASE("large regular types stay compact", "[datatype]") {
    Datatype *v, *nest, *idx;
    REQUIRE(mm::type_vector(1000000, 1, 2, dt(MPI_INT), &v) == MPI_SUCCESS);
    REQUIRE(v->shape.layout->kind == mm::Layout::Kind::Vector);
    CHECK(v->shape.layout->disp.empty());
    CHECK(v->shape.layout->blocks.empty());
    // A vector of such vectors: nothing multiplies.
    REQUIRE(mm::type_hvector(1000, 1, 1 << 30, v, &nest) == MPI_SUCCESS);
    CHECK(nest->size == 4000000000ull);
    CHECK(nest->shape.layout->depth == 2);
    // Pack a fragment in the middle of the big vector.
    std::vector<int> a(2000000);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int>(i);
    int out[3];
    mm::pack(a.data(), 1, *v, 4 * 500000, out, sizeof(out));
    CHECK(out[0] == 1000000);
    CHECK(out[2] == 1000004);
    // Irregular: one entry per block, nothing more.
    std::vector<int> bl(100000, 1), d(100000);
    for (int i = 0; i < 100000; ++i) d[static_cast<size_t>(i)] = i * 3 + (i % 7);
    REQUIRE(mm::type_indexed(100000, bl.data(), d.data(), dt(MPI_INT), &idx) == MPI_SUCCESS);
    REQUIRE(idx->shape.layout->kind == mm::Layout::Kind::Runs);
    CHECK(idx->shape.layout->disp.size() == 100000);
    CHECK(idx->shape.layout->start.empty());  // uniform runs: no prefix table
    mm::type_free(nest);
    mm::type_free(v);
    mm::type_free(idx);
}

TEST_CASE("random nested types match the reference type map", "[datatype]") {
    std::mt19937 rng(20240611);
    for (int iter = 0; iter < 400; ++iter) {
        INFO("iteration " << iter);
        Both b = random_type(rng, 3);
        check_bounds(b);
        for (size_t count : {size_t{1}, size_t{3}}) check_data(b, count, rng);
        Both other = random_type(rng, 2);
        check_copy(b, 2, other, 3);
        check_copy(other, 2, b, 2);
        drop(other);
        drop(b);
    }
}

TEST_CASE("struct with a partial element: Get_elements counts basic entries", "[datatype]") {
    // {double, int, double} received as two MPI_DOUBLE_INT: 3 elements.
    Datatype* di = dt(MPI_DOUBLE_INT);
    CHECK(mm::type_elements_in(*di, 20) == 3);
    CHECK(mm::type_elements_in(*di, 24) == 4);
    CHECK(mm::type_elements_in(*di, 22) == MPI_UNDEFINED);
    CHECK(mm::type_bytes_for_elements(*di, 3) == 20);
}

TEST_CASE("typed_copy between strided types of different shapes", "[datatype]") {
    // Column of a 64x8 double matrix -> column of a 64x5 one, and vector ->
    // resized contiguous, in whole and in pieces of the stride pattern.
    Both src{nullptr, ref::hvector(64, 1, 64, ref::basic(8, 8))};
    Both dst{nullptr, ref::hvector(64, 1, 40, ref::basic(8, 8))};
    Both res{nullptr, ref::resized(ref::basic(8, 8), 0, 24)};
    Both blk{nullptr, ref::hvector(32, 2, 48, ref::basic(8, 8))};
    REQUIRE(mm::type_vector(64, 1, 8, dt(MPI_DOUBLE), &src.t) == MPI_SUCCESS);
    REQUIRE(mm::type_vector(64, 1, 5, dt(MPI_DOUBLE), &dst.t) == MPI_SUCCESS);
    REQUIRE(mm::type_resized(dt(MPI_DOUBLE), 0, 24, &res.t) == MPI_SUCCESS);
    REQUIRE(mm::type_vector(32, 2, 6, dt(MPI_DOUBLE), &blk.t) == MPI_SUCCESS);
    check_copy(src, 1, dst, 1);
    check_copy(src, 2, dst, 3);
    check_copy(dst, 1, res, 64);
    check_copy(res, 64, src, 1);
    check_copy(blk, 2, src, 2);
    check_copy(src, 2, blk, 2);
    // Runs of equal length, but the destination's run pattern breaks first.
    Both half{nullptr, ref::hvector(32, 1, 40, ref::basic(8, 8))}, two;
    REQUIRE(mm::type_vector(32, 1, 5, dt(MPI_DOUBLE), &half.t) == MPI_SUCCESS);
    REQUIRE(mm::type_contiguous(2, half.t, &two.t) == MPI_SUCCESS);
    two.r = ref::contiguous(2, half.r);
    check_copy(src, 1, two, 1);
    check_copy(two, 1, src, 1);
    drop(half);
    drop(two);
    std::mt19937 rng(7);
    check_data(blk, 2, rng);
    check_data(res, 100, rng);
    for (Both* b : {&src, &dst, &res, &blk}) drop(*b);
}

namespace {

// The standard's definition of one darray dimension over `cur` (extent unit):
// the local indices, grouped into runs of consecutive ones, as an hindexed
// type resized to the whole dimension.
ref::Type ref_darray_dim(const ref::Type& cur, int g, int p, int coord, int b) {
    const MPI_Aint unit = cur.extent();
    std::vector<size_t> bls;
    std::vector<MPI_Aint> disps;
    for (int x = 0; x < g; ++x) {
        if ((x / b) % p != coord) continue;
        if (!bls.empty() && disps.back() + static_cast<MPI_Aint>(bls.back()) * unit == x * unit)
            ++bls.back();
        else
            bls.push_back(1), disps.push_back(x * unit);
    }
    return ref::resized(ref::hindexed(bls, disps, cur), 0, g * unit);
}

}  // namespace

TEST_CASE("subarray and darray of non-contiguous element types", "[datatype]") {
    std::mt19937 rng(99);
    Both elem{nullptr, ref::resized(ref::double_int(), -4, 24)};
    REQUIRE(mm::type_resized(dt(MPI_DOUBLE_INT), -4, 24, &elem.t) == MPI_SUCCESS);
    // Subarray {3, 4} of {5, 6} at {1, 2}, C order: rows of 4 elements.
    const int sizes[2] = {5, 6}, sub[2] = {3, 4}, starts[2] = {1, 2};
    Both sa;
    REQUIRE(mm::type_subarray(2, sizes, sub, starts, MPI_ORDER_C, elem.t, &sa.t) == MPI_SUCCESS);
    std::vector<size_t> bls(3, 4);
    std::vector<MPI_Aint> disps;
    for (int i = 1; i < 4; ++i) disps.push_back((i * 6 + 2) * 24);
    sa.r = ref::resized(ref::hindexed(bls, disps, elem.r), 0, 30 * 24);
    check_bounds(sa);
    check_data(sa, 2, rng);
    // Darray 2x3 grid over {7, 8}, cyclic(2) x block, Fortran order, every rank.
    const int gs[2] = {7, 8}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
    const int dargs[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 3};
    for (int rank = 0; rank < 6; ++rank) {
        Both da;
        REQUIRE(mm::type_darray(6, rank, 2, gs, dist, dargs, ps, MPI_ORDER_FORTRAN, elem.t,
                                &da.t) == MPI_SUCCESS);
        ref::Type d0 = ref_darray_dim(elem.r, 7, 2, rank / 3, 2);
        da.r = ref_darray_dim(d0, 8, 3, rank % 3, 3);
        INFO("darray rank " << rank);
        check_bounds(da);
        check_data(da, 2, rng);
        check_copy(da, 1, sa, 1);
        drop(da);
    }
    drop(sa);
    drop(elem);
}
