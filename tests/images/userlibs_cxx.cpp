// Rank images of a C++ user library: each rank has its own inline variables,
// template statics, dynamically initialised strings and static objects, and
// the library and the program agree on them.
#include <mpi.h>

#include <cstdio>
#include <string>

#include "userlib_cxx.hpp"

namespace {

int fail(int rank, const char* what) {
    std::fprintf(stderr, "userlibs_cxx: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (cxx_name != "libname") return fail(rank, "cxx_name was not initialised before main");
    cxx_library_add(rank + 1);
    cxx_inline_counter += 10;
    CxxCounter<int>::value += 100;
    cxx_name += std::to_string(rank);
    MPI_Barrier(MPI_COMM_WORLD);
    CxxLibraryView v = cxx_library_view();
    if (v.inline_counter != &cxx_inline_counter || v.template_value != &CxxCounter<int>::value ||
        v.name != &cxx_name)
        return fail(rank, "the library and the program see different variables");
    if (cxx_inline_counter != rank + 11) return fail(rank, "inline variable shared");
    if (CxxCounter<int>::value != rank + 101) return fail(rank, "template static shared");
    if (cxx_name != "libname" + std::to_string(rank)) return fail(rank, "string shared");
    if (v.constructions != 1) return fail(rank, "static object not constructed exactly once");
    if (v.items.size() != 4 || v.items.back() != rank + 1) return fail(rank, "vector shared");
    MPI_Finalize();
    return 0;
}
