// The topology on a described machine (HWLOC_SYNTHETIC, set before the
// process's topology loads): 4 NUMA nodes of 2 cores, in 2 groups of 2, so
// that distance order is not just index order. Binding is impossible on a
// described machine: it must fail softly, and every core stays allowed.
#include <cstdlib>

#include <catch2/catch.hpp>

#include "runtime/topology.hpp"

using mpc::runtime::Topology;

namespace {
const bool g_described = [] {
    setenv("HWLOC_SYNTHETIC", "group:2 pack:2 numa:1 core:2 pu:1", 1);
    return true;
}();
}  // namespace

TEST_CASE("a described machine: cores and their NUMA nodes", "[topology]") {
    REQUIRE(g_described);
    const Topology& t = Topology::instance();
    REQUIRE_FALSE(t.is_this_system());
    REQUIRE(t.num_numa_nodes() == 4);
    REQUIRE(t.num_cores() == 8);
    for (int c = 0; c < 8; ++c) CHECK(t.numa_of_core(c) == c / 2);
}

TEST_CASE("NUMA nodes by distance: the same group before the other", "[topology]") {
    const Topology& t = Topology::instance();
    CHECK(t.numa_order_from(0) == std::vector<int>{0, 1, 2, 3});
    CHECK(t.numa_order_from(1) == std::vector<int>{1, 0, 2, 3});
    CHECK(t.numa_order_from(2) == std::vector<int>{2, 3, 0, 1});
    CHECK(t.numa_order_from(3) == std::vector<int>{3, 2, 0, 1});
}

TEST_CASE("binding on a described machine fails softly; every core is allowed", "[topology]") {
    const Topology& t = Topology::instance();
    CHECK_FALSE(t.bind_thread_to_core(3));
    CHECK_FALSE(t.bind_thread_to_core(3));  // (warned once)
    CHECK(t.allowed_cores() == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
}
