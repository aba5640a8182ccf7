#!/bin/sh
# `meson install` into a staging directory, the prefix then moved elsewhere
# (the installation is relocatable), and programs built against it three ways:
# the installed mpicc and mpicxx, and pkg-config's flags with a plain
# compiler. Each runs through the installed mpcrun on 3 ranks over 2 node
# processes; the wrappers' -show and --showme:link name the new prefix.
#   install_check.sh BUILD_DIR WORK_DIR SOURCE_DIR [SANITIZE_FLAG]
# SANITIZE_FLAG (-fsanitize=...) builds the programs as the library was.
set -u
# The programs must find the installed library, not the build tree's.
unset LD_LIBRARY_PATH
build="$1" work="$2" src="$3" sanitize="${4:-}"
fail() {
    echo "FAIL: $*"
    exit 1
}
rm -rf "$work"
mkdir -p "$work"
meson install -C "$build" --no-rebuild --quiet --destdir "$work/stage" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; fail "meson install failed"; }
mpcrun_staged=$(find "$work/stage" -path '*/bin/mpcrun' | head -1)
[ -n "$mpcrun_staged" ] || fail "no bin/mpcrun installed"
# Move the whole prefix: nothing may still point into the staging directory.
mv "$(dirname "$(dirname "$mpcrun_staged")")" "$work/moved"
prefix="$work/moved"
rm -rf "$work/stage"
for f in bin/mpcrun bin/mpiexec bin/mpirun bin/mpicc bin/mpicxx include/mpi.h \
    share/doc/fibermpi/README.md share/man/man1/mpcrun.1 share/man/man1/mpiexec.1 \
    share/man/man1/mpirun.1 share/man/man1/mpicc.1 share/man/man1/mpicxx.1; do
    [ -e "$prefix/$f" ] || fail "$f is not installed"
done
# The man pages and --help say the same (one source): every option of one is in the other.
"$prefix/bin/mpiexec" --help | grep -q -- "-genvall" || fail "mpiexec --help lacks -genvall"
grep -q 'genvall' "$prefix/share/man/man1/mpcrun.1" || fail "mpcrun.1 lacks -genvall"
"$prefix/bin/mpicc" --help | grep -q -- "-showme:incdirs" || fail "mpicc --help lacks -showme:incdirs"
if command -v man >/dev/null 2>&1; then
    MANPATH="$prefix/share/man" man -P cat mpiexec 2>/dev/null | grep -q "mpiexec, mpirun" ||
        fail "man mpiexec does not show the page from the prefix"
fi
lib=$(find "$prefix" -name 'libfibermpi.so.0' | head -1)
[ -n "$lib" ] || fail "libfibermpi.so.0 (soname) is not installed"
pc=$(find "$prefix" -name 'fibermpi.pc' | head -1)
[ -n "$pc" ] || fail "no pkg-config file fibermpi.pc"

"$prefix/bin/mpicc" -show | grep -q -- "-I$prefix/include" || fail "mpicc -show: $("$prefix/bin/mpicc" -show)"
"$prefix/bin/mpicc" --showme:link | grep -q -- "-L$(dirname "$lib")" ||
    fail "mpicc --showme:link: $("$prefix/bin/mpicc" --showme:link)"

run() {  # program: 3 ranks say hello, with the installed library
    ldd "$1" | grep -q "libfibermpi.so.0 => $prefix/" || fail "$1 does not load the installed library: $(ldd "$1")"
    out=$("$prefix/bin/${2:-mpcrun}" -n 3 -N 2 "$1") || fail "$1: exit status $?: $out"
    n=$(printf '%s\n' "$out" | grep -c "^hello from rank [0-2] of 3$")
    [ "$n" -eq 3 ] || fail "$1 printed: $out"
}
# shellcheck disable=SC2086
"$prefix/bin/mpicc" $sanitize "$src/hello.c" -o "$work/hello_c" || fail "mpicc could not build hello.c"
run "$work/hello_c"
# shellcheck disable=SC2086
"$prefix/bin/mpicxx" $sanitize -x c++ "$src/hello.c" -o "$work/hello_cxx" ||
    fail "mpicxx could not build hello.c as C++"
run "$work/hello_cxx" mpiexec
flags=$(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --cflags --libs fibermpi) ||
    fail "pkg-config --cflags --libs fibermpi failed"
case "$flags" in *"$prefix"*) ;; *) fail "pkg-config flags do not name the moved prefix: $flags" ;; esac
# shellcheck disable=SC2086
${CC:-cc} $sanitize -fPIE -pie "$src/hello.c" -o "$work/hello_pc" $flags -Wl,-rpath,"$(dirname "$lib")" ||
    fail "cc with pkg-config's flags could not build hello.c"
run "$work/hello_pc" mpirun
echo "PASS: installed, moved to another prefix; mpicc, mpicxx and pkg-config builds ran"
