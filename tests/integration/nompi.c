/* A plain C program that knows nothing of MPI (no mpi.h, no MPI call), linked
 * with mpicc and started by mpcrun: each rank runs main with its own argv and
 * the job ends with the ranks' status. Prints one line per rank. */
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
    const char* word = argc > 1 ? argv[1] : "(none)";
    char line[128];
    snprintf(line, sizeof(line), "nompi: %s\n", word);
    fputs(line, stdout);
    fflush(stdout);
    return argc > 2 ? (int)strlen(argv[2]) : 0;
}
