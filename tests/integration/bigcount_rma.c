/* The large-count (_c) one-sided calls of MPI 4.0 with small counts: windows
 * made by MPI_Win_create_c, _allocate_c and _allocate_shared_c (MPI_Aint
 * displacement units; MPI_Win_shared_query_c gives them back), and Put_c,
 * Get_c, the accumulates and their request forms, each checked against what
 * the int form does on another window. Every rank targets the next one.
 */
#include <limits.h>

#include "common.h"

#define N 16

static int rank, size, next;

/* The window memory of rank r after the epoch: the int form's and the _c
 * form's windows must hold the same. */
static void same(const int* a, const int* b, const char* what) {
    for (int i = 0; i < 4 * N; ++i)
        CHECK(a[i] == b[i], "%s: element %d is %d, the int form gave %d", what, i, b[i], a[i]);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    next = (rank + 1) % size;

    int *ia, *ca;
    MPI_Win wi, wc;
    MPI_OK(MPI_Win_allocate(4 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &ia,
                            &wi));
    MPI_OK(MPI_Win_allocate_c(4 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &ca,
                              &wc));
    for (int i = 0; i < 4 * N; ++i) ia[i] = ca[i] = rank * 1000 + i;
    int src[N], ri[N], rc[N], gi[N], gc[N];
    for (int i = 0; i < N; ++i) src[i] = rank * 7 + i;
    memset(gi, 0, sizeof gi);
    memset(gc, 0, sizeof gc);
    MPI_Request rq[8];

    MPI_OK(MPI_Win_fence(0, wi));
    MPI_OK(MPI_Win_fence(0, wc));
    MPI_OK(MPI_Put(src, N, MPI_INT, next, 0, N, MPI_INT, wi));
    MPI_OK(MPI_Put_c(src, N, MPI_INT, next, 0, N, MPI_INT, wc));
    MPI_OK(MPI_Accumulate(src, N, MPI_INT, next, N, N, MPI_INT, MPI_SUM, wi));
    MPI_OK(MPI_Accumulate_c(src, N, MPI_INT, next, N, N, MPI_INT, MPI_SUM, wc));
    MPI_OK(MPI_Get(gi, N, MPI_INT, next, 3 * N, N, MPI_INT, wi));
    MPI_OK(MPI_Get_c(gc, N, MPI_INT, next, 3 * N, N, MPI_INT, wc));
    MPI_OK(MPI_Win_fence(0, wi));
    MPI_OK(MPI_Win_fence(0, wc));
    same(ia, ca, "Put_c, Accumulate_c");
    for (int i = 0; i < N; ++i) CHECK(gi[i] == gc[i], "Get_c: element %d", i);
    /* The next epoch's operations must not land while a rank still compares. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    MPI_OK(MPI_Get_accumulate(src, N, MPI_INT, ri, N, MPI_INT, next, 2 * N, N, MPI_INT, MPI_MAX,
                              wi));
    MPI_OK(MPI_Get_accumulate_c(src, N, MPI_INT, rc, N, MPI_INT, next, 2 * N, N, MPI_INT, MPI_MAX,
                                wc));
    MPI_OK(MPI_Win_fence(0, wi));
    MPI_OK(MPI_Win_fence(0, wc));
    same(ia, ca, "Get_accumulate_c");
    for (int i = 0; i < N; ++i) CHECK(ri[i] == rc[i], "Get_accumulate_c result %d", i);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Request-based forms inside a passive target epoch. */
    MPI_OK(MPI_Win_lock_all(0, wi));
    MPI_OK(MPI_Win_lock_all(0, wc));
    MPI_OK(MPI_Rput(src, N, MPI_INT, next, 0, N, MPI_INT, wi, &rq[0]));
    MPI_OK(MPI_Rput_c(src, N, MPI_INT, next, 0, N, MPI_INT, wc, &rq[1]));
    MPI_OK(MPI_Raccumulate(src, N, MPI_INT, next, N, N, MPI_INT, MPI_SUM, wi, &rq[2]));
    MPI_OK(MPI_Raccumulate_c(src, N, MPI_INT, next, N, N, MPI_INT, MPI_SUM, wc, &rq[3]));
    MPI_OK(MPI_Rget(gi, N, MPI_INT, next, 3 * N, N, MPI_INT, wi, &rq[4]));
    MPI_OK(MPI_Rget_c(gc, N, MPI_INT, next, 3 * N, N, MPI_INT, wc, &rq[5]));
    MPI_OK(MPI_Rget_accumulate(src, N, MPI_INT, ri, N, MPI_INT, next, 2 * N, N, MPI_INT,
                               MPI_SUM, wi, &rq[6]));
    MPI_OK(MPI_Rget_accumulate_c(src, N, MPI_INT, rc, N, MPI_INT, next, 2 * N, N, MPI_INT,
                                 MPI_SUM, wc, &rq[7]));
    MPI_OK(MPI_Waitall(8, rq, MPI_STATUSES_IGNORE));
    MPI_OK(MPI_Win_unlock_all(wi));
    MPI_OK(MPI_Win_unlock_all(wc));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    same(ia, ca, "request-based _c forms");
    for (int i = 0; i < N; ++i)
        CHECK(gi[i] == gc[i] && ri[i] == rc[i], "Rget_c / Rget_accumulate_c element %d", i);
    MPI_OK(MPI_Win_free(&wi));
    MPI_OK(MPI_Win_free(&wc));

    /* Win_create_c and Win_allocate_shared_c: the unit comes back. */
    int mem[N];
    MPI_Win w;
    MPI_OK(MPI_Win_create_c(mem, sizeof mem, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    MPI_OK(MPI_Win_free(&w));
    int* base;
    MPI_OK(MPI_Win_allocate_shared_c(N * sizeof(int), 8, MPI_INFO_NULL, MPI_COMM_SELF, &base, &w));
    MPI_Aint sz = 0, unit = 0;
    int* qbase = NULL;
    MPI_OK(MPI_Win_shared_query_c(w, 0, &sz, &unit, &qbase));
    CHECK(sz == N * (MPI_Aint)sizeof(int) && unit == 8 && qbase == base,
          "Win_shared_query_c gave %ld, %ld, %p", (long)sz, (long)unit, (void*)qbase);
    MPI_OK(MPI_Win_free(&w));

    /* Units an int cannot hold or that are not positive: MPI_ERR_DISP. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK(error_class(MPI_Win_create_c(mem, sizeof mem, (MPI_Aint)INT_MAX + 1, MPI_INFO_NULL,
                                       MPI_COMM_WORLD, &w)) == MPI_ERR_DISP,
          "a disp_unit of INT_MAX + 1 is not MPI_ERR_DISP");
    CHECK(error_class(MPI_Win_allocate_c(16, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w)) ==
              MPI_ERR_DISP,
          "a disp_unit of 0 is not MPI_ERR_DISP");
    MPI_Finalize();
    return 0;
}
