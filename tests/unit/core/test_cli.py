from __future__ import annotations

import pytest

from okstra.core import cli, errors

DOC = """Summary: Do one small thing

Usage: thing [--flag] NAME
       thing --other

More text.
"""


def test_summary_and_usage_are_read_from_the_docstring():
    assert cli.summary_of(DOC) == "Do one small thing"
    assert cli.usage_of(DOC) == "thing [--flag] NAME\n       thing --other"


def test_help_prints_the_docstring_and_exits_zero(capsys):
    parser = cli.parser("thing", DOC)
    with pytest.raises(SystemExit) as done:
        parser.parse_args(["--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out == DOC.rstrip("\n") + "\n"


def test_a_usage_error_is_one_line_and_exit_2(capsys):
    parser = cli.parser("thing", DOC)
    parser.add_argument("name")
    code = cli.run("thing", lambda: parser.parse_args(["--nope", "x"]) and 0)
    err = capsys.readouterr().err
    assert code == cli.EXIT_FAILED == 2
    assert err.count("\n") == 1
    assert err.startswith("thing: unrecognized arguments: --nope; see 'thing --help'")


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (errors.InputError("bad"), 2),
        (errors.PathEscapeError("out"), 2),
        (errors.StateError("broken"), 2),
        (errors.RefusedError("no"), 2),
        (errors.ToolNotFoundError("tmux"), 2),
        (errors.ProblemsFound(["a", "b"]), 1),
    ],
)
def test_each_failure_kind_maps_to_its_exit_code(exc, code, capsys):
    def body():
        raise exc

    assert cli.run("thing", body) == code
    err = capsys.readouterr().err
    assert all(line.startswith("thing: ") for line in err.splitlines())


def test_problems_are_printed_one_per_line(capsys):
    def body():
        raise errors.ProblemsFound(["first problem", "second problem"])

    assert cli.run("thing", body) == 1
    assert capsys.readouterr().err == "thing: first problem\nthing: second problem\n"


def test_the_hint_follows_the_message():
    assert str(errors.InputError("x.json: no such file", hint="check the path")) == "x.json: no such file; check the path"


def test_an_internal_error_is_exit_70_with_one_line_and_no_traceback(capsys):
    def body():
        raise ZeroDivisionError("boom")

    assert cli.run("thing", body) == 70
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert "OKSTRA_DEBUG=1" in err


def test_okstra_debug_shows_the_traceback(capsys, monkeypatch):
    monkeypatch.setenv("OKSTRA_DEBUG", "1")

    def body():
        raise ZeroDivisionError("boom")

    assert cli.run("thing", body) == 70
    assert "Traceback" in capsys.readouterr().err


def test_ctrl_c_is_exit_130(capsys):
    def body():
        raise KeyboardInterrupt

    assert cli.run("thing", body) == 130
    assert capsys.readouterr().err == "thing: interrupted\n"


@pytest.mark.parametrize(
    ("text", "zero", "ok"),
    [
        ("1.5", False, True),
        ("0", False, False),
        ("0", True, True),
        ("-3", True, False),
        ("nan", False, False),
        ("inf", False, False),
        ("601", True, False),
        ("soon", False, False),
    ],
)
def test_seconds_accepts_only_a_bounded_duration(text, zero, ok, capsys):
    parser = cli.parser("thing", DOC)
    parser.add_argument("--grace", type=cli.seconds(maximum=600, zero=zero))
    code = cli.run("thing", lambda: parser.parse_args(["--grace", text]) and 0)
    assert (code == 0) is ok
    if not ok:
        assert f"argument --grace: {text!r} is not a number of seconds" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["0", "-1", "+2", "1_0", "١", "2.0", "", "x"])
def test_positive_int_refuses_anything_but_ascii_digits_from_one(text):
    with pytest.raises(errors.InputError, match=r"--stage .* is not a whole number from 1 up"):
        cli.positive_int(text, "--stage")


def test_positive_int_reads_a_whole_number_from_one():
    assert cli.positive_int("1", "--attempt") == 1
    assert cli.positive_int("12", "--attempt") == 12
