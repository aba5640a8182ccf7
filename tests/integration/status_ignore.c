/* MPI_STATUS(ES)_IGNORE must be recognised in every rank, including ranks
 * running a private image of the program: nothing may be written through it.
 * Guards: a global array around which statuses would land if the sentinel
 * were a per-image object. */
#include <mpi.h>
#include <string.h>

#include "common.h"

#define NGUARD 64
#define NREQ 8
double guard[NGUARD];

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < NGUARD; ++i) guard[i] = 1.5 + i;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[NREQ], in[NREQ];
    MPI_Request req[2 * NREQ];
    for (int round = 0; round < 10; ++round) {
        for (int i = 0; i < NREQ; ++i) {
            out[i] = rank * 100 + i;
            MPI_Irecv(&in[i], 1, MPI_INT, left, i, MPI_COMM_WORLD, &req[i]);
            MPI_Isend(&out[i], 1, MPI_INT, right, i, MPI_COMM_WORLD, &req[NREQ + i]);
        }
        if (round % 2)
            MPI_Waitall(2 * NREQ, req, MPI_STATUSES_IGNORE);
        else
            for (int i = 0; i < 2 * NREQ; ++i) MPI_Wait(&req[i], MPI_STATUS_IGNORE);
        for (int i = 0; i < NREQ; ++i)
            CHECK(in[i] == left * 100 + i, "message %d from %d is %d", i, left, in[i]);
        MPI_Recv(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < NGUARD; ++i)
        CHECK(guard[i] == 1.5 + i, "global guard[%d] overwritten through MPI_STATUS(ES)_IGNORE", i);
    MPI_Finalize();
    return 0;
}
