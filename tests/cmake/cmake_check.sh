#!/bin/sh
# A CMake project that finds MPI with find_package(MPI) through our wrappers,
# built and run through mpcrun.
#   cmake_check.sh PROJECT_DIR WORK_DIR MPICC MPICXX MPCRUN [SANITIZE_FLAG]
# SANITIZE_FLAG (-fsanitize=...) builds the programs as the library was.
# Exit 0 = pass, 1 = fail, 77 = skip (only when cmake is not installed).
set -u
project="$1" work="$2" mpicc="$3" mpicxx="$4" mpcrun="$5" sanitize="${6:-}"
if ! command -v cmake >/dev/null 2>&1; then
    echo "SKIP: cmake is not installed"
    exit 77
fi
fail() {
    echo "FAIL: $*"
    exit 1
}
rm -rf "$work"
cmake -S "$project" -B "$work" -DCMAKE_BUILD_TYPE=Release -DMPI_C_COMPILER="$mpicc" \
    -DMPI_CXX_COMPILER="$mpicxx" -DCMAKE_C_FLAGS="$sanitize" -DCMAKE_CXX_FLAGS="$sanitize" \
    -DCMAKE_EXE_LINKER_FLAGS="$sanitize" >"$work.configure.log" 2>&1 ||
    { cat "$work.configure.log"; fail "cmake could not configure the project"; }
grep -q "Found MPI_C:" "$work.configure.log" || { cat "$work.configure.log"; fail "MPI_C not found"; }
cmake --build "$work" >"$work.build.log" 2>&1 || { cat "$work.build.log"; fail "the build failed"; }

out="$("$mpcrun" -n 4 -N 2 "$work/ring_c")" || fail "ring_c: exit status $?: $out"
[ "$out" = "ring_c: token 4 after 4 ranks" ] || fail "ring_c said: $out"
out="$("$mpcrun" -n 3 "$work/sum_cxx")" || fail "sum_cxx: exit status $?: $out"
[ "$out" = "sum_cxx: 3 over 3 ranks ok" ] || fail "sum_cxx said: $out"
echo "PASS: find_package(MPI) with mpicc and mpicxx; ring_c and sum_cxx ran"
