// NPB-style IS: integer sort of keys by bucket redistribution.
//
// N keys in [0, max_key), each the scaled sum of four uniform draws (roughly
// bell-shaped), are spread evenly over the ranks. Each of the 10 timed
// iterations changes two keys and ranks all of them: a bucket histogram
// (MPI_Allreduce) decides which contiguous key range each rank owns so that
// ranks get about N/P keys each, the keys travel to their owners (MPI_Alltoall
// of counts, MPI_Alltoallv of keys) and a counting sort gives every key its
// global rank. The ranks of a few test keys are recorded each iteration.
//
// Verification, exact: rank 0 regenerates all keys serially and counts them
// (a serial counting sort); the test-key ranks of every iteration and the full
// key histogram after the last one must match, the keys placed at their ranks
// must be sorted on each rank and across rank boundaries, and none may be lost.
// The serial reference is cheap, so it is used for every class.
//
//   mpcrun -n 4 npb_is [S|W|A]    any number of ranks up to the bucket count
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "mpi_profile.h"
#include "npb_common.hpp"

namespace {

constexpr int iterations = 10;
constexpr int test_keys = 5;
constexpr uint64_t key_seed = 271828183;

struct Params {
    long total_keys;
    int max_key;
    int buckets;
};

Params params_for(npb::ProblemClass cls) {
    switch (cls) {
        case npb::ProblemClass::S:
            return {1L << 16, 1 << 11, 1 << 10};
        case npb::ProblemClass::W:
            return {1L << 20, 1 << 16, 1 << 10};
        case npb::ProblemClass::A:
            return {1L << 23, 1 << 19, 1 << 10};
    }
    return {};
}

// Keys [first, first + count) of the one global stream: four draws per key.
std::vector<int> generate_keys(const Params& p, long first, long count) {
    npb::Random46 rng(key_seed);
    rng.skip(4 * static_cast<uint64_t>(first));
    std::vector<int> keys(count);
    const double scale = p.max_key / 4.0;
    for (auto& k : keys) {
        const double sum = rng.next() + rng.next() + rng.next() + rng.next();
        k = std::min(p.max_key - 1, static_cast<int>(scale * sum));
    }
    return keys;
}

// The key values whose global rank (number of smaller keys) is checked.
int test_key(const Params& p, int iteration, int j) {
    const int fixed[test_keys] = {iteration, p.max_key / 5, p.max_key / 2, 2 * p.max_key / 3,
                                  p.max_key - 1 - iteration};
    return fixed[j];
}

// NPB's per-iteration change: two keys take values that depend on it.
void modify_keys(const Params& p, int iteration, long first, std::vector<int>& keys) {
    const long targets[2] = {iteration, iteration + iterations};
    const int values[2] = {iteration, p.max_key - iteration};
    for (int t = 0; t < 2; ++t) {
        const long local = targets[t] - first;
        if (local >= 0 && local < static_cast<long>(keys.size()))
            keys[local] = values[t] % p.max_key;
    }
}

// Serial counting sort of all keys on rank 0: test-key ranks per iteration
// and the final histogram.
struct Reference {
    std::vector<long> test_ranks;  // [iteration][j]
    std::vector<int> histogram;
};

Reference serial_reference(const Params& p) {
    std::vector<int> keys = generate_keys(p, 0, p.total_keys);
    Reference ref{std::vector<long>(iterations * test_keys, 0), {}};
    std::vector<long> below(p.max_key + 1);
    for (int it = 1; it <= iterations; ++it) {
        modify_keys(p, it, 0, keys);
        ref.histogram.assign(p.max_key, 0);
        for (int k : keys) ++ref.histogram[k];
        below[0] = 0;
        for (int v = 0; v < p.max_key; ++v) below[v + 1] = below[v] + ref.histogram[v];
        for (int j = 0; j < test_keys; ++j)
            ref.test_ranks[(it - 1) * test_keys + j] = below[test_key(p, it, j)];
    }
    return ref;
}

// One rank's state across iterations.
class Sorter {
  public:
    Sorter(const Params& p, MPI_Comm comm) : p_(p), comm_(comm) {
        MPI_Comm_rank(comm, &rank_);
        MPI_Comm_size(comm, &size_);
        const long base = p.total_keys / size_, extra = p.total_keys % size_;
        first_ = rank_ * base + std::min<long>(rank_, extra);
        keys_ = generate_keys(p, first_, base + (rank_ < extra ? 1 : 0));
        shift_ = npb::log2_exact(p.max_key) - npb::log2_exact(p.buckets);
        test_ranks_.assign(iterations * test_keys, 0);
    }

