#!/bin/sh
# Builds the project with sanitizers and runs the tests under them:
#   asan  AddressSanitizer + UndefinedBehaviorSanitizer (and LeakSanitizer) in
#         build-asan: every test (but those of ASAN_SKIP);
#   tsan  ThreadSanitizer in build-tsan: the unit tests and a representative
#         set of integration and stress tests (TSan runs 5-15 times slower).
# Prints, per build, "asan: N passed, N failed" (and the same for tsan); exits
# non-zero when a test fails or a build breaks.
#
#   scripts/test-sanitizers.sh            both builds
#   scripts/test-sanitizers.sh asan       one of them
# Environment: ASAN_DIR, TSAN_DIR (build directories, default build-asan and
# build-tsan), SAN_TEST_JOBS (tests run at once, default 2).
# Builds go through scripts/build.sh (which installs missing packages first).
set -u
cd "$(dirname "$0")/.."
ASAN_DIR="${ASAN_DIR:-build-asan}"
TSAN_DIR="${TSAN_DIR:-build-tsan}"
JOBS="${SAN_TEST_JOBS:-2}"
here=$(pwd)

# Sanitizer settings for every process the tests start (mpcrun, node
# processes, unit tests). The suppression files say why each entry is a false
# positive. UBSan findings end the process (they are errors).
# intercept_tls_get_addr=0: GCC 12's sanitizer runtime (Debian 12) guesses the
# bounds of a dynamic TLS block from a pre-2.25 glibc header whenever the
# block's address is 16 modulo 4096; with glibc 2.36 that header does not
# exist, so by chance it records garbage bounds and LeakSanitizer's exit
# check crashes ("Tracer caught signal 11", no leak reported). Rank images
# allocate many dynamic TLS blocks, so tests hit it (images userlibs: 2 in
# 10 runs; google/sanitizers#1322, fixed in GCC 14 / LLVM 17). The blocks are
# still reachable through the threads' DTVs, so leaks are still found.
export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=0:intercept_tls_get_addr=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$here/scripts/sanitizers/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export TSAN_OPTIONS="suppressions=$here/scripts/sanitizers/tsan.supp:halt_on_error=1:second_deadlock_stack=1:print_suppressions=0${TSAN_OPTIONS:+:$TSAN_OPTIONS}"

# The TSan selection, one test name per line ("suite:NAME": that whole
# suite): unit tests; point-to-point, threads and collectives inside one node
# process and across several in every progress mode; the message storm; the
# hang report; ranks' own threads creating communicators at once; hybrid
# MPI + OpenMP with GCC's libgomp (uninstrumented: the runtime tells TSan of
# its forks, joins, barriers and atomic blocks, runtime/host/openmp_gomp.cpp;
# the clang/libomp variants are not built under sanitizers);
# persistent collectives and partitioned transfers from ranks' threads; and at
# least one run of every other C and C++ integration program (errors, exit
# codes, attributes, topologies, datatypes, collective variants, placement,
# NUMA stealing, faults, rank images, PMI, per-rank libc state) and of the EulerMHD and CG
# examples. Not under TSan: the Fortran programs (gfortran's code is not
# instrumented; the build has Fortran off) and the launcher's own checks
# (mpcrun_check.py, Slurm, install), which test the launcher process. A name
# here that the build does not have counts as a failure.
TSAN_TESTS="
suite:unit
hello n4
p2p_order n4
p2p_probe n4
p2p_modes n4
p2p_late n8
p2p_truncate n3
p2p_errors n2
thread_multiple n4
comm_threads n4
coll_blocking n4
coll_nonblocking n4
coll_userop n3
coll_shm n4
coll_shm N3 collaborative
coll_shm_move n4
coll_shm_move N2 thread
comm_idup n4
comm_idup N2 thread
images per_rank n16 c2
images per_rank n6 N3
comm n4
intercomm n4
intercomm_coll n5
intercomm_split N2 collaborative
neighbor n3
p2p_order N2 wait
p2p_probe N2 collaborative
p2p_order N2 thread
p2p_modes N2 collaborative
thread_multiple N2 wait
thread_multiple N2 collaborative
coll_blocking N3 collaborative
coll_nonblocking N2 thread
coll_nonblocking N3 wait
msg_storm n4 N1 collaborative seed2
msg_storm n4 N2 collaborative seed9 small-buffers
msg_storm n4 N2 thread seed6
hang recv n2
hang waitall n2 N2
api_errors n4 N2
mpit_threads n4
mpit_threads N2 thread
mpit_traffic N2 collaborative
mpit_events n4
mpit_events N2 thread
mpcrun dropin_output
attrs N2 thread
topo n4
world_info n4
status_ignore n4
p2p_sendrecv N3 collaborative
datatypes N2 collaborative
coll_types N2 wait
coll_inplace n8
coll_noncontig N3 thread
coll_errors n4
cxx_program n4
placement n4 N2
numa_steal other
pool_flood n6 N3 thread
fault cut_n3
fault kill_blocked_n2
eulermhd imbalance n4 N2
npb_cg S n4 N2 collaborative
errors_fatal rank n4
exit early n4
mpi4_isendrecv n8
mpi4_isendrecv N2 collaborative
mpi4_sessions N2 thread
exit late n4
nompi n4
pmi kvs N3
images globals n6 N3 thread
libc_buffers n4
libc_getopt n4
libc_random n4 N2
libc_env n4
grequest n4
status_error n3
mprobe_threads n4
mprobe_threads N2 thread
p2p_fragments N2 collaborative
comm_create_group n4
comm_create_group N2 thread
comm_dup_threads n4
thread_wakeup n4
thread_wakeup N2 wait
comm_disconnect n3
dynamic N2 collaborative
dynamic n4
types_f90 n3
attrs_mpi1 n2
bsend_buffer n2
comm_info n2
omp_sendrecv gcc -n 4 t2
omp_sendrecv gcc -n 8 -c 1 t2
omp_sendrecv gcc -n 4 -N 2 --progress thread t2
omp_ranks gcc -n 4
omp_levels funneled gcc -n 2 t3
omp_levels serialized gcc -n 4 t3
omp_levels multiple gcc -n 4 t3
cxx_exceptions -n 2 -c 1
rma_core n4
rma_core N2 collaborative
rma_core N3 thread
rma_passive n4 N2 collaborative -c 2 strict
rma_passive n4
rma_types n3
rma_shared n4 N2 thread
rma_objects n2
rma_errors n2
rma_storm n4 N2 collaborative seed23
rma_storm n8 N1 collaborative seed21
io_array n4
io_array N2 collaborative
io_array N3 thread
io_modes n4
io_modes N3 n5 wait
io_types n3
io_errors N2 n4 wait
io_combine n8
io_combine N1 n8 thread
coll_persistent n4
coll_persistent N2 collaborative
coll_persistent_many n4
coll_persistent_many N1 n8 thread
partitioned n4
partitioned_threads n4
partitioned_threads N2 thread
partitioned_idle n4
coll_persistent_wait n8 c1
bigcount_coll n4
"

