/* Process topologies: Cartesian grids (Dims_create, coords/rank round trip,
 * shifts on periodic and non-periodic dimensions, sub-grids, Cart_get, ranks
 * left out of a smaller grid), graphs (a ring with chords), distributed graphs
 * (adjacent, and built from edges spread over other ranks, with weights),
 * Topo_test, the map functions, and error classes.
 */
#include "common.h"

static int mod(int a, int n) {
    return ((a % n) + n) % n;
}

static void test_cart(int rank, int size) {
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MPI_OK(MPI_Dims_create(size, 2, dims));
    CHECK(dims[0] * dims[1] == size && dims[0] >= dims[1], "dims %d x %d", dims[0], dims[1]);
    MPI_Comm cart;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart));
    int status, nd, crank;
    MPI_OK(MPI_Topo_test(cart, &status));
    CHECK(status == MPI_CART, "Topo_test %d", status);
    MPI_OK(MPI_Topo_test(MPI_COMM_WORLD, &status));
    CHECK(status == MPI_UNDEFINED, "no topology on the world");
    MPI_OK(MPI_Cartdim_get(cart, &nd));
    CHECK(nd == 2, "Cartdim_get %d", nd);
    MPI_OK(MPI_Comm_rank(cart, &crank));
    CHECK(crank == rank, "no reordering");

    int coords[2], gd[2], gp[2], gc[2], r;
    MPI_OK(MPI_Cart_coords(cart, rank, 2, coords));
    const int my_row = rank / dims[1], my_column = rank - my_row * dims[1];
    CHECK(coords[0] == my_row && coords[1] == my_column, "row-major coords");
    MPI_OK(MPI_Cart_get(cart, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0, "Cart_get");
    CHECK(gc[0] == coords[0] && gc[1] == coords[1], "Cart_get coords");
    for (int x = 0; x < size; ++x) {
        int c[2];
        MPI_OK(MPI_Cart_coords(cart, x, 2, c));
        MPI_OK(MPI_Cart_rank(cart, c, &r));
        CHECK(r == x, "coords/rank round trip of %d", x);
    }
    int wrapped[2] = {coords[0] + 3 * dims[0], coords[1]};
    MPI_OK(MPI_Cart_rank(cart, wrapped, &r));
    CHECK(r == rank, "periodic coordinates wrap");

    /* Shifts: dimension 0 wraps, dimension 1 stops at the edges. */
    int src, dst;
    MPI_OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
    CHECK(src == mod(coords[0] - 1, dims[0]) * dims[1] + coords[1], "shift source %d", src);
    CHECK(dst == mod(coords[0] + 1, dims[0]) * dims[1] + coords[1], "shift dest %d", dst);
    MPI_OK(MPI_Cart_shift(cart, 1, 2, &src, &dst));
    CHECK(src == (coords[1] >= 2 ? rank - 2 : MPI_PROC_NULL), "non-periodic source %d", src);
    CHECK(dst == (coords[1] + 2 < dims[1] ? rank + 2 : MPI_PROC_NULL), "non-periodic dest %d", dst);
    /* Rows are sub-grids: the ranks of a row, in order. */
    int remain[2] = {0, 1};
    MPI_Comm row;
    MPI_OK(MPI_Cart_sub(cart, remain, &row));
    int rsize, rrank, rdims, rd[1], rp[1], rc[1];
    MPI_OK(MPI_Comm_size(row, &rsize));
    MPI_OK(MPI_Comm_rank(row, &rrank));
    CHECK(rsize == dims[1] && rrank == coords[1], "row %d of %d", rrank, rsize);
    MPI_OK(MPI_Cartdim_get(row, &rdims));
    MPI_OK(MPI_Cart_get(row, 1, rd, rp, rc));
    CHECK(rdims == 1 && rd[0] == dims[1] && rp[0] == 0 && rc[0] == coords[1], "row topology");
    int sum = 0;
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, row));
    const int first = coords[0] * dims[1];
    CHECK(sum == dims[1] * first + dims[1] * (dims[1] - 1) / 2, "row sum %d", sum);
    MPI_OK(MPI_Comm_free(&row));
    /* Nothing remains: a 0-dimensional grid of one rank. */
    int none[2] = {0, 0};
    MPI_OK(MPI_Cart_sub(cart, none, &row));
    MPI_OK(MPI_Comm_size(row, &rsize));
    MPI_OK(MPI_Cartdim_get(row, &rdims));
    CHECK(rsize == 1 && rdims == 0, "empty sub-grid");
    MPI_OK(MPI_Comm_free(&row));
    MPI_OK(MPI_Comm_free(&cart));

    /* A smaller grid leaves the last ranks out. */
    int small = size > 1 ? size - 1 : 1, p1 = 0;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &small, &p1, 0, &cart));
    CHECK((cart == MPI_COMM_NULL) == (rank >= small), "ranks outside the grid");
    MPI_OK(MPI_Cart_map(MPI_COMM_WORLD, 1, &small, &p1, &r));
    CHECK(r == (rank < small ? rank : MPI_UNDEFINED), "Cart_map %d", r);
    if (cart != MPI_COMM_NULL) MPI_OK(MPI_Comm_free(&cart));
}

