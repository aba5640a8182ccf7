"""Names shared by the bench driver's modules."""
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = ROOT / "examples"
COMMON = EXAMPLES / "common"
OUR_MODES = ["wait", "collaborative", "thread-poll", "thread-block"]
OTHER_MPIS = ["openmpi", "mpich"]
MPI_LABEL = {"ours": "fibermpi", "openmpi": "Open MPI", "mpich": "MPICH"}


def run_quiet(cmd, cwd=None):
    """(exit status, stdout + stderr) of cmd."""
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return r.returncode, (r.stdout + r.stderr).strip()
