from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from okstra.core import cli, errors, fsio

LIB = str(Path(__file__).resolve().parents[3] / "lib")


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "a" / "doc.json"
    fsio.write_json(target, {"n": 1})
    fsio.write_json(target, {"n": 2})
    assert json.loads(target.read_text()) == {"n": 2}
    assert sorted(p.name for p in target.parent.iterdir()) == ["doc.json"]


def test_read_json_names_the_file_line_and_column(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "a": 1,\n  "b": \n}\n')
    with pytest.raises(errors.InputError) as raised:
        fsio.read_json(bad)
    assert str(raised.value).startswith(f"{bad}: not valid JSON at line 4 column 1")


def test_bad_json_through_a_command_is_exit_2_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2,,]")
    assert cli.run("thing", lambda: fsio.read_json(bad) and 0) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{bad}: not valid JSON at line 1" in err


def test_a_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(errors.InputError, match="no such file"):
        fsio.read_json(tmp_path / "nope.json")


def test_update_json_writes_only_when_the_mutator_says_it_changed(tmp_path):
    path = tmp_path / "state.json"
    fsio.write_json(path, {"n": 0})
    before = path.stat().st_mtime_ns
    time.sleep(0.01)
    fsio.update_json(path, lambda doc: False)
    assert path.stat().st_mtime_ns == before
    doc = fsio.update_json(path, lambda doc: doc.update(n=1) is None)
    assert doc == {"n": 1} and json.loads(path.read_text()) == {"n": 1}


def test_update_json_without_a_default_refuses_a_missing_file(tmp_path):
    with pytest.raises(errors.StateError, match="no such state file"):
        fsio.update_json(tmp_path / "missing.json", lambda doc: True)


def _increment(path: str, n: int, ready, go) -> None:
    ready.release()
    go.wait()

    def bump(doc):
        doc["count"] += 1
        return True

    for _ in range(n):
        fsio.update_json(Path(path), bump)


def _reader(path: str, stop, bad) -> None:
    while not stop.is_set():
        try:
            json.loads(Path(path).read_text())
        except (ValueError, OSError):
            bad.value += 1


def test_sixteen_processes_times_two_hundred_increments_lose_nothing(tmp_path):
    path = tmp_path / "counter.json"
    fsio.write_json(path, {"count": 0})
    ctx = multiprocessing.get_context("fork")
    ready, go, stop = ctx.Semaphore(0), ctx.Event(), ctx.Event()
    bad = ctx.Value("i", 0)
    reader = ctx.Process(target=_reader, args=(str(path), stop, bad))
    writers = [ctx.Process(target=_increment, args=(str(path), 200, ready, go)) for _ in range(16)]
    reader.start()
    for w in writers:
        w.start()
    for _ in writers:
        ready.acquire()
    go.set()
    for w in writers:
        w.join(timeout=120)
    stop.set()
    reader.join(timeout=10)
    assert all(w.exitcode == 0 for w in writers)
    assert json.loads(path.read_text()) == {"count": 3200}
    assert bad.value == 0, "a reader saw a partial document"


WRITER = """
import sys, time
sys.path.insert(0, {lib!r})
from pathlib import Path
from okstra.core import fsio
path = Path({path!r})
i = 0
while True:
    i += 1
    fsio.update_json(path, lambda doc: doc.update(n=doc["n"] + 1, pad="x" * 200000) is None)
    print(i, flush=True)
"""


def test_a_writer_killed_mid_write_leaves_a_complete_document(tmp_path):
    path = tmp_path / "state.json"
    fsio.write_json(path, {"n": 0, "pad": ""})
    for delay in (0.05, 0.11, 0.17, 0.23, 0.31):
        proc = subprocess.Popen([sys.executable, "-c", WRITER.format(lib=LIB, path=str(path))], stdout=subprocess.PIPE, text=True)
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        acknowledged = [int(line) for line in proc.stdout.read().split()]
        doc = json.loads(path.read_text())
        # Every update acknowledged before the kill is in the file (it may hold one more).
        assert doc["n"] >= (acknowledged[-1] if acknowledged else 0)
    # A killed writer may leave its temporary; the next locked update sweeps it away.
    (tmp_path / ".state.json.k1ll3d.tmp").write_text('{"n": ')
    (tmp_path / ".other.json.x.tmp").write_text("not ours")
    fsio.update_json(path, lambda doc: False)
    assert (tmp_path / ".other.json.x.tmp").exists()
    (tmp_path / ".other.json.x.tmp").unlink()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_the_sweep_takes_only_the_temporaries_of_its_own_target(tmp_path):
    path = tmp_path / "report.data.json"
    fsio.write_json(path, {"n": 0})
    # report.data.json.last-valid is another document beside it, with its own writer.
    (tmp_path / ".report.data.json.k1ll3d_x.tmp").write_text('{"n": ')
    (tmp_path / ".report.data.json.last-valid.a1b2c3d4.tmp").write_text("another writer's")
    fsio.update_json(path, lambda doc: False)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == [".report.data.json.last-valid.a1b2c3d4.tmp"]


def test_write_locked_sweeps_a_killed_writers_temporary_and_writes_the_whole_document(tmp_path):
    path = tmp_path / "reports" / "report.data.json"
    fsio.write_json(path, {"n": 0})
    (path.parent / ".report.data.json.k1ll3d_x.tmp").write_text('{"n": ')
    fsio.write_locked(path, fsio.dumps({"n": 1}))
    assert json.loads(path.read_text()) == {"n": 1}
    assert sorted(p.name for p in path.parent.iterdir()) == ["report.data.json", "report.data.json.lock"]


