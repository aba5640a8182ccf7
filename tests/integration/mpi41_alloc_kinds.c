/* MPI 4.1's memory allocation kinds (section 12.4.3, "mpi_memory_alloc_kinds"):
 * argv[1] is what the objects of the world model must report (the kinds
 * mpcrun --memory-alloc-kinds asked for that the library supports, or the
 * default "mpi,system"). A session reports the supported ones among those its
 * info asks for (device kinds are not supported here), and so do the
 * communicators made from its groups; without the key a session reports the
 * startup's. Windows and files of the world model report argv[1] too. */
#include <unistd.h>

#include "common.h"

static void expect_kinds(MPI_Info info, const char* want, const char* what) {
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    MPI_OK(MPI_Info_get(info, "mpi_memory_alloc_kinds", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag, "%s: no mpi_memory_alloc_kinds", what);
    CHECK(!strcmp(value, want), "%s: mpi_memory_alloc_kinds '%s', expected '%s'", what, value,
          want);
}

static void check_session(const char* asked, const char* want, const char* world) {
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    if (asked) MPI_OK(MPI_Info_set(info, "mpi_memory_alloc_kinds", asked));
    MPI_Session s;
    MPI_OK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s));
    MPI_OK(MPI_Info_free(&info));
    const char* expect = asked ? want : world;
    MPI_Info used;
    MPI_OK(MPI_Session_get_info(s, &used));
    expect_kinds(used, expect, "MPI_Session_get_info");
    MPI_OK(MPI_Info_free(&used));
    MPI_Group g;
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MPI_Comm c;
    MPI_OK(MPI_Comm_create_from_group(g, "fibermpi.test.alloc_kinds", MPI_INFO_NULL,
                                      MPI_ERRORS_RETURN, &c));
    MPI_OK(MPI_Comm_get_info(c, &used));
    expect_kinds(used, expect, "a communicator of the session");
    MPI_OK(MPI_Info_free(&used));
    MPI_Comm d; /* derived from it: still the session's */
    MPI_OK(MPI_Comm_dup(c, &d));
    MPI_OK(MPI_Comm_get_info(d, &used));
    expect_kinds(used, expect, "a duplicate of the session's communicator");
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Session_finalize(&s));
}

int main(int argc, char** argv) {
    CHECK(argc >= 2, "usage: mpi41_alloc_kinds EXPECTED_WORLD_KINDS");
    const char* world = argv[1];
    MPI_OK(MPI_Init(&argc, &argv));
    int rank;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));

    MPI_Info used;
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
    for (int i = 0; i < 2; ++i) {
        MPI_OK(MPI_Comm_get_info(comms[i], &used));
        expect_kinds(used, world, i ? "MPI_COMM_SELF" : "MPI_COMM_WORLD");
        MPI_OK(MPI_Info_free(&used));
    }

    /* A window and a file of the world model. */
    int* base;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_OK(MPI_Win_get_info(win, &used));
    expect_kinds(used, world, "MPI_Win_get_info");
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Win_free(&win));
    char path[256];
    if (rank == 0) snprintf(path, sizeof(path), "/tmp/fibermpi_alloc_kinds_%d.dat", (int)getpid());
    MPI_OK(MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD));
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path,
                         MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                         &fh));
    MPI_OK(MPI_File_get_info(fh, &used));
    expect_kinds(used, world, "MPI_File_get_info");
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_File_close(&fh));

    /* Sessions: what they ask for, filtered; the startup's without the key. */
    check_session("system,cuda:device,mpi:alloc_mem:win_allocate,system",
                  "system,mpi:alloc_mem:win_allocate", world);
    check_session(" mpi , level_zero:host,mpi:bogus", "mpi", world);
    check_session("", "", world);
    check_session(NULL, NULL, world);

    MPI_OK(MPI_Finalize());
    if (rank == 0) printf("mpi41_alloc_kinds: OK (world: '%s')\n", world);
    return 0;
}
