// The registry of control and performance variables (runtime/tools.hpp):
// stable indices, replacement in place, categories made on demand, per-rank
// and node-process shapes, gates, and registration while others read.
#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "runtime/tools.hpp"

namespace rt = mpc::runtime::tools;

namespace {

rt::Cvar int_cvar(const std::string& name, int value, const std::string& category) {
    rt::Cvar v;
    v.name = name;
    v.desc = "a test setting";
    v.category = category;
    v.read = rt::value_reader<int>([value](const rt::Subject&) { return value; });
    return v;
}

int read_int(int index) {
    int out = -1;
    rt::cvar(index)->read(rt::Subject{}, &out);
    return out;
}

}  // namespace

TEST_CASE("a variable keeps its index; registering its name again replaces it", "[tools]") {
    const int before = rt::num_cvars();
    const int stamp = rt::stamp();
    const int a = rt::add_cvar(int_cvar("TEST_A", 1, "test_room"));
    const int b = rt::add_cvar(int_cvar("TEST_B", 2, "test_room"));
    REQUIRE(a == before);
    REQUIRE(b == before + 1);
    REQUIRE(rt::stamp() != stamp);
    auto old = rt::cvar(a);
    const int stamp2 = rt::stamp();
    REQUIRE(rt::add_cvar(int_cvar("TEST_A", 10, "elsewhere")) == a);
    REQUIRE(rt::num_cvars() == before + 2);
    REQUIRE(rt::stamp() == stamp2);  // nothing was added
    REQUIRE(read_int(a) == 10);
    int out = -1;
    old->read(rt::Subject{}, &out);  // a reader holding the old entry keeps it
    REQUIRE(out == 1);
    REQUIRE(rt::cvar(a)->category == "test_room");  // listed once, where it was
    REQUIRE(rt::find_cvar("TEST_B") == b);
    REQUIRE(rt::find_cvar("TEST_NONE") == -1);
    REQUIRE(rt::cvar(-1) == nullptr);
    REQUIRE(rt::cvar(rt::num_cvars()) == nullptr);
}

TEST_CASE("categories are made when named and list their variables in order", "[tools]") {
    rt::add_category("test_parent", "a parent", rt::kRootCategory);
    rt::add_category("test_child", "a child", "test_parent");
    rt::add_category("test_child", "a child, described again", "test_parent");
    const int c1 = rt::add_cvar(int_cvar("TEST_C1", 0, "test_child"));
    const int c2 = rt::add_cvar(int_cvar("TEST_C2", 0, "test_child"));
    rt::Category cat;
    REQUIRE(rt::category(rt::find_category("test_child"), &cat));
    REQUIRE(cat.desc == "a child, described again");
    REQUIRE(cat.cvars == std::vector<int>{c1, c2});
    rt::Category parent;
    REQUIRE(rt::category(rt::find_category("test_parent"), &parent));
    REQUIRE(parent.categories == std::vector<int>{rt::find_category("test_child")});
    rt::Category root;
    REQUIRE(rt::category(0, &root));
    REQUIRE(root.name == rt::kRootCategory);
    REQUIRE_FALSE(rt::category(rt::num_categories(), &cat));
}

TEST_CASE("performance variable names are unique per class", "[tools]") {
    rt::Pvar p;
    p.name = "test_same_name";
    p.category = "test_room";
    p.var_class = rt::Class::Counter;
    p.read = [](const rt::Subject&, void* out) { *static_cast<unsigned long long*>(out) = 1; };
    const int counter = rt::add_pvar(p);
    p.var_class = rt::Class::Level;
    const int level = rt::add_pvar(p);
    REQUIRE(counter != level);
    REQUIRE(rt::find_pvar("test_same_name", rt::Class::Counter) == counter);
    REQUIRE(rt::find_pvar("test_same_name", rt::Class::Level) == level);
    REQUIRE(rt::find_pvar("test_same_name", rt::Class::Timer) == -1);
}

TEST_CASE("a per-rank value gives the rank's and the node process's total", "[tools]") {
    static std::atomic<uint64_t> values[3] = {{5}, {7}, {11}};
    rt::PerRank v;
    v.name = "test_per_rank";
    v.desc = "a test counter";
    v.category = "test_room";
    v.get = [](int local) { return values[local].load(); };
    v.ranks = [] { return 3; };
    rt::add_rank_and_node(v);
    auto rank = rt::pvar(rt::find_pvar("mpc_test_per_rank", rt::Class::Counter));
    auto node = rt::pvar(rt::find_pvar("mpc_node_test_per_rank", rt::Class::Counter));
    REQUIRE(rank);
    REQUIRE(node);
    REQUIRE(rank->atomic);
    REQUIRE_FALSE(rank->readonly);
    REQUIRE_FALSE(node->atomic);
    REQUIRE(node->verbosity == rt::Verbosity::UserDetail);
    unsigned long long out = 0;
    rank->read(rt::Subject{1, nullptr}, &out);
    REQUIRE(out == 7);
    rank->read(rt::Subject{-1, nullptr}, &out);  // no rank: nothing counted
    REQUIRE(out == 0);
    node->read(rt::Subject{0, nullptr}, &out);
    REQUIRE(out == 23);

    // Timers are kept in nanoseconds and read in seconds.
    v.name = "test_per_rank_time";
    v.var_class = rt::Class::Timer;
    rt::add_rank_and_node(v);
    auto timer = rt::pvar(rt::find_pvar("mpc_test_per_rank_time", rt::Class::Timer));
    REQUIRE(timer->type == rt::Type::Double);
    double seconds = 0;
    timer->read(rt::Subject{2, nullptr}, &seconds);
    REQUIRE(seconds == Approx(11e-9));
}

TEST_CASE("a gate is open while anyone holds it", "[tools]") {
    rt::Gate g;
    REQUIRE_FALSE(g.on());
    g.open();
    g.open();
    g.close();
    REQUIRE(g.on());
    g.close();
    REQUIRE_FALSE(g.on());
}

TEST_CASE("enumerations are kept once by name", "[tools]") {
    const rt::Enumeration* e = rt::add_enumeration({"test_enum", {{0, "off"}, {1, "on"}}});
    REQUIRE(rt::add_enumeration({"test_enum", {{5, "other"}}}) == e);
    REQUIRE(e->items.size() == 2);
    REQUIRE(rt::known_enumeration(e));
    rt::Enumeration stranger;
    REQUIRE_FALSE(rt::known_enumeration(&stranger));
}

TEST_CASE("threads register and read at the same time", "[tools]") {
    constexpr int kThreads = 4, kEach = 200;
    std::atomic<bool> stop{false};
    std::atomic<int> missing{0};  // (Catch2's assertions are for the test's thread)
    std::thread reader([&] {
        while (!stop.load()) {
            const int n = rt::num_cvars();
            for (int i = 0; i < n; i += 7)
                if (!rt::cvar(i)) ++missing;
            rt::Category c;
            if (!rt::category(0, &c)) ++missing;
        }
    });
    std::vector<std::thread> writers;
    for (int t = 0; t < kThreads; ++t)
        writers.emplace_back([t] {
            for (int i = 0; i < kEach; ++i)
                rt::add_cvar(int_cvar("TEST_T" + std::to_string(t) + "_" + std::to_string(i % 50),
                                      i, "test_threads"));
        });
    for (auto& w : writers) w.join();
    stop.store(true);
    reader.join();
    REQUIRE(missing.load() == 0);
    rt::Category c;
    REQUIRE(rt::category(rt::find_category("test_threads"), &c));
    REQUIRE(c.cvars.size() == kThreads * 50);  // re-registrations replaced, not added
}
