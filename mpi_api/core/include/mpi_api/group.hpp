// mpi_api/group: process groups as ordered lists of world ranks.
//
// Group data is immutable and shared (communicators and group handles point at
// the same data); every operation builds a new one.
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
    int session = MPI_SESSION_NULL;  // made from a session's process set
};

// A group of these world ranks, stored compactly when they are consecutive.
GroupRef group_from_world_ranks(std::vector<int> world_ranks);

// Group operations of MPI 3.1 section 6.3 on group data. Those that can fail
// return MPI_SUCCESS or a detailed error code (MPI_ERR_RANK for a rank outside
// the group or repeated, MPI_ERR_ARG for a negative count or a bad range).
int group_translate(const GroupData& a, int n, const int* ranks, const GroupData& b, int* out);
int group_compare(const GroupData& a, const GroupData& b);  // IDENT, SIMILAR or UNEQUAL
GroupRef group_union(const GroupData& a, const GroupData& b);
GroupRef group_intersection(const GroupData& a, const GroupData& b);
GroupRef group_difference(const GroupData& a, const GroupData& b);
int group_incl(const GroupData& g, int n, const int* ranks, GroupRef* out);
int group_excl(const GroupData& g, int n, const int* ranks, GroupRef* out);
int group_range_incl(const GroupData& g, int n, const int (*ranges)[3], GroupRef* out);
int group_range_excl(const GroupData& g, int n, const int (*ranges)[3], GroupRef* out);

Group* group_lookup(MPI_Group handle);
// Wraps data in a new group handle.
MPI_Group group_create(GroupRef data);
void group_release(MPI_Group handle);
void group_init_predefined();

}  // namespace mpc::mpi
