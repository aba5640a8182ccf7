/* Intercommunicators: MPI_Intercomm_create between the even and the odd world
 * ranks (leaders first or last of their group, peer MPI_COMM_WORLD or a
 * duplicate), point-to-point across in both directions, sizes and remote
 * groups, a duplicate whose messages do not match the original's, and
 * MPI_Intercomm_merge ordered by `high`. Needs 2 ranks; with 1 it only checks
 * the errors.
 */
#include "common.h"

typedef struct {
    int rank, size;
    int color;             /* 0: even world ranks, 1: odd */
    int local_n, remote_n; /* group sizes */
    MPI_Comm local;        /* this rank's half of the world */
} Halves;

/* World rank of rank r of the group of color c. */
static int world_of(int c, int r) {
    return 2 * r + c;
}

/* Every rank sends to every remote rank (value 100 * world rank + remote
 * rank) and checks what it receives from each. */
static void all_to_all_across(const Halves* h, MPI_Comm inter, int tag) {
    int* out = (int*)xmalloc(sizeof(int) * (size_t)h->remote_n);
    int* in = (int*)xmalloc(sizeof(int) * (size_t)h->remote_n);
    MPI_Request* reqs = (MPI_Request*)xmalloc(sizeof(MPI_Request) * 2 * (size_t)h->remote_n);
    MPI_Status* sts = (MPI_Status*)xmalloc(sizeof(MPI_Status) * 2 * (size_t)h->remote_n);
    int lrank;
    MPI_OK(MPI_Comm_rank(inter, &lrank));
    for (int r = 0; r < h->remote_n; ++r) {
        out[r] = 100 * h->rank + r;
        in[r] = -1;
        MPI_OK(MPI_Irecv(&in[r], 1, MPI_INT, r, tag, inter, &reqs[r]));
        MPI_OK(MPI_Isend(&out[r], 1, MPI_INT, r, tag, inter, &reqs[h->remote_n + r]));
    }
    MPI_OK(MPI_Waitall(2 * h->remote_n, reqs, sts));
    for (int r = 0; r < h->remote_n; ++r) {
        const int expect = 100 * world_of(1 - h->color, r) + lrank;
        CHECK(in[r] == expect, "from remote rank %d got %d, expected %d", r, in[r], expect);
        CHECK(sts[r].MPI_SOURCE == r, "status source %d", sts[r].MPI_SOURCE);
    }
    free(out);
    free(in);
    free(reqs);
    free(sts);
}

static void check_inter(const Halves* h, MPI_Comm inter) {
    int flag, n, r;
    MPI_OK(MPI_Comm_test_inter(inter, &flag));
    CHECK(flag, "test_inter");
    MPI_OK(MPI_Comm_size(inter, &n));
    CHECK(n == h->local_n, "local size %d", n);
    MPI_OK(MPI_Comm_remote_size(inter, &n));
    CHECK(n == h->remote_n, "remote size %d", n);
    MPI_OK(MPI_Comm_rank(inter, &r));
    CHECK(r == h->rank / 2, "local rank %d", r);
    MPI_Group remote, world;
    MPI_OK(MPI_Comm_remote_group(inter, &remote));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    for (int k = 0; k < h->remote_n; ++k) {
        int w;
        MPI_OK(MPI_Group_translate_ranks(remote, 1, &k, world, &w));
        CHECK(w == world_of(1 - h->color, k), "remote rank %d is world rank %d", k, w);
    }
    MPI_OK(MPI_Group_free(&remote));
    MPI_OK(MPI_Group_free(&world));
}

