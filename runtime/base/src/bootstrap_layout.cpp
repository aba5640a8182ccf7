// Which node process hosts which world rank: see runtime/bootstrap.hpp.
// mpcrun computes the same layout to name the ranks of a failing node process.
#include "runtime/bootstrap.hpp"
#include "runtime/env.hpp"

namespace mpc::runtime {

RankMap rank_map_from_env() {
    return static_cast<RankMap>(env::get_choice("MPC_MAP", static_cast<int>(RankMap::kBlock),
                                                {{"block", static_cast<int>(RankMap::kBlock)},
                                                 {"cyclic", static_cast<int>(RankMap::kCyclic)}}));
}

std::vector<int> rank_layout(int ranks, int node_procs, RankMap map) {
    std::vector<int> node_of(static_cast<size_t>(ranks));
    if (map == RankMap::kCyclic) {
        for (int r = 0; r < ranks; ++r) node_of[static_cast<size_t>(r)] = r % node_procs;
        return node_of;
    }
    // Blocks differ by at most one rank, the larger ones last.
    for (int n = 0; n < node_procs; ++n) {
        const long lo = static_cast<long>(ranks) * n / node_procs;
        const long hi = static_cast<long>(ranks) * (n + 1) / node_procs;
        for (long r = lo; r < hi; ++r) node_of[static_cast<size_t>(r)] = n;
    }
    return node_of;
}

}  // namespace mpc::runtime
