// An allreduce from C++; rank 0 prints the sum of the ranks.
#include <mpi.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<long> mine{rank, 1}, total(2);
    MPI_Allreduce(mine.data(), total.data(), 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    const bool ok = total[0] == static_cast<long>(size) * (size - 1) / 2 && total[1] == size;
    if (rank == 0)
        std::printf("sum_cxx: %ld over %ld ranks %s\n", total[0], total[1], ok ? "ok" : "WRONG");
    MPI_Finalize();
    return ok ? 0 : 1;
}
