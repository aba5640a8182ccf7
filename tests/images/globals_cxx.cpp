// Rank images in C++: static objects are constructed once per rank (and each
// rank sees only its own), including objects with dynamic initialisation and
// thread_local ones; the standard streams (variables of libstdc++ that the
// program reads directly) work in every rank's copy, from constructors on.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

int constructions = 0;

struct Registry {
    std::vector<int> items{1, 2, 3};
    std::string name = "registry";
    Registry() { ++constructions; }
};

Registry registry;
thread_local std::string tls_name = "tls";

struct UsesStreams {
    bool ok;
    UsesStreams() {
        std::cout << std::flush;
        std::cerr << "";
        ok = std::cout.good() && std::cerr.good() && std::cout.rdbuf() != nullptr;
    }
};

UsesStreams streams;

int fail(int rank, const char* what) {
    std::fprintf(stderr, "globals_cxx: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    registry.items.push_back(rank);
    registry.name += std::to_string(rank);
    tls_name += std::to_string(rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (constructions != 1) return fail(rank, "the static object was not constructed exactly once");
    if (registry.items.size() != 4 || registry.items.back() != rank)
        return fail(rank, "vector shared");
    if (registry.name != "registry" + std::to_string(rank)) return fail(rank, "string shared");
    if (tls_name != "tls" + std::to_string(rank)) return fail(rank, "thread_local shared");
    if (!streams.ok) return fail(rank, "the standard streams were broken in a constructor");
    std::ostringstream line;
    line << "globals_cxx: rank " << rank << " ok\n";
    std::cout << line.str() << std::flush;
    if (!std::cout.good()) return fail(rank, "std::cout is broken");
    MPI_Finalize();
    return 0;
}
