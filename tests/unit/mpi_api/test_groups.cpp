// Groups: set operations, rank lists, ranges, translation and comparison on
// group data (mpi_api/group.hpp), with the error classes of bad arguments.
#include <catch2/catch.hpp>
#include <vector>

#include "mpi_api/errors.hpp"
#include "mpi_api/group.hpp"

using namespace mpc::mpi;

namespace {

GroupRef of(std::vector<int> world_ranks) {
    return GroupData::make(std::move(world_ranks));
}

std::vector<int> members(const GroupRef& g) {
    std::vector<int> w;
    for (int r = 0; r < g->size; ++r) w.push_back(g->world_rank(r));
    return w;
}

int cls(int code) {
    return error_class_of(code);
}

}  // namespace

TEST_CASE("union keeps the first group's order, then the second's new members", "[groups]") {
    GroupRef a = of({5, 1, 3}), b = of({3, 7, 5, 0});
    CHECK(members(group_union(*a, *b)) == std::vector<int>{5, 1, 3, 7, 0});
    CHECK(members(group_union(*b, *a)) == std::vector<int>{3, 7, 5, 0, 1});
    CHECK(group_union(*of({}), *of({}))->size == 0);
}

TEST_CASE("intersection and difference follow the first group's order", "[groups]") {
    GroupRef a = of({5, 1, 3, 9}), b = of({9, 3, 2});
    CHECK(members(group_intersection(*a, *b)) == std::vector<int>{3, 9});
    CHECK(members(group_intersection(*b, *a)) == std::vector<int>{9, 3});
    CHECK(members(group_difference(*a, *b)) == std::vector<int>{5, 1});
    CHECK(members(group_difference(*b, *a)) == std::vector<int>{2});
    CHECK(group_difference(*a, *a)->size == 0);
    CHECK(group_intersection(*a, *of({4, 6}))->size == 0);
}

TEST_CASE("set operations work on identity (world-like) groups", "[groups]") {
    GroupRef world = GroupData::make_identity(6), self3 = GroupData::make_identity(1, 3);
    CHECK(members(group_difference(*world, *self3)) == std::vector<int>{0, 1, 2, 4, 5});
    CHECK(members(group_intersection(*world, *of({4, 9, 0}))) == std::vector<int>{0, 4});
    GroupRef u = group_union(*of({2, 3}), *of({4, 5}));
    CHECK(u->identity);  // consecutive results are stored compactly
    CHECK(members(u) == std::vector<int>{2, 3, 4, 5});
}

TEST_CASE("compare: identical, similar, unequal", "[groups]") {
    CHECK(group_compare(*of({1, 2, 3}), *of({1, 2, 3})) == MPI_IDENT);
    CHECK(group_compare(*GroupData::make_identity(3), *of({0, 1, 2})) == MPI_IDENT);
    CHECK(group_compare(*of({1, 2, 3}), *of({3, 1, 2})) == MPI_SIMILAR);
    CHECK(group_compare(*of({1, 2, 3}), *of({1, 2, 4})) == MPI_UNEQUAL);
    CHECK(group_compare(*of({1, 2}), *of({1, 2, 3})) == MPI_UNEQUAL);
}

TEST_CASE("translate ranks, with PROC_NULL and members missing from the target", "[groups]") {
    GroupRef a = of({4, 8, 2, 6}), b = of({6, 4, 7});
    const int in[] = {0, 1, 3, MPI_PROC_NULL};
    int out[4];
    REQUIRE(group_translate(*a, 4, in, *b, out) == MPI_SUCCESS);
    CHECK(out[0] == 1);
    CHECK(out[1] == MPI_UNDEFINED);
    CHECK(out[2] == 0);
    CHECK(out[3] == MPI_PROC_NULL);
    const int bad[] = {4};
    CHECK(cls(group_translate(*a, 1, bad, *b, out)) == MPI_ERR_RANK);
    CHECK(cls(group_translate(*a, -1, bad, *b, out)) == MPI_ERR_ARG);
}

