"""processes: the one /proc reader and the one TERM → grace → KILL (DESIGN §5, §6)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from okstra.team import processes

IGNORES_TERM = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
EXITS_SLOWLY_ON_TERM = (
    "import signal, sys, time\n"
    "def bye(*_):\n    time.sleep(0.5)\n    sys.exit(7)\n"
    "signal.signal(signal.SIGTERM, bye); print('ready', flush=True); time.sleep(60)"
)


def _until(predicate, what):
    """Wait for a process state; 60 s only bounds a hang, never a measured figure."""
    end = time.monotonic() + 60
    while not predicate():
        assert time.monotonic() < end, f"never: {what}"
        time.sleep(0.01)


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
        _until(lambda: Path(f"/proc/{child.pid}/comm").read_text() == "a) b (c\n", "the odd name exec'd")
        fields = processes.stat_fields(child.pid)
        assert fields is not None and fields[0] in "RSD" and int(fields[1]) == os.getpid()
        assert processes.start_time(child.pid) == fields[19]
    finally:
        child.kill()
        child.wait()


def test_a_zombie_is_not_alive():
    child = subprocess.Popen(["true"])
    try:
        _until(lambda: (processes.stat_fields(child.pid) or ["?"])[0] == "Z", "exited, not yet reaped")
        assert not processes.matches(child.pid, None)
    finally:
        child.wait()


def test_descendants_are_collected_from_the_recorded_root():
    shell = subprocess.Popen(["/bin/sh", "-c", "sleep 30 & wait"])
    try:
        _until(lambda: processes.children().get(shell.pid), "the shell's child started")
        found = processes.with_descendants({shell.pid: processes.start_time(shell.pid)})
        assert shell.pid in found and len(found) == 2
        assert processes.with_descendants({shell.pid: "1"}) == {}  # not the recorded process: nothing
    finally:
        for pid in processes.children().get(shell.pid, []):
            os.kill(pid, signal.SIGKILL)
        shell.kill()
        shell.wait()


def test_term_then_kill_kills_what_ignores_term_once_it_is_seen_alive_after_term():
    child = subprocess.Popen([sys.executable, "-c", IGNORES_TERM], stdout=subprocess.PIPE, start_new_session=True)
    assert child.stdout.readline() == b"ready\n"
    events: list[str] = []

    def send(sig: int) -> None:
        events.append(signal.Signals(sig).name)
        processes.kill_group(child.pid, sig)

    def is_alive() -> bool:
        alive = child.poll() is None
        events.append("alive" if alive else "gone")
        return alive

    gone = processes.term_then_kill(send, is_alive, grace=0.3)
    assert gone and child.returncode == -signal.SIGKILL
    assert [e for e in events if e.startswith("SIG")] == ["SIGTERM", "SIGKILL"]
    assert "alive" in events[1 : events.index("SIGKILL")]  # KILL only for what outlived TERM
    assert events[-1] == "gone"


def test_term_then_kill_gives_a_slow_exit_its_grace():
    child = subprocess.Popen([sys.executable, "-c", EXITS_SLOWLY_ON_TERM], stdout=subprocess.PIPE)
    assert child.stdout.readline() == b"ready\n"
    sent: list[int] = []

    def send(sig: int) -> None:
        sent.append(sig)
        os.kill(child.pid, sig)

    try:
        # The grace only bounds a hang: the child's own exit (7), not SIGKILL, must end it.
        assert processes.term_then_kill(send, lambda: child.poll() is None, grace=60)
        assert sent == [signal.SIGTERM] and child.returncode == 7
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


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


# -- worker-run's subreaper (issue 15): a setsid grandchild that ignores TERM/HUP stays ours

REPO = Path(__file__).resolve().parents[3]

CHILD = f"""
import os, subprocess, sys, time
sys.path.insert(0, {str(REPO / "lib")!r})
from okstra.team import processes
assert processes.become_subreaper()
# A provider that starts a helper in its own session, ignoring TERM and HUP, then exits.
subprocess.Popen(["sh", "-c", "setsid sh -c 'trap \\"\\" TERM HUP; exec sleep 27182' </dev/null >/dev/null 2>&1 &"]).wait()
time.sleep(0.3)
before = processes.own_descendants()
print(len(before), flush=True)
processes.stop_own_descendants(0.5)
print(len(processes.own_descendants()), flush=True)
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


def test_the_subreaper_finds_and_stops_a_setsid_grandchild_that_ignores_term():
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    found, left = (int(x) for x in done.stdout.split())
    assert found >= 1, "the re-parented grandchild is a descendant"
    assert left == 0
    time.sleep(0.2)
    assert _strays() == []


def test_without_the_subreaper_the_grandchild_escapes_to_init(tmp_path):
    """The test can fail: the same helper, without become_subreaper, is not our descendant."""
    code = CHILD.replace("assert processes.become_subreaper()", "pass")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30, check=False)
    try:
        found = int(done.stdout.split()[0])
        assert found == 0
    finally:
        for pid in _strays():
            os.kill(pid, 9)
