// C++ exceptions across blocking MPI calls: the exception a thread is
// handling (what `throw;` rethrows) and the count of exceptions in flight
// (std::uncaught_exceptions) are per thread in C++, hence per rank: a rank
// that blocks in MPI inside a catch block, or in a destructor run by stack
// unwinding, lets other ranks run on the same kernel thread (run with ranks
// sharing a VP: mpcrun -c 1), which throw and catch their own meanwhile.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>

namespace {

int g_rank = -1;

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "FAIL rank %d: %s\n", g_rank, what.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::exit(1);
}

std::string mine(int round) { return "rank " + std::to_string(g_rank) + " round " + std::to_string(round); }

// Blocks in MPI (a barrier lets every other rank run) while an exception unwinds.
struct WaitsInMpi {
    int round;
    ~WaitsInMpi() {
        if (std::uncaught_exceptions() != 1)
            fail("unwinding " + mine(round) + ": uncaught_exceptions() is " +
                 std::to_string(std::uncaught_exceptions()) + " before the barrier");
        MPI_Barrier(MPI_COMM_WORLD);
        if (std::uncaught_exceptions() != 1)
            fail("unwinding " + mine(round) + ": uncaught_exceptions() is " +
                 std::to_string(std::uncaught_exceptions()) + " after the barrier");
    }
};

void throw_through_a_barrier(int round) {
    WaitsInMpi guard{round};
    throw std::runtime_error(mine(round));
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    for (int round = 0; round < 5; ++round) {
        try {
            throw std::runtime_error(mine(round));
        } catch (const std::exception& e) {
            MPI_Barrier(MPI_COMM_WORLD);  // the others throw and catch meanwhile
            if (std::uncaught_exceptions() != 0)
                fail("in a catch block: uncaught_exceptions() is " +
                     std::to_string(std::uncaught_exceptions()));
            try {
                throw;  // the exception this thread handles: ours
            } catch (const std::runtime_error& again) {
                if (mine(round) != again.what())
                    fail(std::string("throw; rethrew \"") + again.what() + "\", not \"" +
                         mine(round) + "\"");
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (std::current_exception() == nullptr) fail("no current exception in a catch block");
        }
        if (std::current_exception() != nullptr) fail("a current exception after the catch block");
        try {
            throw_through_a_barrier(round);
        } catch (const std::runtime_error& e) {
            if (mine(round) != e.what()) fail(std::string("caught \"") + e.what() + "\"");
        }
    }
    MPI_Finalize();
    return 0;
}