TEST_CASE("incl and excl select and order ranks", "[groups]") {
    GroupRef g = of({10, 11, 12, 13, 14});
    GroupRef out;
    const int pick[] = {3, 0, 4};
    REQUIRE(group_incl(*g, 3, pick, &out) == MPI_SUCCESS);
    CHECK(members(out) == std::vector<int>{13, 10, 14});
    REQUIRE(group_excl(*g, 3, pick, &out) == MPI_SUCCESS);
    CHECK(members(out) == std::vector<int>{11, 12});
    REQUIRE(group_incl(*g, 0, nullptr, &out) == MPI_SUCCESS);
    CHECK(out->size == 0);
    REQUIRE(group_excl(*g, 0, nullptr, &out) == MPI_SUCCESS);
    CHECK(out->size == 5);
}

TEST_CASE("incl and excl reject bad rank lists", "[groups]") {
    GroupRef g = of({10, 11, 12});
    GroupRef out;
    const int dup[] = {1, 1}, outside[] = {0, 3}, negative[] = {-1};
    CHECK(cls(group_incl(*g, 2, dup, &out)) == MPI_ERR_RANK);
    CHECK(cls(group_excl(*g, 2, dup, &out)) == MPI_ERR_RANK);
    CHECK(cls(group_incl(*g, 2, outside, &out)) == MPI_ERR_RANK);
    CHECK(cls(group_excl(*g, 1, negative, &out)) == MPI_ERR_RANK);
    CHECK(cls(group_incl(*g, -2, dup, &out)) == MPI_ERR_ARG);
}

TEST_CASE("range incl and excl expand triplets in order", "[groups]") {
    GroupRef g = GroupData::make_identity(10, 100);  // world ranks 100..109
    GroupRef out;
    const int ranges[][3] = {{1, 7, 3}, {9, 8, -1}, {0, 0, 5}};  // 1 4 7, 9 8, 0
    REQUIRE(group_range_incl(*g, 3, ranges, &out) == MPI_SUCCESS);
    CHECK(members(out) == std::vector<int>{101, 104, 107, 109, 108, 100});
    REQUIRE(group_range_excl(*g, 3, ranges, &out) == MPI_SUCCESS);
    CHECK(members(out) == std::vector<int>{102, 103, 105, 106});
    const int partial[][3] = {{2, 6, 3}};  // 2 5: the last rank need not be reached
    REQUIRE(group_range_incl(*g, 1, partial, &out) == MPI_SUCCESS);
    CHECK(members(out) == std::vector<int>{102, 105});
}

TEST_CASE("range incl and excl reject invalid ranges", "[groups]") {
    GroupRef g = GroupData::make_identity(8);
    GroupRef out;
    const int zero_stride[][3] = {{0, 4, 0}};
    const int wrong_way[][3] = {{5, 1, 2}};
    const int wrong_way_neg[][3] = {{1, 5, -1}};
    const int overlap[][3] = {{0, 6, 2}, {4, 5, 1}};
    const int outside[][3] = {{0, 8, 1}};
    const int negative_first[][3] = {{-1, 3, 1}};
    CHECK(cls(group_range_incl(*g, 1, zero_stride, &out)) == MPI_ERR_ARG);
    CHECK(cls(group_range_excl(*g, 1, wrong_way, &out)) == MPI_ERR_ARG);
    CHECK(cls(group_range_incl(*g, 1, wrong_way_neg, &out)) == MPI_ERR_ARG);
    CHECK(cls(group_range_incl(*g, 2, overlap, &out)) == MPI_ERR_ARG);
    CHECK(cls(group_range_excl(*g, 1, outside, &out)) == MPI_ERR_RANK);
    CHECK(cls(group_range_incl(*g, 1, negative_first, &out)) == MPI_ERR_RANK);
    CHECK(cls(group_range_incl(*g, -1, zero_stride, &out)) == MPI_ERR_ARG);
}

TEST_CASE("group_from_world_ranks is compact only for consecutive ranks", "[groups]") {
    CHECK(group_from_world_ranks({3, 4, 5})->identity);
    CHECK(group_from_world_ranks({3, 4, 5})->world_rank(2) == 5);
    CHECK_FALSE(group_from_world_ranks({3, 5, 4})->identity);
    CHECK(group_from_world_ranks({})->size == 0);
    CHECK(group_from_world_ranks({7})->rank_of(7) == 0);
    CHECK(group_from_world_ranks({7})->rank_of(6) == MPI_UNDEFINED);
}
