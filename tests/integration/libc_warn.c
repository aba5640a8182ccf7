/* What cannot be per rank, reported (issue 25): with argv[1] naming the case,
 * the last rank changes something every rank of its node process shares, and
 * the call still does what it does in a process. expect_run.py checks the
 * one-line warning (rank and consequence) on stderr, and that a rank alone in
 * its node process gets none.
 *   chdir     chdir("/") (the directory changes)
 *   umask     umask(077)
 *   rlimit    one descriptor less in RLIMIT_NOFILE
 *   signal    every rank installs its own SIGUSR2 handler, one after another
 *   runtime   a handler for SIGILL, whose handler is the runtime's crash report
 *   fork      fork; the child calls exit(7), which ends it at once
 */
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static void on_signal(int sig) {
    (void)sig;
}

int main(int argc, char** argv) {
    MPI_OK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const char* what = argc > 1 ? argv[1] : "";
    const int acting = rank == size - 1;
    if (strcmp(what, "signal") == 0) {
        for (int r = 0; r < size; ++r) {
            if (r == rank) CHECK(signal(SIGUSR2, on_signal) != SIG_ERR, "signal");
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
    } else if (acting && strcmp(what, "chdir") == 0) {
        CHECK(chdir("/") == 0, "chdir");
        char cwd[64];
        CHECK(getcwd(cwd, sizeof(cwd)) && strcmp(cwd, "/") == 0, "the directory did not change");
    } else if (acting && strcmp(what, "umask") == 0) {
        umask(077);
        CHECK(umask(077) == 077, "the mask did not change");
    } else if (acting && strcmp(what, "rlimit") == 0) {
        struct rlimit rl;
        CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");
        rl.rlim_cur -= 1;
        CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit");
    } else if (acting && strcmp(what, "runtime") == 0) {
        CHECK(signal(SIGILL, on_signal) != SIG_ERR, "signal");
    } else if (acting && strcmp(what, "fork") == 0) {
        fflush(stdout);
        const pid_t pid = fork();
        CHECK(pid >= 0, "fork");
        if (pid == 0) {
            printf("libc_warn: the child runs\n");
            exit(7);  /* at once: the runtime's threads are not in the child */
        }
        int status = 0;
        CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7, "the child ended with %d", status);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
