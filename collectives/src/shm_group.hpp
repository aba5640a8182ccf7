// The state the members of a node-local communicator share for the
// shared-address-space collectives (shm.hpp), and how members wait for each
// other.
//
// Episodes. Every member counts the synchronisations of the communicator's
// shared-memory collectives (shm.cpp's View); all members count the same
// way because they call the same collectives in the same order. A member
// stores episode e in its progress line once it has published what episode e
// needs from it (or, for a member that only reads, once it has read it).
// Hence "member k is at episode >= e" implies k is done with everything of the
// episodes before e. Published buffers and pointers alternate by episode
// parity: before a member overwrites its parity-p slots at episode e, it waits
// until every member is at e - 1, so the readers of the slots it wrote at e - 2
// are done with them.
//
// Small groups share one line. Separate progress lines cost a store and a
// read miss per member per episode, each moving a line between cores (a
// 2-thread barrier: about 140 ns here, 290 ns with an 8-byte payload); one
// line that every member writes its word of moves once each way (about
// 90 ns with the payload). So a pair keeps its episodes and its payloads of
// up to 8 bytes in one line. Not larger groups: with 4 members on 2 cores,
// the members of one core then take the line from the other core in turn,
// and an 8-byte Allreduce went from 0.75 to 1.2 us.
//
// Nonblocking collectives (shm.cpp) wait for no one: their steps advance
// whenever someone polls their owner's operations. One that cannot go on
// stores the episode it needs (and from which members: all, one, those
// below it) in its member's nbc_need, and the publisher that may complete it
// flags its owner rank for progress (mpi::progress_notify): the steps are
// looked at again only then.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/sync.hpp"
#include "scheduler/scheduler.hpp"

namespace mpc::mpi {
struct RankState;
}

namespace mpc::coll::shm {

// Reductions and broadcasts up to this size travel through the inline slots.
inline constexpr size_t kInlineBytes = 1024;

// Collectives stage a member's data (copy it into memory of the group, which
// readers copy out of) when it is small: one synchronisation, and the member
// goes on without waiting for its readers. Larger data is read straight from
// the member's buffers (one copy, but the member waits until everyone has
// read). Data movement stages the blocks of up to kStageBlock bytes, at most
// kStageTotal of them per member; reductions (Reduce_scatter, Scan) whole
// vectors of up to kStageBytes. Beyond kInlineBytes the staging memory is a
// buffer per member and parity, grown on demand.
inline constexpr size_t kStageBlock = 16 * 1024;
inline constexpr size_t kStageTotal = 128 * 1024;
inline constexpr size_t kStageBytes = 64 * 1024;

// Payloads up to this size share the progress line (one transfer, not two).
inline constexpr size_t kTinyBytes = 24;

// A pair's payloads up to this size travel in its shared line (PairLine).
inline constexpr size_t kPairTinyBytes = 8;

struct alignas(64) MemberSlots {
    // The progress line: written by the member, read by all.
    std::atomic<uint64_t> episode{0};
    unsigned char tiny[2][kTinyBytes];                    // small inline payloads, by parity
    alignas(64) const void* src[2] = {nullptr, nullptr};  // published input, by parity
    void* dst[2] = {nullptr, nullptr};                    // published output, by parity
    const void* record[2] = {nullptr, nullptr};    // published arguments (shm_move.hpp), by parity
    unsigned char* stage[2] = {nullptr, nullptr};  // staged payloads beyond kInlineBytes
    alignas(64) unsigned char data[2][kInlineBytes];  // inline payloads, by parity
    // The episode the member's nonblocking collective waits for (0: none)
    // from members [nbc_lo, nbc_hi), and its rank.
    alignas(64) std::atomic<uint64_t> nbc_need{0};
    std::atomic<int> nbc_lo{0}, nbc_hi{0}, nbc_except{-1};
    std::atomic<mpi::RankState*> nbc_owner{nullptr};
    size_t stage_capacity[2] = {0, 0};  // the member's own bookkeeping

    MemberSlots() = default;
    ~MemberSlots() {
        delete[] stage[0];
        delete[] stage[1];
    }
    MemberSlots(const MemberSlots&) = delete;
    MemberSlots& operator=(const MemberSlots&) = delete;
};
static_assert(offsetof(MemberSlots, data) - offsetof(MemberSlots, src) == 64,
              "the published pointers fill one line");

// What a collective step waits for: members [lo, hi) but `except` at episode
// >= episode (episode 0: nothing).
struct Need {
    uint64_t episode = 0;
    int lo = 0, hi = 0;
    int except = -1;
};

struct alignas(64) PairLine {
    std::atomic<uint64_t> episode[2] = {};
    alignas(8) unsigned char tiny[2][2][kPairTinyBytes];  // by member, by parity
};
static_assert(sizeof(PairLine) == 64, "one cache line");

class ShmGroup {
  public:
    explicit ShmGroup(std::vector<int> world_ranks);

