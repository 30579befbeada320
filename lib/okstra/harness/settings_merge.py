"""Merge okstra's hooks into a project's `.claude/settings.json`, and take them out again.

okstra's part is `templates/settings.template.json`: the write-guard on
PreToolUse (`Write|Edit|MultiEdit|NotebookEdit|Bash`), the compact reminder on
SessionStart (`compact`), and sandbox write allowances for the worker CLIs'
homes (`~/.codex`, `~/.gemini`). Hook commands point at an installed prefix by
absolute path and end with the shell comment `# okstra-hook`: that marker (or
the command being one of this prefix's hooks) is how okstra's handlers are
told from the user's, wherever they sit — never by position.

Everything the user has stays: other settings, other hooks (also on the same
event and matcher), their order, the file's indentation. Installing twice
gives the same bytes as once. Which sandbox allowances okstra added (and
whether it created the file) is recorded in `.okstra/hooks-install.json`, so
`--uninstall` removes exactly those and leaves a `~/.codex` the user had
before. A settings file that is not valid JSON, or whose `hooks`/`sandbox`
are not shaped as Claude Code reads them, is refused (exit 2) and left as is.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from okstra.core import fsio
from okstra.core.errors import InputError
from okstra.model.layout import for_project

MARKER = "# okstra-hook"
PLACEHOLDER = "@PREFIX@"
TEMPLATE = Path(__file__).resolve().parents[3] / "templates" / "settings.template.json"
HOOK_NAMES = ("write-guard", "compact-reminder")


@dataclass
class Outcome:
    action: str
    settings_path: Path
    changed: bool
    prefix: Path
    hooks: list[dict[str, str]] = field(default_factory=list)
    allow_write: list[str] = field(default_factory=list)
    removed_file: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "settings": str(self.settings_path),
            "changed": self.changed,
            "prefix": str(self.prefix),
            "hooks": self.hooks,
            "allowWrite": self.allow_write,
            "removedFile": self.removed_file,
        }


# ---------------------------------------------------------------- the fragment


def fragment(prefix: Path, template: Path = TEMPLATE) -> dict[str, Any]:
    """okstra's settings with each hook command pointing into `prefix`."""
    doc = fsio.read_json(template, what="settings template")
    for entries in doc.get("hooks", {}).values():
        for entry in entries:
            for handler in entry["hooks"]:
                path = handler["command"].split(" # ", 1)[0].replace(PLACEHOLDER, str(prefix))
                handler["command"] = f"{shlex.quote(path)} {MARKER}"
    return doc


def _hook_paths(prefix: Path) -> set[str]:
    return {str(prefix / "hooks" / name) for name in HOOK_NAMES}


def is_okstra_handler(handler: Any, hook_paths: set[str]) -> bool:
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    command = handler["command"]
    if command.rstrip().endswith(MARKER):
        return True
    try:
        first = shlex.split(command)[0] if command.strip() else ""
    except ValueError:
        return False
    return first in hook_paths


def _hook_name(handler: dict[str, Any]) -> str:
    try:
        first = shlex.split(handler["command"].split(" # ", 1)[0])[0]
    except (ValueError, IndexError):
        return ""
    return os.path.basename(first)


# ---------------------------------------------------------------- pure merges


def _check_shape(settings: Any, source: str) -> None:
    if not isinstance(settings, dict):
        raise InputError(
            f"{source}: the settings must be a JSON object, not {type(settings).__name__}", hint="fix the file and run again"
        )
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InputError(f"{source}: 'hooks' must be an object of event -> list", hint="fix the file and run again")
    for event, entries in hooks.items():
        if not isinstance(entries, list):
            raise InputError(f"{source}: hooks.{event} must be a list of matcher entries", hint="fix the file and run again")
        for i, entry in enumerate(entries):
            if isinstance(entry, dict) and "hooks" in entry and not isinstance(entry["hooks"], list):
                raise InputError(f"{source}: hooks.{event}[{i}].hooks must be a list", hint="fix the file and run again")
    sandbox = settings.get("sandbox", {})
    if not isinstance(sandbox, dict) or not isinstance(sandbox.get("filesystem", {}), dict):
        raise InputError(f"{source}: 'sandbox' and 'sandbox.filesystem' must be objects", hint="fix the file and run again")
    if not isinstance(sandbox.get("filesystem", {}).get("allowWrite", []), list):
        raise InputError(f"{source}: sandbox.filesystem.allowWrite must be a list", hint="fix the file and run again")


