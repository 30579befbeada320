"""The house's floors (DESIGN §1): imports run down only, and nothing imports in a circle.

core ← model ← run / team / report / harness ← commands. A domain never
imports another domain; a command that needs two asks one and passes the
answer to the other. Every import counts, the ones inside functions too
(they are how a cycle hides).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[2] / "lib"
PACKAGE = LIB / "okstra"

# The floor of each top-level package, lowest first; a module may import its own
# package and any floor below its own. `okstra.console` (pip's console scripts) is a door.
FLOORS = {"core": 0, "model": 1, "run": 2, "team": 2, "report": 2, "harness": 2, "commands": 3, "console": 4}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(LIB).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Every okstra module `name` imports, anywhere in the file (relative imports resolved)."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            # `from okstra.model import layout` names a module; `from okstra.model.layout import Run` a name in one.
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name and target.startswith("okstra"):
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: imports_of(name, path, known) for name, path in mods.items()}


def top(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


def layer_violations(edges: dict[str, set[str]]) -> list[str]:
    found = []
    for src, targets in sorted(edges.items()):
        src_pkg = top(src)
        if src_pkg is None:
            continue
        if src_pkg not in FLOORS:
            found.append(f"{src}: package {src_pkg!r} has no floor in FLOORS")
            continue
        for dst in sorted(targets):
            dst_pkg = top(dst)
            if dst_pkg is None or dst_pkg == src_pkg:
                continue
            if dst_pkg not in FLOORS or FLOORS[dst_pkg] >= FLOORS[src_pkg]:
                found.append(f"{src} imports {dst}: {src_pkg} may not import {dst_pkg}")
    return found


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def package_of(name: str, packages: set[str]) -> str:
    """A package stands for its modules; a module at the top (okstra.console) for itself."""
    return name if name in packages or name.count(".") <= 1 else name.rpartition(".")[0]


def package_edges(edges: dict[str, set[str]], packages: set[str]) -> dict[str, set[str]]:
    """The same graph one level up: okstra.run, okstra.team.backends, ..."""
    out: dict[str, set[str]] = {}
    for src, targets in edges.items():
        src_pkg = package_of(src, packages)
        out.setdefault(src_pkg, set())
        for dst in targets:
            dst_pkg = package_of(dst, packages)
            if dst_pkg != src_pkg:
                out[src_pkg].add(dst_pkg)
    return out


def packages() -> set[str]:
    return {name for name, path in modules().items() if path.name == "__init__.py"}


def test_imports_run_down_the_floors_only():
    assert layer_violations(graph()) == []


def test_no_module_imports_itself_in_a_circle():
    assert cycles(graph()) == []


def test_no_package_imports_itself_in_a_circle():
    assert cycles(package_edges(graph(), packages())) == []


# The checks themselves must be able to fail.


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ({"okstra.run.bundle": {"okstra.report.stage_map"}}, ["okstra.run.bundle imports okstra.report.stage_map"]),
        ({"okstra.model.layout": {"okstra.team.liveness"}}, ["okstra.model.layout imports okstra.team.liveness"]),
        ({"okstra.core.cli": {"okstra.model.layout"}}, ["okstra.core.cli imports okstra.model.layout"]),
        ({"okstra.team.status": {"okstra.commands.team_status"}}, ["okstra.team.status imports okstra.commands.team_status"]),
        ({"okstra.commands.x": {"okstra.team.status", "okstra.model.layout", "okstra.core.cli"}}, []),
    ],
)
def test_the_layer_check_names_an_upward_or_sideways_import(edges, expected):
    assert [v.split(":")[0] for v in layer_violations(edges)] == expected


def test_the_cycle_check_finds_a_circle_through_a_function_level_import(tmp_path):
    source = "def later():\n    from okstra.run import config\n"
    path = tmp_path / "catalog.py"
    path.write_text(source)
    found = imports_of("okstra.run.catalog", path, {"okstra.run", "okstra.run.config", "okstra.run.catalog"})
    assert found == {"okstra.run.config", "okstra.run"}
    assert cycles({"okstra.run.catalog": found, "okstra.run.config": {"okstra.run.catalog"}}) == [
        ["okstra.run.catalog", "okstra.run.config"]
    ]


# -- only commands/ speaks to the user (DESIGN §1) ---------------------------------------

DOMAINS = ("run", "team", "report", "harness", "model")
# The two Claude Code hooks answer on stdout/stderr by protocol, straight from harness (their
# doors skip commands/ to keep the hook path light, DESIGN §10, §13).
HOOK_ANSWERS = {"okstra.harness.write_guard", "okstra.harness.compact_reminder"}


def speech(path: Path, allow_streams: bool = False) -> list[str]:
    """Each place a module prints, exits, or names an exit code: `line: what`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        what = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            what = "print()"
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "sys":
            if node.attr == "exit":
                what = "sys.exit"
            elif node.attr in ("stdout", "stderr") and not allow_streams:
                what = f"sys.{node.attr}"
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "cli":
            if node.attr in ("say", "emit_json") or node.attr.startswith("EXIT_"):
                what = f"cli.{node.attr}"
        elif isinstance(node, ast.Name) and node.id in ("SystemExit", "exit", "quit"):
            what = node.id
        elif isinstance(node, (ast.Name, ast.Attribute)):
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name.startswith("EXIT_"):
                what = name
        elif isinstance(node, ast.alias) and node.name.rpartition(".")[2].startswith("EXIT_"):
            what = node.name
        if what:
            found.append((getattr(node, "lineno", 0), what))
    return [f"{line}: {what}" for line, what in sorted(found, key=lambda hit: hit[0])]


def test_domains_return_verdicts_and_never_print_exit_or_pick_exit_codes():
    found = []
    for name, path in modules().items():
        if top(name) in DOMAINS:
            found += [f"{name}:{hit}" for hit in speech(path, allow_streams=name in HOOK_ANSWERS)]
    assert found == []


def test_the_speech_check_finds_each_way_of_speaking(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(
        "import sys\nfrom okstra.core.cli import EXIT_NO\n"
        "def f():\n    print('x')\n    sys.stderr.write('y')\n    sys.exit(2)\n    raise SystemExit(1)\n    return cli.EXIT_OK\n"
    )
    assert [hit.split(": ")[1] for hit in speech(path)] == [
        "EXIT_NO",
        "print()",
        "sys.stderr",
        "sys.exit",
        "SystemExit",
        "cli.EXIT_OK",
    ]


def test_no_two_public_classes_share_a_name():
    """One name, one thing: a reader (and a traceback) never has to ask which `Plan` is meant."""
    seen: dict[str, list[str]] = {}
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                seen.setdefault(node.name, []).append(name)
    assert {k: v for k, v in seen.items() if len(v) > 1} == {}
