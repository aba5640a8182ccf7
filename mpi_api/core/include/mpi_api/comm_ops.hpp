// mpi_api/comm_ops: creating, comparing and freeing communicators.
//
// Every constructor is collective over the members of the new communicator
// (and, except MPI_Comm_create_group, over the parent): the members agree on
// a context id pair (context_id.hpp) through internal point-to-point on the
// parent's collective context, so construction never takes a process-wide
// lock and works the same whether the members share a node process or not.
// Arguments are checked by the bindings; these return MPI error codes.
#pragma once

#include "mpi.h"
#include "mpi_api/comm.hpp"
#include "mpi_api/group.hpp"

namespace mpc::mpi {

// A communicator object of the calling rank, with a fresh handle.
Comm* comm_allocate(RankState* owner);
// Returns the handle and the object's memory to the pool (contexts untouched).
void comm_release(Comm* c);

// *out is the new communicator, or nullptr where the caller gets MPI_COMM_NULL.
// Dup copies attributes through their copy callbacks, and the info hints.
int comm_dup(Comm* old, Comm** out);
// MPI_Comm_idup runs comm_dup in a task of its own while the caller goes on:
// the collective tags it agrees under are reserved by the caller, in call
// order, so that the caller's later collectives on old keep theirs.
struct DupTags {
    int local = -1;  // on old (its local communicator if inter); -1: none reserved
    int cross = -1;  // intercommunicators: on old itself
};
DupTags reserve_dup_tags(Comm* old);
int comm_dup_reserved(Comm* old, const DupTags& tags, Comm** out);
// On an intercommunicator (MPI 3.1 section 6.4.2) each color gives the
// intercommunicator between its local and its remote ranks, or nullptr where
// either side has none.
int comm_split(Comm* old, int color, int key, Comm** out);
// group: a subset of old's group (may differ between ranks when disjoint); on
// an intercommunicator, of the local group, the same at all its ranks.
int comm_create(Comm* old, const GroupRef& group, Comm** out);
// Collective over group only; tag tells apart concurrent calls.
int comm_create_group(Comm* old, const GroupRef& group, int tag, Comm** out);
// peer and remote_leader matter at the local leader only.
int intercomm_create(Comm* local, int local_leader, Comm* peer, int remote_leader, int tag,
                     Comm** out);
int intercomm_merge(Comm* inter, bool high, Comm** out);
// Deletes the attributes (delete callbacks), releases the contexts and the handle.
int comm_free(Comm* c);
// MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR or MPI_UNEQUAL.
int comm_compare(const Comm* a, const Comm* b);

}  // namespace mpc::mpi
