#!/bin/sh
# The main job: installs what is missing, builds, then runs a real MPI program
# through mpcrun: 16 ranks as fibers of one process on this machine's cores.
set -eu
cd "$(dirname "$0")/.."
scripts/build.sh
B="${BUILD_DIR:-build}"
echo "== mpcrun -n 16 hello (16 ranks, one node process)"
"$B/launcher/mpcrun" -n 16 "$B/tests/integration/hello" | sort -t' ' -k4 -n | head -4
echo "   ..."