/* Ring with a chord to the opposite rank: node i has neighbors i-1, i+1 and
 * i+n/2 (in that order; duplicates allowed). */
static void test_graph(int rank, int size) {
    int* index = (int*)xmalloc(sizeof(int) * (size_t)size);
    int* edges = (int*)xmalloc(sizeof(int) * 3 * (size_t)size);
    for (int i = 0; i < size; ++i) {
        edges[3 * i] = mod(i - 1, size);
        edges[3 * i + 1] = mod(i + 1, size);
        edges[3 * i + 2] = mod(i + size / 2, size);
        index[i] = 3 * (i + 1);
    }
    MPI_Comm g;
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
    int status, nnodes, nedges, count, nb[3];
    MPI_OK(MPI_Topo_test(g, &status));
    CHECK(status == MPI_GRAPH, "Topo_test %d", status);
    MPI_OK(MPI_Graphdims_get(g, &nnodes, &nedges));
    CHECK(nnodes == size && nedges == 3 * size, "Graphdims_get %d %d", nnodes, nedges);
    for (int x = 0; x < size; ++x) {
        MPI_OK(MPI_Graph_neighbors_count(g, x, &count));
        MPI_OK(MPI_Graph_neighbors(g, x, 3, nb));
        CHECK(count == 3 && nb[0] == edges[3 * x] && nb[1] == edges[3 * x + 1] &&
                  nb[2] == edges[3 * x + 2],
              "neighbors of %d", x);
    }
    int* gi = (int*)xmalloc(sizeof(int) * (size_t)size);
    int* ge = (int*)xmalloc(sizeof(int) * 3 * (size_t)size);
    MPI_OK(MPI_Graph_get(g, size, 3 * size, gi, ge));
    for (int i = 0; i < size; ++i) CHECK(gi[i] == index[i], "Graph_get index[%d]", i);
    for (int i = 0; i < 3 * size; ++i) CHECK(ge[i] == edges[i], "Graph_get edges[%d]", i);
    int r;
    MPI_OK(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &r));
    CHECK(r == rank, "Graph_map");
    int dummy[2];
    CHECK(error_class(MPI_Cart_coords(g, 0, 2, dummy)) == MPI_ERR_TOPOLOGY, "cart call on graph");
    CHECK(error_class(MPI_Graph_neighbors_count(g, size, &count)) == MPI_ERR_RANK, "bad node");
    MPI_OK(MPI_Comm_free(&g));
    free(gi);
    free(ge);
    free(index);
    free(edges);
}

/* Each rank r has out-edges to r+1 (weight 10r+1) and r+2 (weight 10r+2). */
static void check_dist(MPI_Comm d, int rank, int size, int weighted) {
    int in, out, w, status;
    MPI_OK(MPI_Topo_test(d, &status));
    CHECK(status == MPI_DIST_GRAPH, "Topo_test %d", status);
    MPI_OK(MPI_Dist_graph_neighbors_count(d, &in, &out, &w));
    CHECK(in == 2 && out == 2 && w == weighted, "counts %d %d %d", in, out, w);
    int srcs[2], sw[2], dsts[2], dw[2];
    MPI_OK(MPI_Dist_graph_neighbors(d, 2, srcs, sw, 2, dsts, dw));
    const int a = mod(rank - 1, size), b = mod(rank - 2, size);
    /* Neighbor order is the implementation's; check the sets, with weights. */
    const int swapped = srcs[0] != a;
    CHECK(srcs[swapped] == a && srcs[1 - swapped] == b, "sources %d %d", srcs[0], srcs[1]);
    CHECK(dsts[0] + dsts[1] == mod(rank + 1, size) + mod(rank + 2, size), "destinations");
    if (weighted) {
        CHECK(sw[swapped] == 10 * a + 1 && sw[1 - swapped] == 10 * b + 2, "source weights");
        for (int k = 0; k < 2; ++k)
            CHECK(dw[k] == 10 * rank + (dsts[k] == mod(rank + 1, size) ? 1 : 2) ||
                      mod(rank + 1, size) == mod(rank + 2, size),
                  "destination weight %d", dw[k]);
    }
}

