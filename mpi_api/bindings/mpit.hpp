// The tools information interface (MPI_T, MPI 3.1 section 14.3): the state
// its bindings keep per MPI process (rank), shared by mpit_*.cpp.
//
// The variables themselves live in the runtime's registry (runtime/tools.hpp);
// this layer gives them MPI_T's shape: a reference count of MPI_T_init_thread
// per rank, cvar handles, pvar sessions with their handles and each handle's
// own view of its variable. Every MPI_T_* function returns an error class
// directly (no error handler is called, MPI 3.1 section 14.3.9), works before
// MPI_Init and after MPI_Finalize, from any thread of the rank, and never
// touches another rank's sessions: those are invalid handles for it.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "mpi_api/api.hpp"
#include "runtime/tools.hpp"

namespace mpc::mpi {
struct RankState;
// The rank of a program the runtime did not host (libfibermpi loaded some
// other way): a singleton world on the calling thread (init.cpp).
RankState* attach_unhosted();
}  // namespace mpc::mpi

// The opaque types of mpi.h (global, as C names them).
struct mpc_t_cvar_handle_s {
    std::shared_ptr<const mpc::runtime::tools::Cvar> var;
    int count = 1;
    MPI_Comm comm = MPI_COMM_NULL;  // the bound object, resolved at every access
};

struct mpc_t_pvar_session_s;

struct mpc_t_pvar_handle_s {
    std::shared_ptr<const mpc::runtime::tools::Pvar> var;
    mpc_t_pvar_session_s* session = nullptr;
    int count = 1;
    MPI_Comm comm = MPI_COMM_NULL;
    bool relative = false;  // counters, aggregates, timers: the handle sees its own increments
    bool started = false;
    // The handle's view of a relative variable: value = accum + (raw - base)
    // while started, accum while stopped; count elements of the var's type.
    std::vector<unsigned char> base, accum;
};

struct mpc_t_pvar_session_s {
    mpc::mpi::RankState* owner = nullptr;
    // By address: a tool may hold a handle of every variable and read them all.
    std::unordered_map<const mpc_t_pvar_handle_s*, std::unique_ptr<mpc_t_pvar_handle_s>> handles;
};

namespace mpc::mpi::tools {

// Resource bounds of one rank (MPI_T_ERR_OUT_OF_SESSIONS / OUT_OF_HANDLES):
// generous for any tool, small enough that a runaway loop is caught.
inline constexpr int kMaxSessions = 256;
inline constexpr int kMaxPvarHandles = 16384;  // over all sessions of the rank
inline constexpr int kMaxCvarHandles = 16384;

// What MPI_T keeps for one rank. Guarded by its mutex.
struct RankTools {
    std::mutex mutex;
    int init_count = 0;
    int pvar_handles = 0;
    std::vector<std::unique_ptr<mpc_t_pvar_session_s>> sessions;
    std::unordered_map<const mpc_t_cvar_handle_s*, std::unique_ptr<mpc_t_cvar_handle_s>>
        cvar_handles;
};

// The calling rank's MPI_T state (the rank is attached first in a program the
// runtime did not host), or null when the caller belongs to no rank.
RankTools* rank_tools(RankState* me, RankState** who);

// An MPI_T call: locks the calling rank's state when MPI_T is initialized
// there; otherwise error() is the class to return (NOT_INITIALIZED) and
// nothing is locked.
class ToolsCall {
  public:
    explicit ToolsCall(RankState* me);
    int error() const { return error_; }
    RankState* rank() const { return rank_; }
    RankTools& state() const { return *state_; }

  private:
    RankState* rank_ = nullptr;
    RankTools* state_ = nullptr;
    std::unique_lock<std::mutex> lock_;
    int error_ = MPI_SUCCESS;
};

// Frees everything a rank holds (its last MPI_T_finalize); state locked.
void release_all(RankTools& t);
// Frees one session's handles, closing the gates of started ones.
void release_session(RankTools& t, mpc_t_pvar_session_s* s);

// MPI 3.1 section 14.3.3: at most *len - 1 characters and a NUL into buf
// (nothing when buf is null or *len is 0), and the full length plus one in *len.
void return_string(const std::string& s, char* buf, int* len);

// mpi.h's values of the registry's enums.
MPI_Datatype datatype_of(runtime::tools::Type t);
int verbosity_of(runtime::tools::Verbosity v);
int bind_of(runtime::tools::Bind b);
int scope_of(runtime::tools::Scope s);
int class_of(runtime::tools::Class c);
// mpi.h's class value back to the registry's; false when it names no class.
bool class_from(int value, runtime::tools::Class* out);

// The object a bound variable is read for: resolves `comm` for `me` (null
// when the binding needs none). False when the communicator is gone.
bool subject_for(RankState* me, runtime::tools::Bind bind, MPI_Comm comm,
                 runtime::tools::Subject* out);
// Reads the communicator an obj_handle argument points to.
int bound_comm(RankState* me, runtime::tools::Bind bind, const void* obj_handle, MPI_Comm* out);

}  // namespace mpc::mpi::tools
