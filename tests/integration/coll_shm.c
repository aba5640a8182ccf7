/* Blocking collectives of node-local communicators (the shared-address-space
 * path, collectives/shm.hpp) under the situations its episode protocol must
 * survive: sizes on both sides of the inline limit, every root, in place,
 * non-contiguous types, a root running ahead through many broadcasts and
 * reductions in a row, sub-communicators created and freed over and over
 * (context ids reused), and nonblocking collectives in flight meanwhile.
 * Nonblocking Iallreduce and Ibarrier take the same path on node-local
 * communicators: many in flight at once (sizes on both sides of the inline
 * limit, in place, strided), completed in reverse order, while one rank runs
 * late, with blocking collectives started before they are waited for.
 * Every result is checked against a value computed locally. Runs on one node
 * process (every communicator node-local) and on several (the schedule path
 * for world, node-local splits through MPI_COMM_TYPE_SHARED).
 */
#include "common.h"

static int world_rank, world_size;

/* Element i of rank r's contribution in round k. */
static double contribution(int r, long i, int k) {
    return (double)((r + 1) * 3 + (i % 11) + k % 5);
}

static void check_allreduce(MPI_Comm comm, int count, int k, int in_place) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double* in = xmalloc(sizeof(double) * (size_t)count);
    double* out = xmalloc(sizeof(double) * (size_t)count);
    for (long i = 0; i < count; ++i) in[i] = out[i] = contribution(rank, i, k);
    MPI_OK(MPI_Allreduce(in_place ? MPI_IN_PLACE : in, out, count, MPI_DOUBLE, MPI_SUM, comm));
    for (long i = 0; i < count; ++i) {
        double want = 0;
        for (int r = 0; r < size; ++r) want += contribution(r, i, k);
        CHECK(out[i] == want, "allreduce count %d round %d: element %ld is %g, want %g", count, k, i,
              out[i], want);
    }
    /* MAX as well: a different kernel, same slices. */
    MPI_OK(MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_MAX, comm));
    for (long i = 0; i < count; ++i)
        CHECK(out[i] == contribution(size - 1, i, k), "allreduce max count %d: element %ld", count, i);
    free(in);
    free(out);
}

static void check_reduce(MPI_Comm comm, int count, int root, int k) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    long* in = xmalloc(sizeof(long) * (size_t)count);
    long* out = xmalloc(sizeof(long) * (size_t)count);
    for (long i = 0; i < count; ++i) in[i] = out[i] = (long)contribution(rank, i, k);
    const int in_place = rank == root && k % 2;
    MPI_OK(MPI_Reduce(in_place ? MPI_IN_PLACE : in, out, count, MPI_LONG, MPI_SUM, root, comm));
    if (rank == root) {
        for (long i = 0; i < count; ++i) {
            long want = 0;
            for (int r = 0; r < size; ++r) want += (long)contribution(r, i, k);
            CHECK(out[i] == want, "reduce count %d root %d: element %ld is %ld, want %ld", count, root,
                  i, out[i], want);
        }
    }
    free(in);
    free(out);
}

static void check_bcast(MPI_Comm comm, int bytes, int root, int k) {
    int rank;
    MPI_Comm_rank(comm, &rank);
    unsigned char* buf = xmalloc((size_t)bytes + 1);
    if (rank == root) fill_pattern(buf, (size_t)bytes, (uint32_t)(k * 131 + root));
    else memset(buf, 0xEE, (size_t)bytes);
    MPI_OK(MPI_Bcast(buf, bytes, MPI_BYTE, root, comm));
    CHECK_PATTERN(buf, (size_t)bytes, (uint32_t)(k * 131 + root), "bcast");
    free(buf);
}

/* count doubles, every other one of a vector (committed). */
static MPI_Datatype every_other_double(int count) {
    MPI_Datatype t;
    MPI_OK(MPI_Type_vector(count, 1, 2, MPI_DOUBLE, &t));
    MPI_OK(MPI_Type_commit(&t));
    return t;
}

/* Every other double of a vector: non-contiguous on both sides. */
static void check_strided(MPI_Comm comm, int count, int k) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Datatype every_other = every_other_double(count);
    double* in = xmalloc(sizeof(double) * 2 * (size_t)count);
    double* out = xmalloc(sizeof(double) * 2 * (size_t)count);
    for (long i = 0; i < 2L * count; ++i) {
        in[i] = contribution(rank, i / 2, k);
        out[i] = -1;
    }
    MPI_OK(MPI_Allreduce(in, out, 1, every_other, MPI_SUM, comm));
    for (long i = 0; i < count; ++i) {
        double want = 0;
        for (int r = 0; r < size; ++r) want += contribution(r, i, k);
        CHECK(out[2 * i] == want && out[2 * i + 1] == -1, "strided allreduce element %ld", i);
    }
    for (long i = 0; i < 2L * count; ++i) out[i] = rank == 1 % size ? in[i] : -2;
    MPI_OK(MPI_Bcast(out, 1, every_other, 1 % size, comm));
    for (long i = 0; i < count; ++i)
        CHECK(out[2 * i] == contribution(1 % size, i, k), "strided bcast element %ld", i);
    MPI_OK(MPI_Type_free(&every_other));
    free(in);
    free(out);
}

