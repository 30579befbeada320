"""The okstra-run skill names okstra's real commands: every one it mentions answers
`--help`, so a renamed command breaks this test, not the lead."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SKILL = REPO / "skills" / "okstra-run" / "SKILL.md"
BIN = REPO / "bin"
TEXT = SKILL.read_text(encoding="utf-8")
DOORS = {p.name for p in BIN.iterdir() if p.is_file()}
NOUNS = {name.split("-")[0] for name in DOORS if "-" in name}
# Code spans (`...`) and indented/fenced code lines are where commands are named.
SPANS = re.findall(r"`([^`\n]+)`", TEXT)


def _command_words(span: str) -> list[str] | None:
    """The okstra command a code span names, as argv words, or None when it names none."""
    words = span.split()
    if not words:
        return None
    if words[0] == "okstra" and len(words) >= 2:
        if words[1] in {"help", "--help", "--version"} or words[1].startswith("<"):
            return ["okstra"]
        return words[:3] if len(words) >= 3 and not words[2].startswith("-") and words[2].isalpha() else words[:2]
    if words[0] in DOORS or re.fullmatch(r"[a-z]+(-[a-z]+)+", words[0]) and words[0].split("-")[0] in NOUNS:
        return [words[0]]
    return None


NAMED = sorted({tuple(w) for span in SPANS if (w := _command_words(span))})


def test_the_skill_has_its_frontmatter():
    match = re.match(r"---\n(.*?)\n---\n", TEXT, re.S)
    assert match, "SKILL.md must start with YAML frontmatter"
    fields = dict(line.split(": ", 1) for line in match.group(1).splitlines())
    assert fields["name"] == "okstra-run" == SKILL.parent.name
    assert 1 <= len(fields["description"]) <= 1024


def test_the_skill_walks_the_whole_procedure():
    named = {w[0] for w in NAMED}
    for command in (
        "render-bundle",
        "prompt-check",
        "team-dispatch",
        "worker-wait",
        "worker-probe",
        "team-status",
        "team-reclaim",
        "render-final-report",
        "report-finalize",
        "render-report-views",
        "user-response-show",
        "user-response-write",
        "stage-map",
        "stage-record",
        "team-teardown",
    ):
        assert command in named, f"the skill never names {command}"
    assert "PROGRESS: phase-batch-cleanup panes=<n>" in TEXT
    assert "PROGRESS: phase-gate-cleanup panes=<n>" in TEXT
    assert "render-bundle --task-key K --task-type implementation --stage N" in TEXT


@pytest.mark.parametrize("words", NAMED, ids=" ".join)
def test_every_command_the_skill_names_answers_help(words):
    name = "-".join(words[1:]) if words[0] == "okstra" and len(words) > 1 else words[0]
    if words[0] == "okstra" and len(words) > 1:
        argv = [sys.executable, str(BIN / "okstra"), *words[1:], "--help"]
    else:
        assert name in DOORS, f"the skill names `{name}`, which is not a command in bin/ (renamed?)"
        argv = [sys.executable, str(BIN / name), "--help"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"`{' '.join(words)} --help` failed: {done.stderr.strip()}"
    assert done.stdout.startswith("Summary:")


def test_the_skill_walks_brief_to_the_end_of_a_run():
    named = {w[0] for w in NAMED}
    assert {"render-bundle", "team-teardown", "run-end"} <= named
    assert "--brief-file BRIEF" in TEXT and "acceptance criteria" in TEXT
    assert TEXT.index("--brief") < TEXT.index("team-dispatch") < TEXT.index("run-end --run-manifest M")
    assert "stage N/<total> start" in TEXT and "stage N done → next" in TEXT
    assert "--replace-active" in TEXT and "--allow-dirty" in TEXT
