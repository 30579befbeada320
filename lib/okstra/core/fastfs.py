"""Path and environment helpers for the write-guard hot path, on the builtin `posix` module.

Under `python -I -S` (how the hook runs) `os` is not loaded yet, and importing
it (with `posixpath`, `stat`, `_collections_abc`) costs about a millisecond —
a tenth of the hook's whole budget (DESIGN §13). These functions do what their
`os.path` namesakes do (POSIX only, as okstra is), with the same algorithms;
`tests/unit/core/test_fastfs.py` checks them against `os.path`. Everything off
the hot path uses `os`/`pathlib` as usual.
"""

import posix

SEP = "/"
_IFMT = 0o170000
_IFLNK = 0o120000
_IFDIR = 0o040000
_IFREG = 0o100000


def environ() -> dict:
    """The process environment as str (decoded like os.environ)."""
    return {k.decode("utf-8", "surrogateescape"): v.decode("utf-8", "surrogateescape") for k, v in posix.environ.items()}


def isabs(path: str) -> bool:
    return path.startswith(SEP)


def join(first: str, *rest: str) -> str:
    path = first
    for part in rest:
        if part.startswith(SEP):
            path = part
        elif not path or path.endswith(SEP):
            path += part
        else:
            path += SEP + part
    return path


def split(path: str) -> tuple:
    i = path.rfind(SEP) + 1
    head, tail = path[:i], path[i:]
    if head and head != SEP * len(head):
        head = head.rstrip(SEP)
    return head, tail


def dirname(path: str) -> str:
    return split(path)[0]


def basename(path: str) -> str:
    return path[path.rfind(SEP) + 1 :]


def normpath(path: str) -> str:
    if not path:
        return "."
    initial = 2 if path.startswith("//") and not path.startswith("///") else 1 if path.startswith(SEP) else 0
    parts: list = []
    for part in path.split(SEP):
        if part in ("", "."):
            continue
        if part != ".." or (not initial and not parts) or (parts and parts[-1] == ".."):
            parts.append(part)
        elif parts:
            parts.pop()
    result = SEP * initial + SEP.join(parts)
    return result or "."


def abspath(path: str) -> str:
    if not isabs(path):
        path = join(posix.getcwd(), path)
    return normpath(path)


def expanduser(path: str, env: dict | None = None) -> str:
    """`~` and `~/...` from HOME; `~user` through pwd (imported only then)."""
    if not path.startswith("~"):
        return path
    end = path.find(SEP, 1)
    end = len(path) if end < 0 else end
    if end == 1:
        home = (env if env is not None else environ()).get("HOME")
        if home is None:
            import pwd

            try:
                home = pwd.getpwuid(posix.getuid()).pw_dir
            except KeyError:
                return path
    else:
        import pwd

        try:
            home = pwd.getpwnam(path[1:end]).pw_dir
        except KeyError:
            return path
    return (home.rstrip(SEP) or SEP) + path[end:]


def _mode(path: str, follow: bool = True):
    try:
        return (posix.stat(path) if follow else posix.lstat(path)).st_mode & _IFMT
    except (OSError, ValueError):
        return None


def exists(path: str) -> bool:
    return _mode(path) is not None


def isdir(path: str) -> bool:
    return _mode(path) == _IFDIR


def isfile(path: str) -> bool:
    return _mode(path) == _IFREG


def realpath(path: str) -> str:
    """Like os.path.realpath (non-strict): symlinks resolved where they exist, `..` after them."""
    resolved, _ = _join_real("", path, {})
    return abspath(resolved)


def _join_real(path: str, rest: str, seen: dict) -> tuple:
    if isabs(rest):
        rest = rest[1:]
        path = SEP
    while rest:
        name, _, rest = rest.partition(SEP)
        if not name or name == ".":
            continue
        if name == "..":
            if path:
                path, name = split(path)
                if name == "..":
                    path = join(path, "..", "..")
            else:
                path = ".."
            continue
        newpath = join(path, name)
        if _mode(newpath, follow=False) != _IFLNK:
            path = newpath
            continue
        if newpath in seen:
            path = seen[newpath]
            if path is not None:
                continue
            return join(newpath, rest), False  # a symlink loop: stop here, as os.path does
        seen[newpath] = None
        path, ok = _join_real(path, posix.readlink(newpath), seen)
        if not ok:
            return join(path, rest), False
        seen[newpath] = path
    return path, True
