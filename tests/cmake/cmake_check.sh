#!/bin/sh
# A user's CMake project finds fibermpi with find_package(MPI), three ways:
#   1. our build-tree wrappers given as MPI_C_COMPILER / MPI_CXX_COMPILER;
#   2. MPI_HOME alone, set to an installed prefix (meson install into WORK);
#   3. nothing but that prefix's bin/ first in PATH.
# On a machine with another MPI (Open MPI, MPICH), 2 and 3 are what a new user
# tries; FindMPI looks for mpiexec first and takes the compilers beside it, so
# they hold only if our mpiexec is installed. Each way builds ring_c and
# sum_cxx and runs them through the mpiexec FindMPI found, which must be ours.
#   cmake_check.sh PROJECT_DIR WORK_DIR MPICC MPICXX MPCRUN BUILD_DIR [SANITIZE_FLAG]
# SANITIZE_FLAG (-fsanitize=...) builds the programs as the library was.
# Exit 0 = pass, 1 = fail, 77 = skip (only when cmake is not installed).
set -u
project="$1" work="$2" mpicc="$3" mpicxx="$4" mpcrun="$5" build="$6" sanitize="${7:-}"
if ! command -v cmake >/dev/null 2>&1; then
    echo "SKIP: cmake is not installed"
    exit 77
fi
fail() {
    echo "FAIL: $*"
    exit 1
}
rm -rf "$work"
mkdir -p "$work"
flags="-DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=$sanitize -DCMAKE_CXX_FLAGS=$sanitize -DCMAKE_EXE_LINKER_FLAGS=$sanitize"
cache() {  # cache DIR VARIABLE: its value in DIR's CMakeCache.txt
    sed -n "s/^$2:[A-Z]*=//p" "$1/CMakeCache.txt"
}
# configure_build NAME [cmake arguments...]: configures and builds in WORK/NAME.
configure_build() {
    name="$1"
    shift
    # shellcheck disable=SC2086
    cmake -S "$project" -B "$work/$name" $flags "$@" >"$work/$name.configure.log" 2>&1 ||
        { cat "$work/$name.configure.log"; fail "$name: cmake could not configure the project"; }
    grep -q "Found MPI_C:" "$work/$name.configure.log" ||
        { cat "$work/$name.configure.log"; fail "$name: MPI_C not found"; }
    cmake --build "$work/$name" >"$work/$name.build.log" 2>&1 ||
        { cat "$work/$name.build.log"; fail "$name: the build failed"; }
}
# run_both NAME LAUNCHER: the programs, through LAUNCHER.
run_both() {
    out="$("$2" -n 4 -N 2 "$work/$1/ring_c")" || fail "$1: ring_c: exit status $?: $out"
    [ "$out" = "ring_c: token 4 after 4 ranks" ] || fail "$1: ring_c said: $out"
    out="$("$2" -n 3 "$work/$1/sum_cxx")" || fail "$1: sum_cxx: exit status $?: $out"
    [ "$out" = "sum_cxx: 3 over 3 ranks ok" ] || fail "$1: sum_cxx said: $out"
}

# 1. The build-tree wrappers, named.
configure_build wrappers -DMPI_C_COMPILER="$mpicc" -DMPI_CXX_COMPILER="$mpicxx"
run_both wrappers "$mpcrun"

# An installed prefix for the other two.
unset LD_LIBRARY_PATH
meson install -C "$build" --no-rebuild --quiet --destdir "$work/stage" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; fail "meson install failed"; }
bin=$(dirname "$(find "$work/stage" -path '*/bin/mpcrun' | head -1)")
prefix=$(dirname "$bin")
[ -x "$bin/mpiexec" ] && [ -x "$bin/mpirun" ] || fail "mpiexec and mpirun are not installed beside mpcrun"

# What CMake finds with no help: another MPI when one is installed (the case
# this test is about), else nothing or us.
cmake -S "$project" -B "$work/plain" >"$work/plain.configure.log" 2>&1
other=$(cache "$work/plain" MPI_C_COMPILER)
echo "without help, find_package(MPI) finds: ${other:-nothing}"

# 2. MPI_HOME alone.
MPI_HOME="$prefix" configure_build mpi_home
# 3. Our bin/ first in PATH, nothing else.
PATH="$bin:$PATH" configure_build path
for way in mpi_home path; do
    [ "$(cache "$work/$way" MPI_C_COMPILER)" = "$bin/mpicc" ] ||
        fail "$way: MPI_C_COMPILER is $(cache "$work/$way" MPI_C_COMPILER), not $bin/mpicc"
    [ "$(cache "$work/$way" MPI_CXX_COMPILER)" = "$bin/mpicxx" ] ||
        fail "$way: MPI_CXX_COMPILER is $(cache "$work/$way" MPI_CXX_COMPILER)"
    mpiexec=$(cache "$work/$way" MPIEXEC_EXECUTABLE)
    [ "$mpiexec" = "$bin/mpiexec" ] || fail "$way: MPIEXEC_EXECUTABLE is $mpiexec"
    ldd "$work/$way/ring_c" | grep -q "libfibermpi.so.0 => $prefix/" ||
        fail "$way: ring_c does not load the installed fibermpi: $(ldd "$work/$way/ring_c")"
    run_both "$way" "$mpiexec"
done
echo "PASS: find_package(MPI) with the wrappers, with MPI_HOME alone and with PATH alone"
