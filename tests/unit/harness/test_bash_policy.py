"""The Bash allow-list (DESIGN §10): allow what is understood and allowed, deny the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from okstra.harness import bash_policy
from okstra.report import sidecar, user_response

REPO = Path(__file__).resolve().parents[3]


class Asker:
    """A caller whose writes are allowed only under /p/src (a stage's planned folder)."""

    cwd = "/p"
    home = "/home/u"
    allowed_commands = ("make test", "npm run build:*", "Bash(pytest:*)")
    may_commit = True
    okstra_bin = "/opt/okstra/bin"

    def __init__(self) -> None:
        self.judged: list[str] = []

    def judge_write(self, target: str, cwd: str) -> str | None:
        from okstra.core import fastfs

        path = fastfs.normpath(fastfs.join(cwd, target))
        self.judged.append(path)
        return None if path.startswith("/p/src/") or path.startswith("/tmp/") else f"{path} is not planned"


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat src/a.py | grep -n foo | head -5",
        "git status --short && git diff --stat",
        "git log --oneline -5",
        "git -C sub show HEAD:README.md",
        "git branch --show-current",
        "echo done > /dev/null 2>&1",
        "echo x > src/new.py",
        "mkdir -p src/pkg && touch src/pkg/__init__.py",
        "cp README.md src/copy.md",
        "sed -n '1,20p' src/a.py",
        "sed -e 's/a/b/g' src/a.py",
        "find . -name '*.py' -type f",
        "sort -u src/a.py",
        "make test",
        "npm run build -- --prod",
        "pytest -q tests/unit 2>&1 | tail -n 20",
        "team-status --json",
        "okstra team status",
        "user-response-show --report R",
        'user-response-write --report R --answers \'{"Q1": "yes"}\'',
        "cd src && echo x > b.py",
        "echo 'a $b `c`' # quoted text is text",
        "wc -l < src/a.py",
        "grep -rn 'TODO' src/ || true",
        "echo x > ~/../../tmp/scratch.txt",
    ],
)
def test_understood_and_allowed_commands_pass(command):
    assert bash_policy.check(command, Asker()) is None, command


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("f=src/x; echo x > $f", "$ expansion"),
        ("echo x > $(echo src/x)", "$ expansion"),
        ("echo x > `echo x`", "backtick"),
        ('echo x > "$HOME/x"', "inside double quotes"),
        ("tee src/{a,b}.py", "brace"),
        ("echo x > src/a*.py", "glob"),
        ("echo x > src/a[bc].py", "glob"),
        ("cat <<EOF > src/x\nhi\nEOF", "here-document"),
        ("cat <<< hi", "here-document"),
        ("( echo x > Makefile )", "subshell"),
        ("diff <(ls) <(ls)", "subshell"),
        ("eval 'echo x'", "keyword or builtin"),
        ("if true; then ls; fi", "keyword"),
        ("X=1 ls", "variable assignment"),
        ('python3 -c \'open("x","w")\'', "not on the allow-list"),
        ("bash -c 'ls'", "not on the allow-list"),
        ("env ls", "not on the allow-list"),
        ("xargs rm < list", "not on the allow-list"),
        ("awk '{print > \"f\"}' x", "not on the allow-list"),
        ("perl -pi -e s/a/b/ x", "not on the allow-list"),
        ("sort -o Makefile x", "sort -o"),
        ("sort -uoMakefile x", "sort -o"),
        ("sed -i s/a/b/ x", "sed -i"),
        ("sed 'w out' x", "sed script"),
        ("sed 's/a/b/w out' x", "sed script"),
        ("find . -exec rm {} ;", "brace"),
        ("find . -delete", "find -delete"),
        ("git checkout other -- file", "changes files"),
        ("git apply p.diff", "changes files"),
        ("git -c core.pager=sh log", "global option"),
        ("git diff --output=Makefile", "--output"),
        ("echo x > Makefile", "not planned"),
        ("cp src/a.py Makefile", "not planned"),
        ("rm -rf /", "not planned"),
        ("ln -s a b", "not on the allow-list"),
        ("user-response-write --report R --plan-decision '{}'", "records a decision"),
        ("user-response-wri''te --report R --report-author''ing '{}'", "records a decision"),
        ("okstra user response write --report R --direction-selection='{}'", "records a decision"),
        ("hooks-install --uninstall", "hooks-install"),
        ("okstra hooks install --uninstall", "hooks-install"),
        ("config set backend tmux-pane", "config set"),
        ("okstra-config set backend tmux-pane", "config set"),
        ("/tmp/bin/team-status", "not okstra's"),
        ("make test && make deploy", "not on the allow-list"),
        ("exec 3>Makefile", "not planned"),
        ("exec ls", "keyword or builtin"),
        ("echo x >&Makefile", "descriptor"),
        ("echo 'unterminated", "unterminated"),
        ("cat ~root/.ssh/id_rsa", "~user"),
    ],
)
def test_anything_not_understood_or_not_allowed_is_denied_with_what_is_allowed(command, why):
    reason = bash_policy.check(command, Asker())
    assert reason is not None, command
    assert why in reason, reason
    assert "allowed: in Bash during a run" in reason and "ask the user" in reason


