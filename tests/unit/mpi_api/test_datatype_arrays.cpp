// Subarray and darray types against hand-computed index sets, "external32"
// conversion, reference counting of freed components, envelope/contents
// records, and argument errors of the datatype constructors.
#include <catch2/catch.hpp>
#include <complex>
#include <cstring>
#include <vector>

#include "mpi_api/datatype.hpp"
#include "mpi_api/errors.hpp"

using mpc::mpi::Datatype;
namespace mm = mpc::mpi;

namespace {

Datatype* dt(MPI_Datatype h) {
    mm::datatype_init_predefined();
    Datatype* t = mm::datatype_lookup(h);
    REQUIRE(t);
    return t;
}

// The ints packed by one element of t over an array where a[x] == x.
std::vector<int> packed_indices(const Datatype* t, size_t array_len) {
    std::vector<int> a(array_len);
    for (size_t i = 0; i < array_len; ++i) a[i] = static_cast<int>(i);
    std::vector<int> out(t->size / sizeof(int));
    mm::pack(a.data(), 1, *t, 0, out.data(), t->size);
    return out;
}

// Local indices of one dimension of a darray, in increasing order.
std::vector<int> local_dim(int g, int p, int c, int distrib, int darg) {
    std::vector<int> v;
    int b = distrib == MPI_DISTRIBUTE_BLOCK
                ? (darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg)
                : (distrib == MPI_DISTRIBUTE_CYCLIC ? (darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg)
                                                    : g);
    for (int x = 0; x < g; ++x)
        if ((x / b) % p == c) v.push_back(x);
    return v;
}

int cls(int code) {
    return mm::error_class_of(code);
}

}  // namespace

TEST_CASE("subarray in C and Fortran order", "[datatype]") {
    const int sizes[3] = {4, 5, 6}, sub[3] = {2, 3, 2}, starts[3] = {1, 1, 3};
    Datatype* t;
    REQUIRE(mm::type_subarray(3, sizes, sub, starts, MPI_ORDER_C, dt(MPI_INT), &t) == MPI_SUCCESS);
    std::vector<int> want;
    for (int i = 1; i < 3; ++i)
        for (int j = 1; j < 4; ++j)
            for (int k = 3; k < 5; ++k) want.push_back((i * 5 + j) * 6 + k);
    CHECK(packed_indices(t, 120) == want);
    CHECK(t->lb == 0);
    CHECK(t->extent == 120 * 4);
    CHECK(t->elements == 12);
    mm::type_free(t);
    REQUIRE(mm::type_subarray(3, sizes, sub, starts, MPI_ORDER_FORTRAN, dt(MPI_INT), &t) ==
            MPI_SUCCESS);
    want.clear();
    for (int k = 3; k < 5; ++k)
        for (int j = 1; j < 4; ++j)
            for (int i = 1; i < 3; ++i) want.push_back(i + 4 * (j + 5 * k));
    CHECK(packed_indices(t, 120) == want);
    mm::type_free(t);
}

TEST_CASE("darray block, cyclic and none distributions", "[datatype]") {
    struct Case {
        int gsizes[2], distribs[2], dargs[2], psizes[2], order;
    };
    const int dflt = MPI_DISTRIBUTE_DFLT_DARG;
    const Case cases[] = {
        {{10, 7}, {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK}, {dflt, dflt}, {3, 2}, MPI_ORDER_C},
        {{10, 7}, {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC}, {dflt, 2}, {3, 2}, MPI_ORDER_C},
        {{9, 8}, {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK}, {2, 3}, {2, 3}, MPI_ORDER_FORTRAN},
        {{6, 5},
         {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC},
         {dflt, 3},
         {1, 2},
         MPI_ORDER_FORTRAN},
    };
    for (const Case& c : cases) {
        const int size = c.psizes[0] * c.psizes[1];
        for (int rank = 0; rank < size; ++rank) {
            INFO("rank " << rank << " of " << size);
            Datatype* t;
            REQUIRE(mm::type_darray(size, rank, 2, c.gsizes, c.distribs, c.dargs, c.psizes, c.order,
                                    dt(MPI_INT), &t) == MPI_SUCCESS);
            // Grid coordinates are row-major whatever the order.
            const int c0 = rank / c.psizes[1], c1 = rank % c.psizes[1];
            auto d0 = local_dim(c.gsizes[0], c.psizes[0], c0, c.distribs[0], c.dargs[0]);
            auto d1 = local_dim(c.gsizes[1], c.psizes[1], c1, c.distribs[1], c.dargs[1]);
            std::vector<int> want;
            if (c.order == MPI_ORDER_C) {
                for (int i : d0)
                    for (int j : d1) want.push_back(i * c.gsizes[1] + j);
            } else {
                for (int j : d1)
                    for (int i : d0) want.push_back(i + c.gsizes[0] * j);
            }
            CHECK(packed_indices(t, static_cast<size_t>(c.gsizes[0] * c.gsizes[1])) == want);
            CHECK(t->lb == 0);
            CHECK(t->extent == c.gsizes[0] * c.gsizes[1] * 4);
            mm::type_free(t);
        }
    }
}

