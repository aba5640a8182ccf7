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

// Open MPI's and MPICH hydra's spellings (mpcrun is also mpiexec and mpirun):
// every one accepted, and mapped onto what it means here.
TEST_CASE("Open MPI spellings", "[launcher][options][dropin]") {
    std::string error;
    Options o;
    REQUIRE(parse({"--n", "6", "--host", "a:2,b", "-host", "c", "--map-by", "node", "--bind-to",
                   "core", "-x", "A=1", "--oversubscribe", "--tag-output", "--timeout", "9", "p"},
                  &o, &error));
    CHECK(o.ranks == 6);
    CHECK(o.hosts == std::vector<std::string>{"a", "b", "c"});  // slot counts dropped
    CHECK(o.map == "cyclic");
    CHECK(o.bind == "core");
    CHECK(o.env == std::vector<std::string>{"A=1"});
    CHECK(o.label == mpc::launcher::OutputLabel::kTag);
    CHECK(o.timeout == 9);
    Options single;  // Open MPI takes its long options with one dash too
    REQUIRE(parse({"-np", "2", "-hostfile", "h", "-map-by", "slot", "-bind-to", "none",
                   "-oversubscribe", "-tag-output", "-timeout", "3", "p"},
                  &single, &error));
    CHECK(single.hostfile == "h");
    CHECK(single.map == "block");
    CHECK(single.bind == "none");
    CHECK(single.label == mpc::launcher::OutputLabel::kTag);
    CHECK(single.timeout == 3);
    for (const char* spelling : {"--hostfile", "--machinefile", "-machinefile"}) {
        Options h;
        REQUIRE(parse({"-n", "2", spelling, "hosts.txt", "p"}, &h, &error));
        CHECK(h.hostfile == "hosts.txt");
    }
    Options files;
    REQUIRE(parse({"-n", "2", "--output-filename", "out", "p"}, &files, &error));
    CHECK(files.output_dir == "out");
    REQUIRE(parse({"-n", "2", "-output-filename", "o2", "p"}, &files, &error));
    CHECK(files.output_dir == "o2");
    Options h;
    REQUIRE(parse({"-n", "2", "-H", "x:4", "p"}, &h, &error));
    CHECK(h.hosts == std::vector<std::string>{"x"});
}

TEST_CASE("--map-by and --bind-to policies", "[launcher][options][dropin]") {
    std::string error;
    for (auto [policy, map] : {std::pair<const char*, const char*>{"node", "cyclic"},
                               {"node:OVERSUBSCRIBE", "cyclic"},
                               {"slot", "block"},
                               {"core", "block"},
                               {"core:PE=2", "block"},
                               {"socket", "block"},
                               {"numa", "block"},
                               {"hwthread", "block"},
                               {"l3cache", "block"},
                               {"package", "block"},
                               {"board", "block"}}) {
        Options o;
        INFO(policy);
        REQUIRE(parse({"-n", "2", "--map-by", policy, "p"}, &o, &error));
        CHECK(o.map == map);
    }
    for (auto [unit, bind] : {std::pair<const char*, const char*>{"core", "core"},
                              {"hwthread", "core"},
                              {"cpu", "core"},
                              {"core:overload-allowed", "core"},
                              {"none", "none"},
                              {"socket", "none"},
                              {"numa", "none"},
                              {"package", "none"},
                              {"l3cache", "none"},
                              {"board", "none"}}) {
        Options o;
        INFO(unit);
        REQUIRE(parse({"-n", "2", "-bind-to", unit, "p"}, &o, &error));
        CHECK(o.bind == bind);
    }
    CHECK(error_of({"-n", "2", "--map-by", "ppr:2:node", "p"}).find("invalid mapping policy") == 0);
    CHECK(error_of({"-n", "2", "--bind-to", "galaxy", "p"}).find("invalid binding") == 0);
}

TEST_CASE("MPICH hydra spellings", "[launcher][options][dropin]") {
    std::string error;
    Options o;
    REQUIRE(parse({"-n", "4", "-ppn", "2", "-hosts", "a:2,b:2", "-genv", "X", "a b", "-env", "Y",
                   "", "-genvall", "-bind-to", "core", "-prepend-rank", "p"},
                  &o, &error));
    CHECK(o.ranks == 4);
    CHECK(o.ranks_per_node == 2);
    CHECK(o.hosts == std::vector<std::string>{"a", "b"});
    CHECK(o.env == std::vector<std::string>{"X=a b", "Y="});
    CHECK(o.env_all);
    CHECK(o.bind == "core");
    CHECK(o.label == mpc::launcher::OutputLabel::kRank);
    Options f;
    REQUIRE(parse({"-np", "2", "-f", "machines", "-l", "p"}, &f, &error));
    CHECK(f.hostfile == "machines");
    CHECK(f.label == mpc::launcher::OutputLabel::kRank);
    Options ppn_only;  // -n may come from -ppn and the nodes
    REQUIRE(parse({"-ppn", "3", "p"}, &ppn_only, &error));
    CHECK(ppn_only.ranks == 0);
    CHECK(ppn_only.ranks_per_node == 3);
    CHECK(error_of({"-n", "2", "-genv", "X"}) == "option -genv needs two values");
    CHECK(error_of({"-n", "2", "-genv=X", "1", "p"}) ==
          "option -genv takes two values: -genv VAR VALUE");
    CHECK(error_of({"-n", "2", "-genv", "A=B", "1", "p"}).find("invalid variable name") == 0);
    CHECK(error_of({"-n", "2", "-ppn", "0", "p"}).find("invalid number of ranks per node") == 0);
    CHECK(error_of({"-n", "2", "-hosts", "a:x", "p"}).find("invalid host list") == 0);
    CHECK(error_of({"-n", "2", "--output-filename", "d", "-l", "p"}).find("excludes") !=
          std::string::npos);
}

