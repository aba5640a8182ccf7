// runtime/bootstrap: how a node process learns about the job and exchanges
// addresses with the other node processes.
//
// Speaks the PMI-2 wire protocol when started by a PMI-2 launcher: through
// the socket in PMI_FD (mpcrun on one host, Slurm's srun --mpi=pmi2, hydra)
// or by connecting to PMI_PORT (mpcrun's node processes started by ssh or
// srun); otherwise the process is a singleton job of one node process.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/auth.hpp"

namespace mpc::runtime {

class Bootstrap {
public:
    virtual ~Bootstrap() = default;

    // This node process's index and the number of node processes.
    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual int appnum() const { return 0; }

    // A job attribute (PMI_process_mapping, ...); empty when absent.
    virtual std::string job_attr(const std::string& key) = 0;
    // Key-value store: put, then fence (collective), then get any key.
    virtual void put(const std::string& key, const std::string& value) = 0;
    virtual void fence() = 0;
    virtual std::string get(const std::string& key) = 0;
    // The job's secret, which every connection between node processes proves
    // (runtime/handshake.hpp): mpcrun's, or under another launcher the one
    // node process 0 published. Call it after the first fence.
    virtual const auth::Secret& job_secret() = 0;
    // The job's name service (MPI_Publish_name and friends): the launcher's
    // (PMI-2 name-publish, name-unpublish, name-lookup), or for a singleton
    // a table of its own. False with *error when the launcher refuses (a name
    // published already or not at all, no name service); a lookup that finds
    // nothing returns true with *found false.
    virtual bool name_publish(const std::string& name, const std::string& port,
                              std::string* error);
    virtual bool name_unpublish(const std::string& name, std::string* error);
    virtual bool name_lookup(const std::string& name, std::string* port, bool* found,
                             std::string* error);
    // Asks the launcher to end the whole job.
    virtual void abort(int status, const char* message) = 0;
    virtual void finalize() = 0;

    // PMI-2 client when PMI_FD or PMI_PORT is set, otherwise a singleton.
    static std::unique_ptr<Bootstrap> create();
};

// How the world ranks are spread over the node processes (mpcrun --map):
// block gives node process n a contiguous range, cyclic deals them out one
// at a time (rank r on node process r % node_procs).
enum class RankMap { kBlock, kCyclic };

// MPC_MAP=block|cyclic, block when unset; any other value is fatal.
RankMap rank_map_from_env();

// node_of[r]: the node process of world rank r, for ranks >= node_procs >= 1.
std::vector<int> rank_layout(int ranks, int node_procs, RankMap map);

}  // namespace mpc::runtime