/* Merges with the given `high` of each color and checks the order. */
static void check_merge(const Halves* h, MPI_Comm inter, int high_even, int high_odd) {
    MPI_Comm merged;
    MPI_OK(MPI_Intercomm_merge(inter, h->color ? high_odd : high_even, &merged));
    int n, r;
    MPI_OK(MPI_Comm_size(merged, &n));
    MPI_OK(MPI_Comm_rank(merged, &r));
    CHECK(n == h->size, "merged size %d", n);
    /* The whole order, gathered by a sum: slot r holds world rank + 1. */
    int* order = (int*)calloc((size_t)n, sizeof(int));
    int* mine = (int*)calloc((size_t)n, sizeof(int));
    mine[r] = h->rank + 1;
    MPI_OK(MPI_Allreduce(mine, order, n, MPI_INT, MPI_SUM, merged));
    int evens_first;
    if (high_even != high_odd)
        evens_first = !high_even;
    else
        evens_first = order[0] == 1; /* either is allowed, but consistently */
    const int n_even = (h->size + 1) / 2, n_odd = h->size / 2;
    for (int k = 0; k < n; ++k) {
        int expect;
        if (evens_first)
            expect = k < n_even ? world_of(0, k) : world_of(1, k - n_even);
        else
            expect = k < n_odd ? world_of(1, k) : world_of(0, k - n_odd);
        CHECK(order[k] == expect + 1, "merged rank %d is world rank %d, expected %d", k,
              order[k] - 1, expect);
    }
    free(order);
    free(mine);
    MPI_OK(MPI_Comm_free(&merged));
}

static void test_intercomm(Halves* h) {
    const int n_even = (h->size + 1) / 2, n_odd = h->size / 2;
    h->local_n = h->color ? n_odd : n_even;
    h->remote_n = h->color ? n_even : n_odd;

    /* Leaders first of their group, peer MPI_COMM_WORLD. */
    MPI_Comm inter, dup, inter2, peer;
    MPI_OK(
        MPI_Intercomm_create(h->local, 0, MPI_COMM_WORLD, world_of(1 - h->color, 0), 42, &inter));
    check_inter(h, inter);
    all_to_all_across(h, inter, 3);

    /* The duplicate's messages never match the original's receives. */
    MPI_OK(MPI_Comm_dup(inter, &dup));
    check_inter(h, dup);
    int result;
    MPI_OK(MPI_Comm_compare(inter, dup, &result));
    CHECK(result == MPI_CONGRUENT, "compare(inter, dup) = %d", result);
    if (h->rank / 2 == 0) { /* each leader sends to the other side's rank 0 */
        int a = 1, b = 2, got;
        MPI_Request reqs[2];
        MPI_Status sts[2];
        MPI_OK(MPI_Isend(&a, 1, MPI_INT, 0, 5, dup, &reqs[0]));
        MPI_OK(MPI_Isend(&b, 1, MPI_INT, 0, 5, inter, &reqs[1]));
        MPI_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, inter, MPI_STATUS_IGNORE));
        CHECK(got == 2, "receive on the original got %d", got);
        /* From the leader only: the others may already be in the next exchange. */
        MPI_OK(MPI_Recv(&got, 1, MPI_INT, 0, MPI_ANY_TAG, dup, MPI_STATUS_IGNORE));
        CHECK(got == 1, "receive on the duplicate got %d", got);
        MPI_OK(MPI_Waitall(2, reqs, sts));
    }
    all_to_all_across(h, dup, 4);

    check_merge(h, inter, 0, 1);
    check_merge(h, inter, 1, 0);
    check_merge(h, dup, 1, 1);

    /* Leaders last of their group, peer a duplicate of the world. */
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &peer));
    MPI_OK(MPI_Intercomm_create(h->local, h->local_n - 1, peer,
                                world_of(1 - h->color, h->remote_n - 1), 7, &inter2));
    check_inter(h, inter2);
    all_to_all_across(h, inter2, 0);
    MPI_OK(MPI_Comm_free(&inter2));
    MPI_OK(MPI_Comm_free(&peer));
    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Comm_free(&inter));
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    Halves h;
    MPI_Comm_rank(MPI_COMM_WORLD, &h.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &h.size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    h.color = h.rank & 1;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, h.color, h.rank, &h.local));

    MPI_Comm bad;
    CHECK(error_class(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &bad)) == MPI_ERR_COMM,
          "merging an intracommunicator");
    CHECK(
        error_class(MPI_Intercomm_create(h.local, 99, MPI_COMM_WORLD, 0, 1, &bad)) == MPI_ERR_RANK,
        "local leader out of range");
    CHECK(error_class(MPI_Intercomm_create(h.local, 0, MPI_COMM_WORLD, 0, -3, &bad)) == MPI_ERR_TAG,
          "negative tag");
    if (h.size > 1) test_intercomm(&h);
    MPI_OK(MPI_Comm_free(&h.local));
    MPI_OK(MPI_Finalize());
    if (h.rank == 0) printf("intercomm: OK (%d ranks)\n", h.size);
    return 0;
}
