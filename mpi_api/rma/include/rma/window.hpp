// rma/window: one-sided communication (MPI 3.1 chapter 11), the engine the C
// bindings call: windows, their memory, operations and synchronisation.
//
// Ranks of a node process share one address space, so a window of a rank of
// the same node process is reached with plain loads and stores: Put and Get
// are one copy, accumulates on basic types are CPU atomics element by
// element, a shared window is one allocation. Windows of ranks in other node
// processes are reached through the network: RDMA writes, reads and atomics
// where the driver has them, and otherwise messages that whoever polls the
// target node executes (collaborative polling: the target rank itself may be
// computing). docs/rma.md has the whole design: epochs, where operations
// queue, who completes them, lock fairness, accumulate ordering.
//
// The bindings check handles and arguments; these functions check what needs
// the window (epochs, ranges, datatypes against the target) and return MPI
// error codes. They never throw and never hold a lock while they wait.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mpi.h"
#include "mpi_api/comm.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/group.hpp"
#include "mpi_api/handles.hpp"
#include "mpi_api/info.hpp"
#include "mpi_api/op.hpp"
#include "mpi_api/rank.hpp"
#include "mpi_api/request.hpp"
#include "runtime/sync.hpp"

namespace mpc::rma {

using mpi::Comm;
using mpi::Datatype;
using mpi::Op;
using mpi::RankState;
using mpi::Request;

struct TargetState;  // a rank's exposed side of a window (src/target.hpp)

// What a rank knows about another member of its window.
struct Member {
    int world = 0;                 // world rank
    int node = 0;                  // its node process
    TargetState* local = nullptr;  // in this node process: its exposed state
    uintptr_t base = 0;            // its window memory, in its address space
    MPI_Aint size = 0;
    int disp_unit = 1;
    uint32_t id = 0;    // names its TargetState in messages
    bool rdma = false;  // its memory is registered: rdma_base, rdma_key
    uint64_t rdma_base = 0, rdma_key = 0;
};

// Origin-side state of one member as a target.
struct PeerState {
    enum Lock : uint8_t { kUnlocked, kShared, kExclusive, kNoCheck };
    uint8_t lock = kUnlocked;          // what this origin holds or asked for
    bool lock_requested = false;       // a Lock message went to its node
    std::atomic<bool> granted{false};  // the lock is ours
    std::atomic<int> pending{0};       // operations and answers still in flight
    // Puts or accumulates sent since the last flush. Atomic, as is `touched`
    // under Win::touch_lock: threads of a rank may issue operations at once.
    std::atomic<bool> dirty{false};
    bool touched = false;              // listed in Win::touched
    std::atomic<int> refused{0};       // operations the target refused (out of range)
};

enum class Access : uint8_t {
    None,
    FenceReady,  // a fence was called: an epoch starts with the next operation
    Fence,       // operations were issued since the last fence
    Pscw,        // between MPI_Win_start and MPI_Win_complete
    Lock,        // one or more MPI_Win_lock
    LockAll,
};

struct Win {
    int handle = MPI_WIN_NULL;
    RankState* owner = nullptr;
    Comm* comm = nullptr;  // a private copy of the creating communicator
    int rank = 0, size = 0;
    int flavor = MPI_WIN_FLAVOR_CREATE;
    int model = MPI_WIN_UNIFIED;
    void* base = nullptr;
    MPI_Aint bytes = 0;
    int disp_unit = 1;
    MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
    std::string name;
    std::map<int, void*> attributes;
    std::map<std::string, std::string> hints;
    std::vector<Member> members;  // by rank in comm
    std::unique_ptr<TargetState> target;
    bool all_local = true;         // every member lives in this node process
    void* allocated = nullptr;     // memory the window frees (allocate, shared: first member)
    void* registration = nullptr;  // network registration of its memory

