// MPI_Dims_create: the most balanced factorization (topology.hpp).
#include <algorithm>
#include <vector>

#include "mpi_api/errors.hpp"
#include "mpi_api/topology.hpp"

namespace mpc::mpi {
namespace {

// Searches the factorizations of n into k factors in non-increasing order for
// the one whose largest and smallest factors differ least (then the one with
// the smallest largest factor). Factors are drawn from n's divisors, so the
// search stays small for any n an MPI job can have.
class Balancer {
  public:
    Balancer(int n, int k) : k_(k) {
        for (int d = 1; static_cast<long>(d) * d <= n; ++d)
            if (n % d == 0) {
                divisors_.push_back(d);
                if (d != n / d) divisors_.push_back(n / d);
            }
        std::sort(divisors_.begin(), divisors_.end());
        current_.reserve(static_cast<size_t>(k));
        search(n, n);
    }
    const std::vector<int>& best() const { return best_; }

  private:
    void search(int rest, int max_factor) {
        const int left = k_ - static_cast<int>(current_.size());
        if (left == 1) {
            if (rest > max_factor) return;
            current_.push_back(rest);
            consider();
            current_.pop_back();
            return;
        }
        for (auto it = divisors_.rbegin(); it != divisors_.rend(); ++it) {
            const int f = *it;
            if (f > max_factor || rest % f) continue;
            // The remaining left-1 factors are at most f each.
            long capacity = 1;
            for (int i = 1; i < left && capacity < rest; ++i) capacity *= f;
            if (capacity * f < rest) break;  // smaller f cannot reach rest either
            current_.push_back(f);
            search(rest / f, f);
            current_.pop_back();
        }
    }
    void consider() {
        const int spread = current_.front() - current_.back();
        const int best_spread = best_.empty() ? -1 : best_.front() - best_.back();
        if (best_.empty() || spread < best_spread ||
            (spread == best_spread && current_.front() < best_.front()))
            best_ = current_;
    }

    int k_;
    std::vector<int> divisors_, current_, best_;
};

}  // namespace

int dims_create(int nnodes, int ndims, int* dims) {
    if (ndims < 0) return make_error(MPI_ERR_DIMS, "negative number of dimensions %d", ndims);
    if (nnodes < 1) return make_error(MPI_ERR_ARG, "nnodes is %d: it must be positive", nnodes);
    long fixed = 1;
    int free_dims = 0;
    for (int d = 0; d < ndims; ++d) {
        if (dims[d] < 0)
            return make_error(MPI_ERR_DIMS, "dims[%d] is %d: entries must be 0 or positive", d,
                              dims[d]);
        if (dims[d] > 0)
            fixed *= dims[d];
        else
            ++free_dims;
        if (fixed > nnodes) break;
    }
    if (fixed > nnodes || nnodes % fixed)
        return make_error(MPI_ERR_DIMS,
                          "%d nodes cannot be spread over a grid whose fixed dimensions hold %ld",
                          nnodes, fixed);
    const int rest = static_cast<int>(nnodes / fixed);
    if (free_dims == 0) {
        if (rest != 1)
            return make_error(MPI_ERR_DIMS, "all dimensions are fixed and hold %ld nodes, not %d",
                              fixed, nnodes);
        return MPI_SUCCESS;
    }
    const std::vector<int> factors = Balancer(rest, free_dims).best();
    size_t next = 0;
    for (int d = 0; d < ndims; ++d)
        if (dims[d] == 0) dims[d] = factors[next++];
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi
