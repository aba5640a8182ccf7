// Topologies: MPI_Dims_create's balanced factorization and the Cartesian
// grid arithmetic (coordinates, ranks, shifts, neighbor order and tags).
#include <catch2/catch.hpp>
#include <vector>

#include "mpi_api/errors.hpp"
#include "mpi_api/topology.hpp"

using namespace mpc::mpi;

namespace {

std::vector<int> dims(int nnodes, std::vector<int> in) {
    REQUIRE(dims_create(nnodes, static_cast<int>(in.size()), in.data()) == MPI_SUCCESS);
    return in;
}

int dims_error(int nnodes, std::vector<int> in) {
    return error_class_of(dims_create(nnodes, static_cast<int>(in.size()), in.data()));
}

Topology grid(std::vector<int> d, std::vector<int> p) {
    Topology t;
    t.kind = MPI_CART;
    t.dims = std::move(d);
    t.periods = std::move(p);
    return t;
}

}  // namespace

TEST_CASE("Dims_create: the standard's examples", "[topology]") {
    CHECK(dims(6, {0, 0}) == std::vector<int>{3, 2});
    CHECK(dims(7, {0, 0}) == std::vector<int>{7, 1});
    CHECK(dims(6, {0, 3, 0}) == std::vector<int>{2, 3, 1});
    CHECK(dims_error(7, {0, 3, 0}) == MPI_ERR_DIMS);
}

TEST_CASE("Dims_create: balanced and non-increasing", "[topology]") {
    CHECK(dims(64, {0, 0, 0}) == std::vector<int>{4, 4, 4});
    CHECK(dims(16, {0, 0, 0}) == std::vector<int>{4, 2, 2});
    CHECK(dims(12, {0, 0}) == std::vector<int>{4, 3});
    CHECK(dims(60, {0, 0, 0}) == std::vector<int>{5, 4, 3});
    CHECK(dims(36, {0, 0, 0}) == std::vector<int>{4, 3, 3});
    CHECK(dims(1, {0, 0, 0}) == std::vector<int>{1, 1, 1});
    CHECK(dims(8, {0}) == std::vector<int>{8});
    CHECK(dims(24, {0, 0, 0, 0}) == std::vector<int>{3, 2, 2, 2});
    // Assigning prime factors greedily gives 12x10x6; 10x9x8 is the most balanced.
    CHECK(dims(720, {0, 0, 0}) == std::vector<int>{10, 9, 8});
    // A prime cannot be split: the rest of the dimensions are 1.
    CHECK(dims(13, {0, 0, 0}) == std::vector<int>{13, 1, 1});
    CHECK(dims(2147483647, {0, 0, 0}) == std::vector<int>{2147483647, 1, 1});
}

TEST_CASE("Dims_create: the choices Open MPI and MPICH make", "[topology]") {
    // Large node counts factor exactly, without overflow.
    CHECK(dims(1000000000, {0, 0, 0}) == std::vector<int>{1000, 1000, 1000});
    CHECK(dims(1073741824, {0, 0, 0, 0}) == std::vector<int>{256, 256, 128, 128});
    CHECK(dims(2000000000, {0, 0, 0}) == std::vector<int>{1280, 1250, 1250});
    // 10x6x6 and 9x8x5 are as balanced (a spread of 4): both libraries give
    // the greedy assignment of the prime factors, 10x6x6.
    CHECK(dims(360, {0, 0, 0}) == std::vector<int>{10, 6, 6});
    CHECK(dims(20, {0, 0, 0, 0}) == std::vector<int>{5, 2, 2, 1});
    // Where the greedy assignment is not the most balanced, the most balanced.
    CHECK(dims(72, {0, 0}) == std::vector<int>{9, 8});
    CHECK(dims(479001600, {0, 0, 0, 0}) == std::vector<int>{154, 150, 144, 144});
    // Several most balanced ones: the first in decreasing order.
    CHECK(dims(10800, {0, 0, 0}) == std::vector<int>{27, 20, 20});
    // The free dimensions get them in non-increasing order around fixed ones.
    CHECK(dims(360, {0, 3, 0, 0}) == std::vector<int>{6, 3, 5, 4});
}

TEST_CASE("Dims_create: fixed entries are kept and respected", "[topology]") {
    CHECK(dims(24, {0, 2, 0}) == std::vector<int>{4, 2, 3});
    CHECK(dims(8, {2, 2, 2}) == std::vector<int>{2, 2, 2});
    CHECK(dims_error(8, {2, 2, 3}) == MPI_ERR_DIMS);
    CHECK(dims_error(9, {2, 0}) == MPI_ERR_DIMS);
    CHECK(dims_error(8, {-1, 0}) == MPI_ERR_DIMS);
    CHECK(dims_error(0, {0, 0}) == MPI_ERR_ARG);
    int none = 0;
    CHECK(error_class_of(dims_create(4, -1, &none)) == MPI_ERR_DIMS);
    CHECK(dims_create(1, 0, &none) == MPI_SUCCESS);
}

TEST_CASE("Cartesian coordinates are row-major and round-trip", "[topology]") {
    Topology t = grid({2, 3, 4}, {0, 0, 0});
    int c[3];
    t.cart_coords(0, c);
    CHECK((c[0] == 0 && c[1] == 0 && c[2] == 0));
    t.cart_coords(23, c);
    CHECK((c[0] == 1 && c[1] == 2 && c[2] == 3));
    t.cart_coords(5, c);  // 0*12 + 1*4 + 1
    CHECK((c[0] == 0 && c[1] == 1 && c[2] == 1));
    for (int r = 0; r < 24; ++r) {
        t.cart_coords(r, c);
        CHECK(t.cart_rank(c) == r);
    }
}

TEST_CASE("Cartesian shifts wrap on periodic dimensions only", "[topology]") {
    Topology t = grid({3, 4}, {1, 0});
    int src, dst;
    t.cart_shift(0, 0, 1, &src, &dst);  // (0,0): periodic rows
    CHECK(src == 8);
    CHECK(dst == 4);
    t.cart_shift(0, 1, 1, &src, &dst);  // non-periodic columns
    CHECK(src == MPI_PROC_NULL);
    CHECK(dst == 1);
    t.cart_shift(3, 1, 1, &src, &dst);  // (0,3)
    CHECK(src == 2);
    CHECK(dst == MPI_PROC_NULL);
    t.cart_shift(4, 0, -4, &src, &dst);  // (1,0) shifted by -4 = -1 mod 3
    CHECK(src == 8);
    CHECK(dst == 0);
    t.cart_shift(5, 1, 2, &src, &dst);  // (1,1)
    CHECK(src == MPI_PROC_NULL);
    CHECK(dst == 7);
}

TEST_CASE("Cartesian neighbor lists pair directions through tag offsets", "[topology]") {
    Comm c;
    c.rank = 0;
    c.size = 2;
    c.topology = std::make_shared<Topology>(grid({2, 1}, {1, 0}));
    NeighborList n = topo_neighbors(c);
    CHECK(n.in == std::vector<int>{1, 1, MPI_PROC_NULL, MPI_PROC_NULL});
    CHECK(n.out == n.in);
    CHECK(n.tags == 4);
    // The block sent towards +d (offset 2d+1) is the one received "from -d".
    CHECK(n.out_tag == std::vector<int>{0, 1, 2, 3});
    CHECK(n.in_tag == std::vector<int>{1, 0, 3, 2});
}
