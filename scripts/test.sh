#!/bin/sh
# Installs what is missing, builds, and runs the whole test suite.
set -eu
cd "$(dirname "$0")/.."
scripts/build.sh
B="${BUILD_DIR:-build}"
meson test -C "$B" --print-errorlogs --num-processes 2 "$@"
