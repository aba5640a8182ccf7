// mpi_api/context_id: agreeing on the context ids of new communicators.
//
// A communicator uses a pair of context ids: point-to-point at 2p, collectives
// at 2p + 1. Each rank keeps a bitmask of the pairs it uses; the members of a
// new communicator agree on pairs free at all of them with a bitwise-AND
// reduction of their masks (the MPICH scheme). No process-wide lock: a rank's
// mask is touched only by that rank's own threads, and ranks of other node
// processes take part the same way.
//
// Threads of one rank may create communicators at once, each agreeing with a
// different team, and a rank may be behind in a team's sequence of calls. So
// no agreement keeps a rank's mask while it waits for the others (that made
// cycles: a rank holding its mask for a team whose slow member waited, in
// another call, for that very mask). An agreement is optimistic, in rounds of
// two steps: every member contributes what it has free and not reserved, all
// pick the same candidate pairs from the AND, and each member reserves them if
// they are still free there; a second AND says whether all could. If one
// could not (another agreement of that rank took them meanwhile), the
// reservations are dropped and the round is tried again. Agreements with
// different keys start their search at different free pairs, so concurrent
// ones rarely want the same.
#pragma once

#include <cstdint>
#include <vector>

#include "mpi_api/internal_coll.hpp"
#include "runtime/sync.hpp"

namespace mpc::mpi {

struct RankState;

struct ContextIds {
    static constexpr int kPairs = 4096;
    static constexpr int kWords = kPairs / 64;
    runtime::SpinLock lock;
    uint64_t used[kWords] = {0x3};  // pairs 0 and 1: MPI_COMM_WORLD and MPI_COMM_SELF
    uint64_t reserved[kWords] = {};  // candidates of agreements in their second step
};

// Where the tag of each round comes from: a fixed tag, or the next collective
// tag of a communicator all of whose local members take part (0 if neither).
struct TagSource {
    Comm* sequence = nullptr;
    int fixed = -1;
    int next();
};

// How the members of a new communicator talk while they agree.
struct Agreement {
    Team local;      // the local members
    int root = 0;    // rank in `local` that talks to the remote group
    TagSource tags;  // tags on local's collective context
    // Intercommunicators: root exchanges the group's mask with the remote
    // group's root, rank cross_peer of cross (on its collective context).
    Comm* cross = nullptr;
    int cross_peer = 0;
    TagSource cross_tags;
    uint64_t key = 0;    // the same at every member; spreads concurrent agreements' picks
    bool claims = true;  // false: this rank takes part but will not be a member
};

// Agrees on npairs pairs free at every member; on success sets contexts[i] to
// the first context id (2p) of each pair, lowest first, and marks them used.
// Returns MPI_SUCCESS or an error code (no free pairs left).
int agree_contexts(RankState* me, const Agreement& a, int npairs, uint32_t* contexts);
// Gives a pair back (its first context id) when a communicator is freed.
void release_context(RankState* me, uint32_t context);

}  // namespace mpc::mpi