# Not run under ASan+UBSan: tests of how a deliberate crash is reported (a
# store through a null pointer), which UBSan and ASan report and end first;
# and the program run under gdb (LeakSanitizer cannot work under ptrace);
# and the large-count runs of more than 2^31 bytes (4.2 GiB a run, which ASan's
# shadow memory and quarantine would double: the small-count bigcount_* tests
# cover the same code).
ASAN_SKIP="
exit segv n1
exit segv n4
fault segv_n2
images gdb runs two ranks
bigcount_large p2p n2
bigcount_large p2p N2
bigcount_large coll n2
"

# run_build NAME DIR MESON_ARGS TIMEOUT_MULTIPLIER TEST_NAMES [SKIP]
# TEST_NAMES: one per line, "suite:NAME" for a whole suite, "all" for every test.
run_build() {
    name=$1 dir=$2 args=$3 mult=$4 names=$5 skip=${6:-}
    start=$(date +%s)
    if ! BUILD_DIR="$dir" MESON_ARGS="$args" scripts/build.sh; then
        echo "$name: the build failed"
        echo "$name: 0 passed, 1 failed"
        return 1
    fi
    built=$(date +%s)
    # Test names are whole arguments (they contain spaces): rebuild "$@".
    set --
    while IFS= read -r t; do
        case "$t" in
            "") ;;
            suite:* | all)
                if [ "$t" = all ]; then suite=""; else suite="--suite ${t#suite:}"; fi
                # shellcheck disable=SC2086
                tests=$(meson test -C "$dir" --no-rebuild --list $suite 2>/dev/null |
                    sed -n 's/^[^ ]* \/ //p' | awk '!seen[$0]++')
                while IFS= read -r u; do
                    [ -z "$u" ] && continue
                    if printf '%s\n' "$skip" | grep -qxF "$u"; then continue; fi
                    set -- "$@" "$u"
                done <<LIST
$tests
LIST
                ;;
            *) set -- "$@" "$t" ;;
        esac
    done <<NAMES
$names
NAMES
    # A listed test the build does not have would silently not run.
    known=$(meson test -C "$dir" --no-rebuild --list 2>/dev/null | sed -n 's/^[^ ]* \/ //p')
    missing=0
    for t in "$@"; do
        if ! printf '%s\n' "$known" | grep -qxF "$t"; then
            echo "$name: no test named '$t' in $dir"
            missing=$((missing + 1))
        fi
    done
    log="$dir/sanitizer-tests.log"
    meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes "$JOBS" \
        --timeout-multiplier "$mult" "$@" >"$log" 2>&1
    rc=$?
    end=$(date +%s)
    grep -E '^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT|ERROR)' "$log" | sed "s/^ */$name: /"
    passed=$(grep -E '^Ok:' "$log" | awk '{print $2}' | tail -1)
    failed=$(grep -E '^(Fail|Unexpected Pass|Timeout):' "$log" | awk '{s+=$2} END {print s+0}')
    [ -z "$passed" ] && passed=0
    if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
    failed=$((failed + missing))
    echo "$name: build $((built - start)) s, tests $((end - built)) s (log: $log)"
    echo "$name: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

status=0
for w in ${*:-asan tsan}; do
    case "$w" in
        asan)
            run_build asan "$ASAN_DIR" \
                "-Db_sanitize=address,undefined -Db_lundef=false -Dexamples=false" 3 all \
                "$ASAN_SKIP" || status=1
            ;;
        tsan)
            run_build tsan "$TSAN_DIR" \
                "-Db_sanitize=thread -Db_lundef=false -Dfortran=disabled" 5 \
                "$TSAN_TESTS" || status=1
            ;;
        *)
            echo "usage: $0 [asan] [tsan]" >&2
            exit 2
            ;;
    esac
done
exit $status
