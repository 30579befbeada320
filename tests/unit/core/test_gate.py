"""core.gate: team-dispatch's workers begin once it has returned; a dead holder never holds them back."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from okstra.core import gate

LIB = str(Path(gate.__file__).resolve().parents[2])
HANG = 60  # only stops a test that would otherwise hang


def _holder(path: Path, then: str = "sys.stdin.readline()") -> subprocess.Popen:
    """A process that closes the gate, says so, and keeps it until `then` returns."""
    code = f"import sys; sys.path.insert(0, {LIB!r}); from okstra.core import gate; gate.hold({str(path)!r}); print('held', flush=True); {then}"
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "held\n"
    return proc


def _passing(path: Path) -> tuple[threading.Thread, list[bool]]:
    answer: list[bool] = []
    thread = threading.Thread(target=lambda: answer.append(gate.pass_through({gate.ENV: str(path)})), daemon=True)
    thread.start()
    return thread, answer


def test_nothing_to_wait_for_without_the_variable_or_the_file(tmp_path):
    assert gate.pass_through({}) is False
    assert gate.pass_through({gate.ENV: str(tmp_path / "no-such.gate")}) is False
    (tmp_path / "open.gate").write_text("")
    assert gate.pass_through({gate.ENV: str(tmp_path / "open.gate")}) is False


@pytest.mark.parametrize("ending", ["exits", "is killed"])
def test_a_worker_waits_while_the_holder_lives_and_goes_when_it_ends(tmp_path, ending):
    path = tmp_path / "run" / "launch.gate"
    holder = _holder(path)
    thread, answer = _passing(path)
    thread.join(0.5)
    assert thread.is_alive(), "passed a closed gate"
    if ending == "exits":
        holder.stdin.close()
    else:
        holder.send_signal(signal.SIGKILL)
    holder.wait(HANG)
    thread.join(HANG)
    assert answer == [True]


def test_a_child_the_holder_started_does_not_keep_the_gate_closed(tmp_path):
    """cli-wrapper workers are the holder's own children: the gate's file is not inherited."""
    path = tmp_path / "launch.gate"
    holder = _holder(path, then="import subprocess; print(subprocess.Popen(['sleep', '600'], close_fds=False).pid, flush=True)")
    child = int(holder.stdout.readline())
    holder.wait(HANG)
    try:
        assert gate.pass_through({gate.ENV: str(path)}) is False
    finally:
        os.kill(child, signal.SIGKILL)


def test_a_worker_waits_no_longer_than_the_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(gate, "WAIT_MAX", 0.2)
    path = tmp_path / "launch.gate"
    holder = _holder(path)
    try:
        assert gate.pass_through({gate.ENV: str(path)}) is True
    finally:
        holder.stdin.close()
        holder.wait(HANG)