def without_okstra(settings: dict[str, Any], hook_paths: set[str], allow_write: list[str]) -> dict[str, Any]:
    """`settings` with every okstra hook handler and the given allowances taken out.

    An entry, event or section is dropped only when okstra's removal emptied it."""
    doc = copy.deepcopy(settings)
    hooks = doc.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            kept_entries = []
            for entry in hooks[event]:
                handlers = entry.get("hooks") if isinstance(entry, dict) else None
                if not isinstance(handlers, list):
                    kept_entries.append(entry)
                    continue
                kept = [h for h in handlers if not is_okstra_handler(h, hook_paths)]
                if kept or not handlers or len(kept) == len(handlers):
                    kept_entries.append({**entry, "hooks": kept} if len(kept) != len(handlers) else entry)
            if kept_entries or not hooks[event]:
                hooks[event] = kept_entries
            else:
                del hooks[event]
        if not hooks and settings.get("hooks"):
            del doc["hooks"]
    sandbox = doc.get("sandbox")
    if isinstance(sandbox, dict) and isinstance(sandbox.get("filesystem"), dict):
        filesystem = sandbox["filesystem"]
        allow = filesystem.get("allowWrite")
        if isinstance(allow, list) and any(a in allow_write for a in allow):
            filesystem["allowWrite"] = [a for a in allow if a not in allow_write]
            if not filesystem["allowWrite"]:
                del filesystem["allowWrite"]
                if not filesystem:
                    del sandbox["filesystem"]
                    if not sandbox:
                        del doc["sandbox"]
    return doc


def with_okstra(settings: dict[str, Any], okstra: dict[str, Any], hook_paths: set[str]) -> tuple[dict[str, Any], list[str]]:
    """`settings` with okstra's hooks in place and its allowances present.

    An okstra handler already there (this prefix or another, marked or by path) is
    replaced where it stands; duplicates and okstra handlers okstra no longer ships
    are dropped; a hook not yet there is appended as its own matcher entry. Returns
    the document and the allowances that had to be added."""
    doc = copy.deepcopy(settings)
    hooks = doc.setdefault("hooks", {})
    wanted: dict[str, tuple[str, str, dict[str, Any]]] = {}
    for event, entries in okstra.get("hooks", {}).items():
        for entry in entries:
            for handler in entry["hooks"]:
                wanted[_hook_name(handler)] = (event, entry["matcher"], handler)
    placed: set[str] = set()
    for event in list(hooks):
        kept = []
        for entry in hooks[event]:
            handlers = entry.get("hooks") if isinstance(entry, dict) else None
            if not isinstance(handlers, list) or not any(is_okstra_handler(h, hook_paths) for h in handlers):
                kept.append(entry)
                continue
            only_okstra = all(is_okstra_handler(h, hook_paths) for h in handlers)
            fresh = []
            for handler in handlers:
                if not is_okstra_handler(handler, hook_paths):
                    fresh.append(handler)
                    continue
                name = _hook_name(handler)
                if name in wanted and name not in placed and wanted[name][0] == event:
                    fresh.append(wanted[name][2])
                    placed.add(name)
                    if only_okstra:
                        entry = {**entry, "matcher": wanted[name][1]}
            if fresh:
                kept.append({**entry, "hooks": fresh})
        if kept or not hooks[event]:
            hooks[event] = kept
        else:
            del hooks[event]
    for name, (event, matcher, handler) in wanted.items():
        if name not in placed:
            hooks.setdefault(event, []).append({"matcher": matcher, "hooks": [handler]})
    added: list[str] = []
    want_allow = okstra.get("sandbox", {}).get("filesystem", {}).get("allowWrite", [])
    if want_allow:
        filesystem = doc.setdefault("sandbox", {}).setdefault("filesystem", {})
        allow = filesystem.setdefault("allowWrite", [])
        for item in want_allow:
            if item not in allow:
                allow.append(item)
                added.append(item)
    return doc, added


# ---------------------------------------------------------------- the file


def _indent_of(text: str) -> int | str:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def _serialize(doc: dict[str, Any], indent: int | str) -> str:
    return json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"


def _read_record(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        record = fsio.read_json(path, what="hooks-install record")
    except InputError:
        return {}
    return record if isinstance(record, dict) else {}


def apply(project: Path, prefix: Path, *, uninstall: bool = False) -> Outcome:
    """Install (or with `uninstall`, remove) okstra's hooks in `project`/.claude/settings.json."""
    project = Path(project)
    if not project.is_dir():
        raise InputError(f"--project: {project} is not a directory", hint="pass the project's root folder")
    project = project.resolve()
    prefix = Path(prefix).resolve()
    for name in HOOK_NAMES:
        hook = prefix / "hooks" / name
        if not (hook.is_file() and os.access(hook, os.X_OK)):
            raise InputError(
                f"--prefix: {hook} is missing or not executable", hint="pass an okstra install prefix (install.sh --prefix DIR)"
            )
    settings_path = project / ".claude" / "settings.json"
    target = settings_path.resolve() if settings_path.is_symlink() else settings_path
    record_path = for_project(project).hooks_install_record
    record = _read_record(record_path)
    exists = target.exists()
    text = fsio.read_text(target, what="settings file") if exists else ""
    settings = fsio.parse_json(text, str(settings_path)) if text.strip() else {}
    _check_shape(settings, str(settings_path))
    indent = _indent_of(text) if exists else 2
    paths = _hook_paths(prefix) | {str(Path(p) / "hooks" / n) for p in [record.get("prefix")] if p for n in HOOK_NAMES}
    okstra = fragment(prefix)
    recorded_allow = [a for a in record.get("addedAllowWrite", []) if isinstance(a, str)]
    hooks_list = [
        {"event": event, "matcher": entry["matcher"], "command": h["command"]}
        for event, entries in okstra["hooks"].items()
        for entry in entries
        for h in entry["hooks"]
    ]
    if uninstall:
        doc = without_okstra(settings, paths, recorded_allow)
        outcome = Outcome("uninstall", settings_path, False, prefix, hooks_list, recorded_allow)
        if not exists:
            _drop_record(record_path)
            return outcome
        if doc == {} and record.get("createdSettings"):
            target.unlink()
            outcome.changed = outcome.removed_file = True
        elif _serialize(doc, indent) != text:
            fsio.atomic_write(target, _serialize(doc, indent))
            outcome.changed = True
        _drop_record(record_path)
        return outcome
    doc, added = with_okstra(settings, okstra, paths)
    ours = [a for a in recorded_allow if a in doc.get("sandbox", {}).get("filesystem", {}).get("allowWrite", [])]
    ours += [a for a in added if a not in ours]
    new_text = _serialize(doc, indent)
    outcome = Outcome("install", settings_path, new_text != text, prefix, hooks_list, ours)
    new_record = {
        "schemaVersion": "1.0",
        "prefix": str(prefix),
        "settings": ".claude/settings.json",
        "addedAllowWrite": ours,
        "createdSettings": bool(record.get("createdSettings")) or not exists,
    }
    if outcome.changed:
        fsio.atomic_write(target, new_text)
    if new_record != record:
        fsio.write_json(record_path, new_record)
    return outcome


def _drop_record(path: Path) -> None:
    if path.exists():
        path.unlink()
    try:
        path.parent.rmdir()  # only when okstra's folder is left empty
    except OSError:
        pass