TEST_CASE("external32 is big-endian with the standard's sizes", "[datatype]") {
    unsigned char out[64];
    int i = 0x01020304;
    REQUIRE(mm::pack_external32(&i, 1, *dt(MPI_INT), out) == MPI_SUCCESS);
    CHECK((out[0] == 1 && out[1] == 2 && out[2] == 3 && out[3] == 4));
    CHECK(dt(MPI_LONG)->external_size == 4);
    CHECK(dt(MPI_WCHAR)->external_size == 2);
    CHECK(dt(MPI_LONG_DOUBLE)->external_size == 16);
    CHECK(dt(MPI_DOUBLE_INT)->external_size == 12);
    long l[2] = {-2, 70000};
    REQUIRE(mm::pack_external32(l, 2, *dt(MPI_LONG), out) == MPI_SUCCESS);
    const unsigned char lw[8] = {0xff, 0xff, 0xff, 0xfe, 0x00, 0x01, 0x11, 0x70};
    CHECK(memcmp(out, lw, 8) == 0);
    long back[2];
    REQUIRE(mm::unpack_external32(out, back, 2, *dt(MPI_LONG)) == MPI_SUCCESS);
    CHECK((back[0] == -2 && back[1] == 70000));
    long big = 1L << 40;
    CHECK(cls(mm::pack_external32(&big, 1, *dt(MPI_LONG), out)) == MPI_ERR_CONVERSION);
    double d = 1.0;
    REQUIRE(mm::pack_external32(&d, 1, *dt(MPI_DOUBLE), out) == MPI_SUCCESS);
    CHECK((out[0] == 0x3f && out[1] == 0xf0 && out[7] == 0));
    long double ld = 1.5L;
    REQUIRE(mm::pack_external32(&ld, 1, *dt(MPI_LONG_DOUBLE), out) == MPI_SUCCESS);
    CHECK((out[0] == 0x3f && out[1] == 0xff && out[2] == 0x80 && out[15] == 0));
    long double ld2 = 0;
    REQUIRE(mm::unpack_external32(out, &ld2, 1, *dt(MPI_LONG_DOUBLE)) == MPI_SUCCESS);
    CHECK(ld2 == 1.5L);
    std::complex<float> z(1.0f, -2.0f);
    REQUIRE(mm::pack_external32(&z, 1, *dt(MPI_C_FLOAT_COMPLEX), out) == MPI_SUCCESS);
    CHECK((out[0] == 0x3f && out[1] == 0x80 && out[4] == 0xc0 && out[5] == 0x00));
}

TEST_CASE("external32 round trip of a struct with holes", "[datatype]") {
    struct S {
        char c;
        long l;
        short s;
        double d;
    };
    Datatype* ts[4] = {dt(MPI_CHAR), dt(MPI_LONG), dt(MPI_SHORT), dt(MPI_DOUBLE)};
    int bl[4] = {1, 1, 1, 1};
    MPI_Aint disp[4] = {offsetof(S, c), offsetof(S, l), offsetof(S, s), offsetof(S, d)};
    Datatype* t;
    REQUIRE(mm::type_struct(4, bl, disp, ts, &t) == MPI_SUCCESS);
    CHECK(t->extent == sizeof(S));
    CHECK(t->external_size == 1 + 4 + 2 + 8);
    S in[3] = {{'a', -5, 7, 0.25}, {'b', 123456, -1, -3.5}, {'c', 0, 300, 1e10}};
    unsigned char ext[45];
    REQUIRE(mm::pack_external32(in, 3, *t, ext) == MPI_SUCCESS);
    // Element 1 starts at byte 15: 'b', then 123456 = 0x0001e240 big-endian.
    CHECK((ext[15] == 'b' && ext[16] == 0 && ext[17] == 1 && ext[18] == 0xe2 && ext[19] == 0x40));
    S out[3];
    memset(out, 0, sizeof(out));
    REQUIRE(mm::unpack_external32(ext, out, 3, *t) == MPI_SUCCESS);
    for (int k = 0; k < 3; ++k) {
        CHECK(out[k].c == in[k].c);
        CHECK(out[k].l == in[k].l);
        CHECK(out[k].s == in[k].s);
        CHECK(out[k].d == in[k].d);
    }
    mm::type_free(t);
}

