// mpi_api/progress_engine: the MPI layer's poll function, and operations that
// complete in steps (collective schedules) progressed by whoever polls.
//
// A Progressable is registered with its owner rank. When one of its internal
// requests completes, the completer only flags the owner (a RankState, which
// lives for the whole run, so no completer ever touches an operation that may
// be gone). poll() then progresses the flagged ranks' operations: the caller's
// own first, and, in collaborative mode, other ranks' too: an idle rank fires
// the next sends of a computing rank's collective, not just receives its data.
#pragma once

#include <atomic>

namespace mpc::mpi {

struct RankState;
struct Request;

class Progressable {
public:
    virtual ~Progressable() = default;
    // Advances as far as possible; true once finished. Called by one thread at
    // a time (the owner's progress lock is held).
    virtual bool progress() = 0;
    // MPI_Cancel on the request: true when the operation takes it (it may
    // still complete normally, the cancel having failed); false for those the
    // standard forbids cancelling (collectives).
    virtual bool cancel() { return false; }
    // Completed when progress() has returned true.
    Request* request = nullptr;
};

// Registers p with its owner and progresses it once (now), or leaves it to
// the next poll of the owner's operations (by the owner or, collaboratively,
// by an idle rank).
void progress_add(RankState* owner, Progressable* p, bool now = true);
// Something owner's operations wait for has happened (any thread).
void progress_notify(RankState* owner);
// Progresses owner's operations if another thread is not already doing so.
bool progress_rank(RankState* owner);

enum class PollMode { Wait, Collaborative, Thread };
void set_poll_mode(PollMode mode);
PollMode poll_mode();

// The poll function: network (if any), then operations of the caller (a local
// rank index, or -1 for an idle VP / progress thread) and, collaboratively, of
// the others (unless steal is false). An idle VP gives its NUMA node
// (thief_numa) so that it serves the ranks near it first. Returns true when
// something was done.
bool poll(int caller, bool steal = true, int thief_numa = -1);
// Counts a drain of victim's inbox done by someone else (collaborative
// polling); called while the transport gate is open.
void count_steal(RankState* victim);

}  // namespace mpc::mpi
