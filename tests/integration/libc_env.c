/* The environment per rank (issue 25): what a rank sets, changes or removes
 * only it sees, through getenv and through environ, before MPI_Init as after;
 * the environment the job started with every rank sees (LIBC_ENV_START, set
 * by the test); a child the rank starts with its environ gets the rank's.
 *   setenv (with and without overwrite, invalid names), putenv (the string
 *   itself goes into environ), unsetenv of a start-up variable in odd ranks
 *   only, clearenv in one rank, all interleaved with barriers.
 */
#include <errno.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

extern char** environ;

static void barrier(void) {
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Entries of environ whose name starts with prefix. */
static int count_entries(const char* prefix) {
    int n = 0;
    for (char** e = environ; e && *e; ++e)
        if (strncmp(*e, prefix, strlen(prefix)) == 0) ++n;
    return n;
}

static void expect_value(const char* name, const char* want) {
    const char* got = getenv(name);
    CHECK((got == NULL) == (want == NULL) && (!got || strcmp(got, want) == 0),
          "getenv(%s) is %s, expected %s", name, got ? got : "NULL", want ? want : "NULL");
}

/* What a child started with this rank's environ sees as $LIBC_ENV_RANK. */
static void check_child(const char* want) {
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    char* args[] = {"sh", "-c", "printf %s \"$LIBC_ENV_RANK\"", NULL};
    pid_t pid;
    CHECK(posix_spawnp(&pid, "sh", &actions, NULL, args, environ) == 0, "posix_spawnp sh");
    close(fds[1]);
    char out[64] = "";
    size_t n = 0;
    ssize_t r;
    while ((r = read(fds[0], out + n, sizeof(out) - 1 - n)) > 0) n += (size_t)r;
    out[n] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    posix_spawn_file_actions_destroy(&actions);
    CHECK(strcmp(out, want) == 0, "the child saw LIBC_ENV_RANK=%s, expected %s", out, want);
}

int main(int argc, char** argv) {
    /* Before MPI_Init, as after: per rank. */
    CHECK(setenv("LIBC_ENV_EARLY", "early", 1) == 0, "setenv before MPI_Init");
    MPI_OK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    expect_value("LIBC_ENV_START", "from-the-job");
    expect_value("LIBC_ENV_EARLY", "early");

    char value[32];
    snprintf(value, sizeof(value), "%d", rank);
    CHECK(setenv("LIBC_ENV_RANK", value, 1) == 0, "setenv");
    CHECK(setenv("LIBC_ENV_RANK", "not this", 0) == 0, "setenv without overwrite");
    errno = 0;
    CHECK(setenv("BAD=NAME", "x", 1) == -1 && errno == EINVAL, "setenv of a name with '='");
    CHECK(setenv("", "x", 1) == -1 && errno == EINVAL, "setenv of an empty name");
    static char put[32];  /* putenv keeps the string itself */
    snprintf(put, sizeof(put), "LIBC_ENV_PUT=p%d", rank);
    CHECK(putenv(put) == 0, "putenv");
    barrier();
    for (int i = 0; i < 3; ++i) {
        expect_value("LIBC_ENV_RANK", value);
        CHECK(getenv("LIBC_ENV_PUT") == put + strlen("LIBC_ENV_PUT="),
              "putenv's string is not the one in the environment");
        CHECK(count_entries("LIBC_ENV_RANK=") == 1, "%d LIBC_ENV_RANK entries in environ",
              count_entries("LIBC_ENV_RANK="));
        char want[64];
        snprintf(want, sizeof(want), "LIBC_ENV_RANK=%d", rank);
        int found = 0;
        for (char** e = environ; e && *e; ++e) found |= strcmp(*e, want) == 0;
        CHECK(found, "environ lacks %s", want);
        barrier();
    }
    check_child(value);

    /* Odd ranks remove a start-up variable: only they lose it. */
    if (rank % 2) CHECK(unsetenv("LIBC_ENV_START") == 0, "unsetenv");
    barrier();
    expect_value("LIBC_ENV_START", rank % 2 ? NULL : "from-the-job");
    CHECK(count_entries("LIBC_ENV_START=") == (rank % 2 ? 0 : 1), "LIBC_ENV_START in environ");
    /* putenv("NAME") removes NAME, as glibc's does. */
    CHECK(putenv("LIBC_ENV_PUT") == 0, "putenv of a name alone");
    expect_value("LIBC_ENV_PUT", NULL);

    /* One rank clears its environment, then sets one variable. */
    const int clearing = size > 3 ? 3 : size - 1;
    if (rank == clearing) {
        CHECK(clearenv() == 0, "clearenv");
        CHECK(environ == NULL, "environ after clearenv");
        expect_value("PATH", NULL);
        CHECK(setenv("LIBC_ENV_AFTER", "1", 1) == 0, "setenv after clearenv");
        CHECK(count_entries("") == 1, "%d entries after clearenv and one setenv",
              count_entries(""));
    }
    barrier();
    if (rank != clearing) {
        expect_value("LIBC_ENV_AFTER", NULL);
        CHECK(getenv("PATH") != NULL, "PATH lost in rank %d", rank);
        expect_value("LIBC_ENV_RANK", value);
    }
    expect_value("LIBC_ENV_EARLY", rank == clearing ? NULL : "early");
    MPI_OK(MPI_Finalize());
    return 0;
}
