"""harness.stage_scope: changes judged with the write-guard's own glob rules, per writer."""

from __future__ import annotations

from pathlib import Path

from okstra.core.git import Change
from okstra.harness import stage_scope
from okstra.harness.stage_scope import Writer
from okstra.model.active_run import ApprovedStage

STAGE = ApprovedStage(1, "core", ("api/limiter/**", "docs/*.md", "setup.py"), "abc1234")


def verdicts(root: Path, changes, writers=None, default=None):
    v = stage_scope.judge(root, changes, STAGE, writers or {}, default=default)
    return {p.change.path: (p.in_scope, p.worker) for p in v.paths}


def test_planned_globs_match_segment_by_segment_like_the_write_guard(tmp_path):
    got = verdicts(
        tmp_path,
        [
            Change("A", "api/limiter/deep/x.py"),
            Change("M", "docs/a.md"),
            Change("?", "docs/sub/a.md"),
            Change("D", "setup.py"),
            Change("?", "setup.py.bak"),
        ],
    )
    assert got == {
        "api/limiter/deep/x.py": (True, None),
        "docs/a.md": (True, None),
        "docs/sub/a.md": (False, None),
        "setup.py": (True, None),
        "setup.py.bak": (False, None),
    }


def test_a_rename_needs_both_names_planned(tmp_path):
    assert verdicts(tmp_path, [Change("R", "api/limiter/b.py", "lib/a.py")]) == {"api/limiter/b.py": (False, None)}
    assert verdicts(tmp_path, [Change("R", "api/limiter/b.py", "api/limiter/a.py")]) == {"api/limiter/b.py": (True, None)}


def test_a_non_implementer_may_write_only_its_own_result_and_evidence_even_inside_the_plan(tmp_path):
    analyst = Writer("claude", "analyst", str(tmp_path / "r.md"), str(tmp_path / "ev"))
    coder = Writer("codex", "implementer")
    got = verdicts(
        tmp_path,
        [Change("A", "api/limiter/x.py"), Change("A", "api/limiter/y.py")],
        writers={"api/limiter/x.py": analyst, "api/limiter/y.py": coder},
    )
    assert got == {"api/limiter/x.py": (False, "claude"), "api/limiter/y.py": (True, "codex")}


def test_who_wrote_what_comes_from_the_before_and_after_snapshots(project):
    (project / "old.txt").write_text("1")
    stage = ApprovedStage(1, "t", ("new.txt",), None)
    record = project / ".okstra" / "scope.json"
    me = Writer("codex", "implementer")
    stage_scope.begin(record, project, None, me)
    (project / "new.txt").write_text("2")
    (project / "stray.txt").write_text("3")
    verdict = stage_scope.finish(record, project, stage, me)
    assert {p.change.path: p.in_scope for p in verdict.paths} == {"new.txt": True, "stray.txt": False}
    assert stage_scope.written_by([(me, record)]) == {"new.txt": me, "stray.txt": me}
