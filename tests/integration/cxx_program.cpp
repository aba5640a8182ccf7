// A C++ program built with mpicxx: templates, lambdas, exceptions and the
// standard library around MPI calls. Checks an Allreduce and a ring exchange.
#include <mpi.h>

#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

template <class T>
MPI_Datatype mpi_type();
template <>
MPI_Datatype mpi_type<int>() { return MPI_INT; }
template <>
MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

template <class T>
std::vector<T> allreduce_sum(const std::vector<T>& in) {
    std::vector<T> out(in.size());
    if (MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), mpi_type<T>(), MPI_SUM,
                      MPI_COMM_WORLD) != MPI_SUCCESS)
        throw std::runtime_error("MPI_Allreduce failed");
    return out;
}

void check(bool ok, const std::string& what) {
    if (!ok) throw std::runtime_error(what);
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    try {
        std::vector<double> v(1000);
        std::iota(v.begin(), v.end(), static_cast<double>(rank));
        auto sum = allreduce_sum(v);
        for (size_t i = 0; i < sum.size(); ++i) {
            double expect = 0;
            for (int r = 0; r < size; ++r) expect += static_cast<double>(r) + static_cast<double>(i);
            check(sum[i] == expect, "Allreduce element " + std::to_string(i));
        }
        std::string out = "hello from rank " + std::to_string(rank), in(64, '\0');
        MPI_Status st;
        MPI_Sendrecv(out.data(), static_cast<int>(out.size()), MPI_CHAR, (rank + 1) % size, 3,
                     in.data(), static_cast<int>(in.size()), MPI_CHAR, (rank + size - 1) % size, 3,
                     MPI_COMM_WORLD, &st);
        int n = 0;
        MPI_Get_count(&st, MPI_CHAR, &n);
        in.resize(static_cast<size_t>(n));
        check(in == "hello from rank " + std::to_string((rank + size - 1) % size),
              "ring message '" + in + "'");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "FAIL rank %d: %s\n", rank, e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) std::printf("cxx_program: passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