TEST_CASE("help, version and info spellings", "[launcher][options][dropin]") {
    std::string error;
    for (const char* h : {"-h", "--help", "-help"}) {
        Options o;
        REQUIRE(parse({h}, &o, &error));
        CHECK(o.help);
    }
    for (const char* v : {"--version", "-version", "-V"}) {
        Options o;
        REQUIRE(parse({v}, &o, &error));
        CHECK(o.version);
    }
    Options i;
    REQUIRE(parse({"--info"}, &i, &error));
    CHECK(i.info);
    // The help text lists every spelling it accepts.
    const std::string text = mpc::launcher::usage();
    for (const char* s :
         {"-np", "--host", "-H", "--hostfile", "--map-by", "--bind-to", "-x", "--oversubscribe",
          "--tag-output", "--output-filename", "--timeout", "-ppn", "-hosts", "-f FILE", "-genv",
          "-genvall", "-bind-to", "-prepend-rank", "--info"})
        CHECK(text.find(s) != std::string::npos);
}

TEST_CASE("MPIEXEC_TIMEOUT counts when --timeout is not given", "[launcher][options][dropin]") {
    std::string error;
    auto env = [](const char* value) {
        return [value](const char* name) -> const char* {
            return std::string(name) == "MPIEXEC_TIMEOUT" ? value : nullptr;
        };
    };
    Options o;
    REQUIRE(parse({"-n", "2", "p"}, &o, &error));
    REQUIRE(mpc::launcher::apply_environment(env("7.5"), &o, &error));
    CHECK(o.timeout == 7.5);
    Options given;
    REQUIRE(parse({"-n", "2", "--timeout", "3", "p"}, &given, &error));
    REQUIRE(mpc::launcher::apply_environment(env("7.5"), &given, &error));
    CHECK(given.timeout == 3);
    Options bad;
    REQUIRE(parse({"-n", "2", "p"}, &bad, &error));
    CHECK_FALSE(mpc::launcher::apply_environment(env("soon"), &bad, &error));
    CHECK(error == "MPIEXEC_TIMEOUT=soon is not valid (expected seconds > 0)");
    Options unset;
    REQUIRE(parse({"-n", "2", "p"}, &unset, &error));
    REQUIRE(mpc::launcher::apply_environment(env(nullptr), &unset, &error));
    CHECK(unset.timeout == 0);
}

// MPI 4.1's initial error handler (mpiexec -initial-errhandler): the three
// predefined handlers by their names, nothing else.
TEST_CASE("initial error handler", "[launcher][options]") {
    std::string error;
    for (const char* name : {"mpi_errors_are_fatal", "mpi_errors_abort", "mpi_errors_return"}) {
        for (const char* spelling : {"--initial-errhandler", "-initial-errhandler"}) {
            Options o;
            REQUIRE(parse({"-n", "2", spelling, name, "p"}, &o, &error));
            CHECK(o.initial_errhandler == name);
        }
    }
    Options none;
    REQUIRE(parse({"-n", "2", "p"}, &none, &error));
    CHECK(none.initial_errhandler.empty());
    for (const char* bad : {"MPI_ERRORS_RETURN", "errors_return", "", "mpi_errors_warn"})
        CHECK(error_of({"-n", "2", "--initial-errhandler", bad, "p"})
                  .find("invalid initial error handler") == 0);
    CHECK(error_of({"-n", "2", "--initial-errhandler"}) ==
          "option --initial-errhandler needs a value");
}

// MPI 4.1's memory allocation kinds: any list is a request (the ranks answer
// which kinds they support), the empty one included.
TEST_CASE("memory allocation kinds", "[launcher][options]") {
    std::string error;
    for (const char* spelling : {"--memory-alloc-kinds", "-memory-alloc-kinds"}) {
        for (const char* list : {"system", "mpi:alloc_mem,cuda:device", ""}) {
            Options o;
            REQUIRE(parse({"-n", "2", spelling, list, "p"}, &o, &error));
            REQUIRE(o.memory_alloc_kinds);
            CHECK(*o.memory_alloc_kinds == list);
        }
    }
    Options none;
    REQUIRE(parse({"-n", "2", "p"}, &none, &error));
    CHECK(!none.memory_alloc_kinds);
    CHECK(error_of({"-n", "2", "--memory-alloc-kinds"}) ==
          "option --memory-alloc-kinds needs a value");
}
