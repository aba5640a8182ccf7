// collectives/tuning: which algorithm each collective uses, and the size
// thresholds that choose between them.
//
// Every member of a communicator must pick the same algorithm, so choices
// depend only on what all members agree on: the number of ranks, the data
// size in bytes (equal everywhere by the type-matching rules), the operation's
// commutativity, the root. "bytes" below is the size of the whole message
// unless stated otherwise. The values follow the published MPICH / Open MPI
// defaults, adjusted for intra-node messages that cost one copy.
//
//  Barrier        dissemination (ceil(log2 n) rounds; the receive of every
//                 round is posted at the start).
//  Bcast          binomial tree when bytes < kBcastLongMin or n < kBcastMinRanks;
//                 otherwise scatter + ring allgather (van de Geijn), where a rank
//                 never receives a chunk it already got in the scatter phase.
//  Gather/Scatter binomial tree through packed scratch when the block of one rank
//                 is < kGatherBinomialMaxBlock; otherwise linear (every block
//                 moves once, straight between user buffers). Gatherv and
//                 Scatterv are linear (block sizes are known only at the root).
//  Allgather      bytes (all blocks) < kAllgatherShortMax: recursive doubling
//                 in the receive buffer when n is a power of two, Bruck
//                 through packed scratch otherwise; bytes < kAllgatherLongMin
//                 and n a power of two: recursive doubling; otherwise ring.
//  Allgatherv     Bruck when bytes < kAllgatherShortMax, ring otherwise.
//  Alltoall(v,w)  every receive posted at the start; sends all at once while a
//                 block is < kAlltoallPairwiseMin, otherwise one at a time in
//                 pairwise order (rank r sends to r+1, r+2, ...).
//  Reduce         commutative, bytes >= kReduceRingMin and count >= n: ring
//                 reduce-scatter then the chunks straight to the root;
//                 otherwise binomial (commutative: rooted at the root;
//                 non-commutative: rooted at rank 0 in rank order, then sent to
//                 the root).
//  Allreduce      bytes < kAllreduceRingMin or count < n: recursive doubling
//                 (non-powers of two fold the first 2*(n - 2^k) ranks in pairs),
//                 operands combined in rank order, so it is exact for
//                 non-commutative operations; larger, commutative: ring
//                 reduce-scatter + ring allgather; larger, non-commutative:
//                 ordered binomial reduce to rank 0 + Bcast.
//  Reduce_scatter commutative and bytes >= kReduceScatterRingMin: ring (each
//  (_block)       rank ends with its own block); otherwise ordered reduce to
//                 rank 0 + Scatterv.
//  Scan, Exscan   recursive doubling, operands in rank order.
//  Neighbor_*     every receive and send at once.
//
// Receives are posted as soon as their buffer is free (usually at the start);
// no algorithm waits for a whole round when only one message matters.
#pragma once

#include <cstddef>

namespace mpc::coll::tuning {

inline constexpr size_t kBcastLongMin = 64 * 1024;
inline constexpr int kBcastMinRanks = 4;
inline constexpr size_t kGatherBinomialMaxBlock = 4096;
inline constexpr size_t kAllgatherShortMax = 80 * 1024;
inline constexpr size_t kAllgatherLongMin = 512 * 1024;
inline constexpr size_t kAlltoallPairwiseMin = 32 * 1024;
inline constexpr size_t kReduceRingMin = 512 * 1024;
inline constexpr size_t kAllreduceRingMin = 256 * 1024;
inline constexpr size_t kReduceScatterRingMin = 64 * 1024;

}  // namespace mpc::coll::tuning
