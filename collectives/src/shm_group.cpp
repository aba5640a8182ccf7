#include "shm_group.hpp"

#include <algorithm>

#include "mpi_api/progress.hpp"
#include "mpi_api/progress_engine.hpp"

namespace mpc::coll::shm {
namespace {

constexpr int kTightSpins = 512;

}  // namespace

ShmGroup::ShmGroup(std::vector<int> world_ranks)
    : world_ranks_(std::move(world_ranks)),
      members_(new MemberSlots[world_ranks_.size()]),
      pair_(world_ranks_.size() == 2) {}

void ShmGroup::publish(int me, uint64_t e) {
    episode(me).store(e, std::memory_order_release);
    // Pairs with the waiter's count, heavy fence, look: either it sees the
    // episode or we see it parked. A full fence here would double the cost
    // of a pair's synchronisation (the store would wait for the line).
    runtime::light_fence();
    if (nbc_members_.load(std::memory_order_relaxed) != 0) notify_nonblocking(me, e);
    if (parked_.load(std::memory_order_relaxed) == 0) return;
    parked_lock_.lock();
    for (sched::Waiter* w : parked_list_) w->unpark();
    parked_lock_.unlock();
}

void ShmGroup::notify_nonblocking(int me, uint64_t e) {
    // Pairs with the full fence in need_nonblocking: either its look finds our
    // episode, or we find its need.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // Where the slowest member is, looked at after the fence: of publishers
    // racing to the same episode, the last one through its fence sees all the
    // others there, so a need is met by one notification, not one per member.
    uint64_t slowest = 0;
    bool looked = false;
    for (int k = 0; k < size(); ++k) {
        if (k == me) continue;
        MemberSlots& m = member(k);
        const uint64_t need = m.nbc_need.load(std::memory_order_acquire);
        // Only a publisher at or past the episode needed, and one of the
        // members needed, can be the last one.
        if (need == 0 || need > e) continue;
        const Need want{need, m.nbc_lo.load(std::memory_order_relaxed),
                        m.nbc_hi.load(std::memory_order_relaxed),
                        m.nbc_except.load(std::memory_order_relaxed)};
        if (me < want.lo || me >= want.hi || me == want.except) continue;
        if (want.lo == 0 && want.hi == size() && want.except < 0) {
            if (!looked) {
                slowest = slowest_episode(Need{0, 0, size()});
                looked = true;
            }
            if (slowest < need) continue;
        } else if (slowest_episode(want) < need) {
            continue;
        }
        if (mpi::RankState* owner = m.nbc_owner.load(std::memory_order_acquire))
            mpi::progress_notify(owner);
    }
}

uint64_t ShmGroup::slowest_episode(const Need& range) {
    uint64_t low = UINT64_MAX;
    for (int k = range.lo; k < range.hi; ++k)
        if (k != range.except) low = std::min(low, episode(k).load(std::memory_order_acquire));
    return low;
}

void ShmGroup::watch_nonblocking(int me, mpi::RankState* owner) {
    member(me).nbc_owner.store(owner, std::memory_order_release);
    nbc_members_.fetch_add(1, std::memory_order_relaxed);
    // Publishers test nbc_members_ after a light fence only.
    runtime::heavy_fence();
}

bool ShmGroup::need_nonblocking(int me, const Need& want) {
    MemberSlots& m = member(me);
    if (want.episode == 0) {
        if (m.nbc_need.load(std::memory_order_relaxed) != 0)
            m.nbc_need.store(0, std::memory_order_relaxed);
        return true;
    }
    // A full fence before the first look; later looks at the same need only
    // look again. The members needed are stored first: a publisher that sees
    // the episode needed sees them too.
    if (m.nbc_need.load(std::memory_order_relaxed) != want.episode ||
        m.nbc_lo.load(std::memory_order_relaxed) != want.lo ||
        m.nbc_hi.load(std::memory_order_relaxed) != want.hi ||
        m.nbc_except.load(std::memory_order_relaxed) != want.except) {
        m.nbc_need.store(0, std::memory_order_relaxed);
        m.nbc_lo.store(want.lo, std::memory_order_relaxed);
        m.nbc_hi.store(want.hi, std::memory_order_relaxed);
        m.nbc_except.store(want.except, std::memory_order_relaxed);
        m.nbc_need.store(want.episode, std::memory_order_seq_cst);
    }
    if (!met(want)) return false;
    m.nbc_need.store(0, std::memory_order_relaxed);
    return true;
}

bool ShmGroup::all_at_least(uint64_t e) {
    for (int k = 0; k < size(); ++k)
        if (!at_least(k, e)) return false;
    return true;
}

bool ShmGroup::met(const Need& need) {
    for (int k = need.lo; k < need.hi; ++k)
        if (k != need.except && !at_least(k, need.episode)) return false;
    return true;
}

unsigned char* ShmGroup::grow_stage(int me, int p, size_t bytes) {
    MemberSlots& m = member(me);
    if (m.stage_capacity[p] < bytes) {
        // The readers of the old buffer (an earlier episode of this parity)
        // are done with it.
        delete[] m.stage[p];
        m.stage[p] = new unsigned char[bytes];
        m.stage_capacity[p] = bytes;
    }
    return m.stage[p];
}

template <class Done>
void ShmGroup::wait(Done&& done) {
    if (done()) return;
    // Members usually arrive within a microsecond or two of each other: a
    // tight spin on the lines first, unless another task of this VP could use
    // the core (then it must run for the wait to end), or VPs share cores.
    if (!sched::others_runnable() && !sched::cores_shared()) {
        for (int i = 0; i < kTightSpins; ++i) {
            runtime::cpu_relax();
            if (done()) return;
        }
    }
    mpi::block_until(
        done,
        [this](sched::Waiter* w) {
            parked_lock_.lock();
            parked_list_.push_back(w);
            parked_.fetch_add(1, std::memory_order_relaxed);
            parked_lock_.unlock();
            runtime::heavy_fence();
        },
        [this](sched::Waiter* w) {
            parked_lock_.lock();
            auto it = std::find(parked_list_.begin(), parked_list_.end(), w);
            if (it != parked_list_.end()) {
                parked_list_.erase(it);
                parked_.fetch_sub(1, std::memory_order_relaxed);
            }
            parked_lock_.unlock();
        });
}

void ShmGroup::wait_one(int k, uint64_t e) {
    wait([&] { return at_least(k, e); });
}

void ShmGroup::wait_all(uint64_t e) {
    // Members found ready stay ready: resume the scan where it stopped.
    int next = 0;
    const int n = size();
    wait([&] {
        while (next < n && at_least(next, e)) ++next;
        return next == n;
    });
}

void ShmGroup::wait_for(const Need& need) {
    // Members found ready stay ready: resume the scan where it stopped.
    int next = need.lo;
    wait([&] {
        while (next < need.hi && (next == need.except || at_least(next, need.episode))) ++next;
        return next == need.hi;
    });
}

// Groups by collective context: a context id is reused only once every member
// of the old communicator freed it, and a member gives it back only after its
// view (and with it its hold on the group) is gone (mpi_api comm_free), so a
// live group with the same context and the same members is this
// communicator's. (Unless a nonblocking collective of the old communicator is
// still pending at one of them: its request keeps the group alive.)
std::shared_ptr<ShmGroup> group_for(uint64_t key, std::vector<int> world_ranks) {
    static auto* groups = new SharedByMembers<ShmGroup>();  // lives as long as the process
    return groups->find_or_make(key, std::move(world_ranks));
}

}  // namespace mpc::coll::shm
