// mpcrun/job: starts the node processes of a job on this host and watches
// them until the end.
//
// Each node process gets the layout in its environment (MPC_NRANKS,
// MPC_NODE_ID, MPC_NUM_NODES, ...) and a PMI-2 channel (PMI_FD, PMI_RANK,
// PMI_SIZE, PMI_JOBID) served by mpcrun. One poll() loop serves PMI, forwards
// every node process's stdout and stderr line by line, feeds mpcrun's stdin to
// node process 0 and reacts to signals (SIGCHLD through a self-pipe).
//
// The job ends as soon as a node process fails (non-zero exit, signal, PMI
// abort or protocol error), a signal arrives, or --timeout expires: SIGTERM to
// every node process group, SIGKILL one second later. Node processes die with
// mpcrun (PR_SET_PDEATHSIG), so nothing outlives it.
#pragma once

#include "options.hpp"

namespace mpc::launcher {

// Runs the job; returns mpcrun's exit status: 0 when every node process
// succeeded, else the first failure's (exit status, 128+signal, the abort's
// status, 124 for --timeout).
int run_job(const Options& options);

}  // namespace mpc::launcher
