// mpcrun/remote_launch: the commands that start node processes elsewhere.
//
// ssh: one command per node process, `$MPC_SSH host 'exec sh -c SCRIPT'`
// (MPC_SSH may hold options: "ssh -p 2222"), SCRIPT being `cd DIR && { IFS=
// read -r SECRET || (say so, exit 255); } && export SECRET && exec env
// VAR=VALUE... program args`. A
// remote shell starts with the remote user's environment, so every variable
// the node process needs is in the command line, except the job's secret:
// that one is the first line of the remote command's standard input, read by
// sh (whatever the user's login shell) before the program starts, so it
// never shows in `ps`.
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
// entries as in ::environ. Never the job's secret.
EnvVars forwarded_variables(const Options& options, const char* const* environ_entries);
// -genvall: every variable but the secret and the PMI ones (those of a
// launcher above mpcrun mean nothing on another host).
EnvVars all_variables(const char* const* environ_entries);

// 'text' for a POSIX shell, quotes inside escaped.
std::string shell_quote(const std::string& text);
// MPC_SSH / MPC_SRUN: words separated by blanks (no quoting).
std::vector<std::string> split_words(const std::string& text);

// secret_variable: the variable the first line of standard input goes into.
std::vector<std::string> ssh_command(const std::string& ssh, const std::string& host,
                                     const std::string& directory, const EnvVars& vars,
                                     const std::vector<std::string>& program,
                                     const std::string& secret_variable);

std::vector<std::string> srun_command(const std::string& srun, const JobPlan& plan,
                                      const std::vector<std::string>& program);

}  // namespace mpc::launcher
