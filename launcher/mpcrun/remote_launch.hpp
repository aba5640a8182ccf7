// mpcrun/remote_launch: the commands that start node processes elsewhere.
//
// ssh: one command per node process, `$MPC_SSH host 'cd DIR && exec env
// VAR=VALUE... program args'` (MPC_SSH may hold options: "ssh -p 2222"). A
// remote shell starts with the remote user's environment, so every variable
// the node process needs is in the command line.
//
// srun: one command for all node processes of a Slurm allocation, one task
// each, every task with mpcrun's environment (srun's default --export=ALL);
// a task learns its PMI rank from SLURM_PROCID.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "job_plan.hpp"

namespace mpc::launcher {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// What every node process gets from mpcrun's options: the layout (MPC_NRANKS,
// MPC_NUM_NODES, MPC_MAP), the settings (MPC_PROGRESS, MPC_BIND, ...) and the
// -x VAR=VALUE pairs. Not the PMI variables, nor MPC_NODE_ID.
EnvVars job_variables(const Options& options, const JobPlan& plan);

// For a remote shell: the MPC_* variables of mpcrun's environment and those
// named by "-x VAR" (without a value), as set here; environ is "NAME=VALUE"
// entries as in ::environ.
EnvVars forwarded_variables(const Options& options, const char* const* environ_entries);

// 'text' for a POSIX shell, quotes inside escaped.
std::string shell_quote(const std::string& text);
// MPC_SSH / MPC_SRUN: words separated by blanks (no quoting).
std::vector<std::string> split_words(const std::string& text);

std::vector<std::string> ssh_command(const std::string& ssh, const std::string& host,
                                     const std::string& directory, const EnvVars& vars,
                                     const std::vector<std::string>& program);

std::vector<std::string> srun_command(const std::string& srun, const JobPlan& plan,
                                      const std::vector<std::string>& program);

}  // namespace mpc::launcher
