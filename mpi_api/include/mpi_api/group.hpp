// mpi_api/group: process groups as ordered lists of world ranks.
#pragma once

#include <memory>
#include <vector>

#include "mpi.h"

namespace mpc::mpi {

struct GroupData {
    int size = 0;
    bool identity = false;      // rank r is world rank r (MPI_COMM_WORLD's group)
    int identity_offset = 0;    // with identity: world rank = offset + r
    std::vector<int> ranks;     // otherwise: rank r is world rank ranks[r]

    int world_rank(int r) const { return identity ? identity_offset + r : ranks[static_cast<size_t>(r)]; }
    // Rank of world rank w in this group, or MPI_UNDEFINED.
    int rank_of(int w) const;

    static std::shared_ptr<const GroupData> make_identity(int size, int offset = 0);
    static std::shared_ptr<const GroupData> make(std::vector<int> world_ranks);
};

using GroupRef = std::shared_ptr<const GroupData>;

struct Group {
    GroupRef data;
    bool predefined = false;
};

Group* group_lookup(MPI_Group handle);
// Wraps data in a new group handle.
MPI_Group group_create(GroupRef data);
void group_release(MPI_Group handle);
void group_init_predefined();

}  // namespace mpc::mpi