    void iterate(int it) {
        modify_keys(p_, it, first_, keys_);
        redistribute();
        count_owned_keys();
        for (int j = 0; j < test_keys; ++j) {
            const int v = test_key(p_, it, j);
            if (v >= lo_key_ && v < hi_key_)
                test_ranks_[(it - 1) * test_keys + j] = global_offset_ + below_[v - lo_key_];
        }
    }

    // Places the owned keys at their ranks and checks the order, locally and
    // against the neighbours; returns the number of out-of-order pairs.
    long placed_disorder() const {
        std::vector<long> next(below_.begin(), below_.end() - 1);
        std::vector<int> sorted(received_.size());
        for (int k : received_) sorted[next[k - lo_key_]++] = k;
        long bad = 0;
        for (size_t i = 1; i < sorted.size(); ++i) bad += sorted[i - 1] > sorted[i];
        // Each rank's largest key must not exceed the next rank's smallest.
        const int mine_last = sorted.empty() ? -1 : sorted.back();
        int prev_last = -1;
        const int up = rank_ + 1 < size_ ? rank_ + 1 : MPI_PROC_NULL;
        const int down = rank_ > 0 ? rank_ - 1 : MPI_PROC_NULL;
        MPI_Sendrecv(&mine_last, 1, MPI_INT, up, 7, &prev_last, 1, MPI_INT, down, 7, comm_,
                     MPI_STATUS_IGNORE);
        if (!sorted.empty() && prev_last > sorted.front()) ++bad;
        return bad;
    }

    // The full key histogram, owned ranges only (zero elsewhere).
    std::vector<int> owned_histogram() const {
        std::vector<int> h(p_.max_key, 0);
        for (int v = lo_key_; v < hi_key_; ++v)
            h[v] = static_cast<int>(below_[v - lo_key_ + 1] - below_[v - lo_key_]);
        return h;
    }
    const std::vector<long>& test_ranks() const { return test_ranks_; }

  private:
    void redistribute() {
        const int nb = p_.buckets;
        std::vector<int> local(nb, 0), global(nb, 0);
        for (int k : keys_) ++local[k >> shift_];
        MPI_Allreduce(local.data(), global.data(), nb, MPI_INT, MPI_SUM, comm_);

        // Contiguous buckets per rank, cut where the running total passes
        // (r + 1) N / P: every rank computes the same cuts.
        std::vector<int> first_bucket(size_ + 1, nb);
        first_bucket[0] = 0;
        long running = 0;
        for (int b = 0, r = 0; b < nb; ++b) {
            running += global[b];
            while (r + 1 < size_ && running * size_ >= (r + 1) * p_.total_keys)
                first_bucket[++r] = b + 1;
        }
        lo_key_ = first_bucket[rank_] << shift_;
        hi_key_ = first_bucket[rank_ + 1] << shift_;
        global_offset_ = 0;
        for (int b = 0; b < first_bucket[rank_]; ++b) global_offset_ += global[b];

        // Keys grouped by bucket (hence by destination), then sent.
        std::vector<long> start(nb + 1, 0);
        for (int b = 0; b < nb; ++b) start[b + 1] = start[b] + local[b];
        std::vector<int> send_counts(size_, 0), recv_counts(size_);
        for (int r = 0; r < size_; ++r)
            send_counts[r] = static_cast<int>(start[first_bucket[r + 1]] - start[first_bucket[r]]);
        std::vector<int> grouped(keys_.size());
        for (int k : keys_) grouped[start[k >> shift_]++] = k;
        MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm_);

