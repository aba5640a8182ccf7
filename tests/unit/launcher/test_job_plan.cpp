// Where mpcrun puts node processes and ranks (JobPlan), and the commands that
// start them on other hosts (ssh, srun).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "job_plan.hpp"
#include "options.hpp"
#include "remote_launch.hpp"

using namespace mpc::launcher;

namespace {

Options options(std::vector<const char*> args) {
    args.insert(args.begin(), "mpcrun");
    Options o;
    std::string error;
    REQUIRE(parse_options(static_cast<int>(args.size()), args.data(), &o, &error));
    return o;
}

struct FakeEnv {
    std::map<std::string, std::string> vars;
    EnvLookup lookup() const {
        return [this](const char* name) -> const char* {
            auto it = vars.find(name);
            return it == vars.end() ? nullptr : it->second.c_str();
        };
    }
};

JobPlan plan_of(const Options& o, const FakeEnv& env = {}) {
    JobPlan p;
    std::string error;
    INFO(error);
    REQUIRE(make_plan(o, env.lookup(), &p, &error));
    return p;
}

std::string plan_error(const Options& o, const FakeEnv& env = {}) {
    JobPlan p;
    std::string error;
    CHECK_FALSE(make_plan(o, env.lookup(), &p, &error));
    return error;
}

// A temporary file with the given text, removed at the end of the scope.
struct TempFile {
    std::string path;
    explicit TempFile(const std::string& text) {
        char name[] = "/tmp/mpcrun-test-XXXXXX";
        int fd = mkstemp(name);
        REQUIRE(fd >= 0);
        REQUIRE(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
        close(fd);
        path = name;
    }
    ~TempFile() { unlink(path.c_str()); }
};

}  // namespace

TEST_CASE("on this host: -N node processes, -p each", "[launcher][plan]") {
    JobPlan p = plan_of(options({"-n", "8", "-N", "2", "-p", "2", "prog"}));
    CHECK(p.mode == LaunchMode::kLocal);
    CHECK(p.nodes == 2);
    CHECK(p.node_procs == 4);
    CHECK(p.node_of_rank == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
    CHECK(plan_of(options({"-n", "3", "prog"})).node_procs == 1);
    // An allocation is ignored when MPC_LAUNCH=local says so.
    FakeEnv slurm{{{"SLURM_JOB_ID", "7"}, {"SLURM_JOB_NUM_NODES", "1"}, {"MPC_LAUNCH", "local"}}};
    CHECK(plan_of(options({"-n", "4", "-N", "4", "prog"}), slurm).mode == LaunchMode::kLocal);
}

TEST_CASE("block and cyclic rank maps", "[launcher][plan]") {
    JobPlan block = plan_of(options({"-n", "7", "-N", "3", "prog"}));
    CHECK(block.node_of_rank == std::vector<int>{0, 0, 1, 1, 2, 2, 2});
    CHECK(block.ranks_of(2) == "ranks 4-6");
    JobPlan cyclic = plan_of(options({"-n", "7", "-N", "3", "--map", "cyclic", "prog"}));
    CHECK(cyclic.map == "cyclic");
    CHECK(cyclic.node_of_rank == std::vector<int>{0, 1, 2, 0, 1, 2, 0});
    CHECK(cyclic.ranks_of(0) == "ranks 0,3,6");
    CHECK(cyclic.ranks_of(2) == "ranks 2,5");
    JobPlan one = plan_of(options({"-n", "3", "-N", "3", "prog"}));
    CHECK(one.ranks_of(1) == "rank 1");
    JobPlan wide = plan_of(options({"-n", "40", "-N", "2", "--map=cyclic", "prog"}));
    CHECK(wide.ranks_of(1) == "ranks 1,3,5,7,9,11,13,15,...");
    // MPC_MAP in mpcrun's environment counts as --map (the runtime reads it too).
    FakeEnv env{{{"MPC_MAP", "cyclic"}}};
    CHECK(plan_of(options({"-n", "4", "-N", "2", "prog"}), env).node_of_rank ==
          std::vector<int>{0, 1, 0, 1});
    FakeEnv bad{{{"MPC_MAP", "diagonal"}}};
    CHECK(plan_error(options({"-n", "4", "prog"}), bad).find("MPC_MAP=diagonal") == 0);
}

TEST_CASE("hosts: one node each, the first -N of them", "[launcher][plan]") {
    JobPlan p = plan_of(options({"-n", "6", "--hosts", "a,b,a", "-p", "2", "prog"}));
    CHECK(p.mode == LaunchMode::kSsh);
    CHECK(p.nodes == 3);
    CHECK(p.node_procs == 6);
    CHECK(p.host_of(0) == "a");
    CHECK(p.host_of(1) == "a");
    CHECK(p.host_of(2) == "b");
    CHECK(p.host_of(5) == "a");
    JobPlan first = plan_of(options({"-n", "2", "-N", "1", "--hosts", "a,b", "prog"}));
    CHECK(first.hosts == std::vector<std::string>{"a"});
    CHECK(plan_error(options({"-n", "4", "-N", "3", "--hosts", "a,b", "prog"})) ==
          "-N 3 asks for more nodes than the 2 hosts given");
    CHECK(plan_error(options({"-n", "3", "--hosts", "a,b", "-p", "2", "prog"})) ==
          "more node processes (2 nodes x -p 2) than ranks (-n 3)");
    // Hosts win over an allocation: the user named them.
    FakeEnv slurm{{{"SLURM_JOB_ID", "7"}, {"SLURM_JOB_NUM_NODES", "4"}}};
    CHECK(plan_of(options({"-n", "2", "--hosts", "a", "prog"}), slurm).mode == LaunchMode::kSsh);
}

TEST_CASE("host files", "[launcher][plan]") {
    TempFile good("# cluster\n\nnode1\n  node2   # the second\nnode1\n");
    JobPlan p = plan_of(options({"-n", "3", "--hostfile", good.path.c_str(), "prog"}));
    CHECK(p.hosts == std::vector<std::string>{"node1", "node2", "node1"});
    // Open MPI's and hydra's slot counts are read and dropped.
    TempFile slots("node1 slots=4 max_slots=8\nnode2:2\nnode3 max-slots=1\n");
    CHECK(plan_of(options({"-n", "3", "--hostfile", slots.path.c_str(), "prog"})).hosts ==
          std::vector<std::string>{"node1", "node2", "node3"});
    TempFile other("node1 cpus=4\n");
    CHECK(plan_error(options({"-n", "3", "--hostfile", other.path.c_str(), "prog"}))
              .find(":1: 'cpus=4' after the host name") != std::string::npos);
    TempFile bad_count("node1 slots=many\nnode2:x\n");
    CHECK(plan_error(options({"-n", "3", "--hostfile", bad_count.path.c_str(), "prog"}))
              .find("'slots=many'") != std::string::npos);
    TempFile bad_colon("node2:x\n");
    CHECK(plan_error(options({"-n", "3", "--hostfile", bad_colon.path.c_str(), "prog"}))
              .find("'node2:x' is not a host name or host:SLOTS") != std::string::npos);
    TempFile empty("# nothing\n");
    CHECK(plan_error(options({"-n", "3", "--hostfile", empty.path.c_str(), "prog"}))
              .find("names no host") != std::string::npos);
    CHECK(plan_error(options({"-n", "3", "--hostfile", "/nonexistent/h", "prog"})) ==
          "cannot read the host file '/nonexistent/h'");
}

TEST_CASE("inside a Slurm allocation: srun, as many nodes as allocated", "[launcher][plan]") {
    FakeEnv slurm{{{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NUM_NODES", "3"}}};
    JobPlan p = plan_of(options({"-n", "12", "-p", "2", "prog"}), slurm);
    CHECK(p.mode == LaunchMode::kSlurm);
    CHECK(p.nodes == 3);
    CHECK(p.node_procs == 6);
    CHECK(plan_of(options({"-n", "12", "-N", "2", "prog"}), slurm).nodes == 2);
    CHECK(plan_error(options({"-n", "12", "-N", "4", "prog"}), slurm) ==
          "-N 4 asks for more nodes than the 3 nodes of Slurm allocation 42");
    FakeEnv old_slurm{{{"SLURM_JOB_ID", "42"}, {"SLURM_NNODES", "2"}}};
    CHECK(plan_of(options({"-n", "4", "prog"}), old_slurm).nodes == 2);
    FakeEnv forced{{{"MPC_LAUNCH", "slurm"}}};
    CHECK(plan_error(options({"-n", "4", "prog"}), forced).find("not inside a Slurm") !=
          std::string::npos);
    FakeEnv bad{{{"MPC_LAUNCH", "pbs"}}};
    CHECK(plan_error(options({"-n", "4", "prog"}), bad).find("MPC_LAUNCH=pbs") == 0);
}

TEST_CASE("ssh commands quote what the remote shell will read", "[launcher][remote]") {
    CHECK(shell_quote("plain") == "'plain'");
    CHECK(shell_quote("it's") == "'it'\\''s'");
    CHECK(split_words("  ssh -p 2222\t-x ") == std::vector<std::string>{"ssh", "-p", "2222", "-x"});
    auto cmd = ssh_command("ssh -o BatchMode=yes", "node7", "/home/u/run dir",
                           {{"MPC_NODE_ID", "3"}, {"X", "a b;c"}}, {"./prog", "it's"}, "SECRET");
    REQUIRE(cmd.size() == 5);
    CHECK(cmd[0] == "ssh");
    CHECK(cmd[2] == "BatchMode=yes");
    CHECK(cmd[3] == "node7");
    // sh reads the secret from standard input; the script is quoted once more.
    const std::string script =
        "cd '/home/u/run dir' && { IFS= read -r SECRET || { echo \"fibermpi: no job secret on "
        "standard input (ssh -n in MPC_SSH?)\" >&2; exit 255; }; } && export SECRET && exec env "
        "'MPC_NODE_ID=3' 'X=a b;c' './prog' 'it'\\''s'";
    CHECK(cmd[4] == "exec sh -c " + shell_quote(script));
    CHECK(ssh_command("", "h", "/", {}, {"p"}, "S")[0] == "ssh");
}

TEST_CASE("srun starts one task per node process, mpcrun serving PMI", "[launcher][remote]") {
    FakeEnv slurm{{{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NUM_NODES", "2"}}};
    JobPlan p = plan_of(options({"-n", "8", "-p", "2", "prog"}), slurm);
    auto cmd = srun_command("srun --partition=x", p, {"prog", "arg"});
    CHECK(cmd.front() == "srun");
    CHECK(cmd[1] == "--partition=x");
    auto has = [&](const std::string& word) {
        return std::find(cmd.begin(), cmd.end(), word) != cmd.end();
    };
    CHECK(has("--nodes=2"));
    CHECK(has("--ntasks=4"));
    CHECK(has("--ntasks-per-node=2"));
    CHECK(has("--mpi=none"));
    CHECK(has("--kill-on-bad-exit=1"));
    CHECK(has("--input=0"));
    CHECK(cmd[cmd.size() - 2] == "prog");
    CHECK(cmd.back() == "arg");
}

TEST_CASE("the variables node processes get", "[launcher][remote]") {
    Options o = options({"-n", "4", "-N", "2", "--bind", "none", "--map", "cyclic", "-c", "2", "-x",
                         "A=1", "-x", "B", "prog"});
    JobPlan p = plan_of(o);
    std::map<std::string, std::string> vars;
    for (auto& [k, v] : job_variables(o, p)) vars[k] = v;
    CHECK(vars["MPC_NRANKS"] == "4");
    CHECK(vars["MPC_NUM_NODES"] == "2");
    CHECK(vars["MPC_MAP"] == "cyclic");
    CHECK(vars["MPC_BIND"] == "0");
    CHECK(vars["MPC_VPS"] == "2");
    CHECK(vars["A"] == "1");
    CHECK(vars.count("B") == 0);  // named without a value: inherited, or forwarded for ssh
    const char* environ_entries[] = {
        "MPC_STACK_SIZE=1M",   "B=from here", "HOME=/root", "MPC_EMPTY=",
        "MPC_JOB_SECRET=00ff", "PMI_RANK=3",  nullptr};
    std::map<std::string, std::string> forwarded;
    for (auto& [k, v] : forwarded_variables(o, environ_entries)) forwarded[k] = v;
    CHECK(forwarded == std::map<std::string, std::string>{
                           {"MPC_STACK_SIZE", "1M"}, {"B", "from here"}, {"MPC_EMPTY", ""}});
    // -genvall: everything but the secret and a launcher's PMI variables.
    std::map<std::string, std::string> all;
    for (auto& [k, v] : all_variables(environ_entries)) all[k] = v;
    CHECK(all ==
          std::map<std::string, std::string>{
              {"MPC_STACK_SIZE", "1M"}, {"B", "from here"}, {"HOME", "/root"}, {"MPC_EMPTY", ""}});
}

TEST_CASE("output options reach the node processes", "[launcher][remote]") {
    auto vars_of = [](const Options& o) {
        std::map<std::string, std::string> vars;
        for (auto& [k, v] : job_variables(o, plan_of(o))) vars[k] = v;
        return vars;
    };
    CHECK(vars_of(options({"-n", "2", "--tag-output", "p"}))["MPC_OUTPUT_LABEL"] == "tag");
    CHECK(vars_of(options({"-n", "2", "-l", "p"}))["MPC_OUTPUT_LABEL"] == "rank");
    CHECK(vars_of(options({"-n", "2", "p"})).count("MPC_OUTPUT_LABEL") == 0);
    CHECK(vars_of(options({"-n", "2", "--output-filename", "/abs/dir", "p"}))["MPC_OUTPUT_DIR"] ==
          "/abs/dir");
    // A relative directory is mpcrun's: node processes elsewhere get it whole.
    char cwd[4096];
    REQUIRE(getcwd(cwd, sizeof cwd));
    CHECK(vars_of(options({"-n", "2", "--output-filename", "out", "p"}))["MPC_OUTPUT_DIR"] ==
          std::string(cwd) + "/out");
    // -ppn's ranks are the ones the node processes count.
    CHECK(vars_of(options({"-ppn", "3", "--hosts", "a,b", "p"}))["MPC_NRANKS"] == "6");
}

TEST_CASE("-ppn: ranks per node pick the nodes, or the ranks", "[launcher][plan]") {
    JobPlan p = plan_of(options({"-n", "4", "-ppn", "2", "--hosts", "a,b,c,d", "prog"}));
    CHECK(p.nodes == 2);  // ceil(4 / 2) of the 4 hosts
    CHECK(p.ranks == 4);
    CHECK(p.node_of_rank == std::vector<int>{0, 0, 1, 1});
    CHECK(plan_of(options({"-n", "9", "-ppn", "2", "--hosts", "a,b", "prog"})).nodes == 2);
    JobPlan no_n = plan_of(options({"-ppn", "3", "--hosts", "a,b", "prog"}));
    CHECK(no_n.ranks == 6);
    CHECK(no_n.nodes == 2);
    JobPlan local = plan_of(options({"-ppn", "4", "prog"}));
    CHECK(local.ranks == 4);
    CHECK(local.nodes == 1);
    FakeEnv slurm{{{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NUM_NODES", "4"}}};
    CHECK(plan_of(options({"-n", "6", "-ppn", "3", "prog"}), slurm).nodes == 2);
    // -N wins over -ppn's choice.
    CHECK(plan_of(options({"-n", "4", "-ppn", "1", "-N", "2", "--hosts", "a,b,c", "prog"})).nodes ==
          2);
}

TEST_CASE("listeners take loopback when every node process runs here", "[launcher][plan]") {
    CHECK(plan_of(options({"-n", "2", "-N", "2", "prog"})).one_host);
    CHECK(plan_of(options({"-n", "2", "--hosts", "localhost,127.0.0.1", "prog"})).one_host);
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    CHECK(plan_of(options({"-n", "2", "--hosts", std::string(name).append(",localhost").c_str(),
                           "prog"}))
              .one_host);
    CHECK_FALSE(
        plan_of(options({"-n", "2", "--hosts", "localhost,elsewhere.invalid", "prog"})).one_host);
    FakeEnv here{
        {{"SLURM_JOB_ID", "7"}, {"SLURM_JOB_NUM_NODES", "1"}, {"SLURM_JOB_NODELIST", name}}};
    CHECK(plan_of(options({"-n", "2", "prog"}), here).one_host);
    FakeEnv there{
        {{"SLURM_JOB_ID", "7"}, {"SLURM_JOB_NUM_NODES", "2"}, {"SLURM_JOB_NODELIST", "n[1-2]"}}};
    CHECK_FALSE(plan_of(options({"-n", "2", "prog"}), there).one_host);
}
