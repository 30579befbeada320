"""`okstra config` (door `okstra-config`): read and change okstra's settings (DESIGN §11)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from okstra.core import cli, paths
from okstra.core.errors import InputError, ProblemsFound, UsageError
from okstra.run import config

PROG = "okstra-config"
ACTIONS = ("get", "set", "unset", "list")
ARITY = {"get": 1, "set": 2, "unset": 1, "list": 0}


def _root(args: argparse.Namespace, needed: bool) -> Path | None:
    if args.project_root is not None or needed:
        return paths.find_project_root(explicit=args.project_root)
    try:
        return paths.find_project_root()
    except InputError:
        return None  # outside a project: the global file (and the environment) only


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _print(values: list[config.Value], as_json: bool, single: bool) -> None:
    if as_json:
        cli.emit_json(values[0].to_dict() if single else [v.to_dict() for v in values])
        return
    for v in values:
        prefix = "" if single else f"{v.key} = "
        sys.stdout.write(f"{prefix}{_show(v.value)} (from {v.source})\n")


def _scoped(scope: str, root: Path | None) -> list[config.Value]:
    path = config.path_for(scope, root)
    return [config.Value(k, v, f"{scope} {path}") for k, v in config.read_file(path).items()]


def _run(args: argparse.Namespace) -> int:
    if args.action not in ACTIONS:
        raise UsageError(f"unknown action {args.action!r}", hint=f"use one of {', '.join(ACTIONS)}")
    if len(args.rest) != ARITY[args.action]:
        want = {0: "no argument", 1: "KEY", 2: "KEY VALUE"}[ARITY[args.action]]
        raise UsageError(f"config {args.action} takes {want}", hint=f"see '{PROG} --help'")
    if args.rest:
        config.check_key(args.rest[0], source=f"config {args.action}")
    writing = args.action in ("set", "unset")
    scope = args.scope or (config.PROJECT if writing else None)
    root = _root(args, needed=scope == config.PROJECT)

    if args.action == "set":
        from okstra.run import catalog

        value = config.set_value(scope, args.rest[0], args.rest[1], root, catalog=lambda: catalog.load(root))
        _print([value], args.json, single=True)
        return cli.EXIT_OK
    if args.action == "unset":
        removed = config.unset_value(scope, args.rest[0], root)
        path = config.path_for(scope, root)
        if args.json:
            cli.emit_json({"key": args.rest[0], "removed": removed, "file": str(path)})
        elif not removed:
            cli.say(PROG, f"{args.rest[0]} was not set in {path}")
        return cli.EXIT_OK
    if args.action == "list":
        values = _scoped(scope, root) if scope else config.effective_all(root)
        _print(values, args.json, single=False)
        return cli.EXIT_OK
    key = args.rest[0]
    found = [v for v in _scoped(scope, root) if v.key == key] if scope else [v for v in [config.effective(key, root)] if v]
    if not found:
        if args.json:
            cli.emit_json({"key": key, "value": None, "source": None})
            return cli.EXIT_NO
        raise ProblemsFound([f"{key} is not set" + (f" in the {scope} config" if scope else "")])
    _print(found, args.json, single=True)
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("action")
    parser.add_argument("rest", nargs="*")
    parser.add_argument("--scope", choices=config.SCOPES)
    parser.add_argument("--project-root")
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
