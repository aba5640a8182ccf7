/* The profiling layer of mpi_profile.h. Counters are plain globals: each rank
 * has its own under rank images (and in the other MPIs' processes). */
#include "mpi_profile.h"

#include <stdio.h>

enum {
    F_Send, F_Recv, F_Isend, F_Irecv, F_Sendrecv, F_Wait, F_Waitall, F_Waitany, F_Test,
    F_Testall, F_Barrier, F_Bcast, F_Reduce, F_Allreduce, F_Allgather, F_Alltoall,
    F_Alltoallv, F_Iallreduce, F_Ibcast, F_Ialltoall, F_Count
};
static const char* const names[F_Count] = {
    "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Sendrecv", "MPI_Wait",
    "MPI_Waitall", "MPI_Waitany", "MPI_Test", "MPI_Testall", "MPI_Barrier", "MPI_Bcast",
    "MPI_Reduce", "MPI_Allreduce", "MPI_Allgather", "MPI_Alltoall", "MPI_Alltoallv",
    "MPI_Iallreduce", "MPI_Ibcast", "MPI_Ialltoall"};

static double seconds[F_Count];
static double calls[F_Count];
static double region_start;

void prof_reset(void) {
    for (int i = 0; i < F_Count; ++i) seconds[i] = calls[i] = 0;
    region_start = PMPI_Wtime();
}

#define TIMED(f, call)                     \
    do {                                   \
        const double t0_ = PMPI_Wtime();   \
        const int rc_ = (call);            \
        seconds[f] += PMPI_Wtime() - t0_;  \
        calls[f] += 1;                     \
        return rc_;                        \
    } while (0)

int MPI_Send(const void* b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c) {
    TIMED(F_Send, PMPI_Send(b, n, t, d, tag, c));
}
int MPI_Recv(void* b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status* st) {
    TIMED(F_Recv, PMPI_Recv(b, n, t, s, tag, c, st));
}
int MPI_Isend(const void* b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request* r) {
    TIMED(F_Isend, PMPI_Isend(b, n, t, d, tag, c, r));
}
int MPI_Irecv(void* b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request* r) {
    TIMED(F_Irecv, PMPI_Irecv(b, n, t, s, tag, c, r));
}
int MPI_Sendrecv(const void* sb, int sn, MPI_Datatype st, int d, int stag, void* rb, int rn,
                 MPI_Datatype rt, int s, int rtag, MPI_Comm c, MPI_Status* status) {
    TIMED(F_Sendrecv, PMPI_Sendrecv(sb, sn, st, d, stag, rb, rn, rt, s, rtag, c, status));
}
int MPI_Wait(MPI_Request* r, MPI_Status* st) { TIMED(F_Wait, PMPI_Wait(r, st)); }
int MPI_Waitall(int n, MPI_Request r[], MPI_Status st[]) {
    TIMED(F_Waitall, PMPI_Waitall(n, r, st));
}
int MPI_Waitany(int n, MPI_Request r[], int* i, MPI_Status* st) {
    TIMED(F_Waitany, PMPI_Waitany(n, r, i, st));
}
int MPI_Test(MPI_Request* r, int* flag, MPI_Status* st) { TIMED(F_Test, PMPI_Test(r, flag, st)); }
int MPI_Testall(int n, MPI_Request r[], int* flag, MPI_Status st[]) {
    TIMED(F_Testall, PMPI_Testall(n, r, flag, st));
}
int MPI_Barrier(MPI_Comm c) { TIMED(F_Barrier, PMPI_Barrier(c)); }
int MPI_Bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c) {
    TIMED(F_Bcast, PMPI_Bcast(b, n, t, root, c));
}
int MPI_Reduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c) {
    TIMED(F_Reduce, PMPI_Reduce(s, r, n, t, op, root, c));
}
int MPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
    TIMED(F_Allreduce, PMPI_Allreduce(s, r, n, t, op, c));
}
int MPI_Allgather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt,
                  MPI_Comm c) {
    TIMED(F_Allgather, PMPI_Allgather(s, sn, st, r, rn, rt, c));
}
int MPI_Alltoall(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt,
                 MPI_Comm c) {
    TIMED(F_Alltoall, PMPI_Alltoall(s, sn, st, r, rn, rt, c));
}
int MPI_Alltoallv(const void* s, const int sc[], const int sd[], MPI_Datatype st, void* r,
                  const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm c) {
    TIMED(F_Alltoallv, PMPI_Alltoallv(s, sc, sd, st, r, rc, rd, rt, c));
}
int MPI_Iallreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                   MPI_Request* req) {
    TIMED(F_Iallreduce, PMPI_Iallreduce(s, r, n, t, op, c, req));
}
int MPI_Ibcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* req) {
    TIMED(F_Ibcast, PMPI_Ibcast(b, n, t, root, c, req));
}
int MPI_Ialltoall(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt,
                  MPI_Comm c, MPI_Request* req) {
    TIMED(F_Ialltoall, PMPI_Ialltoall(s, sn, st, r, rn, rt, c, req));
}

void prof_report(MPI_Comm comm, const char* app) {
    const double wall = PMPI_Wtime() - region_start;
    double mpi = 0;
    for (int i = 0; i < F_Count; ++i) mpi += seconds[i];
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    double sum[F_Count], max[F_Count], ncalls[F_Count];
    PMPI_Reduce(seconds, sum, F_Count, MPI_DOUBLE, MPI_SUM, 0, comm);
    PMPI_Reduce(seconds, max, F_Count, MPI_DOUBLE, MPI_MAX, 0, comm);
    PMPI_Reduce(calls, ncalls, F_Count, MPI_DOUBLE, MPI_SUM, 0, comm);
    double mine[3] = {wall, mpi, wall - mpi}, tsum[3], tmax[3];
    PMPI_Reduce(mine, tsum, 3, MPI_DOUBLE, MPI_SUM, 0, comm);
    PMPI_Reduce(mine, tmax, 3, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (rank != 0) return;
    for (int i = 0; i < F_Count; ++i)
        if (ncalls[i] > 0)
            printf("PROFILE app=%s fn=%s calls=%.0f mean_s=%.6f max_s=%.6f\n", app, names[i],
                   ncalls[i] / size, sum[i] / size, max[i]);
    printf("PROFILE app=%s total wall_s=%.6f mpi_mean_s=%.6f mpi_max_s=%.6f compute_mean_s=%.6f\n",
           app, tmax[0], tsum[1] / size, tmax[1], tsum[2] / size);
    fflush(stdout);
}