def test_write_locked_refuses_a_linked_folder_before_making_its_lock(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "linked").symlink_to(outside)
    with pytest.raises(errors.StateError, match="symbolic link"):
        fsio.write_locked(tmp_path / "linked" / "x.json", "{}")
    assert list(outside.iterdir()) == []


def test_append_line_adds_one_line_under_the_lock(tmp_path):
    log = tmp_path / "log.jsonl"
    fsio.append_line(log, '{"a": 1}')
    fsio.append_line(log, '{"a": 2}\n')
    assert log.read_text() == '{"a": 1}\n{"a": 2}\n'


# ------------------------------------------------------------------ hostile storage (issue 15)


def test_a_fifo_in_a_files_place_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "state.json"
    os.mkfifo(fifo)
    with pytest.raises(errors.InputError, match="not a regular file"):
        fsio.read_json(fifo)


def test_writes_do_not_follow_a_symlinked_file_or_folder(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "linked").symlink_to(outside)
    with pytest.raises(errors.StateError, match="symbolic link"):
        fsio.write_json(tmp_path / "linked" / "x.json", {})
    (tmp_path / "alias.json").symlink_to(outside / "target.json")
    with pytest.raises(errors.StateError, match="symbolic link"):
        fsio.write_json(tmp_path / "alias.json", {})
    assert list(outside.iterdir()) == []


def test_a_folder_in_a_files_place_is_an_environment_error_not_a_bug(tmp_path):
    (tmp_path / "x.json").mkdir()
    with pytest.raises(IsADirectoryError):
        fsio.write_json(tmp_path / "x.json", {})


def test_json_nested_100000_deep_and_lone_surrogates_are_bad_input(tmp_path):
    with pytest.raises(errors.InputError, match="nested too deeply"):
        fsio.parse_json("[" * 100_000 + "]" * 100_000, "--answers")
    with pytest.raises(errors.InputError, match="lone surrogate"):
        fsio.parse_json('{"Q1": "\\ud800"}', "--answers")
    assert fsio.parse_json('{"Q1": "\\ud83d\\ude00"}', "--answers") == {"Q1": "\U0001f600"}


@pytest.mark.parametrize(
    ("exc", "words"),
    [
        (OSError(28, "No space left on device", "/p/x.json"), "No space left on device"),
        (OSError(30, "Read-only file system", "/p/x.json"), "Read-only file system"),
        (RecursionError(), "nested too deeply"),
        (UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed"), "not valid UTF-8"),
    ],
)
def test_a_bad_environment_is_one_line_and_exit_2_never_70(capsys, exc, words):
    def body():
        raise exc

    assert cli.run("cmd", body) == cli.EXIT_FAILED
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "internal error" not in err


def test_a_write_past_the_file_size_limit_fails_cleanly_and_leaves_the_old_document(tmp_path):
    """RLIMIT_FSIZE stands in for a full disk: the write fails (EFBIG), nothing is torn."""
    target = tmp_path / "state.json"
    fsio.write_json(target, {"old": True})
    code = (
        "import resource, sys\n"
        f"sys.path.insert(0, {str(Path(fsio.__file__).parents[2])!r})\n"
        "from okstra.core import cli, fsio\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))\n"
        f"raise SystemExit(cli.run('t', lambda: fsio.write_json({str(target)!r}, {{'big': 'x' * 4096}})))\n"
    )
    done = subprocess.run([sys.executable, "-B", "-c", code], capture_output=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert json.loads(target.read_text()) == {"old": True}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left


def test_update_json_leaves_no_file_open_whether_it_writes_refuses_or_fails(tmp_path):
    """The replaced document's file is kept open past the rename (its freeing runs after the
    lock is released); every path out of update_json must still close it."""
    path = tmp_path / "state.json"
    fsio.write_json(path, {"n": 0})
    open_before = len(os.listdir("/proc/self/fd"))

    def fail(doc):
        raise RuntimeError("mutator failed")

    for _ in range(50):
        fsio.update_json(path, lambda doc: doc.update(n=doc["n"] + 1) is None)
        fsio.update_json(path, lambda doc: False)
        with pytest.raises(RuntimeError):
            fsio.update_json(path, fail)
    assert len(os.listdir("/proc/self/fd")) == open_before
    assert json.loads(path.read_text()) == {"n": 50}


def test_read_bytes_words_a_missing_or_unreadable_file_as_read_text_does(tmp_path):
    (tmp_path / "folder.json").mkdir()
    (tmp_path / "file").write_text("x")
    for bad in (tmp_path / "missing.json", tmp_path / "folder.json", tmp_path / "file" / "below.json"):
        with pytest.raises(errors.InputError) as from_bytes:
            fsio.read_bytes(bad)
        with pytest.raises(errors.InputError) as from_text:
            fsio.read_text(bad)
        assert str(from_bytes.value) == str(from_text.value)
        assert str(from_bytes.value).startswith(f"{bad}: ") and "; " in str(from_bytes.value)
    with pytest.raises(
        errors.InputError, match=r"folder.json: is a directory, expected a report data file; give the path of a file"
    ):
        fsio.read_bytes(tmp_path / "folder.json", what="report data file")
    with pytest.raises(errors.InputError, match=r"below.json: cannot read: Not a directory; check the path"):
        fsio.read_bytes(tmp_path / "file" / "below.json")


def test_update_json_on_a_folder_or_non_utf8_file_is_an_input_error(tmp_path):
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(errors.InputError, match="is a directory, expected a state file"):
        fsio.update_json(tmp_path / "dir.json", lambda doc: False)
    (tmp_path / "latin.json").write_bytes(b'{"a": "\xe9"}')
    with pytest.raises(errors.InputError, match="not UTF-8 text"):
        fsio.update_json(tmp_path / "latin.json", lambda doc: False)
