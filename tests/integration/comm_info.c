/* Communicator info hints (MPI 3.1 section 6.4.4): MPI_Comm_get_info
 * returns the hints the communicator actually uses, so a key no one defines
 * that a program set is not returned, and a communicator nobody gave hints
 * has none. The assertions MPI 4.0 defines (mpi_assert_no_any_tag and
 * friends, "true" or "false") are kept: MPI_Comm_set_info records them,
 * MPI_Comm_dup carries them over, MPI_Comm_dup_with_info replaces them.
 * Every communicator also reports MPI 4.1's mpi_memory_alloc_kinds (a hint
 * with a default value): the counts below leave it out.
 */
#include "common.h"

static int nkeys(MPI_Comm c) {
    MPI_Info info;
    int n = -1, flag = 0;
    char value[MPI_MAX_INFO_VAL + 1];
    MPI_OK(MPI_Comm_get_info(c, &info));
    MPI_OK(MPI_Info_get_nkeys(info, &n));
    MPI_OK(MPI_Info_get(info, "mpi_memory_alloc_kinds", MPI_MAX_INFO_VAL, value, &flag));
    MPI_OK(MPI_Info_free(&info));
    CHECK(flag, "no mpi_memory_alloc_kinds in the communicator's info");
    return n - 1;
}

/* The value of key in c's hints ("" when absent). */
static const char* hint(MPI_Comm c, const char* key) {
    static char value[MPI_MAX_INFO_VAL + 1];
    MPI_Info info;
    int flag = 0;
    MPI_OK(MPI_Comm_get_info(c, &info));
    MPI_OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag));
    MPI_OK(MPI_Info_free(&info));
    if (!flag) value[0] = '\0';
    return value;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    CHECK(nkeys(MPI_COMM_WORLD) == 0, "MPI_COMM_WORLD has %d hints", nkeys(MPI_COMM_WORLD));
    CHECK(nkeys(MPI_COMM_SELF) == 0, "MPI_COMM_SELF has hints");
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK(nkeys(c) == 0, "a duplicate of MPI_COMM_WORLD has %d hints", nkeys(c));

    MPI_Info in;
    MPI_OK(MPI_Info_create(&in));
    MPI_OK(MPI_Info_set(in, "comm_info_no_such_key", "true"));
    MPI_OK(MPI_Info_set(in, "mpi_assert_no_any_tag", "true"));
    MPI_OK(MPI_Info_set(in, "mpi_assert_no_any_source", "maybe"));
    MPI_OK(MPI_Comm_set_info(c, in));
    CHECK(hint(c, "comm_info_no_such_key")[0] == '\0', "a key nobody defines came back");
    CHECK(strcmp(hint(c, "mpi_assert_no_any_tag"), "true") == 0, "mpi_assert_no_any_tag: '%s'",
          hint(c, "mpi_assert_no_any_tag"));
    CHECK(hint(c, "mpi_assert_no_any_source")[0] == '\0', "an invalid value was kept");
    CHECK(nkeys(c) == 1, "%d hints, expected 1", nkeys(c));
    /* The info object is the caller's: changing it later changes nothing. */
    MPI_OK(MPI_Info_set(in, "mpi_assert_no_any_tag", "false"));
    CHECK(strcmp(hint(c, "mpi_assert_no_any_tag"), "true") == 0, "hint changed with the info");

    MPI_Comm d, e;
    MPI_OK(MPI_Comm_dup(c, &d));
    CHECK(strcmp(hint(d, "mpi_assert_no_any_tag"), "true") == 0, "Comm_dup lost the hints");
    MPI_Info other;
    MPI_OK(MPI_Info_create(&other));
    MPI_OK(MPI_Info_set(other, "mpi_assert_exact_length", "false"));
    MPI_OK(MPI_Info_set(other, "another_unknown_key", "1"));
    MPI_OK(MPI_Comm_dup_with_info(c, other, &e));
    CHECK(hint(e, "mpi_assert_no_any_tag")[0] == '\0', "Comm_dup_with_info kept the old hints");
    CHECK(strcmp(hint(e, "mpi_assert_exact_length"), "false") == 0 && nkeys(e) == 1,
          "Comm_dup_with_info: %d hints", nkeys(e));
    MPI_OK(MPI_Info_free(&in));
    MPI_OK(MPI_Info_free(&other));
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Comm_free(&e));
    MPI_Finalize();
    return 0;
}
