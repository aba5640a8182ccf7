// mpi_api/topology: virtual topologies (Cartesian, graph, distributed graph)
// cached on communicators, and the neighbor lists of neighbor collectives.
//
// A topology is immutable once built and shared by the communicator and its
// duplicates. Reordering is never done (reorder=1 keeps the identity mapping),
// so a rank of a topology communicator is its rank in the parent. Arguments
// are checked by the bindings.
#pragma once

#include <vector>

#include "mpi.h"
#include "mpi_api/comm.hpp"

namespace mpc::mpi {

struct Topology {
    int kind = MPI_UNDEFINED;  // MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH

    // Cartesian: row-major (the last dimension varies fastest).
    std::vector<int> dims, periods;
    int ndims() const { return static_cast<int>(dims.size()); }
    void cart_coords(int rank, int* coords) const;
    int cart_rank(const int* coords) const;  // coordinates within the grid
    // MPI_Cart_shift for `rank`; MPI_PROC_NULL past a non-periodic edge.
    void cart_shift(int rank, int direction, int disp, int* source, int* dest) const;

    // Graph: the arrays given to MPI_Graph_create (the whole graph).
    std::vector<int> index, edges;
    int graph_degree(int rank) const;
    const int* graph_neighbors(int rank) const;

    // Distributed graph: the calling rank's own neighbors.
    std::vector<int> sources, source_weights, destinations, dest_weights;
    bool weighted = false;
};

// Whom a neighbor collective exchanges with, in the standard's order. Each
// message carries a tag offset: on a Cartesian grid a block sent towards +d
// arrives as the block "from -d" at its destination, which the offsets keep
// apart even when both neighbors of a periodic dimension are the same rank.
struct NeighborList {
    std::vector<int> in, out;          // ranks, or MPI_PROC_NULL
    std::vector<int> in_tag, out_tag;  // tag offsets in [0, tags)
    int tags = 1;
};
NeighborList topo_neighbors(const Comm& c);

// MPI_Dims_create: fills the zero entries of dims[0..ndims) with a balanced
// factorization of nnodes / (product of the non-zero entries), in
// non-increasing order. MPI_SUCCESS, MPI_ERR_DIMS or MPI_ERR_ARG.
int dims_create(int nnodes, int ndims, int* dims);

// Topology constructors: collective over old, *out null where the caller
// gets MPI_COMM_NULL.
int cart_create(Comm* old, int ndims, const int* dims, const int* periods, Comm** out);
int cart_sub(Comm* cart, const int* remain_dims, Comm** out);
int graph_create(Comm* old, int nnodes, const int* index, const int* edges, Comm** out);
// topo holds the caller's neighbors (sources, destinations, weights).
int dist_graph_create_adjacent(Comm* old, Topology topo, Comm** out);
// weights: MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY or one per edge.
int dist_graph_create(Comm* old, int n, const int* sources, const int* degrees,
                      const int* destinations, const int* weights, Comm** out);

}  // namespace mpc::mpi
