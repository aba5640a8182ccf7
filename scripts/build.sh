#!/bin/sh
# Configures (once) and builds the project in build/ (or $BUILD_DIR).
set -eu
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build}"
scripts/setup-deps.sh
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    meson setup "$BUILD_DIR" ${MESON_ARGS:-} >/dev/null
fi
ninja -C "$BUILD_DIR" >/dev/null
