// Persistent collectives through schedules (persistent.hpp): the schedule is
// built at initialization and run again, step for step, at every start.
#include "collectives/persistent.hpp"

#include "mpi_api/rank.hpp"

namespace mpc::coll {
namespace {

class PersistentSchedule final : public Persistent {
  public:
    explicit PersistentSchedule(SchedulePtr s) : schedule_(std::move(s)) {}
    // The schedule itself goes to the progress engine and completes r.
    void start(mpi::Request* r) override { schedule_->start(r); }
    bool progress() override { return true; }  // never registered itself

  private:
    SchedulePtr schedule_;
};

}  // namespace

std::unique_ptr<Persistent> persistent_schedule(SchedulePtr s) {
    return std::make_unique<PersistentSchedule>(std::move(s));
}

MPI_Request persistent_request(Comm* c, std::unique_ptr<Persistent> p, Datatype* type) {
    mpi::Request* r = mpi::request_allocate(mpi::Request::Kind::Collective, c->owner, c);
    r->persistent = true;
    r->active = false;
    r->held_type = mpi::datatype_retain(type);
    r->operation = p.release();  // freed with the request
    // Inactive: complete, as MPI_Wait on it returns at once.
    r->state.store(mpi::Request::kComplete, std::memory_order_relaxed);
    return r->handle;
}

}  // namespace mpc::coll
