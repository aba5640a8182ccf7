// mpi_api/pset: the process sets of the sessions model (MPI 4.0 section
// 11.3): "mpi://WORLD" (every rank), "mpi://SELF" (the caller) and one per
// node process, "fibermpi://node/<k>". Fixed for the whole job, so every
// rank sees the same list in the same order. Pure lookups: never blocks.
#pragma once

#include <string>
#include <vector>

#include "mpi_api/rank.hpp"

namespace mpc::mpi {

inline constexpr const char* kPsetWorld = "mpi://WORLD";
inline constexpr const char* kPsetSelf = "mpi://SELF";
inline constexpr const char* kPsetNodePrefix = "fibermpi://node/";

// All process set names, in the order MPI_Session_get_nth_pset gives them.
std::vector<std::string> pset_names();
// The world ranks of process set `name` as rank me sees it, in rank order;
// false when there is no such set. Names compare case-insensitively in their
// "mpi://" part (the standard's names are case-insensitive).
bool pset_members(const std::string& name, const RankState* me, std::vector<int>* world_ranks);

}  // namespace mpc::mpi
