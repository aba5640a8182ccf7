// mpcrun/job: starts the node processes of a job as its JobPlan says (fork
// on this host, ssh, or srun) and watches them until the end.
//
// Each node process gets the layout in its environment (MPC_NRANKS,
// MPC_NODE_ID, MPC_NUM_NODES, MPC_MAP, ...) and a PMI-2 channel served by
// mpcrun: a socketpair on this host (PMI_FD), a TCP port elsewhere
// (PMI_PORT). One poll() loop serves PMI, forwards the stdout and stderr of
// every child (node process, ssh or srun) line by line, feeds mpcrun's stdin
// to node process 0 and reacts to signals (SIGCHLD through a self-pipe).
//
// The job ends as soon as a node process fails (non-zero exit, signal, PMI
// abort or protocol error), a signal arrives, or --timeout expires: SIGTERM to
// every node process group, SIGKILL one second later. Node processes die with
// mpcrun (PR_SET_PDEATHSIG), so nothing outlives it.
#pragma once

#include "job_plan.hpp"
#include "options.hpp"

namespace mpc::launcher {

// Runs the job; returns mpcrun's exit status: 0 when every node process
// succeeded, else the first failure's (exit status, 128+signal, the abort's
// status, 124 for --timeout).
int run_job(const Options& options, const JobPlan& plan);

}  // namespace mpc::launcher
