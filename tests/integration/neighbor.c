/* Neighbor collectives (allgather, allgatherv, alltoall, alltoallv,
 * alltoallw) on a periodic ring, a 2-D grid periodic in one dimension only
 * (MPI_PROC_NULL neighbors; with 1 or 2 ranks per row the same rank is both
 * neighbors of a dimension), a graph (duplicate edges with 2 ranks), an asymmetric
 * distributed graph. Expected values are computed from the topology: on a
 * grid the block sent towards +d arrives in the "from -d" slot; otherwise the
 * k-th message between two ranks fills the k-th matching slot. Untouched slots
 * (MPI_PROC_NULL, gaps between displacements) must keep their sentinel.
 */
#include "common.h"

#define MAXN 16
#define SENTINEL (-777)

enum Kind { RING, GRID, GRAPH, DIST };
static const char* const kind_names[] = {"ring", "grid", "graph", "dist graph"};

typedef struct {
    enum Kind kind;
    MPI_Comm comm;
    int size, rank;
    int dims[2], periods[2], ndims;
} Topo;

static int mod(int a, int n) {
    return ((a % n) + n) % n;
}

/* In- and out-neighbors of rank s, in the standard's order; returns degrees. */
static void neighbors_of(const Topo* t, int s, int* in, int* nin, int* out, int* nout) {
    if (t->kind == RING || t->kind == GRID) {
        int c[2] = {s / (t->ndims == 2 ? t->dims[1] : 1), s % (t->ndims == 2 ? t->dims[1] : 1)};
        if (t->ndims == 1) c[0] = s;
        *nin = *nout = 0;
        for (int d = 0; d < t->ndims; ++d)
            for (int e = -1; e <= 1; e += 2) {
                int x[2] = {c[0], c[1]}, r;
                x[d] += e;
                if (!t->periods[d] && (x[d] < 0 || x[d] >= t->dims[d]))
                    r = MPI_PROC_NULL;
                else
                    MPI_OK(MPI_Cart_rank(t->comm, x, &r));
                in[(*nin)++] = r;
                out[(*nout)++] = r;
            }
    } else if (t->kind == GRAPH) {
        MPI_OK(MPI_Graph_neighbors_count(t->comm, s, nin));
        MPI_OK(MPI_Graph_neighbors(t->comm, s, MAXN, in));
        *nout = *nin;
        memcpy(out, in, sizeof(int) * (size_t)*nin);
    } else {
        in[0] = mod(s - 1, t->size), in[1] = mod(s - 3, t->size);
        out[0] = mod(s + 1, t->size), out[1] = mod(s + 3, t->size);
        *nin = *nout = 2;
    }
}

/* Index of the sender's block that lands in the caller's in-slot j. */
static int block_for_slot(const Topo* t, int j) {
    int in[MAXN], out[MAXN], nin, nout, sin[MAXN], sout[MAXN], snin, snout;
    neighbors_of(t, t->rank, in, &nin, out, &nout);
    if (t->kind == RING || t->kind == GRID) return j ^ 1;
    const int s = in[j];
    int m = 0;
    for (int i = 0; i < j; ++i) m += in[i] == s;
    neighbors_of(t, s, sin, &snin, sout, &snout);
    for (int k = 0; k < snout; ++k)
        if (sout[k] == t->rank && m-- == 0) return k;
    test_fail(__FILE__, __LINE__, "no block of %d for slot %d", s, j);
}

/* The value of element i of block k sent by rank s. */
static int edge_value(int s, int k, int i) {
    return 100000 * (s + 1) + 100 * k + i;
}
/* Elements of block k in the v and w variants. */
static int count_of(int k) {
    return k % 3 + 1;
}

static void test_allgather(const Topo* t, const int* in, int nin) {
    int send[2] = {edge_value(t->rank, 0, 0), edge_value(t->rank, 0, 1)}, recv[2 * MAXN], recvv[3 * MAXN];
    int counts[MAXN], displs[MAXN];
    for (int i = 0; i < 2 * MAXN; ++i) recv[i] = SENTINEL;
    for (int i = 0; i < 3 * MAXN; ++i) recvv[i] = SENTINEL;
    for (int j = 0; j < nin; ++j) counts[j] = 2, displs[j] = 3 * j + 1;
    MPI_OK(MPI_Neighbor_allgather(send, 2, MPI_INT, recv, 2, MPI_INT, t->comm));
    MPI_OK(MPI_Neighbor_allgatherv(send, 2, MPI_INT, recvv, counts, displs, MPI_INT, t->comm));
    for (int j = 0; j < nin; ++j)
        for (int i = 0; i < 2; ++i) {
            const int expect = in[j] == MPI_PROC_NULL ? SENTINEL : edge_value(in[j], 0, i);
            CHECK(recv[2 * j + i] == expect, "%s allgather slot %d[%d]: %d, expected %d",
                  kind_names[t->kind], j, i, recv[2 * j + i], expect);
            CHECK(recvv[displs[j] + i] == expect, "%s allgatherv slot %d[%d]: %d",
                  kind_names[t->kind], j, i, recvv[displs[j] + i]);
            CHECK(recvv[3 * j] == SENTINEL, "allgatherv wrote into a gap");
        }
}

