// mpi_api/internal_coll: the few blocking collectives the MPI layer itself
// needs to build communicators (agreeing on context ids, exchanging colors and
// keys, topology edges).
//
// They run on a communicator's collective context with a tag the caller
// chooses, among all its ranks or a team of them: MPI_Comm_create_group must
// agree among a group that is not a communicator yet, which the collectives
// room cannot express (and the collectives room sits above this one). Not for
// user data: no datatypes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mpi_api/comm.hpp"

namespace mpc::mpi {

// Tags the internal collectives of MPI_Comm_create_group and
// MPI_Intercomm_create use on the parent's collective context: above the range
// the collectives' own sequence numbers take ([0, 2^30)), so the two never meet.
inline constexpr int kInternalTagBase = 0x40000000;

// The next collective tag of c, the way the collectives room numbers them.
int next_coll_tag(Comm* c);

// Some ranks of a communicator, numbered 0..size-1, that run a collective on
// its collective context. Messages keep the communicator's rank numbering, so
// two teams of the same communicator never confuse each other's messages.
struct Team {
    Comm* comm = nullptr;
    int size = 0;
    int rank = 0;              // the caller's rank in the team
    std::vector<int> members;  // team rank -> rank in comm; empty: all of comm, in order

    int comm_rank(int r) const { return members.empty() ? r : members[static_cast<size_t>(r)]; }
    static Team all(Comm* c) { return Team{c, c->size, c->rank, {}}; }
};

// words[0..n) of every member ANDed, the result at root.
void tree_reduce_and(const Team& t, uint64_t* words, int n, int root, int tag);
// bytes of root's buf copied to every member.
void tree_bcast(const Team& t, void* buf, size_t bytes, int root, int tag);
// n ints of every member, concatenated in rank order into all (n * size ints).
void allgather_ints(const Team& t, const int* mine, int n, int* all, int tag);
// out[r] goes to rank r; in[r] receives what rank r sent to the caller.
void alltoall_int_vectors(const Team& t, const std::vector<std::vector<int>>& out,
                          std::vector<std::vector<int>>& in, int tag);

}  // namespace mpc::mpi