static void test_dist_graph(int rank, int size) {
    const int srcs[2] = {mod(rank - 1, size), mod(rank - 2, size)};
    const int sw[2] = {10 * srcs[0] + 1, 10 * srcs[1] + 2};
    const int dsts[2] = {mod(rank + 1, size), mod(rank + 2, size)};
    const int dw[2] = {10 * rank + 1, 10 * rank + 2};
    MPI_Comm d;
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, sw, 2, dsts, dw, MPI_INFO_NULL,
                                          0, &d));
    check_dist(d, rank, size, 1);
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dsts,
                                          MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &d));
    check_dist(d, rank, size, 0);
    MPI_OK(MPI_Comm_free(&d));

    /* The edges of rank r are declared by rank r+3 (another rank, usually). */
    const int owner = mod(rank - 3, size);
    const int src_list[1] = {owner}, degree[1] = {2};
    const int dst_list[2] = {mod(owner + 1, size), mod(owner + 2, size)};
    const int weights[2] = {10 * owner + 1, 10 * owner + 2};
    MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src_list, degree, dst_list, weights,
                                 MPI_INFO_NULL, 0, &d));
    check_dist(d, rank, size, 1);
    MPI_OK(MPI_Comm_free(&d));
    /* No edges at all on even ranks, with MPI_WEIGHTS_EMPTY. */
    MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, MPI_WEIGHTS_EMPTY,
                                 MPI_INFO_NULL, 0, &d));
    int in, out, w;
    MPI_OK(MPI_Dist_graph_neighbors_count(d, &in, &out, &w));
    CHECK(in == 0 && out == 0, "empty graph");
    MPI_OK(MPI_Comm_free(&d));
}

static void test_errors(int size) {
    int dims[2] = {size + 1, 1}, periods[2] = {0, 0}, r;
    MPI_Comm c;
    CHECK(error_class(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c)) == MPI_ERR_ARG,
          "grid larger than the communicator");
    dims[0] = -1;
    CHECK(error_class(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c)) == MPI_ERR_DIMS,
          "negative dimension");
    CHECK(error_class(MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &c)) == MPI_ERR_DIMS,
          "negative ndims");
    CHECK(error_class(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &r, &r)) == MPI_ERR_TOPOLOGY,
          "shift without a topology");
    int d2[2] = {0, 3};
    CHECK(error_class(MPI_Dims_create(size * 3 + 1, 2, d2)) == MPI_ERR_DIMS,
          "Dims_create with an impossible fixed dimension");
    int n1 = size;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &n1, periods, 0, &c));
    int coords[1] = {size};
    CHECK(error_class(MPI_Cart_rank(c, coords, &r)) == MPI_ERR_ARG, "coordinate off the grid");
    CHECK(error_class(MPI_Cart_shift(c, 1, 1, &r, &r)) == MPI_ERR_DIMS, "direction 1 of 1-D");
    CHECK(error_class(MPI_Cart_coords(c, size, 1, coords)) == MPI_ERR_RANK, "rank off the grid");
    int in, out, w;
    CHECK(error_class(MPI_Dist_graph_neighbors_count(c, &in, &out, &w)) == MPI_ERR_TOPOLOGY,
          "dist graph call on a grid");
    MPI_OK(MPI_Comm_free(&c));
    const int index[1] = {1}, edges[1] = {5};
    CHECK(error_class(MPI_Graph_create(MPI_COMM_WORLD, 1, index, edges, 0, &c)) == MPI_ERR_RANK,
          "edge to a node outside the graph");
    const int bad_src[1] = {size};
    CHECK(error_class(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, bad_src, MPI_UNWEIGHTED, 0,
                                                     NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c)) ==
              MPI_ERR_RANK,
          "source outside the communicator");
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_cart(rank, size);
    test_graph(rank, size);
    test_dist_graph(rank, size);
    test_errors(size);
    MPI_OK(MPI_Finalize());
    if (rank == 0) printf("topo: OK (%d ranks)\n", size);
    return 0;
}
