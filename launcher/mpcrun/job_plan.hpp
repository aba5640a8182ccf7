// mpcrun/job_plan: where the node processes of a job run and how they start.
//
// From the options and the environment: on this host alone (fork), on other
// hosts through ssh (--hosts, --hostfile), or through srun inside a Slurm
// allocation (SLURM_JOB_ID set; MPC_LAUNCH=local ignores it). Nodes hold
// -p node processes each, node process i on node i / p; ranks go to node
// processes in blocks or cyclically (--map). Nothing here starts anything.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "options.hpp"

namespace mpc::launcher {

enum class LaunchMode { kLocal, kSsh, kSlurm };

struct JobPlan {
    LaunchMode mode = LaunchMode::kLocal;
    int ranks = 1;  // -n, or -ppn times the nodes
    int nodes = 1;
    int per_node = 1;
    int node_procs = 1;              // nodes * per_node
    std::vector<std::string> hosts;  // ssh: the host of each node
    std::string map = "block";       // block or cyclic (--map, else MPC_MAP)
    std::vector<int> node_of_rank;   // world rank -> node process
    // Every node process runs on this host (local forks, ssh to this host's
    // names, a Slurm allocation of this node alone): listeners take loopback.
    bool one_host = true;

    // The ranks of node process n, as "rank 3", "ranks 0-3" or "ranks 0,2,4".
    std::string ranks_of(int node_proc) const;
    // ssh: the host of node process n; empty otherwise.
    std::string host_of(int node_proc) const;
};

// Reads a host file: one host per line; blank lines and '#' comments are
// skipped; Open MPI's "host slots=N max_slots=M" and hydra's "host:N" are
// read as the host alone (anything else after the name is refused: say -p). False with *error when
// unreadable, malformed or empty.
bool read_hostfile(const std::string& path, std::vector<std::string>* hosts, std::string* error);

// getenv by default; tests pass their own.
using EnvLookup = std::function<const char*(const char*)>;

// False with *error (a usage error) when the options do not fit the hosts or
// the allocation.
bool make_plan(const Options& options, const EnvLookup& env, JobPlan* plan, std::string* error);

}  // namespace mpc::launcher
