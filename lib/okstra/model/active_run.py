"""`active-run.json` and the one loader that hydrates it (DESIGN §2).

The file may be stored compacted: any block written as `{"$ref": "<path>"}`
stands for the JSON document at that project-relative path. Every reader goes
through `load()`, which hydrates those blocks, so no reader can see a
compacted stage as "no approved stage". This module is on the write-guard hot
path (DESIGN §13: 1.3 x the interpreter's bare start-up for the whole hook): it
imports only `okstra.core` basics — no `os` (see `core.fastfs`), `json` (see
`core.jsonlite`), `dataclasses`, `pathlib` or `typing`, each of which costs
milliseconds there.
The records are small frozen classes with the same surface a dataclass would
give (keyword construction, equality, `evolve`, `to_dict`).
"""

import posix

from okstra.core import fastfs, jsonlite
from okstra.core.errors import StateError
from okstra.core.seal import sha256_hex

ACTIVE_RUN_FILE = ".okstra/active-run.json"
# The second signal of an active run (DESIGN §10): written beside the pointer by the one
# writer below, holding the run id and the pointer's sha256. The write-guard's sh door
# tests both names with `[ -e ]`, so moving, replacing or hard-linking the pointer does
# not switch the guard off, and a pointer changed outside okstra is refused.
SEAL_FILE = ".okstra/active-run.seal"
_REGULAR = 0o100000
_IFMT = 0o170000
REF_KEY = "$ref"
# The run's phase as `active-run.json` records it (DESIGN §3): render-bundle writes
# PREPARED, team-reclaim moves it to ROUND_BOUNDARY or USER_GATE; a run that ENDED
# (team-teardown, a stage's stage-record, run-end) has no active-run file at all,
# so the write-guard's sh door allows again at once; ENDED is kept in its manifest.
PREPARED = "dispatch"
ROUND_BOUNDARY = "round-boundary"
USER_GATE = "user-gate"
ENDED = "ended"
_SCALARS = frozenset({str, int, float, bool, type(None)})


class _Record:
    """A frozen record: fields set once by `__init__`, compared by value."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen; use evolve()")

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._values() == self._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({inner})"

    def evolve(self, **changes: object):
        values = {name: getattr(self, name) for name in self.__slots__}
        unknown = set(changes) - set(values)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field(s) {', '.join(sorted(unknown))}")
        values.update(changes)
        return type(self)(**values)


class ApprovedStage(_Record):
    __slots__ = ("number", "title", "planned_paths", "base_commit")

    def __init__(self, number: int, title: str, planned_paths: tuple[str, ...], base_commit: str | None = None) -> None:
        object.__setattr__(self, "number", number)
        object.__setattr__(self, "title", title)
        object.__setattr__(self, "planned_paths", tuple(planned_paths))
        object.__setattr__(self, "base_commit", base_commit)

    def to_dict(self) -> dict:
        return {
            "number": self.number,
            "title": self.title,
            "plannedPaths": list(self.planned_paths),
            "baseCommit": self.base_commit,
        }


class PlannedStage(_Record):
    """The approved stage a `--stage N` render works on, and the plan's text for it that
    becomes the workers' brief (the report domain reads both; the run domain renders)."""

    __slots__ = ("approved", "text")

    def __init__(self, approved: ApprovedStage, text: str) -> None:
        object.__setattr__(self, "approved", approved)
        object.__setattr__(self, "text", text)

    def to_dict(self) -> dict:
        return {"approved": self.approved.to_dict(), "text": self.text}


class ActiveRun(_Record):
    __slots__ = ("run_id", "task_key", "task_type", "run_dir", "run_manifest_path", "phase", "stage", "allowed_commands")

    def __init__(
        self,
        run_id: str,
        task_key: str,
        task_type: str,
        run_dir: str,
        run_manifest_path: str,
        phase: str,
        stage: ApprovedStage | None = None,
        allowed_commands: tuple[str, ...] = (),
    ) -> None:
        object.__setattr__(self, "run_id", run_id)
        object.__setattr__(self, "task_key", task_key)
        object.__setattr__(self, "task_type", task_type)
        object.__setattr__(self, "run_dir", run_dir)
        object.__setattr__(self, "run_manifest_path", run_manifest_path)
        object.__setattr__(self, "phase", phase)
        object.__setattr__(self, "stage", stage)
        object.__setattr__(self, "allowed_commands", tuple(allowed_commands))

    def to_dict(self) -> dict:
        return {
            "schemaVersion": "1.0",
            "runId": self.run_id,
            "taskKey": self.task_key,
            "taskType": self.task_type,
            "runDir": self.run_dir,
            "runManifestPath": self.run_manifest_path,
            "phase": self.phase,
            "approvedStage": self.stage.to_dict() if self.stage else None,
            "allowedCommands": list(self.allowed_commands),
        }


