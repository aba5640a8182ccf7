// mpi_api/rank: the ranks of this node process and the layout of the job.
//
// A RankState is everything MPI keeps per rank: its matching queues, its
// predefined communicators, its MPI life cycle. Ranks are hosted as scheduler
// tasks whose owner pointer is their RankState; threads a rank creates inherit
// it, so current_rank() answers "who is calling?" for every MPI entry point.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mpi_api/comm.hpp"
#include "mpi_api/context_id.hpp"
#include "mpi_api/match.hpp"
#include "runtime/sync.hpp"
#include "scheduler/scheduler.hpp"

namespace mpc::mpi {

struct BsendBuffer;
namespace intranode {
struct Rings;
}

// Where the threads of a rank that park inside MPI can be woken: rung when
// work arrives that only the rank may do (its network work and inbox in wait
// mode) or when an operation of the rank needs progress. Every thread of the
// rank that parks (several with MPI_THREAD_MULTIPLE) arms its own entry, and
// a ring wakes them all: waking only the last one to arm would leave the
// others asleep with the work undone.
class Doorbell {
public:
    struct Entry {  // on the parking thread's stack
        sched::Waiter* waiter = nullptr;
        Entry* next = nullptr;
    };
    void arm(Entry* e, sched::Waiter* w);
    void disarm(Entry* e);
    // Unparks every armed thread; one load when none is.
    void ring() {
        if (armed_.load(std::memory_order_seq_cst) != 0) ring_armed();
    }

private:
    void ring_armed();
    runtime::SpinLock lock_;
    Entry* head_ = nullptr;
    std::atomic<int> armed_{0};
};
// A rank's inbox: one cache line, written by the ranks of the node that send
// to it and read by whoever drains it (intranode.cpp has the protocol).
// `word` is the top of a lock-free stack of pushed messages, newest first,
// with kSlotBusy set while the line's own slot holds a message (or a sender
// is filling it). The slot carries a small message in the very line the
// receiver polls, so receiving it moves one line instead of two.
struct alignas(64) Inbox {
    static constexpr uintptr_t kSlotBusy = 1;  // messages are 8-byte aligned
    static constexpr size_t kSlotPayload = 40;

    std::atomic<uintptr_t> word{0};
    std::atomic<uint32_t> slot_filled{0};  // the message's size + 1 once written
    Envelope slot_env{};
    unsigned char slot_data[kSlotPayload];
};
static_assert(sizeof(Inbox) == 64, "the inbox is one cache line");

// What a rank's messages and waits cost, counted while the transport gate is
// open (runtime/tools.hpp: an MPI_T handle of these counters is started, or
// MPC_STATS is on). Relaxed increments: the threads of a rank count at once.
struct TransportCounters {
    // The intra-node paths of a message, on its sender (the network's are
    // counted by the network, ib::RankNetStats).
    enum Path : int { IntraSlot, IntraCell, IntraRendezvous, kPaths };
    std::atomic<uint64_t> msgs[kPaths] = {};
    std::atomic<uint64_t> bytes[kPaths] = {};
    std::atomic<uint64_t> stolen{0};   // drains of the rank's inbox done by others
    std::atomic<uint64_t> waits{0};    // times the rank waited in MPI for a completion
    std::atomic<uint64_t> wait_ns{0};  // and for how long

    void count(Path p, size_t n) {
        msgs[p].fetch_add(1, std::memory_order_relaxed);
        bytes[p].fetch_add(n, std::memory_order_relaxed);
    }
};

struct ProbeWaiter;
struct FnStats;
struct Request;
class Progressable;

struct RankState {
    RankState() = default;
    RankState(const RankState&) = delete;
    RankState& operator=(const RankState&) = delete;
    ~RankState();

    int world_rank = 0;
    int local_index = 0;  // index among the ranks of this node process
    int vp = 0;

    MatchQueues match;
    // The inbox word as it was when the rank last received straight from its
    // inbox without taking it (intranode.cpp, receive_in_place): the slot's
    // busy mark, or the address of the lone cell. The inbox holds nothing new
    // while it still reads that; the next drain takes it and frees the slot or
    // the cell. Under match.lock; atomic because pollers compare the inbox
    // with it without the lock.
    std::atomic<uintptr_t> received_in_place{0};

