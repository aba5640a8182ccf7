/* MPI 4.1's initial error handler (section 9.3; mpiexec -initial-errhandler):
 * argv[1] names the handler mpcrun was given (or the default,
 * mpi_errors_are_fatal). MPI_INFO_ENV reports it under
 * "mpi_initial_errhandler", MPI_COMM_WORLD and MPI_COMM_SELF start with it,
 * and with mpi_errors_return an erroneous call returns its error class. With
 * argv[2] == "raise", the program makes an erroneous call on MPI_COMM_WORLD
 * and would exit 0 if it returned: run so, it must end the job (the fatal and
 * abort handlers). */
#include "common.h"

int main(int argc, char** argv) {
    CHECK(argc >= 2, "usage: initial_errhandler NAME [raise]");
    const char* want = argv[1];
    MPI_OK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    MPI_OK(MPI_Info_get(MPI_INFO_ENV, "mpi_initial_errhandler", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag, "MPI_INFO_ENV has no mpi_initial_errhandler");
    CHECK(!strcmp(value, want), "mpi_initial_errhandler is '%s', expected '%s'", value, want);

    MPI_Errhandler expected = !strcmp(want, "mpi_errors_return")  ? MPI_ERRORS_RETURN
                              : !strcmp(want, "mpi_errors_abort") ? MPI_ERRORS_ABORT
                                                                  : MPI_ERRORS_ARE_FATAL;
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
    for (int i = 0; i < 2; ++i) {
        MPI_Errhandler eh;
        MPI_OK(MPI_Comm_get_errhandler(comms[i], &eh));
        CHECK(eh == expected, "%s starts with another error handler",
              i ? "MPI_COMM_SELF" : "MPI_COMM_WORLD");
        MPI_OK(MPI_Errhandler_free(&eh));
    }
    /* A communicator made from WORLD inherits it. */
    MPI_Comm dup;
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Comm_get_errhandler(dup, &eh));
    CHECK(eh == expected, "a duplicate of MPI_COMM_WORLD has another error handler");
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_OK(MPI_Comm_free(&dup));

    int x = 0;
    if (expected == MPI_ERRORS_RETURN) {
        /* Errors come back as codes, on WORLD, SELF, and outside any object. */
        int rc = MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
        CHECK(error_class(rc) == MPI_ERR_RANK, "send to rank %d: class %d", size, error_class(rc));
        rc = MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_SELF);
        CHECK(error_class(rc) == MPI_ERR_COUNT, "negative count: class %d", error_class(rc));
        int cls;
        rc = MPI_Error_class(-5, &cls);
        CHECK(rc != MPI_SUCCESS, "MPI_Error_class(-5) succeeded");
    }
    if (argc >= 3 && !strcmp(argv[2], "raise")) {
        MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
        printf("rank %d: the error returned\n", rank);
        MPI_Finalize();
        return 0; /* the test expects a failure: reaching here fails it */
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("initial_errhandler %s: OK\n", want);
    MPI_OK(MPI_Finalize());
    return 0;
}
