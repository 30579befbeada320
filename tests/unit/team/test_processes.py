"""processes: the one /proc reader and the one TERM → grace → KILL (DESIGN §5, §6)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from okstra.team import processes

IGNORES_TERM = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"


def test_a_process_is_its_pid_and_its_start_time():
    start = processes.start_time(os.getpid())
    assert start and start.isdigit()
    assert processes.matches(os.getpid(), start)
    assert not processes.matches(os.getpid(), str(int(start) + 1))  # same pid, another process
    assert not processes.matches(2**22 + 17, None)
    assert processes.exists(os.getpid()) and not processes.exists(2**22 + 17)


def test_a_command_name_with_spaces_and_parentheses_does_not_shift_the_fields(tmp_path):
    odd = tmp_path / "a) b (c"
    odd.symlink_to("/bin/sleep")
    child = subprocess.Popen([str(odd), "30"])
    try:
        time.sleep(0.2)
        fields = processes.stat_fields(child.pid)
        assert fields is not None and fields[0] in "RSD" and int(fields[1]) == os.getpid()
        assert processes.start_time(child.pid) == fields[19]
    finally:
        child.kill()
        child.wait()


def test_a_zombie_is_not_alive():
    child = subprocess.Popen(["true"])
    time.sleep(0.3)  # exited, not yet reaped
    try:
        assert not processes.matches(child.pid, None)
    finally:
        child.wait()


def test_descendants_are_collected_from_the_recorded_root():
    shell = subprocess.Popen(["/bin/sh", "-c", "sleep 30 & wait"])
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not processes.children().get(shell.pid):
            time.sleep(0.02)
        found = processes.with_descendants({shell.pid: processes.start_time(shell.pid)})
        assert shell.pid in found and len(found) == 2
        assert processes.with_descendants({shell.pid: "1"}) == {}  # not the recorded process: nothing
    finally:
        for pid in processes.children().get(shell.pid, []):
            os.kill(pid, signal.SIGKILL)
        shell.kill()
        shell.wait()


def test_term_then_kill_kills_what_ignores_term_after_the_grace():
    child = subprocess.Popen([sys.executable, "-c", IGNORES_TERM], stdout=subprocess.PIPE, start_new_session=True)
    assert child.stdout.readline() == b"ready\n"
    sent: list[int] = []

    def send(sig: int) -> None:
        sent.append(sig)
        processes.kill_group(child.pid, sig)

    t0 = time.monotonic()
    gone = processes.term_then_kill(send, lambda: child.poll() is None, grace=0.3)
    assert gone and sent == [signal.SIGTERM, signal.SIGKILL]
    assert 0.3 <= time.monotonic() - t0 < 3
    assert child.returncode == -signal.SIGKILL


def test_term_then_kill_stops_at_term_when_that_is_enough():
    child = subprocess.Popen(["sleep", "30"])
    sent: list[int] = []

    def send(sig: int) -> None:
        sent.append(sig)
        os.kill(child.pid, sig)

    assert processes.term_then_kill(send, lambda: child.poll() is None, grace=5)
    assert sent == [signal.SIGTERM]


def test_stop_signals_only_recorded_processes_and_reports_survivors():
    child = subprocess.Popen(["sleep", "30"])
    try:
        wrong = {child.pid: "1"}  # the pid, but not the recorded start time: never signalled
        assert processes.stop(wrong, grace=0.1) == ([], [])
        assert child.poll() is None
        right = {child.pid: processes.start_time(child.pid)}
        signalled, survivors = processes.stop(right, grace=2)
        child.wait(timeout=5)
        assert signalled == [child.pid] and survivors == []
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
