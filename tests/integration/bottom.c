/* MPI_BOTTOM with datatypes built from absolute addresses (MPI_Get_address),
 * the way older C and Fortran codes describe scattered variables.
 *
 * - Point-to-point: a struct type over a double and an int array that live
 *   in separate variables, sent and received at MPI_BOTTOM around a ring
 *   (eager and, with a large array, rendezvous-sized messages).
 * - Collectives on "contiguous" types whose lower bound is an absolute
 *   address (an hindexed type of one block): the data is one run of bytes at
 *   the address, reached from MPI_BOTTOM. Bcast, Allreduce in place, Reduce
 *   in place at the root, and Iallreduce in place, at 1, 100 and 8192
 *   doubles (the shared-memory inline and sliced paths, and the schedules
 *   between node processes).
 */
#include "common.h"

/* One block of n doubles at p, addressed absolutely. */
static MPI_Datatype absolute_doubles(double* p, int n) {
    MPI_Aint where;
    MPI_OK(MPI_Get_address(p, &where));
    MPI_Datatype t;
    MPI_OK(MPI_Type_create_hindexed(1, &n, &where, MPI_DOUBLE, &t));
    MPI_OK(MPI_Type_commit(&t));
    return t;
}

static void ring_struct(int rank, int size, int n) {
    double x = 1000.0 * rank + n;
    int* ints = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; ++i) ints[i] = rank * 100000 + i;
    double rx = -1;
    int* rints = calloc((size_t)n, sizeof(int));

    MPI_Aint where[2];
    MPI_OK(MPI_Get_address(&x, &where[0]));
    MPI_OK(MPI_Get_address(ints, &where[1]));
    int lens[2] = {1, n};
    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT}, send_t, recv_t;
    MPI_OK(MPI_Type_create_struct(2, lens, where, types, &send_t));
    MPI_OK(MPI_Type_commit(&send_t));
    MPI_OK(MPI_Get_address(&rx, &where[0]));
    MPI_OK(MPI_Get_address(rints, &where[1]));
    MPI_OK(MPI_Type_create_struct(2, lens, where, types, &recv_t));
    MPI_OK(MPI_Type_commit(&recv_t));

    const int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(MPI_BOTTOM, 1, send_t, to, 7, MPI_BOTTOM, 1, recv_t, from, 7,
                        MPI_COMM_WORLD, &st));
    CHECK(rx == 1000.0 * from + n, "n=%d: received double %g from %d", n, rx, from);
    for (int i = 0; i < n; ++i)
        CHECK(rints[i] == from * 100000 + i, "n=%d: int %d is %d, expected %d", n, i, rints[i],
              from * 100000 + i);
    int count = -1;
    MPI_OK(MPI_Get_count(&st, recv_t, &count));
    CHECK(count == 1, "n=%d: MPI_Get_count gives %d", n, count);

    /* The same with blocking Send and Recv, the other way round. */
    rx = -1;
    memset(rints, 0, sizeof(int) * (size_t)n);
    MPI_Request req;
    MPI_OK(MPI_Irecv(MPI_BOTTOM, 1, recv_t, to, 8, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Send(MPI_BOTTOM, 1, send_t, from, 8, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(rx == 1000.0 * to + n, "n=%d: received double %g from %d", n, rx, to);
    for (int i = 0; i < n; ++i)
        CHECK(rints[i] == to * 100000 + i, "n=%d: int %d is %d", n, i, rints[i]);

    MPI_OK(MPI_Type_free(&send_t));
    MPI_OK(MPI_Type_free(&recv_t));
    free(ints);
    free(rints);
}

static void collectives(int rank, int size, int n) {
    double* v = malloc(sizeof(double) * (size_t)n);
    MPI_Datatype t = absolute_doubles(v, n);
    const int root = size - 1;

    for (int i = 0; i < n; ++i) v[i] = rank == root ? 0.5 * i + root : -1;
    MPI_OK(MPI_Bcast(MPI_BOTTOM, 1, t, root, MPI_COMM_WORLD));
    for (int i = 0; i < n; ++i)
        CHECK(v[i] == 0.5 * i + root, "Bcast n=%d: element %d is %g", n, i, v[i]);

    /* sum over r of (r + i) = size*i + size*(size-1)/2: exact in doubles */
    const double base = (double)size * (size - 1) / 2;
    for (int i = 0; i < n; ++i) v[i] = rank + i;
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, t, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < n; ++i)
        CHECK(v[i] == (double)size * i + base, "Allreduce n=%d: element %d is %g, expected %g",
              n, i, v[i], (double)size * i + base);

    for (int i = 0; i < n; ++i) v[i] = rank + i;
    MPI_OK(MPI_Reduce(rank == root ? MPI_IN_PLACE : MPI_BOTTOM, MPI_BOTTOM, 1, t, MPI_MAX, root,
                      MPI_COMM_WORLD));
    if (rank == root)
        for (int i = 0; i < n; ++i)
            CHECK(v[i] == size - 1 + i, "Reduce n=%d: element %d is %g", n, i, v[i]);

    for (int i = 0; i < n; ++i) v[i] = 2.0 * rank + i;
    MPI_Request req;
    MPI_OK(MPI_Iallreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, t, MPI_SUM, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; ++i)
        CHECK(v[i] == (double)size * i + 2 * base, "Iallreduce n=%d: element %d is %g", n, i,
              v[i]);

    MPI_OK(MPI_Type_free(&t));
    free(v);
}

int main(int argc, char** argv) {
    MPI_OK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int ints[] = {1, 3, 50000};
    for (int k = 0; k < 3; ++k) ring_struct(rank, size, ints[k]);
    const int doubles[] = {1, 100, 8192};
    for (int k = 0; k < 3; ++k) collectives(rank, size, doubles[k]);
    MPI_OK(MPI_Finalize());
    return 0;
}