TEST_CASE("freed components stay alive inside derived types", "[datatype]") {
    Datatype *col, *grid;
    REQUIRE(mm::type_vector(4, 1, 4, dt(MPI_INT), &col) == MPI_SUCCESS);
    const int col_handle = col->handle;
    REQUIRE(mm::type_contiguous(2, col, &grid) == MPI_SUCCESS);
    REQUIRE(mm::type_free(col) == MPI_SUCCESS);
    CHECK(mm::datatype_lookup(col_handle) == nullptr);
    CHECK(mm::error_class_of(mm::type_free(col)) == MPI_ERR_TYPE);  // already freed
    // The freed vector still serves as a component, and get_contents returns a
    // fresh handle with the same envelope.
    CHECK(grid->combiner == MPI_COMBINER_CONTIGUOUS);
    CHECK(grid->ints == std::vector<int>{2});
    Datatype* copy = mm::type_contents_copy(grid->children[0]);
    CHECK(copy != grid->children[0]);
    CHECK(copy->combiner == MPI_COMBINER_VECTOR);
    CHECK(copy->ints == (std::vector<int>{4, 1, 4}));
    CHECK(copy->size == 16);
    int a[32];
    for (int i = 0; i < 32; ++i) a[i] = i;
    int out[8];
    mm::pack(a, 1, *grid, 0, out, sizeof(out));
    // Column copies are one extent (13 ints) apart.
    CHECK((out[0] == 0 && out[3] == 12 && out[4] == 13 && out[7] == 25));
    mm::type_free(copy);
    // A pending operation holds a reference the same way.
    Datatype* held = mm::datatype_retain(grid);
    REQUIRE(mm::type_free(grid) == MPI_SUCCESS);
    mm::pack(a, 1, *held, 0, out, sizeof(out));
    CHECK(out[7] == 25);
    mm::datatype_release(held);
    CHECK(mm::type_contents_copy(dt(MPI_INT)) == dt(MPI_INT));
    CHECK(mm::error_class_of(mm::type_free(dt(MPI_INT))) == MPI_ERR_TYPE);
}

TEST_CASE("constructor argument errors", "[datatype]") {
    Datatype* t = nullptr;
    CHECK(cls(mm::type_contiguous(-1, dt(MPI_INT), &t)) == MPI_ERR_COUNT);
    CHECK(cls(mm::type_vector(2, -1, 1, dt(MPI_INT), &t)) == MPI_ERR_ARG);
    CHECK(cls(mm::type_vector(-3, 1, 1, dt(MPI_INT), &t)) == MPI_ERR_COUNT);
    int bl[2] = {1, -1}, d[2] = {0, 1};
    CHECK(cls(mm::type_indexed(2, bl, d, dt(MPI_INT), &t)) == MPI_ERR_ARG);
    CHECK(cls(mm::type_indexed(2, nullptr, d, dt(MPI_INT), &t)) == MPI_ERR_ARG);
    Datatype* ts[2] = {dt(MPI_INT), nullptr};
    int ok[2] = {1, 1};
    MPI_Aint ad[2] = {0, 4};
    CHECK(cls(mm::type_struct(2, ok, ad, ts, &t)) == MPI_ERR_TYPE);
    const int sizes[2] = {4, 4}, sub[2] = {2, 3}, bad_start[2] = {0, 2};
    CHECK(cls(mm::type_subarray(2, sizes, sub, bad_start, MPI_ORDER_C, dt(MPI_INT), &t)) ==
          MPI_ERR_ARG);
    CHECK(cls(mm::type_subarray(2, sizes, sub, sizes, 99, dt(MPI_INT), &t)) == MPI_ERR_ARG);
    const int g[1] = {10}, dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {2}, ps[1] = {2};
    CHECK(cls(mm::type_darray(2, 0, 1, g, dist, darg, ps, MPI_ORDER_C, dt(MPI_INT), &t)) ==
          MPI_ERR_ARG);  // 2 * 2 < 10
    CHECK(cls(mm::type_darray(3, 0, 1, g, dist, g, ps, MPI_ORDER_C, dt(MPI_INT), &t)) ==
          MPI_ERR_ARG);  // grid of 2 for size 3
    CHECK(t == nullptr);
}
