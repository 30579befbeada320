"""The project root and path containment (DESIGN §1, §14).

Paths stored in state files are project-relative. Every path read from a
state file, an argument or a report is resolved the way the filesystem will
(`..`, symlinks) and must stay inside the project root, or inside okstra's own
root for okstra's files; anything else is refused with exit 2.
"""

from __future__ import annotations

import os
from pathlib import Path

from okstra.core import settings
from okstra.core.errors import InputError, PathEscapeError
from okstra.core.names import OKSTRA_DIR

MARKERS = (OKSTRA_DIR, ".git")


def find_project_root(start: Path | None = None, explicit: str | Path | None = None) -> Path:
    """`explicit` (e.g. --project-root), else OKSTRA_PROJECT_ROOT, else the nearest
    folder at or above `start` (default: cwd) holding `.okstra/` or `.git`."""
    chosen = explicit if explicit is not None else settings.current().project_root
    if chosen is not None:
        root = Path(chosen).expanduser()
        if not root.is_dir():
            raise InputError(f"project root {str(chosen)!r} is not a directory", hint="pass an existing folder")
        return root.resolve()
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if any((folder / marker).exists() for marker in MARKERS):
            return folder
    raise InputError(
        f"no project found at or above {here}",
        hint="run inside a git repository or pass --project-root DIR",
    )


def is_inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def resolve_inside(
    root: Path,
    value: str | os.PathLike[str],
    *,
    source: str,
    allow_okstra_root: bool = False,
    base: Path | None = None,
) -> Path:
    """Resolve `value` (relative to `base`, default `root`; or absolute) and refuse it outside `root`."""
    text = os.fspath(value)
    if not text or "\x00" in text:
        raise InputError(f"{source}: {text!r} is not a usable path")
    root = Path(root).resolve()
    candidate = Path(text).expanduser()
    resolved = (candidate if candidate.is_absolute() else (base or root) / candidate).resolve()
    if is_inside(resolved, root):
        return resolved
    if allow_okstra_root and is_inside(resolved, settings.current().root.expanduser().resolve()):
        return resolved
    raise PathEscapeError(
        f"{source}: {text!r} resolves to {resolved}, outside the project {root}",
        hint="use a path inside the project",
    )


def argument(root: Path, value: str | os.PathLike[str], *, source: str) -> Path:
    """A path given on the command line: relative to the current directory, as a shell
    user means it (stored paths are relative to the project root instead)."""
    return resolve_inside(root, value, source=source, base=Path.cwd())


def relative(root: Path, path: Path) -> str:
    """The project-relative POSIX form stored in state files."""
    return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()


def own_file(
    path: Path,
    folder: Path,
    *,
    source: str,
    hint: str,
    also: tuple[Path, ...] = (),
    never: tuple[Path, ...] = (),
) -> Path:
    """The one rule for a file an okstra command writes where it was told to (DESIGN §14):
    resolved the way the filesystem will, it lies strictly inside `folder` and not in or at
    any of `never`, or it is exactly one of `also`. Else PathEscapeError (exit 2), before
    anything is written: a command told to write onto a sidecar or a state file refuses."""
    real = Path(path).resolve()
    if any(real == Path(a).resolve() for a in also):
        return path
    inside = Path(folder).resolve()
    if inside not in real.parents:
        raise PathEscapeError(f"{source}: {path} is outside {inside}", hint=hint)
    for barred in (Path(n).resolve() for n in never):
        if real == barred or barred in real.parents:
            raise PathEscapeError(f"{source}: {path} is inside {barred}, which only okstra's own writers change", hint=hint)
    return path