    // Origin side.
    Access access = Access::None;
    std::vector<int> access_group;  // PSCW: the targets (ranks in comm)
    int locks = 0;                  // Lock: targets locked
    std::unique_ptr<PeerState[]> peers;
    runtime::SpinLock touch_lock;
    std::vector<int> touched;     // members with remote operations to complete
    std::atomic<int> refused{0};  // sum of the peers' refused counts (a hint)
    // Target side (PSCW exposure).
    bool posted = false;
    std::vector<int> exposure_group;  // the origins (ranks in comm)
};

// ---- Objects ------------------------------------------------------------------

// me's window behind handle, or null (invalid, freed, or another rank's).
using WinPool = mpi::HandlePool<Win, mpi::HandleKind::Win>;
extern WinPool* const g_win_pool;
inline Win* win_lookup(RankState* me, MPI_Win handle) {
    Win* w = g_win_pool->lookup(handle);
    return w && w->owner == me ? w : nullptr;
}
// Any live window behind handle, for error messages.
Win* win_lookup_any(MPI_Win handle);

// Creation (collective over comm). info may be null. *out is the new window.
int win_create(void* base, MPI_Aint size, int disp_unit, const mpi::Info* info, Comm* comm,
               Win** out);
int win_allocate(MPI_Aint size, int disp_unit, const mpi::Info* info, Comm* comm, void** baseptr,
                 Win** out);
int win_allocate_shared(MPI_Aint size, int disp_unit, const mpi::Info* info, Comm* comm,
                        void** baseptr, Win** out);
int win_create_dynamic(const mpi::Info* info, Comm* comm, Win** out);
int win_shared_query(Win* w, int rank, MPI_Aint* size, int* disp_unit, void** baseptr);
int win_attach(Win* w, void* base, MPI_Aint size);
int win_detach(Win* w, const void* base);
// Collective; checks that no epoch is open first.
int win_free(Win* w);

// Raises code through w's error handler (null: MPI_COMM_WORLD's).
int raise(Win* w, int code);
// The predefined attributes (MPI_WIN_BASE, ...): true when keyval is one.
bool predefined_attr(Win* w, int keyval, void** value);
void set_info(Win* w, const mpi::Info* info);
mpi::Info info_of(const Win* w);

// MPI_Alloc_mem / MPI_Free_mem.
int alloc_mem(MPI_Aint size, const mpi::Info* info, void** out);
int free_mem(void* base);

// ---- Operations ------------------------------------------------------------------
// Arguments the bindings checked: handles valid and committed, counts >= 0,
// target_rank a rank of the window or MPI_PROC_NULL (nothing happens then).
// request: MPI_Rput and friends (passive target epochs only), else null.

struct Transfer {
    const void* origin = nullptr;
    int origin_count = 0;
    Datatype* origin_type = nullptr;
    int target_rank = 0;
    MPI_Aint target_disp = 0;
    int target_count = 0;
    Datatype* target_type = nullptr;
};

int put(Win* w, const Transfer& t, MPI_Request* request);
int get(Win* w, void* origin, const Transfer& t, MPI_Request* request);
// result null: MPI_Accumulate; else MPI_Get_accumulate into (result, count, type).
int accumulate(Win* w, const Transfer& t, const Op* op, void* result, int result_count,
               Datatype* result_type, MPI_Request* request);
int compare_and_swap(Win* w, const void* origin, const void* compare, void* result, Datatype* type,
                     int target_rank, MPI_Aint target_disp);

// The short paths (fast.cpp): the whole call when it is done here with
// predefined types and nothing unusual (true), else nothing (false: take
// the full path, which reports any error).
bool put_fast(Win* w, const void* origin, int count, MPI_Datatype type, int target,
              MPI_Aint disp, int target_count, MPI_Datatype target_type);
bool get_fast(Win* w, void* origin, int count, MPI_Datatype type, int target, MPI_Aint disp,
              int target_count, MPI_Datatype target_type);
bool accumulate_fast(Win* w, const void* origin, int count, MPI_Datatype type, void* result,
                     int result_count, MPI_Datatype result_type, int target, MPI_Aint disp,
                     int target_count, MPI_Datatype target_type, MPI_Op op);
bool flush_fast(Win* w, int target);

// ---- Synchronisation ----------------------------------------------------------------

int fence(Win* w, int assertion);
int start(Win* w, const mpi::GroupData& group, int assertion);
int complete(Win* w);
int post(Win* w, const mpi::GroupData& group, int assertion);
int wait(Win* w);
int test(Win* w, bool* done);
int lock(Win* w, int type, int rank, int assertion);
int unlock(Win* w, int rank);
int lock_all(Win* w, int assertion);
int unlock_all(Win* w);
// rank -1: every target. local: only until the origin buffers may be reused.
int flush(Win* w, int rank, bool local);
int sync(Win* w);

}  // namespace mpc::rma
