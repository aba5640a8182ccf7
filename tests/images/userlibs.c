/* Rank images of the user's shared libraries: every rank sees only its own
 * copy of libuserlib's and libud's globals, statics, static locals and
 * thread-locals; the library and the program agree on the variables the
 * program reads directly; the library calls back into the rank's own program
 * copy, and its PMPI wrapper counts this rank's barriers only.
 *   userlibs              everything per rank
 *   userlibs shared       (MPC_SHARED_GLOBALS=1) the ranks of a node share all
 *   userlibs libs-shared  (MPC_SHARED_LIBS=all) the program is per rank, the
 *                         libraries are shared */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "userlib.h"

int program_value;

int program_hook(void) {
    return program_value;
}

/* The copies' code is mapped from the original files, not from their memfds. */
static int executable_image_pages(void) {
    int found = 0;
    char line[600];
    FILE* maps = fopen("/proc/self/maps", "r");
    while (maps && fgets(line, sizeof(line), maps)) {
        char perms[8] = "";
        if (sscanf(line, "%*s %7s", perms) == 1 && strchr(perms, 'x') &&
            strstr(line, "fibermpi-rank-image"))
            ++found;
    }
    if (maps) fclose(maps);
    return found;
}

/* The memfds holding the copies are closed once loaded (the mappings keep them). */
static int open_image_descriptors(void) {
    int found = 0;
    DIR* d = opendir("/proc/self/fd");
    struct dirent* e;
    while (d && (e = readdir(d)) != NULL) {
        char path[300], target[300];
        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        if (n > 0) {
            target[n] = '\0';
            found += strstr(target, "fibermpi-rank-image") != NULL;
        }
    }
    if (d) closedir(d);
    return found;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, local_size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local_size);
    const char* mode = argc > 1 ? argv[1] : "private";
    const int all_shared = strcmp(mode, "shared") == 0;
    const int libs_shared = strcmp(mode, "libs-shared") == 0;
    const int all_private = !all_shared && !libs_shared;

    int local_sum = 0, mine = rank + 1;
    MPI_Allreduce(&mine, &local_sum, 1, MPI_INT, MPI_SUM, node);

    /* Shared variables are updated by ranks running on several threads: atomically. */
    program_value += rank + 100;
    __atomic_add_fetch(&lib_counter, rank + 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&lib_initialised, rank + 1, __ATOMIC_RELAXED);
    userlib_bump(rank + 1);
    for (int i = 0; i < local_size; ++i) MPI_Barrier(node);
    MPI_Barrier(MPI_COMM_WORLD);
    const int barriers = local_size + 1; /* this rank's, through the wrapper */

    struct userlib_state st;
    userlib_state(&st);
    CHECK(open_image_descriptors() == 0, "rank-image memfds still open");
    CHECK(executable_image_pages() == 0, "code of a rank image mapped from its memfd");
    CHECK(st.constructions == 1, "the library's constructor ran %d times", st.constructions);
    CHECK(st.seen_by_constructor == 500, "the constructor saw lib_initialised = %d",
          st.seen_by_constructor);
    /* With shared libraries but a private program, the program's copies hold
     * snapshots of the variables they read directly (a documented limit). */
    if (!libs_shared)
        CHECK(st.counter == &lib_counter && st.initialised == &lib_initialised,
              "the library and the program see different variables (%p %p, %p %p)",
              (void*)st.counter, (void*)&lib_counter, (void*)st.initialised,
              (void*)&lib_initialised);
    if (all_private) {
        CHECK(lib_counter == rank + 1, "lib_counter %d, expected %d", lib_counter, rank + 1);
        CHECK(lib_initialised == 501 + rank, "lib_initialised %d", lib_initialised);
        CHECK(st.counter_value == rank + 1 && st.initialised_value == 501 + rank,
              "the library sees %d %d", st.counter_value, st.initialised_value);
        CHECK(st.file_static == 8 + rank, "file static %d", st.file_static);
        CHECK(st.static_local == 1, "static local %d", st.static_local);
        CHECK(st.tls == 4 + rank, "thread-local %d", st.tls);
        CHECK(st.dep_value == 11 + rank && dep_value == 11 + rank, "libud's dep_value %d %d",
              st.dep_value, dep_value);
        CHECK(st.barriers == barriers, "the PMPI wrapper counted %d barriers, expected %d",
              st.barriers, barriers);
        CHECK(st.hook == rank + 100, "the library called back program_value %d", st.hook);
    } else {
        /* The libraries' own state: one per node process. */
        CHECK(st.file_static == 7 + local_sum, "shared file static %d", st.file_static);
        CHECK(st.dep_value == 10 + local_sum, "shared dep_value %d", st.dep_value);
        CHECK(st.barriers == barriers * local_size, "shared PMPI wrapper counted %d barriers",
              st.barriers);
    }
    if (all_shared) {
        CHECK(lib_counter == local_sum, "shared lib_counter %d, expected %d", lib_counter,
              local_sum);
        CHECK(lib_initialised == 500 + local_sum, "shared lib_initialised %d", lib_initialised);
    }
    PMPI_Barrier(MPI_COMM_WORLD); /* not counted: others may still be reading the count */
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
