"""okstra as a Claude Code plugin: both manifests, the plugin's hooks and the settings
fragment hooks-install writes are checked against the shapes Claude Code reads
(schemas/claude-*.schema.json), always; `claude plugin validate --strict` runs as well
where claude is installed. One version everywhere; nothing user-specific in the plugin."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import okstra
from okstra.core import schemas
from okstra.harness import settings_merge

REPO = Path(__file__).resolve().parents[3]
PLUGIN = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
MARKETPLACE = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
HOOKS = json.loads((REPO / "hooks" / "hooks.json").read_text())
COMMANDS = sorted((REPO / "commands").glob("*.md"))


def test_the_manifests_and_the_hooks_match_the_schema_claude_code_reads(tmp_path):
    assert schemas.problems("claude-plugin", PLUGIN) == []
    assert schemas.problems("claude-marketplace", MARKETPLACE) == []
    assert schemas.problems("claude-hooks", HOOKS) == []
    # What hooks-install writes into settings files has the same shape.
    fragment = settings_merge.fragment(tmp_path, home=tmp_path, sandbox=True)
    assert schemas.problems("claude-hooks", {"hooks": fragment["hooks"]}) == []
    claude = shutil.which("claude")
    if claude:  # the real validator too, where it exists
        for target in (REPO, REPO / ".claude-plugin" / "marketplace.json"):
            done = subprocess.run([claude, "plugin", "validate", "--strict", str(target)], capture_output=True, text=True)
            assert done.returncode == 0, done.stdout + done.stderr


def test_the_schema_check_can_fail():
    assert schemas.problems("claude-plugin", {"name": "Okstra", "hooks": "hooks/hooks.json", "extra": 1})
    assert schemas.problems("claude-marketplace", {**MARKETPLACE, "plugins": [{"name": "okstra", "source": "."}]})
    assert schemas.problems("claude-hooks", {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command"}]}]}})


def test_one_version_everywhere():
    pyproject = (REPO / "pyproject.toml").read_text()
    assert PLUGIN["version"] == okstra.__version__
    assert [p["version"] for p in MARKETPLACE["plugins"]] == [okstra.__version__]
    assert 'version = {attr = "okstra.__version__"}' in pyproject


def test_the_marketplace_lists_this_plugin_from_its_own_root():
    assert [(p["name"], p["source"]) for p in MARKETPLACE["plugins"]] == [(PLUGIN["name"], "./")]


def test_every_plugin_hook_runs_a_shipped_executable_through_the_plugin_root():
    for entries in HOOKS["hooks"].values():
        for entry in entries:
            for handler in entry["hooks"]:
                match = re.fullmatch(r'"\$\{CLAUDE_PLUGIN_ROOT\}/(hooks/[a-z-]+)"', handler["command"])
                assert match, handler["command"]
                hook = REPO / match.group(1)
                assert hook.is_file() and hook.stat().st_mode & 0o111


def test_the_slash_commands_have_a_description_and_name_real_okstra_commands():
    assert [p.stem for p in COMMANDS] == ["end", "run", "status"]
    doors = {p.name for p in (REPO / "bin").iterdir()}
    for path in COMMANDS:
        text = path.read_text()
        front = text.split("---")[1]
        assert re.search(r"^description: \S", front, re.M), path
        for words in re.findall(r"`okstra ([a-z]+(?: [a-z]+)*)", text):
            parts = words.split()
            assert parts[0] == "help" or any("-".join(parts[:n]) in doors for n in (1, 2, 3)), f"{path.name}: okstra {words}"


def test_nothing_in_the_plugin_names_a_user_specific_path():
    files = [REPO / ".claude-plugin" / "plugin.json", REPO / ".claude-plugin" / "marketplace.json", REPO / "hooks" / "hooks.json"]
    for path in files + COMMANDS:
        assert not re.search(r"/home/|/root/|/Users/|~/", path.read_text()), path
