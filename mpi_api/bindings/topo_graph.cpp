// Graph and distributed graph topologies.
#include <algorithm>

#include "mpi_api/topology.hpp"
#include "object_checks.hpp"
#include "topo_checks.hpp"

using namespace mpc::mpi;

namespace {

int check_graph(int nnodes, const int* index, const int* edges, int size) {
    if (nnodes < 0 || nnodes > size)
        return make_error(MPI_ERR_ARG, "nnodes %d: it must lie in [0, %d], the communicator's size",
                          nnodes, size);
    if (nnodes > 0 && !index) return make_error(MPI_ERR_ARG, "index is NULL");
    for (int i = 0; i < nnodes; ++i)
        if (index[i] < (i ? index[i - 1] : 0))
            return make_error(MPI_ERR_ARG, "index[%d] = %d: index must be non-decreasing from 0", i,
                              index[i]);
    const int nedges = nnodes ? index[nnodes - 1] : 0;
    if (nedges > 0 && !edges) return make_error(MPI_ERR_ARG, "edges is NULL");
    for (int e = 0; e < nedges; ++e)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return make_error(MPI_ERR_RANK, "edges[%d] = %d is not a node of the graph (%d nodes)",
                              e, edges[e], nnodes);
    return MPI_SUCCESS;
}

// n ranks of a communicator of `size` ranks, with their weights.
int check_neighbors(int n, const int* ranks, const int* weights, int size, const char* what) {
    if (n < 0) return make_error(MPI_ERR_ARG, "negative %s count %d", what, n);
    if (n > 0 && !ranks) return make_error(MPI_ERR_ARG, "the %s list is NULL", what);
    for (int i = 0; i < n; ++i)
        if (ranks[i] < 0 || ranks[i] >= size)
            return make_error(MPI_ERR_RANK, "%s %d is rank %d: the communicator has %d ranks", what,
                              i, ranks[i], size);
    if (weights == MPI_WEIGHTS_EMPTY && n > 0)
        return make_error(MPI_ERR_ARG, "MPI_WEIGHTS_EMPTY given for %d %s edges", n, what);
    if (weights != MPI_UNWEIGHTED && weights != MPI_WEIGHTS_EMPTY)
        for (int i = 0; i < n; ++i)
            if (weights[i] < 0)
                return make_error(MPI_ERR_ARG, "negative weight %d of %s edge %d", weights[i], what,
                                  i);
    return MPI_SUCCESS;
}

int check_node(const Comm* c, int rank) {
    if (rank < 0 || rank >= c->size)
        return make_error(MPI_ERR_RANK, "invalid rank %d: the graph has %d nodes", rank, c->size);
    return MPI_SUCCESS;
}

std::vector<int> weights_of(const int* w, int n) {
    if (w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY)
        return std::vector<int>(static_cast<size_t>(n), 1);
    return std::vector<int>(w, w + n);
}

}  // namespace

extern "C" {

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm* comm_graph) {
    (void)reorder;  // the identity mapping is kept
    MPC_ENTER_ACTIVE(Graph_create);
    Comm *c = nullptr, *n = nullptr;
    if (int e = check_comm(comm_old, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_intra(c));
    MPC_TRY(c, check_not_null(comm_graph, "comm_graph"));
    MPC_TRY(c, check_graph(nnodes, index, edges, c->size));
    MPC_TRY(c, graph_create(c, nnodes, index, edges, &n));
    *comm_graph = handle_or_null(n);
    return MPI_SUCCESS;
}

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
    MPC_ENTER_ACTIVE(Graph_get);
    Comm* c = nullptr;
    const Topology* t = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_topology(c, MPI_GRAPH, &t));
    if (maxindex < 0 || maxedges < 0)
        return raise(c, make_error(MPI_ERR_ARG, "negative maxindex or maxedges"));
    const size_t ni = std::min(t->index.size(), static_cast<size_t>(maxindex));
    const size_t ne = std::min(t->edges.size(), static_cast<size_t>(maxedges));
    if ((ni && !index) || (ne && !edges))
        return raise(c, make_error(MPI_ERR_ARG, "index or edges is NULL"));
    std::copy_n(t->index.begin(), ni, index);
    std::copy_n(t->edges.begin(), ne, edges);
    return MPI_SUCCESS;
}