static void test_alltoall(const Topo* t, const int* in, int nin, int nout) {
    int send[2 * MAXN], recv[2 * MAXN];
    for (int k = 0; k < nout; ++k)
        for (int i = 0; i < 2; ++i) send[2 * k + i] = edge_value(t->rank, k, i);
    for (int i = 0; i < 2 * MAXN; ++i) recv[i] = SENTINEL;
    MPI_OK(MPI_Neighbor_alltoall(send, 2, MPI_INT, recv, 2, MPI_INT, t->comm));
    for (int j = 0; j < nin; ++j)
        for (int i = 0; i < 2; ++i) {
            const int expect =
                in[j] == MPI_PROC_NULL ? SENTINEL : edge_value(in[j], block_for_slot(t, j), i);
            CHECK(recv[2 * j + i] == expect, "%s alltoall slot %d[%d]: %d, expected %d",
                  kind_names[t->kind], j, i, recv[2 * j + i], expect);
        }
}

/* v: block k has count_of(k) ints at displacement 4k; w: odd blocks are
 * shorts, displacements in bytes, packed tightly from byte 8. */
static void test_alltoallv_w(const Topo* t, const int* in, int nin, int nout) {
    int send[4 * MAXN], recv[4 * MAXN], scounts[MAXN], sdispls[MAXN], rcounts[MAXN], rdispls[MAXN];
    for (int k = 0; k < nout; ++k) {
        scounts[k] = count_of(k), sdispls[k] = 4 * k;
        for (int i = 0; i < 4; ++i) send[4 * k + i] = edge_value(t->rank, k, i);
    }
    for (int j = 0; j < nin; ++j) {
        rcounts[j] = in[j] == MPI_PROC_NULL ? 0 : count_of(block_for_slot(t, j));
        rdispls[j] = 4 * j;
    }
    for (int i = 0; i < 4 * MAXN; ++i) recv[i] = SENTINEL;
    MPI_OK(MPI_Neighbor_alltoallv(send, scounts, sdispls, MPI_INT, recv, rcounts, rdispls, MPI_INT,
                                  t->comm));
    for (int j = 0; j < nin; ++j)
        for (int i = 0; i < 4; ++i) {
            const int k = in[j] == MPI_PROC_NULL ? -1 : block_for_slot(t, j);
            const int expect = k >= 0 && i < count_of(k) ? edge_value(in[j], k, i) : SENTINEL;
            CHECK(recv[4 * j + i] == expect, "%s alltoallv slot %d[%d]: %d, expected %d",
                  kind_names[t->kind], j, i, recv[4 * j + i], expect);
        }

    char wsend[16 * MAXN + 8], wrecv[16 * MAXN + 8];
    MPI_Aint wsd[MAXN], wrd[MAXN];
    MPI_Datatype stypes[MAXN], rtypes[MAXN];
    MPI_Aint at = 8;
    for (int k = 0; k < nout; ++k) {
        stypes[k] = k % 2 ? MPI_SHORT : MPI_INT;
        wsd[k] = at;
        for (int i = 0; i < count_of(k); ++i) {
            if (k % 2) {
                short v = (short)(edge_value(t->rank, k, i) % 30000);
                memcpy(wsend + at, &v, sizeof v), at += (MPI_Aint)sizeof v;
            } else {
                int v = edge_value(t->rank, k, i);
                memcpy(wsend + at, &v, sizeof v), at += (MPI_Aint)sizeof v;
            }
        }
    }
    memset(wrecv, 0x5a, sizeof wrecv);
    for (int j = 0; j < nin; ++j) {
        const int k = in[j] == MPI_PROC_NULL ? 0 : block_for_slot(t, j);
        rtypes[j] = k % 2 ? MPI_SHORT : MPI_INT;
        wrd[j] = 8 + 16 * j;
    }
    MPI_OK(
        MPI_Neighbor_alltoallw(wsend, scounts, wsd, stypes, wrecv, rcounts, wrd, rtypes, t->comm));
    for (int j = 0; j < nin; ++j) {
        if (in[j] == MPI_PROC_NULL) {
            CHECK_GUARD(wrecv + wrd[j], 16, 0x5a, "alltoallw PROC_NULL slot");
            continue;
        }
        const int k = block_for_slot(t, j);
        for (int i = 0; i < count_of(k); ++i) {
            int got, expect = edge_value(in[j], k, i);
            if (k % 2) {
                short v;
                memcpy(&v, wrecv + wrd[j] + 2 * i, sizeof v);
                got = v, expect = (short)(expect % 30000);
            } else {
                memcpy(&got, wrecv + wrd[j] + 4 * i, sizeof got);
            }
            CHECK(got == expect, "%s alltoallw slot %d[%d]: %d, expected %d", kind_names[t->kind],
                  j, i, got, expect);
        }
    }
    CHECK_GUARD(wrecv, 8, 0x5a, "alltoallw wrote below the first displacement");
}

