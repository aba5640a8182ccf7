// mpi_api/hardware: what hardware a rank runs on, for MPI 4's hardware-guided
// communicator splits (MPI_COMM_TYPE_HW_GUIDED, _HW_UNGUIDED,
// _RESOURCE_GUIDED) and MPI_Get_hw_resource_info.
//
// A rank runs on the core of its virtual processor; the hwloc objects that
// contain that core are the resources it uses. Splits never cross a node
// process: its ranks are the shared-memory domain ("mpi_shared_memory", what
// MPI_COMM_TYPE_SHARED gives), and hardware objects are told apart per node
// process. Nothing here may block except the collective splits themselves.
#pragma once

#include <string>
#include <vector>

#include "mpi_api/comm.hpp"
#include "mpi_api/info.hpp"

namespace mpc::mpi {

// The info key and the shared-memory value of the MPI 4.0 splits.
inline constexpr const char* kHwResourceKey = "mpi_hw_resource_type";
inline constexpr const char* kSharedMemory = "mpi_shared_memory";

// One level of hardware a rank uses, from the node process down: its name as
// MPI spells it ("mpi_shared_memory", "hwloc://NUMANode", ...) and which
// instance the rank uses (unique within the job).
struct HwLevel {
    std::string name;
    int instance = 0;
};
std::vector<HwLevel> hw_levels_of(const RankState* me);

// The info of MPI_Get_hw_resource_info: one key per level, the instance the
// rank uses as its value.
Info hw_resource_info(const RankState* me);

// MPI_Comm_split_type with MPI_COMM_TYPE_HW_GUIDED: by the instance of the
// resource named `type` each rank uses; nullptr (MPI_COMM_NULL) at ranks
// that use none, everywhere when the type is unknown. Collective.
int comm_split_hw_guided(Comm* c, const std::string& type, int key, Comm** out);
// MPI_COMM_TYPE_HW_UNGUIDED: by the highest level that splits c's group into
// more than one part; nullptr everywhere when no level does. Collective.
int comm_split_hw_unguided(Comm* c, int key, Comm** out);
// MPI_COMM_TYPE_RESOURCE_GUIDED with "mpi_pset_name": by process set.
int comm_split_pset(Comm* c, const std::string& pset, int key, Comm** out);

}  // namespace mpc::mpi