int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
    MPC_ENTER_ACTIVE(Graphdims_get);
    Comm* c = nullptr;
    const Topology* t = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_topology(c, MPI_GRAPH, &t));
    if (!nnodes || !nedges) return raise(c, make_error(MPI_ERR_ARG, "nnodes or nedges is NULL"));
    *nnodes = static_cast<int>(t->index.size());
    *nedges = static_cast<int>(t->edges.size());
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
    MPC_ENTER_ACTIVE(Graph_neighbors_count);
    Comm* c = nullptr;
    const Topology* t = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_topology(c, MPI_GRAPH, &t));
    MPC_TRY(c, check_not_null(nneighbors, "nneighbors"));
    MPC_TRY(c, check_node(c, rank));
    *nneighbors = t->graph_degree(rank);
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
    MPC_ENTER_ACTIVE(Graph_neighbors);
    Comm* c = nullptr;
    const Topology* t = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_topology(c, MPI_GRAPH, &t));
    MPC_TRY(c, check_node(c, rank));
    if (maxneighbors < 0) return raise(c, make_error(MPI_ERR_ARG, "negative maxneighbors"));
    const int n = std::min(t->graph_degree(rank), maxneighbors);
    if (n > 0) MPC_TRY(c, check_not_null(neighbors, "neighbors"));
    std::copy_n(t->graph_neighbors(rank), n, neighbors);
    return MPI_SUCCESS;
}

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank) {
    MPC_ENTER_ACTIVE(Graph_map);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_intra(c));
    MPC_TRY(c, check_not_null(newrank, "newrank"));
    MPC_TRY(c, check_graph(nnodes, index, edges, c->size));
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm* comm_dist_graph) {
    (void)reorder;
    MPC_ENTER_ACTIVE(Dist_graph_create);
    Comm *c = nullptr, *nc = nullptr;
    Info* i = nullptr;
    if (int e = check_comm(comm_old, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_intra(c));
    MPC_TRY(c, check_info_arg(info, &i));
    MPC_TRY(c, check_not_null(comm_dist_graph, "comm_dist_graph"));
    MPC_TRY(c, check_neighbors(n, sources, MPI_UNWEIGHTED, c->size, "source"));
    if (n > 0) MPC_TRY(c, check_not_null(degrees, "degrees"));
    int edges = 0;
    for (int k = 0; k < n; ++k) {
        if (degrees[k] < 0)
            return raise(c, make_error(MPI_ERR_ARG, "degrees[%d] is negative (%d)", k, degrees[k]));
        edges += degrees[k];
    }
    MPC_TRY(c, check_neighbors(edges, destinations, weights, c->size, "destination"));
    MPC_TRY(c, dist_graph_create(c, n, sources, degrees, destinations, weights, &nc));
    *comm_dist_graph = nc->handle;
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm* comm_dist_graph) {
    (void)reorder;
    MPC_ENTER_ACTIVE(Dist_graph_create_adjacent);
    Comm *c = nullptr, *nc = nullptr;
    Info* i = nullptr;
    if (int e = check_comm(comm_old, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_intra(c));
    MPC_TRY(c, check_info_arg(info, &i));
    MPC_TRY(c, check_not_null(comm_dist_graph, "comm_dist_graph"));
    MPC_TRY(c, check_neighbors(indegree, sources, sourceweights, c->size, "source"));
    MPC_TRY(c, check_neighbors(outdegree, destinations, destweights, c->size, "destination"));
    if ((sourceweights == MPI_UNWEIGHTED) != (destweights == MPI_UNWEIGHTED))
        return raise(c, make_error(MPI_ERR_ARG,
                                   "sourceweights and destweights must both be "
                                   "MPI_UNWEIGHTED or neither"));
    Topology topo;
    topo.weighted = sourceweights != MPI_UNWEIGHTED;
    topo.sources.assign(sources, sources + indegree);
    topo.destinations.assign(destinations, destinations + outdegree);
    topo.source_weights = weights_of(sourceweights, indegree);
    topo.dest_weights = weights_of(destweights, outdegree);
    MPC_TRY(c, dist_graph_create_adjacent(c, std::move(topo), &nc));
    *comm_dist_graph = nc->handle;
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
    MPC_ENTER_ACTIVE(Dist_graph_neighbors_count);
    Comm* c = nullptr;
    const Topology* t = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_topology(c, MPI_DIST_GRAPH, &t));
    if (!indegree || !outdegree || !weighted)
        return raise(c, make_error(MPI_ERR_ARG, "indegree, outdegree or weighted is NULL"));
    *indegree = static_cast<int>(t->sources.size());
    *outdegree = static_cast<int>(t->destinations.size());
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[]) {
    MPC_ENTER_ACTIVE(Dist_graph_neighbors);
    Comm* c = nullptr;
    const Topology* t = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_topology(c, MPI_DIST_GRAPH, &t));
    if (maxindegree < 0 || maxoutdegree < 0)
        return raise(c, make_error(MPI_ERR_ARG, "negative maxindegree or maxoutdegree"));
    const size_t ni = std::min(t->sources.size(), static_cast<size_t>(maxindegree));
    const size_t no = std::min(t->destinations.size(), static_cast<size_t>(maxoutdegree));
    if ((ni && !sources) || (no && !destinations))
        return raise(c, make_error(MPI_ERR_ARG, "sources or destinations is NULL"));
    std::copy_n(t->sources.begin(), ni, sources);
    std::copy_n(t->destinations.begin(), no, destinations);
    auto weights_out = [](int* w) { return w && w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY; };
    if (t->weighted && weights_out(sourceweights))
        std::copy_n(t->source_weights.begin(), ni, sourceweights);
    if (t->weighted && weights_out(destweights))
        std::copy_n(t->dest_weights.begin(), no, destweights);
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_Graph_create)
MPC_WEAK(MPI_Graph_get)
MPC_WEAK(MPI_Graphdims_get)
MPC_WEAK(MPI_Graph_neighbors_count)
MPC_WEAK(MPI_Graph_neighbors)
MPC_WEAK(MPI_Graph_map)
MPC_WEAK(MPI_Dist_graph_create)
MPC_WEAK(MPI_Dist_graph_create_adjacent)
MPC_WEAK(MPI_Dist_graph_neighbors_count)
MPC_WEAK(MPI_Dist_graph_neighbors)
