#!/bin/sh
# Benchmarks, side by side with Open MPI and MPICH when installed: builds the
# project and the examples, runs the matrix (progress modes x node processes x
# ranks x sizes) and writes bench-results/: results.csv, report.md, plots/*.png.
#   scripts/bench.sh --quick     1 repetition, small sizes (about 10 minutes)
#   scripts/bench.sh             3 repetitions;  --full: 5, larger sizes
# Other options: scripts/bench.py --help. BUILD_DIR as for scripts/build.sh.
set -eu
cd "$(dirname "$0")/.."
scripts/setup-deps.sh --bench || echo "bench: gnuplot could not be installed: no plots" >&2
exec python3 scripts/bench.py "$@"
