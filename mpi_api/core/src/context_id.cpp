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
// The reduced vector: the free masks, then a word whose bit 0 says "every
// member contributed its mask this round".
constexpr int kVectorWords = kWords + 1;

void erase_one(std::vector<uint64_t>& v, uint64_t key) {
    auto it = std::find(v.begin(), v.end(), key);
    if (it != v.end()) v.erase(it);
}

// Fills this rank's contribution; true when it took the mask (and must give it back).
bool contribute(ContextIds& ids, const Agreement& a, uint64_t* vec) {
    if (!a.claims) {
        std::fill(vec, vec + kVectorWords, ~uint64_t{0});
        return false;
    }
    std::lock_guard<runtime::SpinLock> g(ids.lock);
    uint64_t lowest = *std::min_element(ids.waiting.begin(), ids.waiting.end());
    if (ids.mask_held || a.key != lowest) {
        std::fill(vec, vec + kVectorWords, uint64_t{0});
        return false;
    }
    ids.mask_held = true;
    for (int w = 0; w < kWords; ++w) vec[w] = ~ids.used[w];
    vec[kWords] = 1;
    return true;
}

// The group's vector at the root, exchanged with the remote group's root.
void exchange_cross(const Agreement& a, uint64_t* vec, int tag) {
    if (!a.cross || a.local.rank != a.root) return;
    uint64_t remote[kVectorWords];
    Datatype* t = datatype_lookup(MPI_UINT64_T);
    coll_sendrecv(a.cross, vec, kVectorWords, t, a.cross_peer, remote, kVectorWords, t,
                  a.cross_peer, tag);
    for (int w = 0; w < kVectorWords; ++w) vec[w] &= remote[w];
}

// Lowest npairs set bits of the final mask; false if there are fewer.
bool pick(const uint64_t* vec, int npairs, uint32_t* pairs) {
    int found = 0;
    for (int w = 0; w < kWords && found < npairs; ++w) {
        uint64_t bits = vec[w];
        while (bits && found < npairs) {
            int b = __builtin_ctzll(bits);
            bits &= bits - 1;
            pairs[found++] = static_cast<uint32_t>(w * 64 + b);
        }
    }
    return found == npairs;
}

}  // namespace

int TagSource::next() {
    if (fixed >= 0) return fixed;
    return sequence ? next_coll_tag(sequence) : 0;
}

int agree_contexts(RankState* me, const Agreement& a, int npairs, uint32_t* contexts) {
    ContextIds& ids = me->contexts;
    {
        std::lock_guard<runtime::SpinLock> g(ids.lock);
        ids.waiting.push_back(a.key);
    }
    MPC_CHECK(npairs >= 1 && npairs <= 4);
    // Every member draws both tags each round, so that the sequences of the
    // communicators involved stay the same at all their members.
    TagSource tags = a.tags, cross_tags = a.cross_tags;
    for (;;) {
        uint64_t vec[kVectorWords];
        bool holding = contribute(ids, a, vec);
        const int tag = tags.next(), cross_tag = cross_tags.next();
        tree_reduce_and(a.local, vec, kVectorWords, a.root, tag);
        exchange_cross(a, vec, cross_tag);
        tree_bcast(a.local, vec, sizeof(vec), a.root, tag);

        uint32_t pairs[4];
        const bool all_contributed = vec[kWords] & 1;
        const bool enough = all_contributed && pick(vec, npairs, pairs);
        {
            std::lock_guard<runtime::SpinLock> g(ids.lock);
            if (holding) ids.mask_held = false;
            if (all_contributed) {
                erase_one(ids.waiting, a.key);
                if (enough && a.claims)
                    for (int i = 0; i < npairs; ++i)
                        ids.used[pairs[i] / 64] |= uint64_t{1} << (pairs[i] % 64);
            }
        }
        if (all_contributed) {
            if (!enough)
                return make_error(MPI_ERR_OTHER,
                                  "no free context id: a rank may belong to at most %d "
                                  "communicators at a time",
                                  ContextIds::kPairs - 2);
            for (int i = 0; i < npairs; ++i) contexts[i] = 2 * pairs[i];
            return MPI_SUCCESS;
        }
        // Another agreement of some member holds its mask: let it finish.
        runtime::debug("context id agreement (key 0x%llx) retried: a member's mask was busy",
                       static_cast<unsigned long long>(a.key));
        sched::yield();
    }
}

void release_context(RankState* me, uint32_t context) {
    uint32_t pair = context / 2;
    if (pair < 2 || pair >= static_cast<uint32_t>(ContextIds::kPairs)) return;
    std::lock_guard<runtime::SpinLock> g(me->contexts.lock);
    me->contexts.used[pair / 64] &= ~(uint64_t{1} << (pair % 64));
}

}  // namespace mpc::mpi
