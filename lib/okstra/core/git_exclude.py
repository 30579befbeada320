"""Keep okstra's files out of the user's git history (docs/DESIGN.md §1).

`ensure_excluded` adds a pattern to the repository's `.git/info/exclude` (the
per-clone ignore file nobody commits) unless git already ignores the path. The
user's `.gitignore` is edited only when asked (`gitignore=True`). Not a git
project, or no git on PATH: nothing to do.
"""

from __future__ import annotations

from pathlib import Path

from okstra.core import fsio, proc
from okstra.core.errors import ToolNotFoundError


def _git(root: Path, *args: str) -> proc.Completed | None:
    try:
        return proc.run(["git", "-C", str(root), *args], check=False, timeout=10)
    except ToolNotFoundError:
        return None


def ensure_excluded(root: Path, pattern: str, *, gitignore: bool = False) -> Path | None:
    """Make git ignore `pattern` (a path relative to `root`, e.g. `.okstra/`).

    Returns the ignore file it changed, or None when nothing needed changing."""
    inside = _git(root, "rev-parse", "--is-inside-work-tree")
    if inside is None or inside.returncode != 0 or inside.stdout.strip() != "true":
        return None
    # A folder pattern only matches what lies under it when the folder is not there yet.
    probe = pattern + "x" if pattern.endswith("/") else pattern
    ignored = _git(root, "check-ignore", "-q", "--no-index", probe)
    if ignored is not None and ignored.returncode == 0:
        return None
    if gitignore:
        target = root / ".gitignore"
    else:
        where = _git(root, "rev-parse", "--git-path", "info/exclude")
        if where is None or where.returncode != 0:
            return None
        target = Path(where.stdout.strip())
        target = target if target.is_absolute() else root / target
    text = fsio.read_text(target, what="git ignore file") if target.exists() else ""
    if pattern in text.splitlines():
        return None
    separator = "" if not text or text.endswith("\n") else "\n"
    target.parent.mkdir(parents=True, exist_ok=True)
    fsio.atomic_write(target, f"{text}{separator}{pattern}\n")
    return target
