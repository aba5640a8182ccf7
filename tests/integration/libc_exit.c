/* atexit and on_exit per rank (issue 25): each rank's handlers run once, at
 * that rank's end, after MPI_Finalize, in the reverse order of their
 * registration (atexit and on_exit mixed), and on_exit's get the rank's exit
 * status. Every rank ends with status argv[1]: even ranks return it from main,
 * odd ranks call exit. The last handler to run prints one line per rank,
 *   libc_exit: handlers a2 o1(STATUS,RANK) a1 finalized 1 (rank RANK)
 * which expect_run.py counts.
 */
#include "common.h"

static int g_rank = -1;
static char g_ran[128];  /* this rank's: the handlers that ran, in order */

static void ran(const char* what) {
    strncat(g_ran, what, sizeof(g_ran) - strlen(g_ran) - 1);
}

static void a2(void) {
    ran("a2 ");
}

static void o1(int status, void* arg) {
    char text[32];
    snprintf(text, sizeof(text), "o1(%d,%d) ", status, (int)(intptr_t)arg);
    ran(text);
}

static void a1(void) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    printf("libc_exit: handlers %sa1 finalized %d (rank %d)\n", g_ran, finalized, g_rank);
    fflush(stdout);
}

int main(int argc, char** argv) {
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
    const int status = argc > 1 ? atoi(argv[1]) : 0;
    CHECK(atexit(a1) == 0, "atexit");
    CHECK(on_exit(o1, (void*)(intptr_t)g_rank) == 0, "on_exit");
    CHECK(atexit(a2) == 0, "atexit");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (g_rank % 2) exit(status);
    return status;
}
