// mpi_api/comm: communicators.
//
// A communicator object belongs to one rank (its view: its rank, error handler,
// attributes). MPI_COMM_WORLD and MPI_COMM_SELF are the same handle for every
// rank of the process and resolve to the calling rank's own object.
// Point-to-point traffic uses `context`; collective traffic `context + 1`, so
// the two never match each other.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "mpi.h"
#include "mpi_api/group.hpp"

namespace mpc::mpi {

struct RankState;
struct BsendBuffer;  // bindings/requests.cpp
struct Topology;

struct Comm {
    int handle = MPI_COMM_NULL;
    RankState* owner = nullptr;
    uint32_t context = 0;   // point-to-point; collectives use context + 1
    GroupRef group;         // local group
    GroupRef remote_group;  // intercommunicators only
    int rank = 0;           // the owner's rank in `group`
    int size = 0;
    MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
    // The handle a user error handler receives when it is not the
    // communicator's own: a file's private communicator (mpi_api/io) carries
    // the file's handler and hands it the file handle. 0: the communicator.
    int error_object = 0;
    std::string name;
    bool predefined = false;
    uint32_t coll_sequence = 0;  // collective operations started, for tag generation
    std::map<int, void*> attributes;            // keyval -> value (attributes.cpp)
    std::map<std::string, std::string> hints;   // set by MPI_Comm_set_info
    std::shared_ptr<const Topology> topology;   // virtual topology, or null (topology.hpp)
    // Intercommunicators: the local group as an intracommunicator, for the
    // internal collectives of communicator construction (no handle).
    std::unique_ptr<Comm> local_comm;
    // Shared-address-space collectives (collectives/shm.hpp): this rank's
    // view of the communicator for them (opaque here, made on first use).
    std::shared_ptr<void> shm;
    // MPI 4.1: the communicator's own buffered-send buffer
    // (MPI_Comm_attach_buffer), and the session it derives from (made from a
    // session's group, or from such a communicator), whose buffer comes next.
    std::shared_ptr<BsendBuffer> bsend;
    int session = MPI_SESSION_NULL;

    bool is_inter() const { return remote_group != nullptr; }
    int remote_size() const { return remote_group ? remote_group->size : size; }
    // World rank of rank r of the group a point-to-point peer lives in.
    int peer_world_rank(int r) const {
        return remote_group ? remote_group->world_rank(r) : group->world_rank(r);
    }
};

// Context ids of the predefined communicators; others are allocated above.
inline constexpr uint32_t kWorldContext = 0;
inline constexpr uint32_t kSelfContext = 2;
inline constexpr uint32_t kFirstFreeContext = 4;

// The calling rank's communicator for handle, or nullptr when invalid or when
// it belongs to another rank. (comm_lookup(me, handle) in rank.hpp when the
// caller is known.)
Comm* comm_lookup(MPI_Comm handle);
// A communicator me created (not a predefined one), or nullptr.
Comm* comm_lookup_created(const RankState* me, MPI_Comm handle);
// The live communicator behind handle whoever owns it, for error messages
// (ranks of a node process may share globals, hence handles).
Comm* comm_lookup_any(MPI_Comm handle);
// c's handle, MPI_COMM_NULL for none (a constructor's result for the ranks
// left out).
inline MPI_Comm handle_or_null(const Comm* c) {
    return c ? c->handle : MPI_COMM_NULL;
}
// Sets up the predefined communicators of a rank.
void comm_init_rank(RankState* rank);

}  // namespace mpc::mpi
