// The persistent collectives that the last member to start runs for everyone
// (shm_combine.cpp), for shm_persistent.cpp's Barrier and Allreduce.
#pragma once

#include <cstddef>
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

}  // namespace mpc::coll::shm