def test_every_written_file_is_judged_relative_to_the_folder_cd_reached():
    asker = Asker()
    assert bash_policy.check("cd src && mkdir -p pkg && echo x | tee pkg/a.py > ../src/b.py", asker) is None
    assert set(asker.judged) == {"/p/src/b.py", "/p/src/pkg", "/p/src/pkg/a.py"}


def test_an_allowed_commands_prefix_matches_whole_words_only():
    assert bash_policy.check("npm run build", Asker()) is None
    assert bash_policy.check("npm run buildx", Asker()) is not None
    assert bash_policy.check("make test-all", Asker()) is not None


# ---------------------------------------------------------------- okstra's doors (issue 15, D)

DOORS = sorted(p.name for p in (REPO / "bin").iterdir() if p.is_file())


class DoorAsker(Asker):
    okstra_bin = str((REPO / "bin").resolve())


def test_every_door_in_bin_has_a_rule_in_the_guard():
    """A new door not classified would be denied as 'not on the allow-list' (or, worse, a
    writing door classified read-only by accident): each is in exactly one set."""
    sets = (bash_policy.OKSTRA_READ_ONLY, bash_policy.OKSTRA_RUNNING, bash_policy.OKSTRA_BY_ARGUMENTS)
    for door in DOORS:
        assert sum(door in s for s in sets) == 1, f"{door}: classify it in harness/bash_policy.py"


@pytest.mark.parametrize("block", sidecar.BLOCKS)
@pytest.mark.parametrize(
    "spelling",
    [
        "user-response-write --report R --answers '{{}}' {arg} '{{}}'",
        "user-response-write --report R --answers '{{}}' {arg}='{{}}'",
        "okstra user-response write --report R {arg} '{{}}'",
        "okstra user response write --answers '{{}}' {arg} '{{}}' --report R",
        "{bin}/user-response-write --report R {arg} '{{}}'",
    ],
)
def test_every_decision_block_is_the_users_and_the_reason_names_it(block, spelling):
    """Every block user-response-write records (the sidecar's BLOCKS, so a new one is covered
    too) is denied to the lead and the workers, naming the block."""
    arg = user_response.ARGUMENTS[block]
    reason = bash_policy.check(spelling.format(arg=arg, bin=REPO / "bin"), DoorAsker())
    assert reason is not None
    assert f"records a decision ({block})" in reason and "only the user makes" in reason, reason


def test_the_interactive_dialogue_is_the_users_too():
    reason = bash_policy.check("user-response-write --report R --interactive", Asker())
    assert reason is not None and "records a decision" in reason


@pytest.mark.parametrize(
    "command",
    [
        "okstra completion bash",
        "okstra completion zsh > /tmp/okstra.bash",
        "okstra help",
        "okstra help team status",
        "okstra --version",
        "okstra --help",
        "okstra team status --json",
        "okstra user-response list",
        "okstra user response show --report R",
        "okstra worker probe --worker claude",
        "okstra stage map",
        "okstra config get backend",
        "okstra-config list --json",
        "okstra runs prune --older-than 30d --dry-run",
        "stage-merge --worker codex",
    ],
)
def test_read_only_okstra_subcommands_are_allowed_during_a_run(command):
    assert bash_policy.check(command, Asker()) is None, command


def test_runs_prune_that_removes_is_the_users_during_a_run():
    reason = bash_policy.check("okstra runs prune --older-than 30d", Asker())
    assert reason is not None and "--dry-run" in reason
