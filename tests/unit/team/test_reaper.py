"""worker-run's subreaper: a setsid grandchild that ignores TERM/HUP stays a descendant
and is stopped (real processes)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

CHILD = f"""
import os, subprocess, sys, time
sys.path.insert(0, {str(REPO / "lib")!r})
from okstra.team import reaper
assert reaper.become_subreaper()
# A provider that starts a helper in its own session, ignoring TERM and HUP, then exits.
subprocess.Popen(["sh", "-c", "setsid sh -c 'trap \\"\\" TERM HUP; exec sleep 27182' </dev/null >/dev/null 2>&1 &"]).wait()
time.sleep(0.3)
before = reaper.descendants()
print(len(before), flush=True)
reaper.stop_descendants(grace=0.5)
print(len(reaper.descendants()), flush=True)
"""


def _strays() -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if Path(f"/proc/{name}/cmdline").read_bytes() == b"sleep\x0027182\x00":
                    out.append(int(name))
            except OSError:
                pass
    return out


def test_a_setsid_grandchild_that_ignores_term_is_found_and_stopped():
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    found, left = (int(x) for x in done.stdout.split())
    assert found >= 1, "the re-parented grandchild is a descendant"
    assert left == 0
    time.sleep(0.2)
    assert _strays() == []


def test_without_the_subreaper_the_grandchild_escapes_to_init(tmp_path):
    """The test can fail: the same helper, without become_subreaper, is not our descendant."""
    code = CHILD.replace("assert reaper.become_subreaper()", "pass")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30, check=False)
    try:
        found = int(done.stdout.split()[0])
        assert found == 0
    finally:
        for pid in _strays():
            os.kill(pid, 9)