static void run(Topo* t) {
    MPI_OK(MPI_Comm_rank(t->comm, &t->rank));
    int in[MAXN], out[MAXN], nin, nout;
    neighbors_of(t, t->rank, in, &nin, out, &nout);
    if (t->kind == DIST) { /* the library's order must be the one assumed */
        int s[MAXN], d[MAXN], sw[MAXN], dw[MAXN], a, b, w;
        MPI_OK(MPI_Dist_graph_neighbors_count(t->comm, &a, &b, &w));
        MPI_OK(MPI_Dist_graph_neighbors(t->comm, MAXN, s, sw, MAXN, d, dw));
        CHECK(
            a == 2 && b == 2 && s[0] == in[0] && s[1] == in[1] && d[0] == out[0] && d[1] == out[1],
            "dist graph neighbors");
    }
    test_allgather(t, in, nin);
    test_alltoall(t, in, nin, nout);
    test_alltoallv_w(t, in, nin, nout);
    MPI_OK(MPI_Comm_free(&t->comm));
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    Topo ring = {RING, MPI_COMM_NULL, size, rank, {size, 1}, {1, 0}, 1};
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, ring.dims, ring.periods, 0, &ring.comm));
    run(&ring);

    /* Rows of 2 ranks (1 with an odd count): dimension 1 pairs a rank with
     * itself or with the same rank twice. */
    Topo grid = {
        GRID, MPI_COMM_NULL, size, rank, {size % 2 ? size : size / 2, size % 2 ? 1 : 2}, {0, 1}, 2};
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, grid.dims, grid.periods, 0, &grid.comm));
    run(&grid);

    /* A ring, with a chord to the opposite rank when there is one (the
     * adjacency must be symmetric, duplicates included). */
    int index[MAXN], edges[3 * MAXN], nedges = 0;
    for (int i = 0; i < size; ++i) {
        edges[nedges++] = mod(i + 1, size);
        edges[nedges++] = mod(i - 1, size);
        if (!(size & 1)) edges[nedges++] = mod(i + size / 2, size);
        index[i] = nedges;
    }
    Topo graph = {GRAPH, MPI_COMM_NULL, size, rank, {0, 0}, {0, 0}, 0};
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &graph.comm));
    run(&graph);

    Topo dist = {DIST, MPI_COMM_NULL, size, rank, {0, 0}, {0, 0}, 0};
    int in[2] = {mod(rank - 1, size), mod(rank - 3, size)};
    int out[2] = {mod(rank + 1, size), mod(rank + 3, size)};
    const int weights[2] = {1, 2}; /* topo.c covers MPI_UNWEIGHTED */
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, weights, 2, out, weights,
                                          MPI_INFO_NULL, 0, &dist.comm));
    run(&dist);

    /* Errors: no topology, MPI_IN_PLACE, negative count. */
    int x = 0, y[4];
    CHECK(error_class(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD)) ==
              MPI_ERR_TOPOLOGY,
          "neighbor collective without a topology");
    MPI_Comm c;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, ring.dims, ring.periods, 0, &c));
    CHECK(error_class(MPI_Neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, y, 1, MPI_INT, c)) ==
              MPI_ERR_BUFFER,
          "MPI_IN_PLACE");
    CHECK(error_class(MPI_Neighbor_allgather(&x, -1, MPI_INT, y, 1, MPI_INT, c)) == MPI_ERR_COUNT,
          "negative count");
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Finalize());
    if (rank == 0) printf("neighbor: OK (%d ranks)\n", size);
    return 0;
}
