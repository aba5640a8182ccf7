// mpcrun: starts the node processes of an MPI job and watches them.
//
// Each node process hosts a block of the job's ranks as fibers. mpcrun passes
// the layout through the environment, forwards signals, and ends the whole job
// as soon as one node process fails (non-zero exit or signal), with a message
// naming it. Its exit status is the first failure's (128+signal for a signal),
// or 0.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "options.hpp"

using mpc::launcher::Options;

namespace {

volatile sig_atomic_t g_signal = 0;
void on_signal(int sig) { g_signal = sig; }

struct NodeProcess {
    pid_t pid = -1;
    int first_rank = 0, last_rank = 0;
    bool done = false;
    int status = 0;
};

void set_env(const char* name, const std::string& value) { setenv(name, value.c_str(), 1); }

pid_t start_node(const Options& o, int node, const NodeProcess& np) {
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "mpcrun: fork failed: %s\n", strerror(errno));
        return -1;
    }
    if (pid > 0) return pid;
    // Child: its own process group is not wanted (signals from the terminal
    // reach mpcrun, which forwards them).
    set_env("MPC_NRANKS", std::to_string(o.ranks));
    set_env("MPC_NODE_ID", std::to_string(node));
    set_env("MPC_NUM_NODES", std::to_string(o.nodes));
    if (o.cores > 0) set_env("MPC_VPS", std::to_string(o.cores));
    if (!o.progress.empty()) set_env("MPC_PROGRESS", o.progress);
    if (!o.net.empty()) set_env("MPC_NET", o.net);
    if (o.stats) set_env("MPC_STATS", "1");
    for (const std::string& kv : o.env) {
        size_t eq = kv.find('=');
        if (eq != std::string::npos) set_env(kv.substr(0, eq).c_str(), kv.substr(eq + 1));
        // "-x VAR" forwards VAR as mpcrun sees it: nothing to do for a local child.
    }
    (void)np;
    std::vector<char*> argv;
    for (const std::string& a : o.program) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    fprintf(stderr, "mpcrun: cannot execute '%s': %s\n", argv[0], strerror(errno));
    _exit(127);
}

std::string describe(const NodeProcess& np, int node) {
    char buf[128];
    if (np.first_rank == np.last_rank)
        snprintf(buf, sizeof(buf), "node process %d (rank %d, pid %d)", node, np.first_rank,
                 np.pid);
    else
        snprintf(buf, sizeof(buf), "node process %d (ranks %d-%d, pid %d)", node, np.first_rank,
                 np.last_rank, np.pid);
    return buf;
}

void kill_all(std::vector<NodeProcess>& nodes, int sig) {
    for (auto& np : nodes)
        if (!np.done && np.pid > 0) kill(np.pid, sig);
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    std::string error;
    if (!mpc::launcher::parse_options(argc, argv, &o, &error)) {
        fprintf(stderr, "mpcrun: %s\n%s", error.c_str(), mpc::launcher::usage());
        return 2;
    }
    if (o.help) {
        fputs(mpc::launcher::usage(), stdout);
        return 0;
    }
    if (o.version) {
        puts("mpcrun (fibermpi) " FIBERMPI_VERSION_STRING);
        return 0;
    }
    if (o.nodes > 1) {
        fprintf(stderr, "mpcrun: several node processes need the network layer (not built yet)\n");
        return 2;
    }

    struct sigaction sa{};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(sig, &sa, nullptr);

    std::vector<NodeProcess> nodes(static_cast<size_t>(o.nodes));
    for (int n = 0; n < o.nodes; ++n) {
        NodeProcess& np = nodes[static_cast<size_t>(n)];
        np.first_rank = static_cast<int>(static_cast<long>(o.ranks) * n / o.nodes);
        np.last_rank = static_cast<int>(static_cast<long>(o.ranks) * (n + 1) / o.nodes) - 1;
        np.pid = start_node(o, n, np);
        if (np.pid < 0) {
            kill_all(nodes, SIGKILL);
            return 1;
        }
    }

    const auto start = std::chrono::steady_clock::now();
    int exit_status = 0;
    bool failed = false;
    int alive = o.nodes;
    bool killing = false;
    auto kill_deadline = std::chrono::steady_clock::time_point::max();
    while (alive > 0) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid > 0) {
            for (size_t n = 0; n < nodes.size(); ++n) {
                NodeProcess& np = nodes[n];
                if (np.pid != pid) continue;
                np.done = true;
                --alive;
                int code = WIFEXITED(status) ? WEXITSTATUS(status)
                                             : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
                if (code != 0 && !failed && !killing) {
                    failed = true;
                    exit_status = code;
                    if (WIFSIGNALED(status))
                        fprintf(stderr, "mpcrun: %s was killed by signal %d (%s); ending the job\n",
                                describe(np, static_cast<int>(n)).c_str(), WTERMSIG(status),
                                strsignal(WTERMSIG(status)));
                    else if (alive > 0)
                        fprintf(stderr, "mpcrun: %s exited with status %d; ending the job\n",
                                describe(np, static_cast<int>(n)).c_str(), code);
                }
            }
            continue;
        }
        if (failed && !killing && alive > 0) {
            killing = true;
            kill_all(nodes, SIGTERM);
            kill_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        }
        if (g_signal && !killing) {
            fprintf(stderr, "mpcrun: received signal %d (%s); ending the job\n", g_signal,
                    strsignal(g_signal));
            exit_status = 128 + g_signal;
            failed = true;
            killing = true;
            kill_all(nodes, g_signal == SIGINT ? SIGINT : SIGTERM);
            kill_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        }
        if (o.timeout > 0 && !killing &&
            std::chrono::steady_clock::now() - start > std::chrono::duration<double>(o.timeout)) {
            fprintf(stderr, "mpcrun: the job exceeded its time limit of %g s; ending it\n",
                    o.timeout);
            exit_status = 124;
            failed = true;
            killing = true;
            kill_all(nodes, SIGTERM);
            kill_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        }
        if (killing && std::chrono::steady_clock::now() > kill_deadline) {
            kill_all(nodes, SIGKILL);
            kill_deadline = std::chrono::steady_clock::time_point::max();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return exit_status;
}
