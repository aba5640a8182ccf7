// mpi_api/process: setting up and ending MPI for the whole node process.
//
// The host (runtime/host) calls process_setup() once, before any rank runs,
// with the job layout it learned from the bootstrap; ranks then call MPI_Init
// and MPI_Finalize each for themselves.
#pragma once

#include <string>
#include <vector>

namespace mpc::mpi {

// The job's name service (MPI_Publish_name and friends), which the host
// sets from its bootstrap: each call as Bootstrap::name_* says
// (runtime/bootstrap.hpp).
struct NameService {
    bool (*publish)(const std::string& name, const std::string& port, std::string* error);
    bool (*unpublish)(const std::string& name, std::string* error);
    bool (*lookup)(const std::string& name, std::string* port, bool* found, std::string* error);
};
void set_name_service(const NameService* service);
const NameService* name_service();  // null until the host sets one

struct JobLayout {
    int world_size = 1;
    int num_nodes = 1;
    int node_id = 0;
    std::vector<int> node_of;  // world rank -> node process
    int appnum = 0;
};

// Reads the MPI layer's settings (MPC_INTRA_EAGER, MPC_WAIT_SPIN, MPC_STATS) and
// builds the world, predefined objects and local ranks.
void process_setup(const JobLayout& layout);
// After all ranks have ended.
void process_teardown();

// Registers the MPI engine's control and performance variables (MPI_T) with
// the runtime's registry (runtime/tools.hpp); process_setup() does it.
void register_tool_variables();

// Hooks the network layer installs: a barrier among node processes used at
// MPI_Finalize time is not needed (ranks synchronise through MPI), but the
// statistics report and node-level finalisation are.
using NodeHook = void (*)();
void set_finalize_hook(NodeHook hook);

// Called when a rank ends (returns from main or calls exit) with its status;
// returns false when the rank ended while MPI was initialized but not finalized.
bool rank_ended(struct RankState* rank, int status);

}  // namespace mpc::mpi
