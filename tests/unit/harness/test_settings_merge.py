"""Merging okstra's hooks into real-world Claude Code settings files: everything the
user has stays, twice = once (byte-identical), uninstall removes only okstra's entries,
a malformed file is refused naming line and column and left untouched; the hook lines
carry no user-specific path and allow when okstra is gone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import tree_snapshot
from okstra.core.errors import InputError
from okstra.harness import settings_merge
from okstra.harness.settings_merge import MARKER, apply, uninstall_project

REPO = Path(__file__).resolve().parents[3]

# Shapes seen in the wild: permissions, env, model, other hooks on the same matcher
# and on other events, a sandbox with its own allowances, 4-space indentation.
REAL_WORLD = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "claude-sonnet-4-5",
    "permissions": {
        "allow": ["Bash(npm run lint)", "Bash(npm test:*)"],
        "deny": ["Read(./.env)", "Read(./secrets/**)"],
        "defaultMode": "acceptEdits",
    },
    "env": {"CLAUDE_CODE_ENABLE_TELEMETRY": "0", "NODE_ENV": "development"},
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Write|Edit|MultiEdit|NotebookEdit|Bash",
                "hooks": [{"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/check-style.sh', "timeout": 10}],
            },
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "jq -r .tool_input.command >> ~/.claude/bash-log.txt"}]},
        ],
        "PostToolUse": [
            {
                "matcher": "Edit|Write",
                "hooks": [{"type": "command", "command": 'npx prettier --write "$(jq -r .tool_input.file_path)"'}],
            }
        ],
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "cat .claude/welcome.md"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
    "sandbox": {
        "enabled": True,
        "filesystem": {"allowWrite": ["~/.kube", "~/.codex"], "denyRead": ["~/.ssh"]},
        "network": {"allowedDomains": ["registry.npmjs.org"]},
    },
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
}


@pytest.fixture
def prefix(tmp_path: Path) -> Path:
    """A stand-in okstra install: only its hooks/ matter here."""
    root = tmp_path / "okstra prefix"  # a space: commands must be quoted
    (root / "hooks").mkdir(parents=True)
    for name in settings_merge.HOOK_NAMES:
        hook = root / "hooks" / name
        hook.write_text("#!/bin/sh\nexit 0\n")
        hook.chmod(0o755)
    return root.resolve()


def line(prefix: Path, name: str) -> str:
    return f'hook={settings_merge.root_expression(prefix, Path.home())}/hooks/{name}; [ -x "$hook" ] || exit 0; exec "$hook" {MARKER}'


def settings_file(project: Path, doc=None, text: str | None = None, name: str = "settings.local.json") -> Path:
    path = project / ".claude" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text is not None else json.dumps(doc, indent=4) + "\n")
    return path


def okstra_handlers(doc: dict) -> list[tuple[str, str, str]]:
    return [
        (event, entry.get("matcher", ""), h["command"])
        for event, entries in doc.get("hooks", {}).items()
        for entry in entries
        for h in entry["hooks"]
        if h.get("command", "").endswith(MARKER)
    ]


def test_install_into_a_real_world_file_keeps_everything(project, prefix):
    path = settings_file(project, REAL_WORLD)
    outcome = apply(project, prefix, sandbox=True)
    assert outcome.changed
    doc = json.loads(path.read_text())
    q = f"hook='{prefix}'"
    tail = ' [ -x "$hook" ] || exit 0; exec "$hook" ' + MARKER
    assert okstra_handlers(doc) == [
        ("PreToolUse", "Write|Edit|MultiEdit|NotebookEdit|Bash", f"{q}/hooks/write-guard;{tail}"),
        ("SessionStart", "compact", f"{q}/hooks/compact-reminder;{tail}"),
    ]
    # Everything else is exactly what the user had.
    stripped = settings_merge.without_okstra(doc, set(), ["~/.gemini"])
    assert stripped == REAL_WORLD
    assert doc["hooks"]["PreToolUse"][:2] == REAL_WORLD["hooks"]["PreToolUse"]
    assert doc["sandbox"]["filesystem"]["allowWrite"] == ["~/.kube", "~/.codex", "~/.gemini"]
    assert path.read_text().startswith('{\n    "$schema"'), "the file's own indentation is kept"


def test_installing_twice_is_byte_identical_to_once(project, prefix):
    path = settings_file(project, REAL_WORLD)
    apply(project, prefix, sandbox=True)
    first = path.read_bytes()
    record = (project / ".okstra" / "hooks-install.json").read_bytes()
    assert apply(project, prefix, sandbox=True).changed is False
    assert path.read_bytes() == first
    assert (project / ".okstra" / "hooks-install.json").read_bytes() == record


def test_uninstall_removes_only_okstra_entries_and_only_allowances_okstra_added(project, prefix):
    path = settings_file(project, REAL_WORLD)
    before = path.read_text()
    apply(project, prefix, sandbox=True)
    outcomes = uninstall_project(project)
    assert [o.changed for o in outcomes] == [True, False]
    doc = json.loads(path.read_text())
    assert doc == REAL_WORLD, "~/.codex was the user's before okstra came: it stays"
    assert path.read_text() == before
    assert not (project / ".okstra").exists()


def test_a_missing_settings_file_is_created_and_removed_again(project, prefix):
    apply(project, prefix, shared=True, sandbox=True)
    path = project / ".claude" / "settings.json"
    doc = json.loads(path.read_text())
    assert set(doc) == {"hooks", "sandbox"}
    assert doc["sandbox"] == {"filesystem": {"allowWrite": ["~/.codex", "~/.gemini"]}}
    assert uninstall_project(project)[1].removed_file
    assert not path.exists() and not path.parent.exists()


def test_no_sandbox_allowance_without_asking(project, prefix):
    outcome = apply(project, prefix)
    doc = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert set(doc) == {"hooks"} and outcome.allow_write == []


def test_the_hook_line_names_the_prefix_without_a_user_specific_path(tmp_path):
    home = tmp_path / "home"
    assert settings_merge.root_expression(home / ".okstra", home) == '"${OKSTRA_ROOT:-$HOME/.okstra}"'
    assert settings_merge.root_expression(home / "tools" / "ok stra", home) == "\"$HOME\"/'tools/ok stra'"
    assert settings_merge.root_expression(Path("/opt/okstra"), home) == "/opt/okstra"


def test_the_hook_line_allows_silently_when_okstra_is_gone(tmp_path):
    import subprocess

    gone = settings_merge.hook_command(tmp_path / "nowhere", "write-guard", tmp_path)
    done = subprocess.run(["sh", "-c", gone], input='{"tool_name":"Write"}', capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_record_from_before_local_settings_still_uninstalls_the_shared_file(project, prefix):
    path = settings_file(project, {"hooks": {}}, name="settings.json")
    old = {"type": "command", "command": f"'{prefix}/hooks/write-guard' {MARKER}"}
    path.write_text(
        json.dumps(
            {
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [old]}]},
                "sandbox": {"filesystem": {"allowWrite": ["~/.codex"]}},
            }
        )
    )
    record = {
        "schemaVersion": "1.0",
        "prefix": str(prefix),
        "settings": ".claude/settings.json",
        "addedAllowWrite": ["~/.codex"],
        "createdSettings": True,
    }
    (project / ".okstra").mkdir()
    (project / ".okstra" / "hooks-install.json").write_text(json.dumps(record))
    assert uninstall_project(project)[1].removed_file


def test_a_user_addition_after_install_survives_uninstall(project, prefix):
    apply(project, prefix)
    path = project / ".claude" / "settings.local.json"
    doc = json.loads(path.read_text())
    doc["hooks"]["SessionStart"][0]["hooks"].append({"type": "command", "command": "echo mine"})
    doc["permissions"] = {"allow": ["Bash(ls)"]}
    path.write_text(json.dumps(doc, indent=2) + "\n")
    uninstall_project(project)
    after = json.loads(path.read_text())
    assert after == {
        "hooks": {"SessionStart": [{"matcher": "compact", "hooks": [{"type": "command", "command": "echo mine"}]}]},
        "permissions": {"allow": ["Bash(ls)"]},
    }


def test_okstra_entries_are_found_by_marker_not_position_and_moved_prefixes_are_replaced(project, prefix, tmp_path):
    old = {"type": "command", "command": f"/old/okstra/hooks/write-guard {MARKER}", "timeout": 30}
    doc = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": "mine-1"}, old, {"type": "command", "command": "mine-2"}],
                },
                {"matcher": "Write", "hooks": [{"type": "command", "command": "mine-3"}]},
            ]
        }
    }
    path = settings_file(project, doc)
    apply(project, prefix)
    after = json.loads(path.read_text())
    entries = after["hooks"]["PreToolUse"]
    assert [h["command"] for h in entries[0]["hooks"]] == ["mine-1", line(prefix, "write-guard"), "mine-2"]
    assert entries[0]["matcher"] == "Bash", "a user's entry keeps the user's matcher"
    assert len(entries) == 2, "replaced in place, not appended a second time"


def test_an_unmarked_handler_of_this_prefix_is_recognised(project, prefix):
    doc = {
        "hooks": {
            "PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": f"'{prefix}/hooks/write-guard'"}]}]
        }
    }
    path = settings_file(project, doc)
    apply(project, prefix)
    entries = json.loads(path.read_text())["hooks"]["PreToolUse"]
    assert len(entries) == 1 and entries[0]["matcher"] == "Write|Edit|MultiEdit|NotebookEdit|Bash"


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{\n  "hooks": {\n    "PreToolUse": [\n  }\n}\n', "line 4 column 3"),
        ('{"permissions": {"allow": ["Bash(ls)",]}}', "line 1 column 39"),
        ("", None),
    ],
)
def test_a_malformed_settings_file_is_refused_naming_line_and_column_and_left_untouched(project, prefix, text, where):
    path = settings_file(project, text=text)
    if where is None:  # an empty file is simply empty settings
        apply(project, prefix)
        return
    before = tree_snapshot(project)
    with pytest.raises(InputError, match=rf"{path}: not valid JSON at {where}"):
        apply(project, prefix)
    assert tree_snapshot(project) == before


@pytest.mark.parametrize(
    ("doc", "what"),
    [
        ([], "must be a JSON object"),
        ({"hooks": []}, "'hooks' must be an object"),
        ({"hooks": {"PreToolUse": {}}}, "hooks.PreToolUse must be a list"),
        ({"hooks": {"PreToolUse": [{"matcher": "x", "hooks": "cmd"}]}}, r"hooks.PreToolUse\[0\].hooks must be a list"),
        ({"sandbox": {"filesystem": {"allowWrite": "~/.codex"}}}, "allowWrite must be a list"),
    ],
)
def test_a_settings_file_of_the_wrong_shape_is_refused_and_untouched(project, prefix, doc, what):
    settings_file(project, doc)
    before = tree_snapshot(project)
    with pytest.raises(InputError, match=what):
        apply(project, prefix)
    assert tree_snapshot(project) == before


def test_a_prefix_without_hooks_is_refused(project, tmp_path):
    with pytest.raises(InputError, match="missing or not executable"):
        apply(project, tmp_path)


def test_a_symlinked_settings_file_is_written_through(project, prefix, tmp_path):
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text('{"model": "opus"}\n')
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").symlink_to(real)
    apply(project, prefix)
    assert (project / ".claude" / "settings.local.json").is_symlink()
    assert json.loads(real.read_text())["model"] == "opus" and okstra_handlers(json.loads(real.read_text()))


def test_the_plugin_hooks_are_the_one_definition_and_name_shipped_hooks(tmp_path):
    plugin = json.loads((REPO / "hooks" / "hooks.json").read_text())
    doc = settings_merge.fragment(tmp_path, home=tmp_path)
    for event, entries in doc["hooks"].items():
        for entry in entries:
            assert entry in [
                {**e, "hooks": [{**h, "command": h2["command"]} for h, h2 in zip(e["hooks"], entry["hooks"], strict=True)]}
                for e in plugin["hooks"][event]
            ]
    names = [settings_merge._hook_name(h) for entries in doc["hooks"].values() for e in entries for h in e["hooks"]]
    assert names == list(settings_merge.HOOK_NAMES)
    for name in names:
        assert (REPO / "hooks" / name).is_file()
    template = json.loads((REPO / "templates" / "settings.template.json").read_text())
    assert template == {"sandbox": {"filesystem": {"allowWrite": ["~/.codex", "~/.gemini"]}}}
