// mpi_api/alloc_kinds: MPI 4.1's memory allocation kinds (section 12.4.3), the
// "mpi_memory_alloc_kinds" info key.
//
// A program asks for kinds (through mpcrun --memory-alloc-kinds for the
// world model, or MPI_Session_init's info for a session) and reads back which
// of them the library supports, from the info of a session or of any object
// (communicator, window, file). Every rank here lives in host memory: the
// library supports "system" (memory from the system allocator) and "mpi"
// (MPI_Alloc_mem, MPI_Win_allocate, MPI_Win_allocate_shared) with any of its
// restrictors; device kinds ("cuda:device", ...) are not supported and are
// left out of the answer. The key never changes what MPI allocates.
#pragma once

#include <string>

namespace mpc::mpi {

struct Comm;

inline constexpr const char* kAllocKindsKey = "mpi_memory_alloc_kinds";

// The supported kinds among `requested` (a comma-separated list), in its
// order, without repeats.
std::string supported_alloc_kinds(const std::string& requested);
// What objects of the world model support: MPC_MEMORY_ALLOC_KINDS (set by
// mpcrun --memory-alloc-kinds) filtered, else the standard's default
// "mpi,system".
const std::string& world_alloc_kinds();
// What c supports: its session's kinds when it derives from one still open,
// the world model's otherwise.
std::string alloc_kinds_of(const Comm* c);

}  // namespace mpc::mpi