        std::vector<int> send_displs(size_, 0), recv_displs(size_, 0);
        for (int r = 1; r < size_; ++r) {
            send_displs[r] = send_displs[r - 1] + send_counts[r - 1];
            recv_displs[r] = recv_displs[r - 1] + recv_counts[r - 1];
        }
        received_.resize(recv_displs[size_ - 1] + recv_counts[size_ - 1]);
        MPI_Alltoallv(grouped.data(), send_counts.data(), send_displs.data(), MPI_INT,
                      received_.data(), recv_counts.data(), recv_displs.data(), MPI_INT, comm_);
    }

    // below_[v - lo] = number of owned keys smaller than v (a counting sort).
    void count_owned_keys() {
        below_.assign(hi_key_ - lo_key_ + 1, 0);
        for (int k : received_) ++below_[k - lo_key_ + 1];
        for (size_t i = 1; i < below_.size(); ++i) below_[i] += below_[i - 1];
    }

    Params p_;
    MPI_Comm comm_;
    int rank_ = 0, size_ = 1, shift_ = 0;
    long first_ = 0;
    std::vector<int> keys_, received_;
    int lo_key_ = 0, hi_key_ = 0;
    long global_offset_ = 0;
    std::vector<long> below_, test_ranks_;
};

bool verify(const Params& p, const Reference& ref, const Sorter& sorter, MPI_Comm comm, int rank) {
    std::vector<long> ranks(iterations * test_keys, 0);
    MPI_Reduce(sorter.test_ranks().data(), ranks.data(), static_cast<int>(ranks.size()), MPI_LONG,
               MPI_SUM, 0, comm);
    std::vector<int> mine = sorter.owned_histogram(), histogram(p.max_key, 0);
    MPI_Reduce(mine.data(), histogram.data(), p.max_key, MPI_INT, MPI_SUM, 0, comm);
    long disorder = sorter.placed_disorder(), total_disorder = 0;
    MPI_Reduce(&disorder, &total_disorder, 1, MPI_LONG, MPI_SUM, 0, comm);
    if (rank != 0) return false;

    bool ok = true;
    long rank_mismatches = 0;
    for (size_t i = 0; i < ranks.size(); ++i) rank_mismatches += ranks[i] != ref.test_ranks[i];
    ok &= npb::check_exact("test-key rank mismatches", rank_mismatches, 0);
    long histogram_mismatches = 0, total = 0;
    for (int v = 0; v < p.max_key; ++v) {
        histogram_mismatches += histogram[v] != ref.histogram[v];
        total += histogram[v];
    }
    ok &= npb::check_exact("key count mismatches", histogram_mismatches, 0);
    ok &= npb::check_exact("keys after sorting", total, p.total_keys);
    ok &= npb::check_exact("keys out of order", total_disorder, 0);
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    npb::Options opt;
    if (!npb::parse_options(argc, argv, "npb_is", opt)) {
        MPI_Finalize();
        return 2;
    }
    const Params p = params_for(opt.cls);
    if (size > p.buckets) {
        npb::setup_error(
            "npb_is", "at most " + std::to_string(p.buckets) + " ranks (one bucket each at least)");
        MPI_Finalize();
        return 2;
    }
    if (rank == 0)
        std::printf(
            "\n NAS Parallel Benchmarks style - IS (C++)\n Class %c: %ld keys in [0, %d),"
            " %d ranks\n\n",
            npb::class_letter(opt.cls), p.total_keys, p.max_key, size);

    Reference ref;
    if (rank == 0) ref = serial_reference(p);
    Sorter sorter(p, MPI_COMM_WORLD);
    sorter.iterate(1);  // untimed warm-up, as NPB does; iteration 1 is redone
    MPI_Barrier(MPI_COMM_WORLD);

    prof_reset();
    const double t0 = MPI_Wtime();
    for (int it = 1; it <= iterations; ++it) sorter.iterate(it);
    const double local_time = MPI_Wtime() - t0;
    prof_report(MPI_COMM_WORLD, "is");

    const double seconds = npb::max_over_ranks(local_time, MPI_COMM_WORLD);
    const bool ok = verify(p, ref, sorter, MPI_COMM_WORLD, rank);
    const npb::Summary summary{"IS",
                               opt.cls,
                               std::to_string(p.total_keys) + " keys",
                               iterations,
                               seconds,
                               static_cast<double>(p.total_keys) * iterations,
                               "serial counting sort on rank 0"};
    const int status = npb::finish(summary, ok, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}
