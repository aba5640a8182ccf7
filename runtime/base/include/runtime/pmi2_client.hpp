// runtime/pmi2_client: the PMI-2 client behind Bootstrap::create().
//
// A launcher that speaks PMI-2 (mpcrun, Slurm's srun --mpi=pmi2, MPICH's
// hydra) hands each process a connected socket in PMI_FD, plus PMI_RANK,
// PMI_SIZE and (Slurm) PMI_JOBID. mpcrun's node processes on other hosts
// (started by ssh or srun) get PMI_PORT=host:port instead and connect; their
// rank is PMI_RANK, or SLURM_PROCID when srun started them all with one
// environment. Bootstrap::create() uses the environment; connect() is the
// same client on a socket the caller already has (tests).
//
// Over TCP nothing kills the node process when mpcrun goes (no parent-death
// signal across hosts): a LauncherWatch thread ends it when the connection
// closes before finalize.
//
// mpcrun's node processes prove the job's secret (runtime/handshake.hpp) on
// their PMI connection before anything else: the launcher gives the secret
// in MPC_JOB_SECRET, which the client reads and removes from the
// environment. Under a launcher that knows nothing of it (srun --mpi=pmi2,
// hydra), their connection is theirs to secure, and node process 0 makes the
// job's secret and puts it into the key-value store (key kSecretKey), where
// the others find it after the first fence (Bootstrap::job_secret()).
//
// Values put into the key-value store may hold any bytes: the client encodes
// the few that PMI-2 servers cannot carry (pmi2::encode_value) and decodes
// them on get. Keys must be pmi2::valid_key; an encoded value must fit in
// pmi2::kMaxValueLength (hex-encode binary data: about 500 bytes fit).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "runtime/auth.hpp"
#include "runtime/bootstrap.hpp"

namespace mpc::runtime::pmi2 {

// The key under which node process 0 publishes the job's secret when the
// launcher is not mpcrun.
constexpr const char* kSecretKey = "mpc-job-secret";

struct ClientOptions {
    int fd = -1;                  // connected to the server; the client owns and closes it
    std::string jobid;            // PMI_JOBID (may be empty)
    int rank = -1;                // PMI_RANK, or -1 when unknown
    bool watch_launcher = false;  // end the process if the server closes first (TCP)
    // mpcrun's secret: the connection opens with the handshake. Without it
    // the client speaks plain PMI-2 and the job's secret travels in the store.
    std::optional<auth::Secret> secret;
};

// Performs the handshake (with a secret), init and fullinit. Returns null with *error set when the
// server does not answer as PMI-2 (the fd is then closed). Afterwards a failing call is fatal: the
// job cannot go on without its bootstrap.
std::unique_ptr<Bootstrap> connect(const ClientOptions& options, std::string* error);

// Connects to PMI_PORT's "host:port" ("[v6addr]:port" too); returns the
// socket, or -1 with *error.
int connect_tcp(const std::string& address, std::string* error);

// A thread that waits for the server to close fd and then ends the process
// (status 1, with a message); destroying the watch stops it first.
class LauncherWatch {
  public:
    explicit LauncherWatch(int fd);
    ~LauncherWatch();
    LauncherWatch(const LauncherWatch&) = delete;
    LauncherWatch& operator=(const LauncherWatch&) = delete;

  private:
    int stop_pipe_[2] = {-1, -1};
    std::thread thread_;
};

}  // namespace mpc::runtime::pmi2
