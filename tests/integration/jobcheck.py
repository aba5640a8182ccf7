"""What the job-control tests (mpcrun_check, fault_check, slurm_check) share:
every process of a test's jobs carries MARKER in its command line, so a test
finds them in /proc and checks that none is left behind."""
import os
import time
import uuid

MARKER = "marker-" + uuid.uuid4().hex


def job_processes():
    """Pids of live processes whose command line holds this run's marker."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if MARKER.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def leftovers(within=3.0):
    """The marked processes still alive after waiting up to `within` seconds
    for them to end (empty when none is)."""
    deadline = time.monotonic() + within
    while job_processes():
        if time.monotonic() > deadline:
            return job_processes()
        time.sleep(0.05)
    return []
