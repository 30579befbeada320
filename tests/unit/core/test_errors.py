"""core.errors: one class per failure kind, a one-line `<message>; <hint>`, and its exit code (DESIGN §1)."""

from __future__ import annotations

import pytest

from okstra.core import cli, errors


def _kinds(base: type) -> set[type]:
    found = set()
    for sub in base.__subclasses__():
        found |= {sub} | _kinds(sub)
    return found


def test_a_message_with_a_hint_is_one_line_message_then_hint():
    err = errors.InputError("--brief 'x.md': no such file", hint="pass an existing file")
    assert str(err) == "--brief 'x.md': no such file; pass an existing file"
    assert err.message == "--brief 'x.md': no such file"
    assert err.hint == "pass an existing file"


def test_a_message_without_a_hint_is_the_message_alone():
    err = errors.StateError("team-state.json: not a team-state document")
    assert str(err) == "team-state.json: not a team-state document"
    assert err.hint is None


def test_a_path_escape_is_a_kind_of_input_error():
    err = errors.PathEscapeError("'../x' is outside the project")
    assert isinstance(err, errors.InputError)
    assert isinstance(err, errors.OkstraError)


@pytest.mark.parametrize(
    "kind",
    [
        errors.UsageError,
        errors.InputError,
        errors.PathEscapeError,
        errors.StateError,
        errors.RefusedError,
        errors.ToolNotFoundError,
        errors.ProcessError,
    ],
)
def test_could_not_do_the_job_kinds_exit_2(kind):
    assert cli.exit_code_for(kind("m", hint="h")) == cli.EXIT_FAILED == 2


def test_problems_found_exits_1():
    assert cli.exit_code_for(errors.ProblemsFound(["a"])) == cli.EXIT_NO == 1


def test_every_kind_in_core_errors_and_beyond_exits_1_or_2_never_70():
    # Kinds defined elsewhere (e.g. the backends' PartialLaunch) map the same way.
    import okstra.team.backends.base  # noqa: F401 - defines a kind of ProcessError

    kinds = _kinds(errors.OkstraError)
    assert errors.ProblemsFound in kinds and len(kinds) >= 8
    for kind in kinds:
        expected = 1 if issubclass(kind, errors.ProblemsFound) else 2
        sample = kind(["p"]) if issubclass(kind, errors.ProblemsFound) else kind.__new__(kind)
        assert cli.exit_code_for(sample) == expected, kind


def test_problems_found_keeps_each_problem_and_counts_them():
    given = ["$.a: wrong", "$.b: missing"]
    err = errors.ProblemsFound(given)
    given.append("added later")
    assert err.problems == ["$.a: wrong", "$.b: missing"]
    assert str(err) == "2 problem(s) found"
    assert err.hint is None


def test_problems_found_takes_a_summary_instead_of_the_count():
    err = errors.ProblemsFound(["x"], summary="worker codex is unhealthy")
    assert str(err) == "worker codex is unhealthy"
    assert err.problems == ["x"]


def test_a_command_prints_the_error_as_one_prefixed_line_and_exits_with_its_code(capsys):
    def body():
        raise errors.RefusedError("roster: two executors\nin one run", hint="name one executor")

    assert cli.run("render-bundle", body) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "render-bundle: roster: two executors in one run; name one executor\n"


def test_a_command_prints_each_problem_on_its_own_line_and_exits_1(capsys):
    def body():
        raise errors.ProblemsFound(["$.a: wrong", "$.b: missing"])

    assert cli.run("prompt-check", body) == 1
    assert capsys.readouterr().err == "prompt-check: $.a: wrong\nprompt-check: $.b: missing\n"
