#!/bin/sh
# The main job: installs what is missing, builds, then runs real MPI programs
# through mpcrun: many ranks as fibers of one process, an EulerMHD-style solver
# and the NPB-style CG across two node processes, and a ping-pong.
set -eu
cd "$(dirname "$0")/.."
scripts/build.sh
B="${BUILD_DIR:-build}"
MPCRUN="$B/launcher/mpcrun"

echo "== mpcrun -n 16 hello   (16 ranks, threads of one node process)"
"$MPCRUN" -n 16 "$B/tests/integration/hello" | sort -t' ' -k4 -n | head -4
echo "   ..."

echo "== mpcrun -n 8 -N 2 eulermhd   (2-D Euler solver, 2 node processes over tcp)"
"$MPCRUN" -n 8 -N 2 "$B/examples/eulermhd/eulermhd" --nx 256 --ny 256 --steps 60

if [ -x "$B/examples/npb/npb_cg" ]; then
    echo "== mpcrun -n 4 -N 2 npb_cg W   (NPB-style conjugate gradient, class W)"
    "$MPCRUN" -n 4 -N 2 "$B/examples/npb/npb_cg" W | grep -E 'Class|Time|VERIFICATION|Mop'
fi

echo "== mpcrun -n 2 pingpong   (intra-node latency and bandwidth, one copy)"
"$MPCRUN" -n 2 "$B/examples/pingpong" -max 1048576 -time 0.05
