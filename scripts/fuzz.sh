#!/bin/sh
# Builds the fuzz targets of tests/fuzz with clang's libFuzzer (plus
# AddressSanitizer and UndefinedBehaviorSanitizer) in build-fuzz and runs each
# for a while, growing its corpus in build-fuzz/corpus/<target> from the saved
# inputs of tests/fuzz/inputs/<target>.
#
#   scripts/fuzz.sh [SECONDS [TARGET...]]     default: 60 s each, every target
# Targets: pmi2_wire pmi2_server pmi2_client handshake net_wire datatype.
# A crash leaves its input in build-fuzz/crashes/ and the script exits 1:
# fix the bug, then copy the input into tests/fuzz/inputs/<target>/ so that
# every build replays it (the tests 'fuzz <target> inputs').
# Environment: FUZZ_DIR (build directory, default build-fuzz), FUZZ_JOBS
# (build parallelism, default 2).
set -eu
cd "$(dirname "$0")/.."
DIR="${FUZZ_DIR:-build-fuzz}"
SECONDS_EACH="${1:-60}"
[ $# -gt 0 ] && shift
TARGETS="${*:-pmi2_wire pmi2_server pmi2_client handshake net_wire datatype}"

scripts/setup-deps.sh
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ is needed (apt install clang)" >&2; exit 2; }
if [ ! -f "$DIR/build.ninja" ]; then
    CC=clang CXX=clang++ meson setup "$DIR" -Db_sanitize=address,undefined -Db_lundef=false \
        -Dcpp_args=-fsanitize=fuzzer-no-link -Dc_args=-fsanitize=fuzzer-no-link \
        -Dexamples=false -Dfortran=disabled >/dev/null
fi
ninja_targets=""
for t in $TARGETS; do ninja_targets="$ninja_targets tests/fuzz/fuzz_$t"; done
# shellcheck disable=SC2086
ninja -C "$DIR" -j "${FUZZ_JOBS:-2}" $ninja_targets >/dev/null

mkdir -p "$DIR/crashes"
# Undefined behaviour is a finding too: without this UBSan only logs it.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
status=0
for t in $TARGETS; do
    corpus="$DIR/corpus/$t"
    mkdir -p "$corpus"
    log="$DIR/fuzz-$t.log"
    # Inputs up to 4 KiB; a crash, leak, timeout (10 s) or allocation over
    # 1 GiB is a finding.
    if "$DIR/tests/fuzz/fuzz_$t" "$corpus" "tests/fuzz/inputs/$t" \
        -max_total_time="$SECONDS_EACH" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
        -malloc_limit_mb=1024 -print_final_stats=1 -close_fd_mask=2 \
        -artifact_prefix="$DIR/crashes/$t-" >"$log" 2>&1; then
        result=ok
    else
        result="FOUND A BUG (see $log and $DIR/crashes/)"
        status=1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    echo "fuzz $t: $result; ${runs:-?} runs in $SECONDS_EACH s, corpus $(ls "$corpus" | wc -l) inputs"
done
exit $status