def path_for(project_root):
    """The active-run file of `project_root` (a `pathlib.Path`, imported here, off the hot path)."""
    from pathlib import Path

    return Path(project_root) / ACTIVE_RUN_FILE


def read_regular(path: str, source: str, limit: int = 1 << 22) -> bytes:
    """The bytes of a regular file with one link, never blocking: the type is checked
    before opening and again on the open descriptor (O_NONBLOCK, no FIFO read waits), a
    symlink is not followed (O_NOFOLLOW). Anything odd is a StateError naming it."""
    try:
        info = posix.lstat(path)
    except FileNotFoundError:
        raise StateError(f"{source}: {path} does not exist", hint="the compacted active run points at a missing file") from None
    except (OSError, ValueError) as exc:
        raise StateError(f"{source}: {path} cannot be examined: {exc}") from None
    _check_regular(info, path, source)
    try:
        fd = posix.open(path, posix.O_RDONLY | posix.O_NONBLOCK | posix.O_NOFOLLOW | posix.O_CLOEXEC)
    except OSError as exc:
        raise StateError(f"{source}: {path} is not readable: {exc.strerror}") from None
    try:
        _check_regular(posix.fstat(fd), path, source)
        data = posix.read(fd, limit + 1)
    except OSError as exc:
        raise StateError(f"{source}: {path} is not readable: {exc.strerror}") from None
    finally:
        posix.close(fd)
    if len(data) > limit:
        raise StateError(f"{source}: {path} is larger than {limit} bytes")
    return data


def _check_regular(info, path: str, source: str) -> None:
    kind = info.st_mode & _IFMT
    if kind != _REGULAR:
        what = {0o120000: "a symbolic link", 0o040000: "a folder", 0o010000: "a FIFO"}.get(kind, "not a regular file")
        raise StateError(f"{source}: {path} is {what}", hint="okstra writes it as a regular file; re-run render-bundle")
    if info.st_nlink != 1:
        raise StateError(
            f"{source}: {path} has {info.st_nlink} hard links", hint="okstra writes it with one name; re-run render-bundle"
        )


def _read(path: str, source: str) -> object:
    try:
        text = read_regular(path, source).decode("utf-8")
    except UnicodeDecodeError:
        raise StateError(f"{source}: {path} is not UTF-8") from None
    try:
        return jsonlite.loads(text)
    except jsonlite.JSONError as exc:
        raise StateError(f"{source}: {path} is not valid JSON: {exc}") from None


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _hydrate(value: object, root: str, source: str, seen: list[str], depth: int = 0) -> object:
    if depth > 8:
        raise StateError(f"{source}: $ref chain deeper than 8 levels")
    if isinstance(value, dict):
        if len(value) == 1 and REF_KEY in value:
            target = fastfs.realpath(fastfs.join(root, str(value[REF_KEY])))
            if not _inside(target, root):
                raise StateError(f"{source}: $ref {value[REF_KEY]!r} points outside the project {root}")
            seen.append(target)
            if len(seen) > 64:
                raise StateError(f"{source}: more than 64 $ref blocks")
            return _hydrate(_read(target, source), root, source, seen, depth + 1)
        return {k: v if type(v) in _SCALARS else _hydrate(v, root, source, seen, depth) for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in _SCALARS else _hydrate(v, root, source, seen, depth) for v in value]
    return value


