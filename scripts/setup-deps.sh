#!/bin/sh
# Installs the Debian packages the project needs. Idempotent and silent when
# everything is already there; needs root (or sudo) only when something is missing.
#   scripts/setup-deps.sh            build + run dependencies
#   scripts/setup-deps.sh --peers    also Open MPI and MPICH, for side-by-side benchmarks
#   scripts/setup-deps.sh --bench    also gnuplot, for the plots of scripts/bench.py
# (--peers and --bench combine.)
set -eu

PACKAGES="meson ninja-build g++ gfortran pkg-config python3 libboost-context-dev libhwloc-dev
hwloc catch2 libfabric-dev libfabric-bin libibverbs-dev librdmacm-dev procps clang libomp-dev"
for arg in "$@"; do
    case "$arg" in
        --peers) PACKAGES="$PACKAGES openmpi-bin libopenmpi-dev mpich libmpich-dev" ;;
        --bench) PACKAGES="$PACKAGES gnuplot-nox" ;;
        *) echo "setup-deps: unknown option $arg (expected --peers or --bench)" >&2; exit 2 ;;
    esac
done

missing=""
for p in $PACKAGES; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$status" in
        *"install ok installed"*) ;;
        *) missing="$missing $p" ;;
    esac
done
[ -z "$missing" ] && exit 0

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
echo "setup-deps: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# Wait for another apt-get (unattended upgrades, a second script) instead of failing at once.
APT_WAIT="-o DPkg::Lock::Timeout=300"
# Only refresh the package lists when a package is not known at all.
for p in $missing; do
    if ! apt-cache show "$p" >/dev/null 2>&1; then
        $SUDO apt-get $APT_WAIT update -qq >/dev/null
        break
    fi
done
$SUDO apt-get $APT_WAIT install -y -qq --no-install-recommends $missing >/dev/null
