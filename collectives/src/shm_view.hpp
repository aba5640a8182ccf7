// A rank's view of a communicator for the shared-address-space collectives
// (shm.hpp), and what their entry points (shm.cpp, shm_coll.cpp,
// shm_hier.cpp) share: finding the view, starting a nonblocking collective's
// steps, running the leaders' schedule of a hierarchical one.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "collectives/collectives.hpp"
#include "shm_local.hpp"

namespace mpc::coll::shm {

// A rank's view of a communicator for these collectives (Comm::shm).
struct View {
    std::shared_ptr<ShmGroup> group;  // the members in this node process, in rank order
    int local_rank = 0;               // mine in group (0: this node's leader)
    bool flat = true;                 // every member is in this node process
    bool useful = true;               // false: one member per node process (no intra-node phase)
    // Hierarchical only, by communicator rank: its node's leader's index among
    // the leaders, its index in my node's group (-1 elsewhere), and its index
    // in its own node's group.
    std::vector<int> leader_index;
    std::vector<int> local_index;
    std::vector<int> node_index;
    // By leader index: the members of that node process (communicator ranks,
    // in rank order). `blocks`: each node's ranks are consecutive.
    std::vector<std::vector<int>> node_members;
    bool blocks = true;
    std::unique_ptr<Comm> leaders;  // my node's leader only: the leaders' communicator
    uint64_t episode = 0;           // Local::episode
    uint64_t all_at = 0;            // Local::all_at
    // My nonblocking collectives on the communicator, counted when started and
    // when finished: they finish in that order, and blocking ones wait for
    // them all (episodes are taken in call order).
    uint64_t nbc_started = 0;
    std::atomic<uint64_t> nbc_finished{0};
    bool nbc_watching = false;  // ShmGroup::watch_nonblocking done
};

// The first collective on c builds the view (out of line: the look-up of every
// later one stays a load and a test).
View& make_view(Comm* c);
inline View& view_of(Comm* c) {
    if (c->shm) [[likely]]
        return *static_cast<View*>(c->shm.get());
    return make_view(c);
}

// Before a blocking collective takes its episodes: my nonblocking ones on c,
// which took theirs first, must be finished.
void finish_nonblocking(View& v);
inline Local local_of(View& v) {
    if (v.nbc_finished.load(std::memory_order_acquire) != v.nbc_started) finish_nonblocking(v);
    return Local{*v.group, v.local_rank, &v.episode, &v.all_at};
}

// Nonblocking: the Local to make the steps with (the steps take their
// episodes then, in call order), and the request that runs them (holding a
// reference on type, if given).
Local nonblocking_local(Comm* c);
MPI_Request start_steps(Comm* c, Datatype* type, std::unique_ptr<Steps> steps);
template <class Make>
MPI_Request start_nonblocking(Comm* c, Datatype* type, Make&& make) {
    return start_steps(c, type, make(nonblocking_local(c)));
}

// Runs the leaders' schedule built by `build` (leaders only) under the tag the
// communicator's next schedule would take; every member skips that tag.
template <class Build>
int among_leaders(Comm* c, View& v, Build&& build) {
    int err = MPI_SUCCESS;
    if (v.leaders) {
        v.leaders->coll_sequence = c->coll_sequence;
        err = run_blocking(build(v.leaders.get()));
    }
    c->coll_sequence += 1;
    return err;
}

// Scratch laid out as count elements of type (for a leader whose own buffer
// does not take part).
struct TypedScratch {
    TypedScratch(int count, const Datatype* type) {
        const MPI_Aint span = count > 0 ? type->true_extent + (count - 1) * type->extent : 0;
        memory.reset(new unsigned char[static_cast<size_t>(std::max<MPI_Aint>(span, 1))]);
        // In integers: the type's lower bound may be an absolute address.
        base = reinterpret_cast<unsigned char*>(reinterpret_cast<uintptr_t>(memory.get()) -
                                                static_cast<uintptr_t>(type->true_lb));
    }
    std::unique_ptr<unsigned char[]> memory;
    unsigned char* base;
};

}  // namespace mpc::coll::shm
