// The persistent collectives that the last member to start runs for everyone
// (shm_combine.cpp), for shm_persistent.cpp's Barrier and Allreduce; and, for
// larger data, persistent forms made of a nonblocking form's steps
// (shm_persistent.cpp).
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <memory>

#include "collectives/persistent.hpp"
#include "collectives/shm.hpp"

namespace mpc::coll::shm {

// Whether a run of c moving or reducing `bytes` in all takes this path.
bool combines(Comm* c, size_t bytes);
std::unique_ptr<Persistent> combining_barrier(Comm* c);
// root -1: Allreduce. Null when the data is too large or the operation is
// not predefined.
std::unique_ptr<Persistent> combining_reduction(const void* sendbuf, void* recvbuf, int count,
                                                Datatype* type, const Op* op, int root, Comm* c);

class Steps;
struct Local;
// A persistent collective whose every start makes steps with `make` (those
// of its nonblocking form, shm_local.hpp) on a group of the request's own,
// so that its starts need no order against the communicator's other
// collectives. It holds a reference on each of `types` (null ones skipped)
// while it lives. Null unless c lives in this node process with 2 members or
// more.
using MakeSteps = std::function<std::unique_ptr<Steps>(const Local&)>;
std::unique_ptr<Persistent> persistent_steps(Comm* c, MakeSteps make,
                                             std::initializer_list<Datatype*> types);

}  // namespace mpc::coll::shm
