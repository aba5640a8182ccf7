#!/usr/bin/env python3
"""Runs a command, then checks that rank images left nothing behind: no file
named fibermpi-rank-image* in /dev/shm or /tmp (the copies live in anonymous
memfds, which vanish with the process).

usage: check_leftovers.py -- cmd...
"""
import glob
import subprocess
import sys

PLACES = ("/dev/shm", "/tmp")


def leftovers():
    return sorted(p for d in PLACES for p in glob.glob(d + "/fibermpi-rank-image*"))


def main():
    cmd = sys.argv[1:]
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        print("usage: check_leftovers.py -- cmd...")
        return 2
    r = subprocess.run(cmd, timeout=120)
    if r.returncode != 0:
        print(f"FAIL: {' '.join(cmd)} exited with status {r.returncode}")
        return 1
    found = leftovers()
    if found:
        print("FAIL: rank-image files left behind: " + ", ".join(found))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
