// collectives/persistent: persistent collective operations (MPI 4.0 section
// 6.13), built once by MPI_X_init and started any number of times with
// MPI_Start / MPI_Startall.
//
// The initialization is the collective call: it takes the communicator's next
// collective tag (every member builds its persistent operations in the same
// order as its other collectives) and builds the operation, a schedule
// (schedule.hpp) with its steps, tags, scratch memory and datatype references,
// or a shared-memory operation of the node process (shm.hpp). A start only
// runs it again: no building, no argument checks, no allocation. Since every
// start of one request reuses the request's own tag, starts of different
// persistent requests may interleave freely across members; the starts of one
// request follow each other (a request is started again only once complete).
//
// This room never blocks in a start and never touches the network directly.
#pragma once

#include <memory>

#include "collectives/collectives.hpp"
#include "mpi_api/progress_engine.hpp"
#include "mpi_api/request.hpp"

namespace mpc::coll {

class Persistent : public mpi::Progressable {
  public:
    // Starts one run; r (the user's request, already set pending) completes
    // with the run, on this thread or whoever progresses it.
    virtual void start(mpi::Request* r) = 0;
};

// The persistent operation that runs schedule s at every start.
std::unique_ptr<Persistent> persistent_schedule(SchedulePtr s);

// A new inactive persistent request of rank c->owner for p (freed with it);
// returns its handle. type, when derived, is referenced as long as the request
// lives (the schedules hold their own references).
MPI_Request persistent_request(Comm* c, std::unique_ptr<Persistent> p, Datatype* type = nullptr);

// MPI_Start of persistent collective request r (inactive, set pending).
inline void persistent_start(mpi::Request* r) {
    static_cast<Persistent*>(r->operation)->start(r);
}

}  // namespace mpc::coll