static void exercise(MPI_Comm comm, int rounds) {
    int size;
    MPI_Comm_size(comm, &size);
    static const int counts[] = {1, 3, 127, 128, 129, 1000, 4099, 70000};
    const int ncounts = (int)(sizeof(counts) / sizeof(counts[0]));
    for (int k = 0; k < rounds; ++k) {
        const int count = counts[k % ncounts];
        check_allreduce(comm, count, k, k % 3 == 0);
        check_reduce(comm, count, k % size, k);
        check_bcast(comm, count * 8 + k % 3, (k + 1) % size, k);
        if (k % 4 == 0) check_strided(comm, count, k);
        MPI_OK(MPI_Barrier(comm));
    }
    /* A root far ahead: many broadcasts and reductions without a barrier. */
    for (int k = 0; k < 200; ++k) {
        check_bcast(comm, k % 2 ? 16 : 3000, 0, k);
        check_reduce(comm, k % 2 ? 4 : 700, size - 1, k);
    }
}

/* NB Iallreduces of count elements (round k + j) and Ibarriers in flight on
 * comm; the last rank starts late; blocking collectives follow before the
 * requests are completed, newest first. */
static void nonblocking(MPI_Comm comm, int count, int k) {
    enum { NB = 6 };
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Datatype every_other = every_other_double(count);
    if (rank == size - 1) {
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < 0.0002) {
        }
    }
    double* in[NB];
    double* out[NB];
    MPI_Request req[2 * NB];
    for (int j = 0; j < NB; ++j) {
        /* j % 3: 0 plain, 1 in place, 2 strided (twice as long, odd slots -1). */
        const long len = j % 3 == 2 ? 2L * count : count;
        in[j] = xmalloc(sizeof(double) * (size_t)len);
        out[j] = xmalloc(sizeof(double) * (size_t)len);
        for (long i = 0; i < len; ++i) {
            const long e = j % 3 == 2 ? i / 2 : i;
            in[j][i] = contribution(rank, e, k + j);
            out[j][i] = j % 3 == 1 ? in[j][i] : -1;
        }
        if (j % 3 == 0)
            MPI_OK(MPI_Iallreduce(in[j], out[j], count, MPI_DOUBLE, MPI_SUM, comm, &req[2 * j]));
        else if (j % 3 == 1)
            MPI_OK(MPI_Iallreduce(MPI_IN_PLACE, out[j], count, MPI_DOUBLE, MPI_SUM, comm,
                                  &req[2 * j]));
        else
            MPI_OK(MPI_Iallreduce(in[j], out[j], 1, every_other, MPI_SUM, comm, &req[2 * j]));
        MPI_OK(MPI_Ibarrier(comm, &req[2 * j + 1]));
    }
    /* Freed while pending: the requests hold a reference. */
    MPI_OK(MPI_Type_free(&every_other));
    check_allreduce(comm, count, k, 0);
    MPI_OK(MPI_Barrier(comm));
    for (int j = 2 * NB - 1; j >= 0; --j) MPI_OK(MPI_Wait(&req[j], MPI_STATUS_IGNORE));
    for (int j = 0; j < NB; ++j) {
        for (long i = 0; i < count; ++i) {
            double want = 0;
            for (int r = 0; r < size; ++r) want += contribution(r, i, k + j);
            const double got = j % 3 == 2 ? out[j][2 * i] : out[j][i];
            CHECK(got == want, "iallreduce %d count %d: element %ld is %g, want %g", j, count, i,
                  got, want);
            if (j % 3 == 2) CHECK(out[j][2 * i + 1] == -1, "strided iallreduce wrote a gap");
        }
        free(in[j]);
        free(out[j]);
    }
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);

    exercise(MPI_COMM_WORLD, 24);

    /* Sub-communicators created and freed again and again: the same context
     * ids come back with other members. */
    for (int k = 0; k < 12; ++k) {
        MPI_Comm sub;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, world_rank % (k % 3 + 1), world_size - world_rank, &sub));
        exercise(sub, 3);
        MPI_OK(MPI_Comm_free(&sub));
    }

    /* The ranks of each node process. */
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    exercise(node, 8);
    static const int nb_counts[] = {1, 3, 128, 129, 5000};
    for (int k = 0; k < 10; ++k) {
        nonblocking(node, nb_counts[k % 5], k);
        nonblocking(MPI_COMM_WORLD, nb_counts[(k + 2) % 5], k);
    }

    /* A nonblocking collective in flight while blocking ones run. */
    double x = world_rank + 1, sum = 0;
    MPI_Request req;
    MPI_OK(MPI_Iallreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req));
    exercise(node, 4);
    exercise(MPI_COMM_WORLD, 4);
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(sum == (double)world_size * (world_size + 1) / 2, "iallreduce: %g", sum);
    MPI_OK(MPI_Comm_free(&node));

    MPI_Finalize();
    if (world_rank == 0) printf("coll_shm: ok\n");
    return 0;
}
