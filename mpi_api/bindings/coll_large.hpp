// Shared by the large-count collective bindings (coll_large.cpp,
// neighbor_large.cpp): MPI_Count arguments made into what the int paths take,
// never by truncating (see coll_large.cpp for the design).
#pragma once

#include <climits>
#include <utility>
#include <vector>

#include "coll_checks.hpp"

namespace mpc::mpi::large {

// n elements of type dt as the (count, type) of an int call.
class Described {
  public:
    Described(MPI_Count n, MPI_Datatype dt) : count(-1), type(dt) {
        if (n < 0) return;
        if (n <= INT_MAX) {
            count = static_cast<int>(n);
            return;
        }
        count = 1;
        Datatype* t = datatype_lookup(dt);
        // An invalid or uncommitted type: the int path reports it where the
        // argument is significant.
        if (!t || !t->committed) return;
        if ((error = type_contiguous_c(n, t, &made_))) return;
        made_->committed = true;
        type = made_->handle;
    }
    ~Described() {
        if (made_) type_free(made_);
    }
    Described(const Described&) = delete;
    Described& operator=(const Described&) = delete;

    int count;
    MPI_Datatype type;
    int error = MPI_SUCCESS;

  private:
    Datatype* made_ = nullptr;
};

// Counts and displacements of the v forms as int arrays, when they all fit.
struct IntBlocks {
    std::vector<int> counts, displs;
    bool fits = true;
    const int* c() const { return counts.empty() ? nullptr : counts.data(); }
    const int* d() const { return displs.empty() ? nullptr : displs.data(); }
};

// A nonblocking or persistent collective reads its count arrays until it
// completes: the converted ones go to its request (keep_with_request).
// call(b1, b2) starts the operation; b1 and b2 may be null.
template <class F>
int with_blocks(IntBlocks* b1, IntBlocks* b2, const Run& run, F&& call) {
    int e = call(b1, b2);
    if (!e && b1) keep_with_request(run, std::move(*b1));
    if (!e && b2) keep_with_request(run, std::move(*b2));
    return e;
}

// n blocks (none when an array is missing: the int path reports that).
inline IntBlocks int_blocks(const MPI_Count* counts, const MPI_Aint* displs, int n) {
    IntBlocks b;
    if (!counts || !displs || n <= 0) return b;
    b.counts.resize(static_cast<size_t>(n));
    b.displs.resize(static_cast<size_t>(n));
    for (size_t i = 0; i < b.counts.size(); ++i) {
        const MPI_Count c = counts[i];
        const MPI_Aint d = displs[i];
        b.counts[i] = c < 0 ? -1 : static_cast<int>(c);
        b.displs[i] = static_cast<int>(d);
        if (c > INT_MAX || d > INT_MAX || d < INT_MIN) b.fits = false;
    }
    return b;
}

// Counts only (Reduce_scatter, Alltoallw): displacements pass through.
inline IntBlocks int_counts(const MPI_Count* counts, int n) {
    IntBlocks b;
    if (!counts || n <= 0) return b;
    b.counts.resize(static_cast<size_t>(n));
    for (size_t i = 0; i < b.counts.size(); ++i) {
        b.counts[i] = counts[i] < 0 ? -1 : static_cast<int>(counts[i]);
        if (counts[i] > INT_MAX) b.fits = false;
    }
    return b;
}

// Counts or displacements of a v or w collective that an int cannot hold.
inline int too_large(MPI_Comm comm, const char* what) {
    return raise_on(comm, make_error(MPI_ERR_COUNT,
                                     "%s: counts or displacements beyond int range are not "
                                     "supported in this collective (see the README's Limits)",
                                     what));
}

}  // namespace mpc::mpi::large