def _stage(raw: object, source: str) -> ApprovedStage | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or type(raw.get("number")) is not int:
        raise StateError(f"{source}: approvedStage must be an object with a whole-number 'number'")
    paths = raw.get("plannedPaths", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise StateError(f"{source}: approvedStage.plannedPaths must be a list of strings")
    return ApprovedStage(raw["number"], str(raw.get("title", "")), tuple(paths), raw.get("baseCommit"))


def _strings(raw: object, source: str, field: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(p, str) for p in raw):
        raise StateError(f"{source}: {field} must be a list of strings")
    return tuple(raw)


def from_dict(raw: object, source: str) -> ActiveRun:
    if not isinstance(raw, dict):
        raise StateError(f"{source}: expected a JSON object")
    try:
        return ActiveRun(
            run_id=str(raw["runId"]),
            task_key=str(raw["taskKey"]),
            task_type=str(raw["taskType"]),
            run_dir=str(raw["runDir"]),
            run_manifest_path=str(raw["runManifestPath"]),
            phase=str(raw.get("phase", "")),
            stage=_stage(raw.get("approvedStage"), source),
            allowed_commands=_strings(raw.get("allowedCommands"), source, "allowedCommands"),
        )
    except KeyError as exc:
        raise StateError(f"{source}: missing field {exc}", hint="re-run render-bundle to rewrite it") from None


def load_with_sources(project_root: object) -> tuple[ActiveRun | None, tuple[str, ...]]:
    """The hydrated active run and every file it was read from (the file itself and
    each `$ref` target, as resolved absolute paths); `(None, ())` when no run is active."""
    root = fastfs.realpath(posix.fspath(project_root))
    path = fastfs.join(root, ACTIVE_RUN_FILE)
    seal = fastfs.join(root, SEAL_FILE)
    if not present(path):
        if present(seal):
            raise StateError(
                f"{path} is missing while {seal} says a run is active",
                hint="okstra's own commands (team-teardown, run-end) end a run; re-run render-bundle",
            )
        return None, ()
    data = read_regular(path, path)
    if present(seal):
        _verify_seal(data, seal, path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise StateError(f"{path} is not UTF-8") from None
    try:
        raw = jsonlite.loads(text)
    except jsonlite.JSONError as exc:
        raise StateError(f"{path} is not valid JSON: {exc}") from None
    seen = [path, seal]
    run = from_dict(_hydrate(raw, root, path, seen), path)
    return run, tuple(seen)


def present(path: str) -> bool:
    """Anything at `path`, a dangling symlink included (lstat, never follows)."""
    try:
        posix.lstat(path)
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return True
    return True


def _verify_seal(data: bytes, seal: str, path: str) -> None:
    try:
        recorded = jsonlite.loads(read_regular(seal, seal).decode("utf-8"))
    except (jsonlite.JSONError, UnicodeDecodeError) as exc:
        raise StateError(f"{seal}: is not okstra's seal ({exc})", hint="re-run render-bundle") from None
    if not isinstance(recorded, dict) or recorded.get("sha256") != sha256_hex(data):
        raise StateError(
            f"{path} was changed outside okstra (its sha256 differs from the one {seal} recorded)",
            hint="only okstra's commands write it; re-run render-bundle to set the run again",
        )


def load(project_root: object) -> ActiveRun | None:
    """The hydrated active run of `project_root`, or None when no run is active."""
    return load_with_sources(project_root)[0]


# -- writers (off the hot path: they import fsio inside) ---------------------------


def write_file(project_root, document: dict) -> None:
    """Write the active-run pointer and its seal (the pointer's sha256), each atomically.
    Every writer of `active-run.json` goes through here, so the seal always matches."""
    from okstra.core import fsio

    path = path_for(project_root)
    text = fsio.dumps(document)
    fsio.atomic_write(path, text)
    seal = {"runId": document.get("runId"), "sha256": sha256_hex(text.encode("utf-8"))}
    fsio.atomic_write(path.parent / "active-run.seal", fsio.dumps(seal))


def _remove_files(project_root) -> None:
    """Remove the pointer, then its seal (a kill in between leaves the seal, which keeps
    the guard denying until a later end removes it: fail closed)."""
    from pathlib import Path

    for name in (ACTIVE_RUN_FILE, SEAL_FILE):
        (Path(project_root) / name).unlink(missing_ok=True)


def _sealed_run(project_root) -> str | None:
    """The run id the seal names, when the pointer is gone (a half-finished end)."""
    from pathlib import Path

    seal = str(Path(project_root) / SEAL_FILE)
    try:
        recorded = jsonlite.loads(read_regular(seal, seal).decode("utf-8"))
    except (StateError, jsonlite.JSONError, UnicodeDecodeError):
        return None
    return recorded.get("runId") if isinstance(recorded, dict) else None


def set_phase(project_root, run_id: str, phase: str) -> bool:
    """Record `phase` in the active-run file when it names `run_id`; False when another
    run (or none) is active. Written under the file's lock, atomically, with its seal."""
    from okstra.core import fsio

    path = path_for(project_root)
    with fsio.locked(path):
        current = load(project_root) if path.exists() else None
        if current is None or current.run_id != run_id:
            return False
        if current.phase != phase:
            raw = fsio.read_json(path, what="active run")
            raw["phase"] = phase
            write_file(project_root, raw)
        return True


def end(project_root, run_id: str) -> bool:
    """End `run_id`'s write rules: remove the active-run file and its seal when they name
    that run. False (nothing touched) when another run, or none, is active."""
    from okstra.core import fsio

    path = path_for(project_root)
    with fsio.locked(path):
        if not path.exists():
            if _sealed_run(project_root) == run_id:
                _remove_files(project_root)
                return True
            return False
        try:
            current = load(project_root)
        except StateError:
            current = None  # unreadable: only its own run may remove it, and we cannot tell
        if current is None or current.run_id != run_id:
            return False
        _remove_files(project_root)
        return True
