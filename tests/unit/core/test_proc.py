from __future__ import annotations

import sys

import pytest

from okstra.core import errors, proc


def test_run_captures_text_and_never_crashes_on_bad_bytes():
    done = proc.run([sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'ok \\xff')"])
    assert done.returncode == 0
    assert done.stdout == "ok \\xff"


def test_a_missing_program_is_a_clear_error():
    with pytest.raises(errors.ToolNotFoundError, match="no-such-program-okstra not found on PATH"):
        proc.run(["no-such-program-okstra"])


def test_a_failing_program_names_its_exit_code_and_last_stderr_line():
    with pytest.raises(errors.ProcessError, match="exited 3: last words"):
        proc.run([sys.executable, "-c", "import sys; print('last words', file=sys.stderr); sys.exit(3)"])


def test_check_false_returns_the_code():
    assert proc.run([sys.executable, "-c", "raise SystemExit(4)"], check=False).returncode == 4


def test_debug_logs_the_quoted_command(monkeypatch, capsys):
    monkeypatch.setenv("OKSTRA_DEBUG", "1")
    proc.run([sys.executable, "-c", "pass", "a b;$(x)"])
    assert "okstra: + " in capsys.readouterr().err


def test_arguments_reach_the_program_as_data():
    hostile = "a b; echo pwned $(id) `id` 'q' \"d\""
    done = proc.run([sys.executable, "-c", "import sys; print(sys.argv[1])", hostile])
    assert done.stdout == hostile + "\n"


def test_spawn_starts_a_new_process_group():
    import os

    child = proc.spawn([sys.executable, "-c", "import os; print(os.getpgid(0))"], stdout=-1)
    out, _ = child.communicate(timeout=10)
    assert int(out) == child.pid != os.getpgid(0)
