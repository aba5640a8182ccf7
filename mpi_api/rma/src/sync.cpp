// Synchronisation: fences, post-start-complete-wait, passive-target locks and
// flushes. Operations on targets of this node process are complete when
// issued, so these only order memory for them (the barrier of a fence, the
// counters of PSCW, the lock itself); operations on other node processes are
// completed here by messages that follow them on their connection (Flush,
// Unlock, Complete) and by waiting for the answers still due.
#include <atomic>

#include "collectives/collectives.hpp"
#include "collectives/shm.hpp"
#include "engine.hpp"
#include "remote.hpp"
#include "target.hpp"

namespace mpc::rma {

using mpi::make_error;

namespace {

int barrier(Comm* c) {
    if (c->size == 1) return MPI_SUCCESS;
    return coll::shm::eligible(c) ? coll::shm::barrier(c) : coll::barrier(c);
}

PeerState& peer(Win* w, int r) {
    return w->peers[static_cast<size_t>(r)];
}

// Waits for every answer due from the touched members (target alone, or all
// when -1): gets' data, writes' local completions, Flush and Unlock acks.
void await_targets(Win* w, int target) {
    auto listed = [&](int r) { return target < 0 || r == target; };
    wait_until([&] {
        for (int r : w->touched)
            if (listed(r) && peer(w, r).pending.load(std::memory_order_acquire) > 0) return false;
        return true;
    });
}

// Forgets touched members (target, or all) until they get new operations.
void untouch(Win* w, int target) {
    auto listed = [&](int r) { return target < 0 || r == target; };
    size_t keep = 0;
    for (size_t i = 0; i < w->touched.size(); ++i) {
        const int r = w->touched[i];
        if (listed(r))
            peer(w, r).touched = false;
        else
            w->touched[keep++] = r;
    }
    w->touched.resize(keep);
}

// Remote operations of the touched members complete: Flush where puts or
// accumulates went (unless only local completion is asked), then every
// answer awaited.
void finish_remote(Win* w, int target, bool local_only) {
    if (w->touched.empty()) return;
    if (!local_only)
        for (int r : w->touched)
            if (target < 0 || r == target) flush_remote(w, r);
    await_targets(w, target);
    if (!local_only) untouch(w, target);
}

// The ranks of group in the window, or an error when one is not a member.
int window_ranks(Win* w, const mpi::GroupData& group, std::vector<int>* out) {
    out->resize(static_cast<size_t>(group.size));
    for (int i = 0; i < group.size; ++i) {
        const int r = w->comm->group->rank_of(group.world_rank(i));
        if (r == MPI_UNDEFINED)
            return make_error(MPI_ERR_GROUP, "rank %d of the group is not in the window", i);
        (*out)[static_cast<size_t>(i)] = r;
    }
    return MPI_SUCCESS;
}

}  // namespace

int fence(Win* w, int assertion) {
    if (w->access != Access::None && w->access != Access::FenceReady && w->access != Access::Fence)
        return make_error(MPI_ERR_RMA_SYNC,
                          "MPI_Win_fence inside a PSCW or passive-target access epoch");
    if (w->posted)
        return make_error(MPI_ERR_RMA_SYNC, "MPI_Win_fence inside a PSCW exposure epoch");
    if (w->access == Access::Fence) finish_remote(w, -1, false);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (int e = barrier(w->comm)) return e;
    w->access = assertion & MPI_MODE_NOSUCCEED ? Access::None : Access::FenceReady;
    return refused_error(w, -1);
}

int start(Win* w, const mpi::GroupData& group, int assertion) {
    if (w->access != Access::None && w->access != Access::FenceReady)
        return make_error(MPI_ERR_RMA_SYNC, "MPI_Win_start inside another access epoch");
    std::vector<int> ranks;
    if (int e = window_ranks(w, group, &ranks)) return e;
    // Each target must have posted (unless the user asserts it did).
    if (!(assertion & MPI_MODE_NOCHECK)) {
        TargetState& me = *w->target;
        for (int r : ranks) {
            std::atomic<int>& posts = me.posts[static_cast<size_t>(r)];
            wait_until([&] { return posts.load(std::memory_order_acquire) > 0; });
            posts.fetch_sub(1, std::memory_order_acq_rel);
        }
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);
    w->access_group = std::move(ranks);
    w->access = Access::Pscw;
    return MPI_SUCCESS;
}

int complete(Win* w) {
    if (w->access != Access::Pscw)
        return make_error(MPI_ERR_RMA_SYNC, "MPI_Win_complete without MPI_Win_start");
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // Complete follows every operation to its target on the connection: once
    // counted there, they are all done. Reads are waited for first: the
    // target may change its memory as soon as it counts the Complete, and an
    // RDMA read's bytes may still be on their way out of it then.
    await_targets(w, -1);
    for (int r : w->access_group) {
        const Member& m = w->members[static_cast<size_t>(r)];
        if (m.local) {
            m.local->completes.fetch_add(1, std::memory_order_acq_rel);
            m.local->rank->doorbell.ring();
        } else {
            complete_remote(w, r);
        }
    }
    await_targets(w, -1);
    untouch(w, -1);
    w->access = Access::None;
    w->access_group.clear();
    return refused_error(w, -1);
}

int post(Win* w, const mpi::GroupData& group, int assertion) {
    if (w->posted)
        return make_error(MPI_ERR_RMA_SYNC, "MPI_Win_post inside another exposure epoch");
    if (w->access == Access::Fence)
        return make_error(MPI_ERR_RMA_SYNC, "MPI_Win_post inside a fence epoch");
    std::vector<int> ranks;
    if (int e = window_ranks(w, group, &ranks)) return e;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // MPI_MODE_NOCHECK: the matching starts say NOCHECK too and wait for
    // nothing; a notice would only be left over for a later epoch.
    for (int r : ranks) {
        if (assertion & MPI_MODE_NOCHECK) break;
        const Member& m = w->members[static_cast<size_t>(r)];
        if (m.local) {
            m.local->posts[static_cast<size_t>(w->rank)].fetch_add(1, std::memory_order_acq_rel);
            m.local->rank->doorbell.ring();
        } else {
            post_remote(w, r);
        }
    }
    w->exposure_group = std::move(ranks);
    w->posted = true;
    return MPI_SUCCESS;
}

namespace {

bool completed(Win* w) {
    const int n = static_cast<int>(w->exposure_group.size());
    std::atomic<int>& c = w->target->completes;
    if (c.load(std::memory_order_acquire) < n) return false;
    c.fetch_sub(n, std::memory_order_acq_rel);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    w->posted = false;
    w->exposure_group.clear();
    return true;
}

}  // namespace

int wait(Win* w) {
    if (!w->posted) return make_error(MPI_ERR_RMA_SYNC, "MPI_Win_wait without MPI_Win_post");
    const int n = static_cast<int>(w->exposure_group.size());
    std::atomic<int>& c = w->target->completes;
    wait_until([&] { return c.load(std::memory_order_acquire) >= n; });
    completed(w);
    return MPI_SUCCESS;
}

int test(Win* w, bool* done) {
    if (!w->posted) return make_error(MPI_ERR_RMA_SYNC, "MPI_Win_test without MPI_Win_post");
    *done = completed(w);
    if (!*done) {
        mpi::progress_for_test();
        *done = completed(w);
    }
    return MPI_SUCCESS;
}

int lock(Win* w, int type, int rank, int assertion) {
    if (w->access != Access::None && w->access != Access::FenceReady && w->access != Access::Lock)
        return make_error(MPI_ERR_RMA_SYNC, "MPI_Win_lock inside a %s epoch",
                          w->access == Access::Fence  ? "fence"
                          : w->access == Access::Pscw ? "PSCW access"
                                                      : "MPI_Win_lock_all");
    PeerState& p = peer(w, rank);
    if (p.lock != PeerState::kUnlocked)
        return make_error(MPI_ERR_RMA_SYNC, "rank %d of the window is locked already", rank);
    const bool exclusive = type == MPI_LOCK_EXCLUSIVE;
    const Member& m = w->members[static_cast<size_t>(rank)];
    p.granted.store(false, std::memory_order_relaxed);
    if (assertion & MPI_MODE_NOCHECK) {
        p.lock = PeerState::kNoCheck;
        p.granted.store(true, std::memory_order_relaxed);
    } else if (m.local) {
        p.lock = exclusive ? PeerState::kExclusive : PeerState::kShared;
        LockWaiter lw;
        lw.exclusive = exclusive;
        lw.granted = &p.granted;
        lw.origin = w->owner;
        if (lock_acquire(*m.local, lw))
            p.granted.store(true, std::memory_order_relaxed);
        else
            wait_until([&] { return p.granted.load(std::memory_order_acquire); });
    } else {
        p.lock = exclusive ? PeerState::kExclusive : PeerState::kShared;
        lock_remote(w, rank, exclusive);  // granted later: operations wait for it
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);
    w->access = Access::Lock;
    w->locks++;
    return MPI_SUCCESS;
}

namespace {

// Ends this origin's hold of rank's lock (its operations complete first).
void release(Win* w, int rank) {
    PeerState& p = peer(w, rank);
    const Member& m = w->members[static_cast<size_t>(rank)];
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (m.local) {
        if (p.lock == PeerState::kShared || p.lock == PeerState::kExclusive)
            lock_release(*m.local, p.lock == PeerState::kExclusive);
    } else if (p.lock_requested) {
        // As for Complete: reads done before the lock goes to someone else.
        wait_until([&] {
            return p.granted.load(std::memory_order_acquire) &&
                   p.pending.load(std::memory_order_acquire) == 0;
        });
        unlock_remote(w, rank);  // answered once done and released
    } else if (p.dirty || p.pending.load(std::memory_order_acquire) > 0) {
        flush_remote(w, rank);
    }
    p.lock = PeerState::kUnlocked;
    p.lock_requested = false;
    p.granted.store(false, std::memory_order_relaxed);
}

}  // namespace

int unlock(Win* w, int rank) {
    if (w->access != Access::Lock || peer(w, rank).lock == PeerState::kUnlocked)
        return make_error(MPI_ERR_RMA_SYNC, "MPI_Win_unlock of rank %d, which is not locked", rank);
    const bool remote = !w->members[static_cast<size_t>(rank)].local;
    if (remote) touch(w, rank);
    release(w, rank);
    if (remote) {
        await_targets(w, rank);
        untouch(w, rank);
    }
    if (--w->locks == 0) w->access = Access::None;
    return refused_error(w, rank);
}

int lock_all(Win* w, int assertion) {
    if (w->access != Access::None && w->access != Access::FenceReady)
        return make_error(MPI_ERR_RMA_SYNC, "MPI_Win_lock_all inside another access epoch");
    const bool nocheck = assertion & MPI_MODE_NOCHECK;
    for (int r = 0; r < w->size; ++r) {
        PeerState& p = peer(w, r);
        const Member& m = w->members[static_cast<size_t>(r)];
        p.lock_requested = false;
        if (nocheck) {
            p.lock = PeerState::kNoCheck;
            p.granted.store(true, std::memory_order_relaxed);
            continue;
        }
        p.lock = PeerState::kShared;
        p.granted.store(false, std::memory_order_relaxed);
        // Targets in this node process now; the others at the first
        // operation on them (await_lock), which saves a round trip per target
        // this origin never touches.
        if (!m.local) continue;
        LockWaiter lw;
        lw.granted = &p.granted;
        lw.origin = w->owner;
        if (lock_acquire(*m.local, lw))
            p.granted.store(true, std::memory_order_relaxed);
        else
            wait_until([&] { return p.granted.load(std::memory_order_acquire); });
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);
    w->access = Access::LockAll;
    return MPI_SUCCESS;
}

int unlock_all(Win* w) {
    if (w->access != Access::LockAll)
        return make_error(MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all without MPI_Win_lock_all");
    for (int r = 0; r < w->size; ++r) {
        const Member& m = w->members[static_cast<size_t>(r)];
        PeerState& p = peer(w, r);
        if (!m.local && (p.lock_requested || p.dirty)) touch(w, r);
        release(w, r);
    }
    await_targets(w, -1);
    untouch(w, -1);
    w->access = Access::None;
    return refused_error(w, -1);
}

int flush(Win* w, int rank, bool local) {
    if (w->access != Access::Lock && w->access != Access::LockAll)
        return make_error(MPI_ERR_RMA_SYNC,
                          "MPI_Win_flush outside a passive target epoch (MPI_Win_lock)");
    if (rank >= 0 && peer(w, rank).lock == PeerState::kUnlocked)
        return make_error(MPI_ERR_RMA_SYNC, "MPI_Win_flush of rank %d, which is not locked", rank);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    finish_remote(w, rank, local);
    return refused_error(w, rank);
}

int sync(Win*) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // Called in loops that wait for another rank's store to the window (the
    // shared-memory idiom): the writer may share this VP, let it run.
    mpi::progress_for_test();
    return MPI_SUCCESS;
}

}  // namespace mpc::rma
