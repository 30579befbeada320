"""okstra's config (DESIGN §11): global `~/.okstra/config.yaml`, project `.okstra/config.yaml`.

Effective value of a key, highest first: the environment knob (when the key
has one), the project file, the global file, the built-in default. `get`
reports the value together with where it came from.

Known keys (anything else is refused naming these):

- `default-workers`   comma-separated provider ids, e.g. `claude,codex`   (env OKSTRA_DEFAULT_WORKERS)
- `default-executor`  one provider id, the implementer                      (env OKSTRA_DEFAULT_EXECUTOR)
- `backend`           cli-wrapper | tmux-pane | cmux-pane                   (env OKSTRA_DEFAULT_BACKEND);
                      built-in default: tmux-pane inside tmux ($TMUX set), else cli-wrapper
- `report-language`   a language tag such as `ko` or `pt-BR`                (env OKSTRA_REPORT_LANGUAGE)
- `pr-template-path`  a project-relative path to the pull-request template
- `providers`         catalog overrides (edit the file; `set` refuses it); `prices` per model too
- `budget-usd`        the spend budget of each new run in USD, e.g. `5` (render-bundle --budget-usd wins)
- `failover`          per role, the providers to try in order when a worker hits a rate limit, e.g.
                      `analyst: [claude, codex, antigravity]` (team-dispatch --failover; edit the file)

YAML is read with a safe loader that keeps every scalar a string except
null: YAML 1.1 would turn `report-language: no` (Norwegian) into False and
`1.10` into 1.1. Writes are atomic, under the file's lock.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core import fsio, memo, schemas, settings
from okstra.core.errors import InputError, RefusedError
from okstra.model.catalog import Catalog
from okstra.model.run_manifest import BACKENDS

GLOBAL = "global"
PROJECT = "project"
SCOPES = (GLOBAL, PROJECT)

_PROVIDER_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")


@dataclass(frozen=True)
class Key:
    name: str
    meaning: str
    env: str | None = None
    settable: bool = True


KEYS: dict[str, Key] = {
    k.name: k
    for k in (
        Key("default-workers", "comma-separated provider ids of the default roster", "OKSTRA_DEFAULT_WORKERS"),
        Key("default-executor", "provider id of the implementer (executor)", "OKSTRA_DEFAULT_EXECUTOR"),
        Key("backend", f"terminal backend: {' | '.join(BACKENDS)}", "OKSTRA_DEFAULT_BACKEND"),
        Key("report-language", "language tag of the translated report, e.g. ko", "OKSTRA_REPORT_LANGUAGE"),
        Key("pr-template-path", "project-relative path of the pull-request template"),
        Key("providers", "provider catalog overrides (edit the file)", settable=False),
        Key("budget-usd", "spend budget of each new run in USD (render-bundle --budget-usd wins)"),
        Key("failover", "per role, providers to fail over to on a rate limit (edit the file)", settable=False),
        Key(
            "allowed-commands",
            "Bash commands the write-guard allows during a run, Claude Code style ('make test', "
            "'npm run build:*'); a list, or {all: [...], stage-N: [...]} (edit the file)",
            settable=False,
        ),
    )
}


def _defaults() -> dict[str, str]:
    """Built-in defaults; the backend follows where the lead runs (panes inside tmux)."""
    return {"backend": "tmux-pane" if os.environ.get("TMUX") else "cli-wrapper"}


def _known() -> str:
    return ", ".join(KEYS)


def check_key(name: str, *, source: str = "key") -> Key:
    if name not in KEYS:
        raise InputError(f"{source}: unknown config key {name!r}", hint=f"known keys: {_known()}")
    return KEYS[name]


def check_value(name: str, value: Any, *, source: str) -> Any:
    """The value, normalised; refused (exit 2) when it does not fit the key."""
    if name == "providers":
        if not isinstance(value, Mapping):
            raise InputError(f"{source}: providers must be a mapping of provider id to entry")
        return value
    if name == "failover":
        return check_failover(value, source)
    if name == "allowed-commands":
        return _allowed_commands(value, source)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{source}: {name} must be a non-empty string, got {value!r}")
    text = value.strip()
    if name == "default-workers":
        ids = [w.strip() for w in text.split(",")]
        bad = [w for w in ids if not _PROVIDER_ID.match(w)]
        if bad:
            raise InputError(
                f"{source}: default-workers {text!r} holds {bad[0]!r}, not a provider id", hint="use e.g. claude,codex"
            )
        if len(set(ids)) != len(ids):
            raise InputError(f"{source}: default-workers {text!r} names a provider twice")
        return ",".join(ids)
    if name == "default-executor":
        if not _PROVIDER_ID.match(text):
            raise InputError(f"{source}: default-executor {text!r} is not a provider id", hint="use e.g. codex")
        return text
    if name == "backend":
        if text not in BACKENDS:
            raise InputError(f"{source}: backend {text!r} is not a backend", hint=f"allowed: {', '.join(BACKENDS)}")
        return text
    if name == "report-language":
        if not _LANGUAGE.match(text):
            raise InputError(f"{source}: report-language {text!r} is not a language tag", hint="use e.g. ko, en, pt-BR")
        return text
    if name == "budget-usd":
        if not re.fullmatch(r"[0-9]{1,7}(\.[0-9]{1,6})?", text):
            raise InputError(f"{source}: budget-usd {text!r} is not an amount of USD", hint="use e.g. 5 or 12.50")
        return text
    if name == "pr-template-path":
        if "\x00" in text or Path(text).is_absolute() or ".." in Path(text).parts:
            raise InputError(
                f"{source}: pr-template-path {text!r} must be a path inside the project",
                hint="use e.g. .github/pull_request_template.md",
            )
        return text
    raise InputError(f"{source}: unknown config key {name!r}", hint=f"known keys: {_known()}")


def check_failover(value: Any, source: str) -> dict[str, list[str]]:
    """`failover:` maps a role to the providers to try, in order, e.g. analyst: [claude, codex]."""
    from okstra.model.roles import ROLES

    if not isinstance(value, Mapping):
        raise InputError(f"{source}: failover must map a role to a list of provider ids", hint="e.g. analyst: [claude, codex]")
    out: dict[str, list[str]] = {}
    for role, providers in value.items():
        if role not in ROLES:
            raise InputError(f"{source}: failover.{role}: not a role", hint=f"roles: {', '.join(ROLES)}")
        if (
            not isinstance(providers, list)
            or not providers
            or not all(isinstance(p, str) and _PROVIDER_ID.match(p) for p in providers)
        ):
            raise InputError(
                f"{source}: failover.{role} must be a list of provider ids", hint="e.g. [claude, codex, antigravity]"
            )
        if len(set(providers)) != len(providers):
            raise InputError(f"{source}: failover.{role} names a provider twice")
        out[str(role)] = list(providers)
    return out


def _allowed_commands(value: Any, source: str) -> dict[str, list[str]]:
    """{"all": [...], "stage-N": [...]}: each entry one command line (no newline, NUL or `:*`
    anywhere but the end, which is Claude Code's prefix marker)."""
    groups = {"all": value} if isinstance(value, list) else value
    if not isinstance(groups, Mapping):
        raise InputError(f"{source}: allowed-commands must be a list of commands or a mapping all/stage-N -> list")
    out: dict[str, list[str]] = {}
    for group, entries in groups.items():
        if group != "all" and not re.fullmatch(r"stage-[1-9][0-9]*", str(group)):
            raise InputError(f"{source}: allowed-commands group {group!r} is not 'all' or 'stage-N'")
        if not isinstance(entries, list) or not all(isinstance(e, str) and e.strip() for e in entries):
            raise InputError(f"{source}: allowed-commands {group} must be a list of non-empty strings")
        for entry in entries:
            if any(c in entry for c in "\n\r\x00") or ":*" in entry.rstrip()[:-2]:
                raise InputError(
                    f"{source}: allowed-commands entry {entry!r} is not one command line", hint="e.g. make test, npm run build:*"
                )
        out[str(group)] = [e.strip() for e in entries]
    return out


def allowed_commands(project_root: Path | None, stage: int | None) -> tuple[str, ...]:
    """The commands every layer allows for this run: `all`, plus `stage-N` for stage N."""
    found: list[str] = []
    for _, values in layers(project_root):
        groups = values.get("allowed-commands") or {}
        found += groups.get("all", [])
        if stage is not None:
            found += groups.get(f"stage-{stage}", [])
    return tuple(dict.fromkeys(found))


# --- reading ---------------------------------------------------------------


@functools.cache
def _loader() -> type:
    """A safe loader that resolves no bool/int/float/timestamp: scalars stay strings.
    libyaml's (C) loader when PyYAML was built with it: it parses the provider catalog about
    ten times faster than the pure-Python one, and every run command reads the catalog."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    keep = {"tag:yaml.org,2002:null"}
    resolvers = {
        ch: [(tag, rx) for tag, rx in found if tag in keep] for ch, found in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return type("StringLoader", (base,), {"yaml_implicit_resolvers": resolvers})


# What a parse depends on besides the text: the loader's rules. Change it with them, so
# memos of parses under the old rules are not found.
_YAML_RULES = b"okstra-yaml 1: scalars stay strings, null kept, aliases refused"


def parse_yaml(text: str, source: str) -> Any:
    """Parse YAML safely; errors name the source and the line. A parse is remembered
    (`core.memo`, kind "yaml"), so a file read again unchanged costs no PyYAML import."""
    name = memo.key(b"yaml", _YAML_RULES, text.encode("utf-8", "surrogatepass"))
    found, document = memo.recall("yaml", name)
    if found:
        return document
    document = _parse_yaml(text, source)
    if _json_exact(document):
        memo.keep("yaml", name, document)
    return document


def _json_exact(document: Any) -> bool:
    """True when JSON holds `document` exactly (a null or non-text key would come back as text)."""
    try:
        return json.loads(json.dumps(document)) == document
    except (TypeError, ValueError):
        return False


def _parse_yaml(text: str, source: str) -> Any:
    """Aliases (*name) are refused: a config needs none, and expanding them ("billion
    laughs") can take all memory (DESIGN §14)."""
    import yaml

    try:
        if "*" in text:
            for event in yaml.parse(text, Loader=_loader()):
                if isinstance(event, yaml.AliasEvent):
                    raise yaml.composer.ComposerError(
                        None, None, "aliases (*name) are not allowed in okstra's config", event.start_mark
                    )
        return yaml.load(text, Loader=_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{source}: not valid YAML{where}: {problem}", hint="fix the file and run again") from None


def read_file(path: Path) -> dict[str, Any]:
    """One config file as a mapping ({} when absent); every known key validated."""
    path = Path(path)
    if not path.exists():
        return {}
    doc = parse_yaml(fsio.read_text(path, what="config file"), str(path))
    if doc is None:
        return {}
    if not isinstance(doc, Mapping):
        raise InputError(f"{path}: a config file must be a mapping of key: value")
    out: dict[str, Any] = {}
    for name, value in doc.items():
        check_key(str(name), source=str(path))
        if value is not None:
            out[str(name)] = check_value(str(name), value, source=f"{path}: {name}")
    found = schemas.problems("config", out, remember=True)
    if found:
        raise InputError(f"{path}: {found[0]}", hint=f"known keys: {_known()}")
    return out


def global_path() -> Path:
    return settings.current().root.expanduser() / "config.yaml"


def project_path(project_root: Path) -> Path:
    from okstra.model import layout

    return layout.for_project(project_root).config


def path_for(scope: str, project_root: Path | None) -> Path:
    if scope == GLOBAL:
        return global_path()
    if project_root is None:
        raise InputError("--scope project needs a project", hint="run inside a git repository or pass --project-root DIR")
    return project_path(project_root)


@dataclass(frozen=True)
class Value:
    key: str
    value: Any
    source: str  # "env OKSTRA_…", a config file path, or "default"

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value, "source": self.source}


def layers(project_root: Path | None) -> list[tuple[str, dict[str, Any]]]:
    """Config layers, lowest precedence first: (source, values)."""
    found = [("global " + str(global_path()), read_file(global_path()))]
    if project_root is not None:
        found.append(("project " + str(project_path(project_root)), read_file(project_path(project_root))))
    return found


def effective(name: str, project_root: Path | None, *, files: list[tuple[str, dict[str, Any]]] | None = None) -> Value | None:
    """The value of `name` as okstra will use it and where it came from (None when unset)."""
    key = check_key(name)
    if key.env:
        raw = settings.knob(key.env)
        if raw is not None and raw.strip():
            return Value(name, check_value(name, raw, source=f"environment {key.env}"), f"env {key.env}")
    for source, values in reversed(files if files is not None else layers(project_root)):
        if name in values:
            return Value(name, values[name], source)
    defaults = _defaults()
    if name in defaults:
        return Value(name, defaults[name], "default")
    return None


def effective_all(project_root: Path | None) -> list[Value]:
    files = layers(project_root)
    return [v for name in KEYS if (v := effective(name, project_root, files=files)) is not None]


def providers_overrides(project_root: Path | None) -> list[tuple[str, Mapping[str, Any]]]:
    """The `providers:` blocks of the global then the project file, with their file paths."""
    found = [(str(global_path()), read_file(global_path()).get("providers"))]
    if project_root is not None:
        found.append((str(project_path(project_root)), read_file(project_path(project_root)).get("providers")))
    return [(source, block) for source, block in found if block]


# --- writing ---------------------------------------------------------------


def _write(path: Path, change: Any) -> None:
    import yaml

    with fsio.locked(path):
        current: dict[str, Any] = {}
        if path.exists():
            doc = parse_yaml(fsio.read_text(path, what="config file"), str(path))
            if doc is not None and not isinstance(doc, Mapping):
                raise InputError(f"{path}: a config file must be a mapping of key: value")
            current = dict(doc or {})
        if change(current):
            text = yaml.safe_dump(current, sort_keys=False, allow_unicode=True, default_flow_style=False)
            fsio.atomic_write(path, text)


def set_value(scope: str, name: str, value: str, project_root: Path | None, *, catalog: Callable[[], Catalog]) -> Value:
    """Write one key; `catalog` (called only for a key naming providers) knows the provider ids."""
    key = check_key(name)
    if not key.settable:
        raise RefusedError(
            f"{name} is edited in the file, not with okstra config set", hint=f"edit {path_for(scope, project_root)}"
        )
    normal = check_value(name, value, source=f"value of {name}")
    if name in ("default-workers", "default-executor"):
        known = catalog()
        for provider_id in normal.split(","):
            known.provider(provider_id, f"value of {name}")
    path = path_for(scope, project_root)

    def change(doc: dict[str, Any]) -> bool:
        if doc.get(name) == normal:
            return False
        doc[name] = normal
        return True

    _write(path, change)
    return Value(name, normal, f"{scope} {path}")


def unset_value(scope: str, name: str, project_root: Path | None) -> bool:
    """Remove `name` from one scope's file; True when it was there."""
    check_key(name)
    path = path_for(scope, project_root)
    if not path.exists():
        return False
    removed: list[bool] = []

    def change(doc: dict[str, Any]) -> bool:
        removed.append(name in doc)
        doc.pop(name, None)
        return removed[0]

    _write(path, change)
    return removed[0]
