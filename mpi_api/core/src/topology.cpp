// Virtual topologies: grid arithmetic, neighbor lists, constructors.
#include "mpi_api/topology.hpp"

#include <algorithm>
#include <memory>

#include "mpi_api/comm_ops.hpp"
#include "mpi_api/internal_coll.hpp"

// The weight-array sentinels of mpi.h: only their addresses matter.
namespace {
int g_weight_sentinels[2];
}  // namespace
extern "C" int* const MPI_UNWEIGHTED = &g_weight_sentinels[0];
extern "C" int* const MPI_WEIGHTS_EMPTY = &g_weight_sentinels[1];

namespace mpc::mpi {

// ---- Grid arithmetic ---------------------------------------------------------

void Topology::cart_coords(int rank, int* coords) const {
    for (int d = ndims() - 1; d >= 0; --d) {
        const int n = dims[static_cast<size_t>(d)];
        coords[d] = rank % n;
        rank /= n;
    }
}

int Topology::cart_rank(const int* coords) const {
    int rank = 0;
    for (int d = 0; d < ndims(); ++d) rank = rank * dims[static_cast<size_t>(d)] + coords[d];
    return rank;
}

void Topology::cart_shift(int rank, int direction, int disp, int* source, int* dest) const {
    std::vector<int> c(dims.size());
    cart_coords(rank, c.data());
    const size_t d = static_cast<size_t>(direction);
    const int n = dims[d], here = c[d];
    auto neighbor = [&](long pos) {
        if (periods[d])
            pos = ((pos % n) + n) % n;
        else if (pos < 0 || pos >= n)
            return MPI_PROC_NULL;
        c[d] = static_cast<int>(pos);
        int r = cart_rank(c.data());
        c[d] = here;
        return r;
    };
    *source = neighbor(static_cast<long>(here) - disp);
    *dest = neighbor(static_cast<long>(here) + disp);
}

int Topology::graph_degree(int rank) const {
    const size_t r = static_cast<size_t>(rank);
    return index[r] - (r == 0 ? 0 : index[r - 1]);
}

const int* Topology::graph_neighbors(int rank) const {
    const size_t r = static_cast<size_t>(rank);
    return edges.data() + (r == 0 ? 0 : index[r - 1]);
}

NeighborList topo_neighbors(const Comm& c) {
    NeighborList n;
    const Topology& t = *c.topology;
    if (t.kind == MPI_CART) {
        for (int d = 0; d < t.ndims(); ++d) {
            int src, dst;
            t.cart_shift(c.rank, d, 1, &src, &dst);
            n.in.insert(n.in.end(), {src, dst});
            n.out.insert(n.out.end(), {src, dst});
            // Sent towards -d with offset 2d, towards +d with 2d+1; the block
            // from the -d neighbor was sent towards +d.
            n.in_tag.insert(n.in_tag.end(), {2 * d + 1, 2 * d});
            n.out_tag.insert(n.out_tag.end(), {2 * d, 2 * d + 1});
        }
        n.tags = std::max(1, 2 * t.ndims());
    } else if (t.kind == MPI_GRAPH) {
        const int* nb = t.graph_neighbors(c.rank);
        n.in.assign(nb, nb + t.graph_degree(c.rank));
        n.out = n.in;
    } else {
        n.in = t.sources;
        n.out = t.destinations;
    }
    n.in_tag.resize(n.in.size());
    n.out_tag.resize(n.out.size());
    return n;
}

// ---- Constructors ------------------------------------------------------------

namespace {

// The first n ranks of old, as a new communicator carrying topo.
int create_with_topology(Comm* old, int n, std::shared_ptr<Topology> topo, Comm** out) {
    std::vector<int> w(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) w[static_cast<size_t>(r)] = old->group->world_rank(r);
    if (int e = comm_create(old, group_from_world_ranks(std::move(w)), out)) return e;
    if (*out) (*out)->topology = std::move(topo);
    return MPI_SUCCESS;
}

}  // namespace

int cart_create(Comm* old, int ndims, const int* dims, const int* periods, Comm** out) {
    auto topo = std::make_shared<Topology>();
    topo->kind = MPI_CART;
    topo->dims.assign(dims, dims + ndims);
    topo->periods.resize(static_cast<size_t>(ndims));
    int n = 1;
    for (int d = 0; d < ndims; ++d) {
        n *= dims[d];
        topo->periods[static_cast<size_t>(d)] = periods[d] ? 1 : 0;
    }
    return create_with_topology(old, n, std::move(topo), out);
}

int cart_sub(Comm* cart, const int* remain_dims, Comm** out) {
    const Topology& t = *cart->topology;
    std::vector<int> coords(t.dims.size());
    t.cart_coords(cart->rank, coords.data());
    auto topo = std::make_shared<Topology>();
    topo->kind = MPI_CART;
    int color = 0;
    for (size_t d = 0; d < t.dims.size(); ++d) {
        if (remain_dims[d]) {
            topo->dims.push_back(t.dims[d]);
            topo->periods.push_back(t.periods[d]);
        } else {
            color = color * t.dims[d] + coords[d];  // the fixed coordinates name the slice
        }
    }
    if (int e = comm_split(cart, color, cart->rank, out)) return e;
    (*out)->topology = std::move(topo);
    return MPI_SUCCESS;
}

int graph_create(Comm* old, int nnodes, const int* index, const int* edges, Comm** out) {
    auto topo = std::make_shared<Topology>();
    topo->kind = MPI_GRAPH;
    topo->index.assign(index, index + nnodes);
    topo->edges.assign(edges, edges + (nnodes > 0 ? index[nnodes - 1] : 0));
    return create_with_topology(old, nnodes, std::move(topo), out);
}

int dist_graph_create_adjacent(Comm* old, Topology topo, Comm** out) {
    topo.kind = MPI_DIST_GRAPH;
    return create_with_topology(old, old->size, std::make_shared<Topology>(std::move(topo)), out);
}

int dist_graph_create(Comm* old, int n, const int* sources, const int* degrees,
                      const int* destinations, const int* weights, Comm** out) {
    const bool weighted = weights != MPI_UNWEIGHTED;
    // Each edge s -> d (weight w) is told to s as an out-edge and to d as an
    // in-edge: triples (1 = out / 0 = in, the other end, w).
    std::vector<std::vector<int>> send(static_cast<size_t>(old->size)), recv;
    size_t e = 0;
    for (int i = 0; i < n; ++i) {
        const int s = sources[i];
        for (int k = 0; k < degrees[i]; ++k, ++e) {
            const int d = destinations[e];
            const int w = weighted ? weights[e] : 1;
            auto& to_s = send[static_cast<size_t>(s)];
            to_s.insert(to_s.end(), {1, d, w});
            auto& to_d = send[static_cast<size_t>(d)];
            to_d.insert(to_d.end(), {0, s, w});
        }
    }
    alltoall_int_vectors(Team::all(old), send, recv, next_coll_tag(old));

    // Neighbors in the order of the ranks that declared the edges.
    Topology topo;
    topo.weighted = weighted;
    for (const std::vector<int>& from : recv)
        for (size_t i = 0; i + 2 < from.size(); i += 3) {
            if (from[i] == 1) {
                topo.destinations.push_back(from[i + 1]);
                topo.dest_weights.push_back(from[i + 2]);
            } else {
                topo.sources.push_back(from[i + 1]);
                topo.source_weights.push_back(from[i + 2]);
            }
        }
    return dist_graph_create_adjacent(old, std::move(topo), out);
}

}  // namespace mpc::mpi
