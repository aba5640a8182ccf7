// Group set operations and rank lists (group.hpp).
#include <unordered_map>

#include "mpi_api/errors.hpp"
#include "mpi_api/group.hpp"

namespace mpc::mpi {
namespace {

// World rank -> rank in g, in constant time (rank_of scans explicit lists).
class RankIndex {
  public:
    explicit RankIndex(const GroupData& g) : g_(g) {
        if (g.identity) return;
        index_.reserve(g.ranks.size());
        for (int r = 0; r < g.size; ++r) index_.emplace(g.ranks[static_cast<size_t>(r)], r);
    }
    int rank_of(int world_rank) const {
        if (g_.identity) return g_.rank_of(world_rank);
        auto it = index_.find(world_rank);
        return it == index_.end() ? MPI_UNDEFINED : it->second;
    }
    bool contains(int world_rank) const { return rank_of(world_rank) != MPI_UNDEFINED; }

  private:
    const GroupData& g_;
    std::unordered_map<int, int> index_;
};

int check_n(int n) {
    if (n < 0) return make_error(MPI_ERR_ARG, "negative number of ranks %d", n);
    return MPI_SUCCESS;
}

int check_rank(const GroupData& g, int r, const char* what) {
    if (r < 0 || r >= g.size)
        return make_error(MPI_ERR_RANK, "%s %d is not a rank of the group (size %d)", what, r,
                          g.size);
    return MPI_SUCCESS;
}

// Ranks of g listed in ranks[0..n): all valid and distinct. seen is filled.
int check_rank_list(const GroupData& g, int n, const int* ranks, std::vector<char>& seen) {
    if (int e = check_n(n)) return e;
    seen.assign(static_cast<size_t>(g.size), 0);
    for (int i = 0; i < n; ++i) {
        if (int e = check_rank(g, ranks[i], "rank")) return e;
        char& s = seen[static_cast<size_t>(ranks[i])];
        if (s) return make_error(MPI_ERR_RANK, "rank %d is listed twice", ranks[i]);
        s = 1;
    }
    return MPI_SUCCESS;
}

// Expands (first, last, stride) triplets into ranks of g, in order.
int expand_ranges(const GroupData& g, int n, const int (*ranges)[3], std::vector<int>& out,
                  std::vector<char>& seen) {
    if (int e = check_n(n)) return e;
    seen.assign(static_cast<size_t>(g.size), 0);
    out.clear();
    for (int i = 0; i < n; ++i) {
        const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (int e = check_rank(g, first, "first rank of a range")) return e;
        if (int e = check_rank(g, last, "last rank of a range")) return e;
        if (stride == 0)
            return make_error(MPI_ERR_ARG, "range %d (%d, %d, %d) has stride 0", i, first, last,
                              stride);
        if ((last > first && stride < 0) || (last < first && stride > 0))
            return make_error(MPI_ERR_ARG,
                              "range %d (%d, %d, %d): the stride points away from the last rank", i,
                              first, last, stride);
        for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            char& s = seen[static_cast<size_t>(r)];
            if (s) return make_error(MPI_ERR_ARG, "rank %ld appears in more than one range", r);
            s = 1;
            out.push_back(static_cast<int>(r));
        }
    }
    return MPI_SUCCESS;
}

std::vector<int> world_ranks_of(const GroupData& g, const std::vector<int>& ranks) {
    std::vector<int> w;
    w.reserve(ranks.size());
    for (int r : ranks) w.push_back(g.world_rank(r));
    return w;
}

std::vector<int> unselected(const GroupData& g, const std::vector<char>& seen) {
    std::vector<int> w;
    for (int r = 0; r < g.size; ++r)
        if (!seen[static_cast<size_t>(r)]) w.push_back(g.world_rank(r));
    return w;
}

}  // namespace

GroupRef group_from_world_ranks(std::vector<int> world_ranks) {
    const size_t n = world_ranks.size();
    bool consecutive = n > 0;
    for (size_t i = 1; i < n && consecutive; ++i)
        consecutive = world_ranks[i] == world_ranks[0] + static_cast<int>(i);
    if (consecutive) return GroupData::make_identity(static_cast<int>(n), world_ranks[0]);
    return GroupData::make(std::move(world_ranks));
}

int group_translate(const GroupData& a, int n, const int* ranks, const GroupData& b, int* out) {
    if (int e = check_n(n)) return e;
    RankIndex ib(b);
    for (int i = 0; i < n; ++i) {
        if (ranks[i] == MPI_PROC_NULL) {
            out[i] = MPI_PROC_NULL;
            continue;
        }
        if (int e = check_rank(a, ranks[i], "rank")) return e;
        out[i] = ib.rank_of(a.world_rank(ranks[i]));
    }
    return MPI_SUCCESS;
}

int group_compare(const GroupData& a, const GroupData& b) {
    if (a.size != b.size) return MPI_UNEQUAL;
    bool same_order = true;
    for (int r = 0; r < a.size && same_order; ++r) same_order = a.world_rank(r) == b.world_rank(r);
    if (same_order) return MPI_IDENT;
    RankIndex ib(b);
    for (int r = 0; r < a.size; ++r)
        if (!ib.contains(a.world_rank(r))) return MPI_UNEQUAL;
    return MPI_SIMILAR;
}

GroupRef group_union(const GroupData& a, const GroupData& b) {
    std::vector<int> w;
    w.reserve(static_cast<size_t>(a.size + b.size));
    for (int r = 0; r < a.size; ++r) w.push_back(a.world_rank(r));
    RankIndex ia(a);
    for (int r = 0; r < b.size; ++r)
        if (!ia.contains(b.world_rank(r))) w.push_back(b.world_rank(r));
    return group_from_world_ranks(std::move(w));
}

GroupRef group_intersection(const GroupData& a, const GroupData& b) {
    std::vector<int> w;
    RankIndex ib(b);
    for (int r = 0; r < a.size; ++r)
        if (ib.contains(a.world_rank(r))) w.push_back(a.world_rank(r));
    return group_from_world_ranks(std::move(w));
}

GroupRef group_difference(const GroupData& a, const GroupData& b) {
    std::vector<int> w;
    RankIndex ib(b);
    for (int r = 0; r < a.size; ++r)
        if (!ib.contains(a.world_rank(r))) w.push_back(a.world_rank(r));
    return group_from_world_ranks(std::move(w));
}

int group_incl(const GroupData& g, int n, const int* ranks, GroupRef* out) {
    std::vector<char> seen;
    if (int e = check_rank_list(g, n, ranks, seen)) return e;
    *out = group_from_world_ranks(world_ranks_of(g, std::vector<int>(ranks, ranks + n)));
    return MPI_SUCCESS;
}

int group_excl(const GroupData& g, int n, const int* ranks, GroupRef* out) {
    std::vector<char> seen;
    if (int e = check_rank_list(g, n, ranks, seen)) return e;
    *out = group_from_world_ranks(unselected(g, seen));
    return MPI_SUCCESS;
}

int group_range_incl(const GroupData& g, int n, const int (*ranges)[3], GroupRef* out) {
    std::vector<int> ranks;
    std::vector<char> seen;
    if (int e = expand_ranges(g, n, ranges, ranks, seen)) return e;
    *out = group_from_world_ranks(world_ranks_of(g, ranks));
    return MPI_SUCCESS;
}

int group_range_excl(const GroupData& g, int n, const int (*ranges)[3], GroupRef* out) {
    std::vector<int> ranks;
    std::vector<char> seen;
    if (int e = expand_ranges(g, n, ranges, ranks, seen)) return e;
    *out = group_from_world_ranks(unselected(g, seen));
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi
