"""Merge okstra's hooks into a project's Claude Code settings, and take them out again.

okstra's hooks are the ones its Claude Code plugin ships (`hooks/hooks.json`,
the one definition of events, matchers and timeouts): the write-guard on
PreToolUse and the compact reminder on SessionStart (`compact`). In a settings
file each becomes a tiny `sh` line that carries no user-specific path
(`${OKSTRA_ROOT:-$HOME/.okstra}`, or `$HOME/...` for a prefix in the home
folder) and **allows** (exit 0, no output) when okstra is no longer installed:
a missing okstra never breaks the user's Claude Code. The line ends with the
shell comment `# okstra-hook`: that marker (or the command being one of this
prefix's hooks) is how okstra's handlers are told from the user's, wherever
they sit — never by position.

The file is `.claude/settings.local.json` (personal; kept out of git) unless
`shared`, then `.claude/settings.json`. The sandbox write allowances the worker
CLIs need (`templates/settings.template.json`) are added only with `sandbox`.
Everything the user has stays: other settings, other hooks (also on the same
event and matcher), their order, the file's indentation. Installing twice
gives the same bytes as once. What okstra added (allowances, a file it created)
is recorded per file in `.okstra/hooks-install.json`, so `--uninstall` removes
exactly that; and every project is listed in `$OKSTRA_ROOT/hook-projects.json`
so uninstalling okstra can take its hooks out of all of them. A settings file
that is not valid JSON, or whose `hooks`/`sandbox` are not shaped as Claude
Code reads them, is refused (exit 2) and left as is.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from okstra.core import fsio, git_exclude, home, settings
from okstra.core.errors import InputError
from okstra.model.layout import for_project

MARKER = "# okstra-hook"
OKSTRA_HOME = home.ROOT
PLUGIN_HOOKS = OKSTRA_HOME / "hooks" / "hooks.json"
TEMPLATE = OKSTRA_HOME / "templates" / "settings.template.json"
HOOK_NAMES = ("write-guard", "compact-reminder")
LOCAL = ".claude/settings.local.json"
SHARED = ".claude/settings.json"
SETTINGS_FILES = (LOCAL, SHARED)
_HOOK_NAME = re.compile(r"hooks/(" + "|".join(map(re.escape, HOOK_NAMES)) + r")\b")


@dataclass
class HooksChange:
    action: str
    project: Path
    settings_path: Path
    changed: bool
    prefix: Path
    hooks: list[dict[str, str]] = field(default_factory=list)
    allow_write: list[str] = field(default_factory=list)
    removed_file: bool = False
    git_excluded: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "project": str(self.project),
            "settings": str(self.settings_path),
            "changed": self.changed,
            "prefix": str(self.prefix),
            "hooks": self.hooks,
            "allowWrite": self.allow_write,
            "removedFile": self.removed_file,
            "gitExcluded": str(self.git_excluded) if self.git_excluded else None,
        }


# ---------------------------------------------------------------- the fragment


def root_expression(prefix: Path, home: Path) -> str:
    """How a hook line names `prefix` without a user-specific path (sh syntax, quoted)."""
    if prefix == home / ".okstra":
        return '"${OKSTRA_ROOT:-$HOME/.okstra}"'
    if prefix.is_relative_to(home) and prefix != home:
        return '"$HOME"/' + shlex.quote(prefix.relative_to(home).as_posix())
    return shlex.quote(str(prefix))


def hook_command(prefix: Path, name: str, home: Path) -> str:
    """The sh line for one hook: run it when installed, allow (exit 0, silent) when not."""
    return f'hook={root_expression(prefix, home)}/hooks/{name}; [ -x "$hook" ] || exit 0; exec "$hook" {MARKER}'


def fragment(prefix: Path, *, home: Path, sandbox: bool = False) -> dict[str, Any]:
    """okstra's settings: the plugin's hooks as sh lines into `prefix`, allowances with `sandbox`."""
    plugin = fsio.read_json(PLUGIN_HOOKS, what="plugin hooks")
    hooks: dict[str, list[dict[str, Any]]] = {}
    for event, entries in plugin["hooks"].items():
        for entry in entries:
            handlers = []
            for handler in entry["hooks"]:
                name = _hook_name(handler)
                if name:
                    handlers.append({**handler, "command": hook_command(prefix, name, home)})
            if handlers:
                hooks.setdefault(event, []).append({**entry, "hooks": handlers})
    doc: dict[str, Any] = {"hooks": hooks}
    if sandbox:
        doc["sandbox"] = fsio.read_json(TEMPLATE, what="settings template")["sandbox"]
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
    found = _HOOK_NAME.search(str(handler.get("command", "")))
    return found.group(1) if found else ""


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
    """The per-project record; a 1.0 record (one file, settings.json) reads as 2.0."""
    if not path.exists():
        return {"files": {}}
    try:
        record = fsio.read_json(path, what="hooks-install record")
    except InputError:
        return {"files": {}}
    if not isinstance(record, dict):
        return {"files": {}}
    if not isinstance(record.get("files"), dict):
        one = {k: record[k] for k in ("addedAllowWrite", "createdSettings") if k in record}
        record = {"prefix": record.get("prefix"), "files": {record.get("settings", SHARED): one}}
    return record


def _settings_target(project: Path, rel: str) -> tuple[Path, Path]:
    path = project / rel
    return path, (path.resolve() if path.is_symlink() else path)


def _load(path: Path, target: Path) -> tuple[str, dict[str, Any], bool]:
    exists = target.exists()
    text = fsio.read_text(target, what="settings file") if exists else ""
    doc = fsio.parse_json(text, str(path)) if text.strip() else {}
    _check_shape(doc, str(path))
    return text, doc, exists


def _check_prefix(prefix: Path) -> None:
    for name in HOOK_NAMES:
        hook = prefix / "hooks" / name
        if not (hook.is_file() and os.access(hook, os.X_OK)):
            raise InputError(
                f"--prefix: {hook} is missing or not executable", hint="pass an okstra install prefix (install.sh --prefix DIR)"
            )


def _project(project: Path) -> Path:
    if not Path(project).is_dir():
        raise InputError(f"--project: {project} is not a directory", hint="pass the project's root folder")
    return Path(project).resolve()


def apply(project: Path, prefix: Path, *, shared: bool = False, sandbox: bool = False) -> HooksChange:
    """Install okstra's hooks in `project`'s settings (local, or `shared`); `uninstall_project` undoes it."""
    project = _project(project)
    prefix = Path(prefix).resolve()
    _check_prefix(prefix)
    home = Path(os.path.expanduser("~")).resolve()
    rel = SHARED if shared else LOCAL
    settings_path, target = _settings_target(project, rel)
    record_path = for_project(project).hooks_install_record
    record = _read_record(record_path)
    text, current, exists = _load(settings_path, target)
    indent = _indent_of(text) if exists else 2
    okstra = fragment(prefix, home=home, sandbox=sandbox)
    paths = _hook_paths(prefix) | {str(Path(p) / "hooks" / n) for p in [record.get("prefix")] if p for n in HOOK_NAMES}
    mine = record["files"].get(rel, {})
    recorded_allow = [a for a in mine.get("addedAllowWrite", []) if isinstance(a, str)]
    doc, added = with_okstra(current, okstra, paths)
    ours = [a for a in recorded_allow if a in doc.get("sandbox", {}).get("filesystem", {}).get("allowWrite", [])]
    ours += [a for a in added if a not in ours]
    new_text = _serialize(doc, indent)
    outcome = HooksChange("install", project, settings_path, new_text != text, prefix, _listing(okstra), ours)
    files = dict(record["files"])
    files[rel] = {"addedAllowWrite": ours, "createdSettings": bool(mine.get("createdSettings")) or not exists}
    new_record = {"schemaVersion": "2.0", "prefix": str(prefix), "files": files}
    if outcome.changed:
        fsio.atomic_write(target, new_text)
    if new_record != record:
        fsio.write_json(record_path, new_record)
    if rel == LOCAL:
        # Claude Code keeps the personal file out of git when it creates it; okstra does the same.
        outcome.git_excluded = git_exclude.ensure_excluded(project, LOCAL)
    _register(project, prefix)
    return outcome


def uninstall_project(project: Path, prefix: Path | None = None) -> list[HooksChange]:
    """okstra's hooks (and the allowances it added) out of both settings files of `project`."""
    project = _project(project)
    record_path = for_project(project).hooks_install_record
    record = _read_record(record_path)
    prefix = Path(prefix or record.get("prefix") or OKSTRA_HOME).resolve()
    paths = _hook_paths(prefix) | {str(Path(p) / "hooks" / n) for p in [record.get("prefix")] if p for n in HOOK_NAMES}
    outcomes = []
    for rel in SETTINGS_FILES:
        settings_path, target = _settings_target(project, rel)
        mine = record["files"].get(rel, {})
        allow = [a for a in mine.get("addedAllowWrite", []) if isinstance(a, str)]
        outcome = HooksChange("uninstall", project, settings_path, False, prefix, [], allow)
        outcomes.append(outcome)
        if not target.exists():
            continue
        text, current, _ = _load(settings_path, target)
        doc = without_okstra(current, paths, allow)
        if doc == {} and mine.get("createdSettings"):
            target.unlink()
            outcome.changed = outcome.removed_file = True
            with contextlib.suppress(OSError):
                target.parent.rmdir()  # only when nothing else of the user's is in .claude/
        elif _serialize(doc, _indent_of(text)) != text:
            fsio.atomic_write(target, _serialize(doc, _indent_of(text)))
            outcome.changed = True
    _drop_record(record_path)
    _unregister(project)
    return outcomes


def _listing(okstra: dict[str, Any]) -> list[dict[str, str]]:
    return [
        {"event": event, "matcher": entry["matcher"], "command": h["command"]}
        for event, entries in okstra["hooks"].items()
        for entry in entries
        for h in entry["hooks"]
    ]


def _drop_record(path: Path) -> None:
    if path.exists():
        path.unlink()
    try:
        path.parent.rmdir()  # only when okstra's folder is left empty
    except OSError:
        pass


# ---------------------------------------------------------------- projects with okstra's hooks


def registry_path() -> Path:
    return settings.current().root / "hook-projects.json"


def _register(project: Path, prefix: Path) -> None:
    def mutate(doc: dict[str, Any]) -> bool:
        entry = {"project": str(project), "prefix": str(prefix)}
        if entry in doc["projects"]:
            return False
        doc["projects"] = [p for p in doc["projects"] if p.get("project") != str(project)] + [entry]
        return True

    fsio.update_json(registry_path(), mutate, default=lambda: {"schemaVersion": "1.0", "projects": []})


def _unregister(project: Path) -> None:
    path = registry_path()
    if not path.exists():
        return
    with fsio.locked(path):
        doc = fsio.read_json(path, what="hook projects")
        projects = doc.get("projects", []) if isinstance(doc, dict) else []
        kept = [p for p in projects if isinstance(p, dict) and p.get("project") != str(project)]
        if kept:
            if kept != projects:
                fsio.write_json(path, {**doc, "projects": kept})
            return
        path.unlink()
    # The last project is gone: leave okstra's home as install.sh found it.
    path.with_name(path.name + ".lock").unlink(missing_ok=True)


def registered_projects(prefix: Path) -> list[Path]:
    """Projects whose hooks point at `prefix`, as hooks-install recorded them."""
    path = registry_path()
    if not path.exists():
        return []
    doc = fsio.read_json(path, what="hook projects")
    prefix = Path(prefix).resolve()
    return [
        Path(p["project"])
        for p in doc.get("projects", [])
        if isinstance(p, dict) and isinstance(p.get("project"), str) and Path(str(p.get("prefix"))) == prefix
    ]


def uninstall_everywhere(prefix: Path) -> list[tuple[Path, list[HooksChange] | None]]:
    """Take `prefix`'s hooks out of every registered project (None: the project is gone)."""
    done: list[tuple[Path, list[HooksChange] | None]] = []
    for project in registered_projects(prefix):
        if project.is_dir():
            done.append((project, uninstall_project(project, prefix)))
        else:
            _unregister(project)
            done.append((project, None))
    return done
