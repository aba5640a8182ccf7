// mpcrun's command line: accepted spellings, and clear errors for the rest.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "options.hpp"

using mpc::launcher::Options;
using mpc::launcher::parse_options;

namespace {

bool parse(std::vector<const char*> args, Options* o, std::string* error) {
    args.insert(args.begin(), "mpcrun");
    return parse_options(static_cast<int>(args.size()), args.data(), o, error);
}

std::string error_of(std::vector<const char*> args) {
    Options o;
    std::string error;
    CHECK_FALSE(parse(args, &o, &error));
    return error;
}

}  // namespace

TEST_CASE("ranks, node processes and the program", "[launcher][options]") {
    Options o;
    std::string error;
    REQUIRE(parse({"-n", "4", "-N", "2", "prog", "a", "-n", "9"}, &o, &error));
    CHECK(o.ranks == 4);
    CHECK(o.nodes == 2);
    CHECK(o.program == std::vector<std::string>{"prog", "a", "-n", "9"});
    for (auto spelling : {std::vector<const char*>{"-n=3", "p"},
                          {"-np", "3", "p"},
                          {"--np=3", "p"},
                          {"-np=3", "p"}}) {
        Options x;
        REQUIRE(parse(spelling, &x, &error));
        CHECK(x.ranks == 3);
        CHECK(x.nodes == 0);  // not given: JobPlan decides
        CHECK(x.per_node == 1);
    }
}

TEST_CASE("every other option", "[launcher][options]") {
    Options o;
    std::string error;
    CHECK_FALSE(o.shared_globals);
    REQUIRE(parse({"-n", "2", "--progress=thread", "--net", "ofi", "--stats", "--timeout", "2.5",
                   "-x", "A=1", "-x", "B", "-c", "2", "--shared-globals", "--", "-prog"},
                  &o, &error));
    CHECK(o.shared_globals);
    CHECK(o.progress == "thread");
    CHECK(o.net == "ofi");
    CHECK(o.stats);
    CHECK(o.timeout == 2.5);
    CHECK(o.env == std::vector<std::string>{"A=1", "B"});
    CHECK(o.cores == 2);
    CHECK(o.program == std::vector<std::string>{"-prog"});
}

TEST_CASE("placement: nodes, node processes per node, hosts, binding, mapping",
          "[launcher][options]") {
    Options o;
    std::string error;
    REQUIRE(parse({"-n", "8", "-N", "2", "-p", "2", "--hosts", "a,b", "-H=c", "--bind=none",
                   "--map", "cyclic", "p"},
                  &o, &error));
    CHECK(o.nodes == 2);
    CHECK(o.per_node == 2);
    CHECK(o.hosts == std::vector<std::string>{"a", "b", "c"});
    CHECK(o.bind == "none");
    CHECK(o.map == "cyclic");
    Options f;
    REQUIRE(parse({"-n", "2", "--hostfile", "nodes.txt", "--bind", "core", "--map=block", "p"}, &f,
                  &error));
    CHECK(f.hostfile == "nodes.txt");
    CHECK(f.bind == "core");
    CHECK(f.map == "block");
    Options many;  // -N is checked against the hosts later, not here
    REQUIRE(parse({"-n", "4", "-p", "4", "p"}, &many, &error));
    CHECK(many.per_node == 4);
}

TEST_CASE("thread-poll and thread-block choose the progress thread's wait", "[launcher][options]") {
    std::string error;
    for (auto [spelling, how] :
         {std::pair<const char*, const char*>{"thread-poll", "poll"}, {"thread-block", "block"}}) {
        Options o;
        REQUIRE(parse({"-n", "2", "--progress", spelling, "p"}, &o, &error));
        CHECK(o.progress == "thread");
        CHECK(o.progress_thread == how);
    }
    Options later;  // the last --progress wins, with or without a thread spelling
    REQUIRE(parse({"-n", "2", "--progress=thread-block", "--progress=wait", "p"}, &later, &error));
    CHECK(later.progress == "wait");
    CHECK(later.progress_thread.empty());
    Options plain;
    REQUIRE(parse({"-n", "2", "--progress=thread", "p"}, &plain, &error));
    CHECK(plain.progress_thread.empty());
    CHECK(error_of({"-n", "2", "--progress=thread-spin", "p"}).find("invalid progress mode") == 0);
}

TEST_CASE("help and version need nothing else", "[launcher][options]") {
    Options o;
    std::string error;
    REQUIRE(parse({"--help"}, &o, &error));
    CHECK(o.help);
    Options v;
    REQUIRE(parse({"--version"}, &v, &error));
    CHECK(v.version);
}

TEST_CASE("a missing option value is a clear error", "[launcher][options]") {
    CHECK(error_of({"-n"}) == "option -n needs a value");
    CHECK(error_of({"-n", "2", "--timeout"}) == "option --timeout needs a value");
    CHECK(error_of({"-n", "2", "-x"}) == "option -x needs a value");
}

TEST_CASE("bad values and options are rejected", "[launcher][options]") {
    CHECK(error_of({"-n", "0", "p"}).find("invalid number of ranks '0'") == 0);
    CHECK(error_of({"-n", "-1", "p"}).find("invalid number of ranks") == 0);
    CHECK(error_of({"-n", "2x", "p"}).find("invalid number of ranks") == 0);
    CHECK(error_of({"-n", "99999999999", "p"}).find("invalid number of ranks") == 0);
    CHECK(error_of({"-n", "2", "-N", "0", "p"}).find("invalid number of nodes") == 0);
    CHECK(error_of({"-n", "2", "-N", "3", "p"}).find("more node processes") == 0);
    CHECK(error_of({"-n", "2", "-p", "0", "p"}).find("invalid number of node processes per") == 0);
    CHECK(error_of({"-n", "3", "-N", "2", "-p", "2", "p"}) ==
          "more node processes (2 nodes x -p 2) than ranks (-n 3)");
    CHECK(error_of({"-n", "2", "--bind", "socket", "p"}).find("invalid binding") == 0);
    CHECK(error_of({"-n", "2", "--map=spread", "p"}).find("invalid rank mapping") == 0);
    CHECK(error_of({"-n", "2", "--hosts", "a,", "p"}).find("invalid host list") == 0);
    CHECK(error_of({"-n", "2", "--hosts", "a b", "p"}).find("invalid host list") == 0);
    CHECK(error_of({"-n", "2", "--hosts", "a", "--hostfile", "f", "p"}) ==
          "--hosts and --hostfile exclude each other");
    CHECK(error_of({"p"}) == "the number of ranks is missing (-n N)");
    CHECK(error_of({"-n", "2"}) == "no program to run");
    CHECK(error_of({"--bogus", "p"}) == "unknown option '--bogus'");
    CHECK(error_of({"-n4", "p"}) == "unknown option '-n4'");
    CHECK(error_of({"--stats=1", "p"}) == "option --stats takes no value");
    CHECK(error_of({"-n", "2", "--progress=fast", "p"}).find("invalid progress mode") == 0);
    CHECK(error_of({"-n", "2", "--net=ib", "p"}).find("invalid network") == 0);
    for (const char* t : {"0", "-1", "nan", "inf", "1s", ""})
        CHECK(error_of({"-n", "2", "--timeout", t, "p"}).find("invalid timeout") == 0);
    CHECK(error_of({"-n", "2", "-x", "=A", "p"}).find("invalid -x argument") == 0);
}
