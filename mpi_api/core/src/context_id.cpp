// Context id agreement: bitwise AND of the members' free masks (context_id.hpp).
#include "mpi_api/context_id.hpp"

#include <algorithm>

#include "mpi_api/comm.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/internal_coll.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/rank.hpp"
#include "runtime/log.hpp"
#include "scheduler/scheduler.hpp"

namespace mpc::mpi {
namespace {

constexpr int kWords = ContextIds::kWords;
constexpr int kMaxPairs = 4;

// Step one, what this rank offers: the pairs it has free and not reserved
// (all of them when it will not be a member).
void offer(ContextIds& ids, const Agreement& a, uint64_t* vec) {
    if (!a.claims) {
        std::fill(vec, vec + kWords, ~uint64_t{0});
        return;
    }
    std::lock_guard<runtime::SpinLock> g(ids.lock);
    for (int w = 0; w < kWords; ++w) vec[w] = ~(ids.used[w] | ids.reserved[w]);
}

// n words ANDed over the team (and, for an intercommunicator, with the remote
// group's through the two roots), the result at every member.
void all_and(const Agreement& a, uint64_t* vec, int n, int tag, int cross_tag) {
    tree_reduce_and(a.local, vec, n, a.root, tag);
    if (a.cross && a.local.rank == a.root) {
        uint64_t remote[kWords];
        Datatype* t = datatype_lookup(MPI_UINT64_T);
        coll_sendrecv(a.cross, vec, n, t, a.cross_peer, remote, n, t, a.cross_peer, cross_tag);
        for (int w = 0; w < n; ++w) vec[w] &= remote[w];
    }
    tree_bcast(a.local, vec, static_cast<size_t>(n) * sizeof(uint64_t), a.root, tag);
}

// npairs set bits of the common free mask, the same at every member: the
// lowest ones from the k-th set bit on, where k (below 16) comes from the
// agreement's key, so that concurrent agreements tend to pick different
// pairs; from the lowest when fewer are free. False if there are too few.
bool pick(const uint64_t* vec, int npairs, uint64_t key, uint32_t* pairs) {
    int total = 0;
    for (int w = 0; w < kWords; ++w) total += __builtin_popcountll(vec[w]);
    if (total < npairs) return false;
    int skip = static_cast<int>((key * 0x9e3779b97f4a7c15ull) >> 60);
    if (total - skip < npairs) skip = 0;
    int found = 0;
    for (int w = 0; w < kWords && found < npairs; ++w) {
        uint64_t bits = vec[w];
        while (bits && found < npairs) {
            const int b = __builtin_ctzll(bits);
            bits &= bits - 1;
            if (skip > 0) {
                --skip;
                continue;
            }
            pairs[found++] = static_cast<uint32_t>(w * 64 + b);
        }
    }
    return found == npairs;
}

uint64_t bit(uint32_t pair) { return uint64_t{1} << (pair % 64); }

// Step two: reserves the candidates if all are still free and unreserved
// here; false when another agreement of this rank took one meanwhile.
bool reserve(ContextIds& ids, const uint32_t* pairs, int npairs) {
    std::lock_guard<runtime::SpinLock> g(ids.lock);
    for (int i = 0; i < npairs; ++i)
        if ((ids.used[pairs[i] / 64] | ids.reserved[pairs[i] / 64]) & bit(pairs[i])) return false;
    for (int i = 0; i < npairs; ++i) ids.reserved[pairs[i] / 64] |= bit(pairs[i]);
    return true;
}

void settle(ContextIds& ids, const uint32_t* pairs, int npairs, bool keep) {
    std::lock_guard<runtime::SpinLock> g(ids.lock);
    for (int i = 0; i < npairs; ++i) {
        ids.reserved[pairs[i] / 64] &= ~bit(pairs[i]);
        if (keep) ids.used[pairs[i] / 64] |= bit(pairs[i]);
    }
}

}  // namespace

int TagSource::next() {
    if (fixed >= 0) return fixed;
    return sequence ? next_coll_tag(sequence) : 0;
}

int agree_contexts(RankState* me, const Agreement& a, int npairs, uint32_t* contexts) {
    ContextIds& ids = me->contexts;
    MPC_CHECK(npairs >= 1 && npairs <= kMaxPairs);
    // Every member draws both tags each round, so that the sequences of the
    // communicators involved stay the same at all their members.
    TagSource tags = a.tags, cross_tags = a.cross_tags;
    for (int round = 0;; ++round) {
        const int tag = tags.next(), cross_tag = cross_tags.next();
        uint64_t vec[kWords];
        offer(ids, a, vec);
        all_and(a, vec, kWords, tag, cross_tag);
        uint32_t pairs[kMaxPairs];
        if (!pick(vec, npairs, a.key + static_cast<uint64_t>(round), pairs))
            return make_error(MPI_ERR_OTHER,
                              "no free context id: a rank may belong to at most %d "
                              "communicators at a time",
                              ContextIds::kPairs - 2);
        const bool mine = a.claims && reserve(ids, pairs, npairs);
        uint64_t ok = a.claims ? (mine ? 1 : 0) : 1;
        all_and(a, &ok, 1, tag, cross_tag);
        if (mine) settle(ids, pairs, npairs, ok != 0);
        if (ok) {
            for (int i = 0; i < npairs; ++i) contexts[i] = 2 * pairs[i];
            return MPI_SUCCESS;
        }
        // Another agreement of some member took a candidate: look again.
        runtime::debug("context id agreement (key 0x%llx) retried: a candidate was taken",
                       static_cast<unsigned long long>(a.key));
        sched::yield();
        sched::relax();
    }
}

void release_context(RankState* me, uint32_t context) {
    uint32_t pair = context / 2;
    if (pair < 2 || pair >= static_cast<uint32_t>(ContextIds::kPairs)) return;
    std::lock_guard<runtime::SpinLock> g(me->contexts.lock);
    me->contexts.used[pair / 64] &= ~(uint64_t{1} << (pair % 64));
}

}  // namespace mpc::mpi