    const std::vector<int>& world_ranks() const { return world_ranks_; }
    int size() const { return static_cast<int>(world_ranks_.size()); }
    MemberSlots& member(int r) { return members_[static_cast<size_t>(r)]; }
    // Where member k's inline payload of `bytes` goes at parity p.
    unsigned char* slot(int k, int p, size_t bytes) {
        if (pair_ && bytes <= kPairTinyBytes) return pair_line_.tiny[k][p];
        return bytes <= kTinyBytes ? member(k).tiny[p] : member(k).data[p];
    }
    // Where member k's staged payload of `bytes` is at parity p: its inline
    // slot, or its staging buffer (to read: published with its episode).
    const unsigned char* staged(int k, int p, size_t bytes) {
        return bytes <= kInlineBytes ? slot(k, p, bytes) : member(k).stage[p];
    }
    // The same for member me to write, growing its staging buffer (its
    // readers of parity p are done: it waited for every member at the
    // episode before).
    unsigned char* stage(int me, int p, size_t bytes) {
        return bytes <= kInlineBytes ? slot(me, p, bytes) : grow_stage(me, p, bytes);
    }
    // Member me's staging buffer at parity p, at least `bytes` long (for
    // payloads whose readers do not know the whole size: member(k).stage[p]).
    unsigned char* grow_stage(int me, int p, size_t bytes);

    // Member me reached episode e (its slots for e are written).
    void publish(int me, uint64_t e);
    // Waits until member k (every member, what need says) is at episode >= e.
    void wait_one(int k, uint64_t e);
    void wait_all(uint64_t e);
    void wait_for(const Need& need);
    // Whether every member is at episode >= e (what need says is met; no
    // waiting).
    bool all_at_least(uint64_t e);
    bool met(const Need& need);
    // Member me (rank owner) may have nonblocking collectives pending from now
    // on: publishers look at its nbc_need. Once per member.
    void watch_nonblocking(int me, mpi::RankState* owner);
    // Member me's nonblocking collective needs what `need` says (episode 0:
    // nothing now). Returns whether it is met already (then the need is
    // withdrawn); otherwise a publisher will notify the owner.
    bool need_nonblocking(int me, const Need& need);

  private:
    std::atomic<uint64_t>& episode(int k) {
        return pair_ ? pair_line_.episode[k] : member(k).episode;
    }
    bool at_least(int k, uint64_t e) { return episode(k).load(std::memory_order_acquire) >= e; }
    template <class Done>
    void wait(Done&& done);
    void notify_nonblocking(int me, uint64_t e);
    uint64_t slowest_episode(const Need& range);

    std::vector<int> world_ranks_;
    std::unique_ptr<MemberSlots[]> members_;
    const bool pair_;  // two members: episodes (and tiny payloads) in pair_line_
    PairLine pair_line_;
    // Members parked waiting (after their spin): a publisher wakes them all.
    alignas(64) std::atomic<int> parked_{0};
    std::atomic<int> nbc_members_{0};  // members that called watch_nonblocking
    runtime::SpinLock parked_lock_;
    std::vector<sched::Waiter*> parked_list_;
};

// The group of these members (world ranks, in communicator rank order) of the
// communicator with this context: created by the first member that asks.
// Keys above 32 bits name groups of single persistent requests
// (shm_persistent.cpp).
std::shared_ptr<ShmGroup> group_for(uint64_t key, std::vector<int> world_ranks);

// Objects the members of a communicator in this node process share, found by
// a key all of them compute alike (the communicator's context and, say, a
// collective tag): a live object with the same key and the same members is
// the caller's; otherwise the first caller makes it. T is made from the
// members' world ranks and tells them by world_ranks().
template <class T>
class SharedByMembers {
  public:
    std::shared_ptr<T> find_or_make(uint64_t key, std::vector<int> world_ranks) {
        std::lock_guard<std::mutex> guard(mutex_);
        auto& list = by_key_[key];
        std::shared_ptr<T> found;
        for (auto it = list.begin(); it != list.end();) {
            std::shared_ptr<T> o = it->lock();
            if (!o) {
                it = list.erase(it);
                continue;
            }
            if (o->world_ranks() == world_ranks) found = o;
            ++it;
        }
        if (!found) {
            found = std::make_shared<T>(std::move(world_ranks));
            list.push_back(found);
        }
        return found;
    }

  private:
    std::mutex mutex_;
    std::map<uint64_t, std::vector<std::weak_ptr<T>>> by_key_;
};

}  // namespace mpc::coll::shm
