/* The large-count (_c) collectives of MPI 4.0 with small counts: every one in
 * its blocking, nonblocking and persistent form must give what the int
 * MPI_X gives on the same data (MPI_Count counts, MPI_Aint displacements in
 * the v and w forms), and negative counts are MPI_ERR_COUNT.
 */
#include <limits.h>

#include "common.h"

#define K 5 /* elements per block */

static int rank, size;

/* Runs a _c collective in form 0 (blocking), 1 (nonblocking + wait) or 2
 * (persistent: init, start, wait, free). */
#define RUN_C(form, B, I, P, ...)                                         \
    do {                                                                  \
        MPI_Request rq_;                                                  \
        if ((form) == 0) {                                                \
            MPI_OK(B(__VA_ARGS__));                                       \
        } else if ((form) == 1) {                                         \
            MPI_OK(I(__VA_ARGS__, &rq_));                                 \
            MPI_OK(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                    \
        } else {                                                          \
            MPI_OK(P(__VA_ARGS__, MPI_INFO_NULL, &rq_));                  \
            MPI_OK(MPI_Start(&rq_));                                      \
            MPI_OK(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                    \
            MPI_OK(MPI_Request_free(&rq_));                               \
        }                                                                 \
    } while (0)

static const char* kForm[3] = {"blocking", "nonblocking", "persistent"};

static void same(const int* ref, const int* got, int n, const char* what, int form) {
    for (int i = 0; i < n; ++i)
        CHECK(ref[i] == got[i], "%s (%s): element %d is %d, the int form gave %d", what,
              kForm[form], i, got[i], ref[i]);
}

/* Send data: block j (for rank j) of rank r. */
static void fill_send(int* v, int blocks) {
    for (int j = 0; j < blocks; ++j)
        for (int i = 0; i < K; ++i) v[j * K + i] = rank * 1000 + j * 10 + i;
}

static void movement(int form) {
    const int n = size * K;
    int* s = (int*)xmalloc(sizeof(int) * (size_t)n);
    int* ref = (int*)xmalloc(sizeof(int) * (size_t)n);
    int* got = (int*)xmalloc(sizeof(int) * (size_t)n);
    const int root = size - 1;
    fill_send(s, size);
#define RESET()                                     \
    do {                                            \
        memset(ref, 0xff, sizeof(int) * (size_t)n); \
        memset(got, 0xff, sizeof(int) * (size_t)n); \
    } while (0)

    RESET();
    if (rank == root) memcpy(ref, s, sizeof(int) * K), memcpy(got, s, sizeof(int) * K);
    MPI_OK(MPI_Bcast(ref, K, MPI_INT, root, MPI_COMM_WORLD));
    RUN_C(form, MPI_Bcast_c, MPI_Ibcast_c, MPI_Bcast_init_c, got, K, MPI_INT, root,
          MPI_COMM_WORLD);
    same(ref, got, K, "Bcast_c", form);

    RESET();
    MPI_OK(MPI_Gather(s, K, MPI_INT, ref, K, MPI_INT, root, MPI_COMM_WORLD));
    RUN_C(form, MPI_Gather_c, MPI_Igather_c, MPI_Gather_init_c, s, K, MPI_INT, got, K, MPI_INT,
          root, MPI_COMM_WORLD);
    if (rank == root) same(ref, got, n, "Gather_c", form);

    RESET();
    MPI_OK(MPI_Scatter(s, K, MPI_INT, ref, K, MPI_INT, root, MPI_COMM_WORLD));
    RUN_C(form, MPI_Scatter_c, MPI_Iscatter_c, MPI_Scatter_init_c, s, K, MPI_INT, got, K, MPI_INT,
          root, MPI_COMM_WORLD);
    same(ref, got, K, "Scatter_c", form);

    RESET();
    MPI_OK(MPI_Allgather(s, K, MPI_INT, ref, K, MPI_INT, MPI_COMM_WORLD));
    RUN_C(form, MPI_Allgather_c, MPI_Iallgather_c, MPI_Allgather_init_c, s, K, MPI_INT, got, K,
          MPI_INT, MPI_COMM_WORLD);
    same(ref, got, n, "Allgather_c", form);

    RESET();
    MPI_OK(MPI_Alltoall(s, K, MPI_INT, ref, K, MPI_INT, MPI_COMM_WORLD));
    RUN_C(form, MPI_Alltoall_c, MPI_Ialltoall_c, MPI_Alltoall_init_c, s, K, MPI_INT, got, K,
          MPI_INT, MPI_COMM_WORLD);
    same(ref, got, n, "Alltoall_c", form);

    /* v and w forms: rank j's block has j % K + 1 elements, in reverse order. */
    int* ic = (int*)xmalloc(sizeof(int) * (size_t)size);
    int* id = (int*)xmalloc(sizeof(int) * (size_t)size);
    int* bd = (int*)xmalloc(sizeof(int) * (size_t)size);
    MPI_Count* cc = (MPI_Count*)xmalloc(sizeof(MPI_Count) * (size_t)size);
    MPI_Aint* cd = (MPI_Aint*)xmalloc(sizeof(MPI_Aint) * (size_t)size);
    MPI_Aint* cbd = (MPI_Aint*)xmalloc(sizeof(MPI_Aint) * (size_t)size);
    MPI_Datatype* ty = (MPI_Datatype*)xmalloc(sizeof(MPI_Datatype) * (size_t)size);
    for (int j = 0; j < size; ++j) {
        ic[j] = j % K + 1;
        id[j] = (size - 1 - j) * K;
        bd[j] = id[j] * (int)sizeof(int);
        cc[j] = ic[j];
        cd[j] = id[j];
        cbd[j] = bd[j];
        ty[j] = MPI_INT;
    }
    const int mine = rank % K + 1;

    RESET();
    MPI_OK(MPI_Gatherv(s, mine, MPI_INT, ref, ic, id, MPI_INT, root, MPI_COMM_WORLD));
    RUN_C(form, MPI_Gatherv_c, MPI_Igatherv_c, MPI_Gatherv_init_c, s, mine, MPI_INT, got, cc, cd,
          MPI_INT, root, MPI_COMM_WORLD);
    if (rank == root) same(ref, got, n, "Gatherv_c", form);

    RESET();
    MPI_OK(MPI_Scatterv(s, ic, id, MPI_INT, ref, mine, MPI_INT, root, MPI_COMM_WORLD));
    RUN_C(form, MPI_Scatterv_c, MPI_Iscatterv_c, MPI_Scatterv_init_c, s, cc, cd, MPI_INT, got,
          mine, MPI_INT, root, MPI_COMM_WORLD);
    same(ref, got, K, "Scatterv_c", form);

    RESET();
    MPI_OK(MPI_Allgatherv(s, mine, MPI_INT, ref, ic, id, MPI_INT, MPI_COMM_WORLD));
    RUN_C(form, MPI_Allgatherv_c, MPI_Iallgatherv_c, MPI_Allgatherv_init_c, s, mine, MPI_INT, got,
          cc, cd, MPI_INT, MPI_COMM_WORLD);
    same(ref, got, n, "Allgatherv_c", form);

    /* Alltoallv and w: every rank sends rank % K + 1 elements (block j of its
     * send buffer) to rank j, which places them at id[rank]. */
    int* sc = (int*)xmalloc(sizeof(int) * (size_t)size);
    int* sdi = (int*)xmalloc(sizeof(int) * (size_t)size);
    MPI_Count* scc = (MPI_Count*)xmalloc(sizeof(MPI_Count) * (size_t)size);
    MPI_Aint* scd = (MPI_Aint*)xmalloc(sizeof(MPI_Aint) * (size_t)size);
    MPI_Aint* scbd = (MPI_Aint*)xmalloc(sizeof(MPI_Aint) * (size_t)size);
    for (int j = 0; j < size; ++j) {
        sc[j] = mine;
        sdi[j] = j * K;
        scc[j] = sc[j];
        scd[j] = sdi[j];
        scbd[j] = sdi[j] * (MPI_Aint)sizeof(int);
    }
    RESET();
    MPI_OK(MPI_Alltoallv(s, sc, sdi, MPI_INT, ref, ic, id, MPI_INT, MPI_COMM_WORLD));
    RUN_C(form, MPI_Alltoallv_c, MPI_Ialltoallv_c, MPI_Alltoallv_init_c, s, scc, scd, MPI_INT, got,
          cc, cd, MPI_INT, MPI_COMM_WORLD);
    same(ref, got, n, "Alltoallv_c", form);

    int* sbd = (int*)xmalloc(sizeof(int) * (size_t)size);
    for (int j = 0; j < size; ++j) sbd[j] = sdi[j] * (int)sizeof(int);
    RESET();
    MPI_OK(MPI_Alltoallw(s, sc, sbd, ty, ref, ic, bd, ty, MPI_COMM_WORLD));
    RUN_C(form, MPI_Alltoallw_c, MPI_Ialltoallw_c, MPI_Alltoallw_init_c, s, scc, scbd, ty, got, cc,
          cbd, ty, MPI_COMM_WORLD);
    same(ref, got, n, "Alltoallw_c", form);
#undef RESET
    free(sbd);
    free(sc);
    free(sdi);
    free(scc);
    free(scd);
    free(scbd);
    free(ic);
    free(id);
    free(bd);
    free(cc);
    free(cd);
    free(cbd);
    free(ty);
    free(s);
    free(ref);
    free(got);
}

static void reductions(int form) {
    const int n = size * K;
    int* s = (int*)xmalloc(sizeof(int) * (size_t)n);
    int* ref = (int*)xmalloc(sizeof(int) * (size_t)n);
    int* got = (int*)xmalloc(sizeof(int) * (size_t)n);
    const int root = 0;
    fill_send(s, size);
#define RESET()                                     \
    do {                                            \
        memset(ref, 0, sizeof(int) * (size_t)n);    \
        memset(got, 0, sizeof(int) * (size_t)n);    \
    } while (0)
    RESET();
    MPI_OK(MPI_Reduce(s, ref, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
    RUN_C(form, MPI_Reduce_c, MPI_Ireduce_c, MPI_Reduce_init_c, s, got, n, MPI_INT, MPI_SUM, root,
          MPI_COMM_WORLD);
    if (rank == root) same(ref, got, n, "Reduce_c", form);

    RESET();
    MPI_OK(MPI_Allreduce(s, ref, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    RUN_C(form, MPI_Allreduce_c, MPI_Iallreduce_c, MPI_Allreduce_init_c, s, got, n, MPI_INT,
          MPI_MAX, MPI_COMM_WORLD);
    same(ref, got, n, "Allreduce_c", form);

    RESET();
    MPI_OK(MPI_Scan(s, ref, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    RUN_C(form, MPI_Scan_c, MPI_Iscan_c, MPI_Scan_init_c, s, got, n, MPI_INT, MPI_SUM,
          MPI_COMM_WORLD);
    same(ref, got, n, "Scan_c", form);

    RESET();
    MPI_OK(MPI_Exscan(s, ref, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    RUN_C(form, MPI_Exscan_c, MPI_Iexscan_c, MPI_Exscan_init_c, s, got, n, MPI_INT, MPI_SUM,
          MPI_COMM_WORLD);
    if (rank > 0) same(ref, got, n, "Exscan_c", form); /* rank 0's result is undefined */

    int* rc = (int*)xmalloc(sizeof(int) * (size_t)size);
    MPI_Count* rcc = (MPI_Count*)xmalloc(sizeof(MPI_Count) * (size_t)size);
    for (int j = 0; j < size; ++j) rc[j] = rcc[j] = K;
    RESET();
    MPI_OK(MPI_Reduce_scatter(s, ref, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    RUN_C(form, MPI_Reduce_scatter_c, MPI_Ireduce_scatter_c, MPI_Reduce_scatter_init_c, s, got,
          rcc, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    same(ref, got, K, "Reduce_scatter_c", form);

    RESET();
    MPI_OK(MPI_Reduce_scatter_block(s, ref, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    RUN_C(form, MPI_Reduce_scatter_block_c, MPI_Ireduce_scatter_block_c,
          MPI_Reduce_scatter_block_init_c, s, got, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    same(ref, got, K, "Reduce_scatter_block_c", form);
#undef RESET
    free(rc);
    free(rcc);
    free(s);
    free(ref);
    free(got);
}

/* Neighborhood collectives on a periodic ring (2 neighbors each). */
static void neighbors(int form) {
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int s[2 * K], ref[2 * K], got[2 * K];
    /* Blocks land in reverse order of the neighbors. */
    int id[2] = {K, 0};
    MPI_Aint cd[2] = {K, 0}, cbd[2] = {K * 4, 0};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
    for (int i = 0; i < 2 * K; ++i) s[i] = rank * 100 + i;
#define RESET() memset(ref, 0xff, sizeof ref), memset(got, 0xff, sizeof got)
    RESET();
    MPI_OK(MPI_Neighbor_allgather(s, K, MPI_INT, ref, K, MPI_INT, ring));
    RUN_C(form, MPI_Neighbor_allgather_c, MPI_Ineighbor_allgather_c, MPI_Neighbor_allgather_init_c,
          s, K, MPI_INT, got, K, MPI_INT, ring);
    same(ref, got, 2 * K, "Neighbor_allgather_c", form);
    RESET();
    MPI_OK(MPI_Neighbor_allgatherv(s, K - 1, MPI_INT, ref, (int[]){K - 1, K - 1}, id, MPI_INT, ring));
    RUN_C(form, MPI_Neighbor_allgatherv_c, MPI_Ineighbor_allgatherv_c,
          MPI_Neighbor_allgatherv_init_c, s, K - 1, MPI_INT, got, (MPI_Count[]){K - 1, K - 1}, cd,
          MPI_INT, ring);
    same(ref, got, 2 * K, "Neighbor_allgatherv_c", form);
    RESET();
    MPI_OK(MPI_Neighbor_alltoall(s, K, MPI_INT, ref, K, MPI_INT, ring));
    RUN_C(form, MPI_Neighbor_alltoall_c, MPI_Ineighbor_alltoall_c, MPI_Neighbor_alltoall_init_c, s,
          K, MPI_INT, got, K, MPI_INT, ring);
    same(ref, got, 2 * K, "Neighbor_alltoall_c", form);
    /* v and w: K elements to the left neighbor, K - 1 to the right; so K - 1
     * from the left (received first) and K from the right. */
    int sc[2] = {K, K - 1}, sd[2] = {0, K};
    MPI_Count scc[2] = {K, K - 1};
    MPI_Aint scd[2] = {0, K}, scbd[2] = {0, K * 4};
    int rc[2] = {K - 1, K};
    MPI_Count rcc[2] = {K - 1, K};
    RESET();
    MPI_OK(MPI_Neighbor_alltoallv(s, sc, sd, MPI_INT, ref, rc, id, MPI_INT, ring));
    RUN_C(form, MPI_Neighbor_alltoallv_c, MPI_Ineighbor_alltoallv_c, MPI_Neighbor_alltoallv_init_c,
          s, scc, scd, MPI_INT, got, rcc, cd, MPI_INT, ring);
    same(ref, got, 2 * K, "Neighbor_alltoallv_c", form);
    RESET();
    MPI_OK(MPI_Neighbor_alltoallw(s, sc, (MPI_Aint[]){0, K * 4}, ty, ref, rc,
                                  (MPI_Aint[]){K * 4, 0}, ty, ring));
    RUN_C(form, MPI_Neighbor_alltoallw_c, MPI_Ineighbor_alltoallw_c, MPI_Neighbor_alltoallw_init_c,
          s, scc, scbd, ty, got, rcc, cbd, ty, ring);
    same(ref, got, 2 * K, "Neighbor_alltoallw_c", form);
#undef RESET
    MPI_OK(MPI_Comm_free(&ring));
}

/* The same user operation in both forms: inout = 2 * inout + in (not
 * commutative), and the length it was called with. */
static MPI_Count last_len_c = -1;
static void twice_plus(void* in, void* inout, int* len, MPI_Datatype* t) {
    (void)t;
    for (int i = 0; i < *len; ++i) ((int*)inout)[i] = 2 * ((int*)inout)[i] + ((int*)in)[i];
}
static void twice_plus_c(void* in, void* inout, MPI_Count* len, MPI_Datatype* t) {
    CHECK(*t == MPI_INT, "MPI_User_function_c called with another datatype");
    last_len_c = *len;
    for (MPI_Count i = 0; i < *len; ++i) ((int*)inout)[i] = 2 * ((int*)inout)[i] + ((int*)in)[i];
}

static void user_ops(void) {
    MPI_Op op, op_c;
    MPI_OK(MPI_Op_create(twice_plus, 0, &op));
    MPI_OK(MPI_Op_create_c(twice_plus_c, 0, &op_c));
    int commute = 1;
    MPI_OK(MPI_Op_commutative(op_c, &commute));
    CHECK(commute == 0, "MPI_Op_create_c(commute 0) made a commutative operation");
    int s[K], ref[K], got[K];
    for (int i = 0; i < K; ++i) s[i] = rank + i;
    MPI_OK(MPI_Allreduce(s, ref, K, MPI_INT, op, MPI_COMM_WORLD));
    MPI_OK(MPI_Allreduce_c(s, got, K, MPI_INT, op_c, MPI_COMM_WORLD));
    same(ref, got, K, "Allreduce_c with an MPI_Op_create_c operation", 0);
    for (int i = 0; i < K; ++i) ref[i] = got[i] = 3 * i;
    MPI_OK(MPI_Reduce_local(s, ref, K, MPI_INT, op));
    last_len_c = -1;
    MPI_OK(MPI_Reduce_local_c(s, got, K, MPI_INT, op_c));
    same(ref, got, K, "Reduce_local_c with an MPI_Op_create_c operation", 0);
    CHECK(last_len_c == K, "the MPI_User_function_c got length %lld", (long long)last_len_c);
    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Op_free(&op_c));
}

static void local_and_errors(void) {
    int a[K], b[K], c[K];
    for (int i = 0; i < K; ++i) a[i] = i + 1, b[i] = c[i] = 10 * i;
    MPI_OK(MPI_Reduce_local(a, b, K, MPI_INT, MPI_PROD));
    MPI_OK(MPI_Reduce_local_c(a, c, K, MPI_INT, MPI_PROD));
    same(b, c, K, "Reduce_local_c", 0);

    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int x[1] = {0};
    MPI_Request rq;
    CHECK(error_class(MPI_Bcast_c(x, -1, MPI_INT, 0, MPI_COMM_WORLD)) == MPI_ERR_COUNT,
          "MPI_Bcast_c(count -1) is not MPI_ERR_COUNT");
    CHECK(error_class(MPI_Allreduce_c(x, x + 0, -2, MPI_INT, MPI_SUM, MPI_COMM_WORLD)) ==
              MPI_ERR_COUNT,
          "MPI_Allreduce_c(count -2) is not MPI_ERR_COUNT");
    CHECK(error_class(MPI_Reduce_local_c(x, x, -1, MPI_INT, MPI_SUM)) == MPI_ERR_COUNT,
          "MPI_Reduce_local_c(count -1) is not MPI_ERR_COUNT");
    /* A nonblocking reduction beyond an int is refused, not truncated (every
     * rank refuses at once: nothing is started). */
    CHECK(error_class(MPI_Iallreduce_c(x, x, (MPI_Count)INT_MAX + 1, MPI_INT, MPI_SUM,
                                       MPI_COMM_WORLD, &rq)) == MPI_ERR_COUNT,
          "MPI_Iallreduce_c beyond INT_MAX is not MPI_ERR_COUNT");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int form = 0; form < 3; ++form) {
        movement(form);
        reductions(form);
        neighbors(form);
    }
    user_ops();
    local_and_errors();
    MPI_Finalize();
    return 0;
}
