// The maps of mpi_api/io: a view's stream to file offsets (Runs, View's
// file_offset and stream_before), the pieces of an access (PieceWalk) against
// the pack engine, and the Resumable the I/O operations are written with.
#include <catch2/catch.hpp>
#include <vector>

#include "../../../mpi_api/io/src/resumable.hpp"
#include "../../../mpi_api/io/src/walk.hpp"
#include "mpi_api/datatype.hpp"

namespace mm = mpc::mpi;
namespace io = mpc::io;

namespace {

mm::Datatype* dt(MPI_Datatype h) {
    mm::datatype_init_predefined();
    return mm::datatype_lookup(h);
}

// A view over filetype t at disp (what set_view builds, without a file).
void make_view(io::View& v, MPI_Offset disp, mm::Datatype* t) {
    v.disp = disp;
    v.file_etype = mm::datatype_retain(dt(MPI_BYTE));
    v.file_filetype = mm::datatype_retain(t);
    v.esize = 1;
    v.tsize = t->size;
    v.textent = t->extent;
    v.contiguous = t->contiguous;
    v.true_lb = t->true_lb;
}

// The 3-D subarray of the test: ints, sizes {4,5,6}, subsizes {2,3,4}, starts {1,1,1}.
mm::Datatype* subarray() {
    int sizes[3] = {4, 5, 6}, sub[3] = {2, 3, 4}, starts[3] = {1, 1, 1};
    mm::Datatype* t = nullptr;
    REQUIRE(mm::type_subarray(3, sizes, sub, starts, MPI_ORDER_C, dt(MPI_INT), &t) == MPI_SUCCESS);
    return t;
}

}  // namespace

TEST_CASE("a subarray view's runs are its rows, instance after instance") {
    mm::Datatype* t = subarray();
    io::View v;
    make_view(v, 100, t);
    REQUIRE(v.tsize == 2 * 3 * 4 * 4);
    REQUIRE(v.textent == 4 * 5 * 6 * 4);
    io::Runs runs = io::file_runs(v, 0, 2 * v.tsize);
    int rows = 0;
    for (int k = 0; k < 2; ++k)
        for (int z = 0; z < 2; ++z)
            for (int y = 0; y < 3; ++y, ++rows) {
                REQUIRE(runs.avail() == 16);
                CHECK(runs.at() ==
                      static_cast<uintptr_t>(100 + k * 480 + ((z + 1) * 30 + (y + 1) * 6 + 1) * 4));
                runs.consume(16);
            }
    CHECK(runs.avail() == 0);
    // From the middle of a row, and a range that ends inside one.
    io::Runs mid = io::file_runs(v, 20, 30);
    CHECK(mid.at() == 100 + (30 + 12 + 1) * 4 + 4);
    CHECK(mid.avail() == 12);
    mid.consume(12);
    CHECK(mid.avail() == 16);
    mid.consume(16);
    CHECK(mid.avail() == 2);
    mm::type_free(t);
}

TEST_CASE("stream_before inverts file_offset, and lands holes on the next data byte") {
    mm::Datatype* t = subarray();
    io::View v;
    make_view(v, 7, t);
    for (uint64_t s = 0; s < 3 * v.tsize; s += 5) CHECK(v.stream_before(v.file_offset(s)) == s);
    // The first byte of the view's data, and a hole between two rows.
    CHECK(v.stream_before(0) == 0);
    const uint64_t row_end = v.file_offset(15) + 1;
    CHECK(v.stream_before(row_end) == 16);
    CHECK(v.stream_before(row_end + 3) == 16);
    mm::type_free(t);
}

TEST_CASE("pieces cut at both sides' runs and at the limit, and carry the packed stream") {
    mm::Datatype* ft = subarray();
    mm::Datatype* mt = nullptr;  // memory: every other pair of ints
    REQUIRE(mm::type_vector(24, 2, 4, dt(MPI_INT), &mt) == MPI_SUCCESS);
    io::View v;
    make_view(v, 0, ft);
    std::vector<int> mem(24 * 4);
    for (size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<int>(i);
    std::vector<int> packed(48);
    mm::pack(mem.data(), 1, *mt, 0, packed.data(), 48 * 4);
    const io::Memory m{reinterpret_cast<uintptr_t>(mem.data()), 1, mt};
    const uint64_t limit = v.file_offset(100) + 1;  // inside a row of instance 1
    io::PieceWalk w(v, 0, m, 0, 48 * 4);
    io::Piece p;
    uint64_t at = 0, last_end = 0;
    while (w.next(&p, limit)) {
        CHECK(p.len <= 8);  // memory runs are pairs of ints
        CHECK(p.off + p.len <= limit);
        CHECK(p.off >= last_end);
        CHECK(p.off == v.file_offset(at));
        CHECK(memcmp(reinterpret_cast<const void*>(p.mem),
                     reinterpret_cast<char*>(packed.data()) + at, p.len) == 0);
        last_end = p.off + p.len;
        at += p.len;
    }
    CHECK(at == 101);
    CHECK(w.stream() == 101);
    mm::type_free(mt);
    mm::type_free(ft);
}

namespace {

io::Resumable count_to(int* shared, int target, int* steps) {
    while (*shared < target) {
        ++*steps;
        MPC_AWAIT(*shared % 2 == 0);
        ++*shared;
    }
}

}  // namespace

TEST_CASE("a Resumable runs to its next unmet wait at every resume") {
    int shared = 0, steps = 0;
    io::Resumable r = count_to(&shared, 4, &steps);
    CHECK(steps == 0);  // nothing runs before the first resume
    CHECK_FALSE(r.resume());
    CHECK(shared == 1);  // waits: 1 is odd
    CHECK_FALSE(r.resume());
    CHECK(shared == 1);
    shared = 2;
    CHECK_FALSE(r.resume());
    CHECK(shared == 3);
    shared = 4;
    CHECK(r.resume());
    CHECK(r.done());
}