    // Intra-node messages not matched yet, pushed by their senders into one
    // cache line of their own (see Inbox); the rank, or a rank polling for
    // it, moves them into matching in arrival order (intranode.hpp).
    Inbox inbox;
    // The rank's rings: per sender that got one (as receiver), and which
    // receivers it has one to (as sender). See intranode_rings.hpp.
    intranode::Rings* rings = nullptr;
    // Taken from the inbox, not matched yet (both under match.lock; the head is
    // atomic because pollers peek at it without the lock, relaxed).
    alignas(64) std::atomic<Incoming*> backlog_head{nullptr};
    Incoming* backlog_tail = nullptr;
    // Threads of this rank blocked in MPI_Probe/Mprobe (several with
    // MPI_THREAD_MULTIPLE), unparked when an unexpected message arrives. The
    // list is guarded by match.lock; prober_count lets senders skip the lock
    // when nobody probes.
    ProbeWaiter* probers = nullptr;
    std::atomic<int> prober_count{0};
    // Threads of this rank parked inside MPI: rung when network work arrives
    // in the rank's pending list (in wait mode only they may process it).
    Doorbell doorbell;

    // Operations in progress (collective schedules), see progress_engine.hpp.
    runtime::SpinLock progress_lock;
    std::vector<Progressable*> in_progress;
    std::atomic<bool> progress_pending{false};
    // A task of this rank waits for its collectives in block_until, polling
    // (not parked): the others leave its operations to it (see poll in
    // progress_engine.cpp). A line of its own, written around such waits,
    // read by the others only when progress_pending says there is work.
    alignas(64) std::atomic<bool> self_polling{false};

    enum Phase : int { NotInitialized = 0, Initialized = 1, Finalized = 2 };
    alignas(64) std::atomic<int> phase{NotInitialized};
    // Sessions of this rank open now (MPI_Session_init, MPI 4.0 section
    // 11.3): MPI is usable while the world model is initialized or one is.
    std::atomic<int> sessions{0};
    int thread_level = MPI_THREAD_SINGLE;
    void* main_thread = nullptr;  // the waiter of the thread that initialized MPI

    Comm world;
    Comm self;
    ContextIds contexts;  // context id pairs in use (context_id.hpp)
    std::shared_ptr<BsendBuffer> bsend;  // MPI_Buffer_attach's (bindings/requests.cpp)
    int exit_status = 0;

    // API layer bookkeeping (see api.hpp). current_fn is atomic (relaxed)
    // because the hang watchdog reads it from its own thread.
    std::atomic<int> current_fn{-1};  // the MPI function the rank's task is in, for messages
    // Per-function statistics, made on first use once counted (owned).
    std::atomic<FnStats*> fn_stats{nullptr};

    // Counted while the hang watchdog (hang_watch.hpp) runs or the transport
    // gate is open (see TransportCounters).
    std::atomic<uint64_t> polls{0};           // times the rank polled for progress (waiting)
    std::atomic<uint64_t> completions{0};     // requests of the rank that completed
    std::atomic<const Request*> blocked_on{nullptr};  // what the task waits for in wait_complete
    std::atomic<bool> ended{false};           // the rank's main returned (or it called exit)

    // The rank's private copy of the program (rank images): its dlopen handle,
    // or nullptr when the rank runs the image the kernel loaded. The Fortran
    // bindings find that copy's sentinel COMMON block through it (cached).
    void* image = nullptr;
    std::atomic<const void*> fortran_sentinels{nullptr};

    // Written by the rank itself when counting: lines of their own.
    alignas(64) TransportCounters transport;
};

// The job as this node process sees it.
struct World {
    int size = 1;          // ranks in MPI_COMM_WORLD
    int num_nodes = 1;     // node processes
    int node_id = 0;
    std::vector<int> node_of;             // world rank -> node process
    std::vector<RankState*> local_of;     // world rank -> local RankState, or nullptr
    std::vector<RankState*> locals;       // the ranks hosted here, by local index
    std::string processor_name;
    int universe_size = 1;
    int appnum = 0;
    // Equal in every node process of the job and, with overwhelming
    // probability, different in any other job: MPI_Comm_join tells with it
    // whether the process at the socket's other end is one of ours.
    uint64_t job_token = 0;

    RankState* local(int world_rank) const { return local_of[static_cast<size_t>(world_rank)]; }
};

World& world();

// Creates the world: `size` ranks, rank r on node node_of[r]; this is node
// `node_id`. Creates the RankStates of the local ranks.
void world_create(int size, int num_nodes, int node_id, const std::vector<int>& node_of);
// Frees the local ranks' states (tests that create several worlds).
void world_destroy();

// The calling rank, or nullptr when called from a context that is no rank.
RankState* current_rank();
// me's communicator for handle, or nullptr when invalid or another rank's;
// the predefined ones without a look-up.
inline Comm* comm_lookup(RankState* me, MPI_Comm handle) {
    if (handle == MPI_COMM_WORLD) return &me->world;
    if (handle == MPI_COMM_SELF) return &me->self;
    return comm_lookup_created(me, handle);
}
// World rank of the caller or -1 (for log messages).
int current_world_rank();

}  // namespace mpc::mpi
