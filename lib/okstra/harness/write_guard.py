"""The write-guard decision: may this tool call write where it wants to? (DESIGN §10)

Claude Code runs `hooks/write-guard` before every Write, Edit, MultiEdit,
NotebookEdit and Bash call, the lead's and every worker Claude session's
(workers load the same project hooks). The hook JSON arrives on stdin; the
answer follows Claude Code's protocol: allow = exit 0 and no output; deny =
exit 0 with `hookSpecificOutput.permissionDecision: "deny"` and a reason that
names what is allowed (the model reads it verbatim). Any other exit code, a
crash or a timeout would let the call through, so every failure while a run
is active becomes a deny with the reason.

Who is asking: a worker has the environment `worker-run` gives its child
(`OKSTRA_WORKER_ROLE`, `OKSTRA_WORKER_ID`, `OKSTRA_RESULT_PATH`,
`OKSTRA_EVIDENCE_DIR`, ...); anyone else is the lead.

The rules, while a run is active (`.okstra/active-run.json`, read through the
one hydrating loader `model.active_run`):
- nobody but the user writes a user-response sidecar
  (`reports/user-responses/`) or runs `user-response-write --report-authoring`;
- nobody edits the active-run file or the files it references (they define
  the approved scope);
- during an implementation stage (an approved stage is recorded) the lead and
  an implementer worker write only the stage's planned paths or okstra's own
  files under `.okstra/`;
- analyst, planner, verifier, critic, report-writer and translator workers
  (and an implementer outside a stage) write only their own result file and
  evidence folder.

Paths are resolved the way the filesystem will: relative to the hook input's
`cwd`, `~`, `..`, and symlinks (a symlink inside an allowed folder pointing
outside is judged by where it points). Allowances match case-sensitively;
sidecar detection matches case-insensitively, so on a case-insensitive
filesystem a case-changed spelling cannot reach a sidecar, and on a
case-sensitive one a case-changed spelling is a different file that needs its
own allowance. Planned paths are project-relative globs matched segment by
segment: `*`, `?` and `[...]` stay within one segment, `**` spans any number
of segments, and a pattern that names a folder covers everything inside it.

Bash: what a command writes cannot be known in general. The guard reads the
writes it can see — redirections (`>`, `>>`, `&>`, ...), `tee`, `cp`, `mv`,
`install`, `ln`, `dd of=`, `sed -i`/`perl -i`, `touch`, `truncate`, `rm`,
`mkdir` — following `cd` within the command, and judges their targets like
file writes (scratch files in the temp folder and `/dev/null` are fine for
Bash). A stage's scope is also checked after the fact against the git diff
(a later capability); this hook is the first line, not the only one.

Hot path (DESIGN §13): this module imports `posix`, `sys`, `okstra.core.fastfs`,
`okstra.core.jsonlite`, `okstra.core.errors` and `okstra.model.active_run` only.
The Bash reader (`harness.bash_writes`), `fnmatch`, `json` and okstra's
settings are imported inside the branches that need them. Paths are handled
with `core.fastfs` (the `os.path` algorithms on the builtin `posix` module)
rather than through `core.paths`, which imports `pathlib`.
"""

import posix
import sys

from okstra.core import fastfs, jsonlite
from okstra.core.errors import OkstraError
from okstra.model import active_run

FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
LEAD_ROLES = frozenset({"", "leader", "lead"})
STAGE_WRITER_ROLES = frozenset({"implementer", "executor"})
SIDECAR_PARTS = ("reports", "user-responses")
OKSTRA_DIR = ".okstra"
SHOWN_PATTERNS = 8
TEMP_DIRS = ("/tmp", "/var/tmp")
DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero")

_WILDCARDS = frozenset("*?[")


# ---------------------------------------------------------------- entry point


def main(stdin=None, stdout=None, env=None) -> int:
    """Decide one hook call. Always exit 0: a deny is said in JSON on stdout."""
    stdin = sys.stdin.buffer if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    env = fastfs.environ() if env is None else env
    active = True  # until shown otherwise: an error before then must deny, not allow
    try:
        raw = stdin.read()
        data, malformed = _parse(raw)
        root = _project_root(env, data)
        active = root is not None and fastfs.exists(fastfs.join(root, active_run.ACTIVE_RUN_FILE))
        if not active:
            if malformed:
                _log(env, f"malformed hook input with no active run, allowed: {malformed}")
            return 0
        reason = f"the hook input is not usable ({malformed})" if malformed else decide(data, env, root)
    except OkstraError as exc:
        if not active:
            _log(env, f"error with no active run, allowed: {exc}")
            return 0
        reason = f"the active run could not be read: {exc}"
    except Exception as exc:  # noqa: BLE001 - an exception would let the write through (fail open)
        if active and not _run_exists(env):
            active = False
        if not active:
            _log(env, f"internal error with no active run, allowed: {type(exc).__name__}: {exc}")
            return 0
        reason = f"internal error in the write-guard ({type(exc).__name__}: {exc}); denied to be safe"
    if reason is None:
        return 0
    stdout.write(deny_json(reason) + "\n")
    stdout.flush()
    return 0


def deny_json(reason: str) -> str:
    text = reason if reason.startswith("okstra:") else f"okstra: {reason}"
    if "allowed:" not in text:
        text += "; allowed: ask the user, or re-run render-bundle for a run that permits it"
    return jsonlite.dumps_flat(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": text,
            }
        }
    )


def _parse(raw: bytes) -> tuple[dict, str | None]:
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        return {}, "stdin is not UTF-8"
    try:
        data = jsonlite.loads(text)
    except jsonlite.JSONError as exc:
        return {}, f"stdin is not JSON: {exc}"
    if not isinstance(data, dict):
        return {}, "stdin is not a JSON object"
    if not isinstance(data.get("tool_name"), str):
        return data, "no tool_name"
    if not isinstance(data.get("tool_input"), dict):
        return data, "no tool_input object"
    return data, None


def _project_root(env, data: dict) -> str | None:
    """CLAUDE_PROJECT_DIR, else OKSTRA_PROJECT_ROOT, else the nearest folder at or
    above the hook's cwd holding `.okstra/active-run.json` (None: no active run)."""
    for name in ("CLAUDE_PROJECT_DIR", "OKSTRA_PROJECT_ROOT"):
        if env.get(name):
            return fastfs.realpath(env[name])
    cwd = data.get("cwd") if isinstance(data.get("cwd"), str) and data.get("cwd") else posix.getcwd()
    here = fastfs.realpath(cwd)
    while True:
        if fastfs.exists(fastfs.join(here, active_run.ACTIVE_RUN_FILE)):
            return here
        parent = fastfs.dirname(here)
        if parent == here:
            return None
        here = parent


def _run_exists(env) -> bool:
    """After an error before the input was understood: is a run active around here?"""
    try:
        root = _project_root(env, {})
        return root is not None and fastfs.exists(fastfs.join(root, active_run.ACTIVE_RUN_FILE))
    except Exception:  # noqa: BLE001 - cannot tell: assume a run, deny
        return True


def _log(env, line: str) -> None:
    """Malformed input with no run must not block, but must not vanish either."""
    try:
        if env.get("OKSTRA_DEBUG"):
            sys.stderr.write(f"write-guard: {line}\n")
        import time

        from okstra.core import fsio

        env = {**fastfs.environ(), **env}
        home = env.get("OKSTRA_ROOT") or fastfs.join(fastfs.expanduser("~", env), ".okstra")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        fsio.append_line(fastfs.join(home, "logs", "write-guard.log"), f"{stamp} {line}")
    except Exception:  # noqa: BLE001, S110 - logging must never turn an allow into a failure
        pass


# ---------------------------------------------------------------- the decision


class _Context:
    """Everything one decision needs, computed once."""

    def __init__(self, data: dict, env, root: str) -> None:
        self.root = root
        self.env = env
        self.okstra_dir = fastfs.realpath(fastfs.join(root, OKSTRA_DIR))
        self.cwd = data["cwd"] if isinstance(data.get("cwd"), str) and data.get("cwd") else root
        self.run, sources = active_run.load_with_sources(root)
        self.protected = frozenset(sources)
        self.role = (env.get("OKSTRA_WORKER_ROLE") or "").strip().lower()
        self.worker_id = env.get("OKSTRA_WORKER_ID") or "?"
        self.is_lead = self.role in LEAD_ROLES
        self.result = _real(env.get("OKSTRA_RESULT_PATH"), root, env)
        self.evidence = _real(env.get("OKSTRA_EVIDENCE_DIR"), root, env)
        self.stage = self.run.stage if self.run is not None else None
        self._planned = None

    @property
    def planned(self) -> "_Planned":
        if self._planned is None:
            self._planned = _Planned(self.stage.planned_paths if self.stage else (), self.root)
        return self._planned

    def rel(self, path: str) -> str:
        return _relative(path, self.root)


def decide(data: dict, env, root: str) -> str | None:
    """None to allow, else the reason for the deny (naming what is allowed)."""
    ctx = _Context(data, env, root)
    if ctx.run is None:
        return None
    tool = data["tool_name"]
    tool_input = data["tool_input"]
    if tool in FILE_TOOLS:
        key = FILE_TOOLS[tool]
        value = tool_input.get(key)
        if not isinstance(value, str) or not value or "\x00" in value:
            return f"{tool} input has no usable {key}"
        return _judge(ctx, value, tool, lenient=False)
    if tool == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            return "Bash input has no command string"
        return _judge_bash(ctx, command)
    return None


def _judge(ctx: _Context, value: str, via: str, *, lenient: bool, cwd: str | None = None) -> str | None:
    lexical = fastfs.normpath(fastfs.join(cwd or ctx.cwd, fastfs.expanduser(value, ctx.env)))
    path = fastfs.realpath(lexical)
    shown = ctx.rel(path)
    if _is_sidecar(lexical, ctx) or _is_sidecar(path, ctx) or _hard_link_to_sidecar(path, ctx):
        return (
            f"{via} to {shown} touches a user-response sidecar, which only the user writes "
            "(through the report's HTML view Export or user-response-write in their own terminal); "
            "allowed: show the user the open questions (user-response-show) and wait for their answer"
        )
    if path in ctx.protected:
        return (
            f"{via} to {shown} would change the active run, which render-bundle writes; "
            "allowed: run render-bundle (a new stage: render-bundle --stage N) to change what is approved"
        )
    if lenient and not _inside(path, ctx.root) and _is_scratch(path, ctx.env):
        return None
    if ctx.is_lead:
        if ctx.stage is None or ctx.planned.covers(path) or _inside(path, ctx.okstra_dir):
            return None
        return f"{via} to {shown} is outside {_stage_name(ctx)}; allowed: {_stage_allowance(ctx)}"
    if _own_output(ctx, path):
        return None
    if ctx.role in STAGE_WRITER_ROLES and ctx.stage is not None:
        if ctx.planned.covers(path) or _inside(path, ctx.okstra_dir):
            return None
        return f"{via} to {shown} by {ctx.role} worker {ctx.worker_id} is outside {_stage_name(ctx)}; allowed: {_stage_allowance(ctx)}"
    why = "" if ctx.role not in STAGE_WRITER_ROLES else " (no implementation stage is approved)"
    return (
        f"{via} to {shown}: {ctx.role} worker {ctx.worker_id} may write only its own result and evidence{why}; "
        f"allowed: {_own_allowance(ctx)}"
    )


def _own_output(ctx: _Context, path: str) -> bool:
    return (ctx.result is not None and path == ctx.result) or (ctx.evidence is not None and _inside(path, ctx.evidence))


def _own_allowance(ctx: _Context) -> str:
    parts = []
    if ctx.result:
        parts.append(f"the result file {ctx.rel(ctx.result)}")
    if ctx.evidence:
        parts.append(f"the evidence folder {ctx.rel(ctx.evidence)}/")
    return " and ".join(parts) if parts else "nothing (OKSTRA_RESULT_PATH and OKSTRA_EVIDENCE_DIR are not set for this worker)"


def _stage_name(ctx: _Context) -> str:
    title = f" ({ctx.stage.title})" if ctx.stage.title else ""
    return f"the planned paths of approved stage {ctx.stage.number}{title}"


def _stage_allowance(ctx: _Context) -> str:
    patterns = list(ctx.stage.planned_paths)
    shown = ", ".join(patterns[:SHOWN_PATTERNS]) or "(none planned)"
    if len(patterns) > SHOWN_PATTERNS:
        shown += f" and {len(patterns) - SHOWN_PATTERNS} more (see .okstra/active-run.json)"
    return f"the stage's planned paths {shown}, or okstra's own files under .okstra/ (not user-response sidecars)"


# ---------------------------------------------------------------- paths


def _real(value: str | None, root: str, env) -> str | None:
    if not value:
        return None
    return fastfs.realpath(fastfs.join(root, fastfs.expanduser(value, env)))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _relative(path: str, root: str) -> str:
    if path == root:
        return "."
    if path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1 :]
    return path


def _is_sidecar(path: str, ctx: _Context) -> bool:
    """Inside (or being) a `reports/user-responses` folder under `.okstra`, any case."""
    folded = path.casefold()
    okstra = ctx.okstra_dir.casefold()
    if _inside(folded, okstra):
        parts = folded[len(okstra) :].split("/")
    elif "/.okstra/" in folded + "/":
        parts = folded.split("/.okstra/", 1)[1].split("/")
    else:
        return False
    for i in range(len(parts) - 1):
        if parts[i] == SIDECAR_PARTS[0] and parts[i + 1] == SIDECAR_PARTS[1]:
            return True
    return False


def _hard_link_to_sidecar(path: str, ctx: _Context) -> bool:
    """A second name for a sidecar file (hard link) is the sidecar too."""
    try:
        info = posix.stat(path)
    except (OSError, ValueError):
        return False
    if info.st_nlink < 2 or not fastfs.isfile(path):
        return False
    runs = fastfs.join(ctx.okstra_dir, "runs")
    try:
        run_ids = posix.listdir(runs)
    except OSError:
        return False
    for run_id in run_ids:
        folder = fastfs.join(runs, run_id, *SIDECAR_PARTS)
        try:
            names = posix.listdir(folder)
        except OSError:
            continue
        for name in names:
            try:
                other = posix.stat(fastfs.join(folder, name))
            except OSError:
                continue
            if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
                return True
    return False


def _is_scratch(path: str, env) -> bool:
    if path in DEVICES or path.startswith("/dev/fd/") or path.startswith("/proc/self/fd/"):
        return True
    temps = list(TEMP_DIRS)
    if env.get("TMPDIR"):
        temps.append(env["TMPDIR"])
    return any(_inside(path, fastfs.realpath(t)) for t in temps)


class _Planned:
    """The approved stage's planned paths: literals in a set, globs by segment."""

    def __init__(self, patterns: tuple[str, ...], root: str) -> None:
        self.root = root
        self.literals: set[str] = set()
        self.globs: list[list[str]] = []
        prefix = root.rstrip("/") + "/"
        for raw in patterns:
            pattern = raw.strip()
            if pattern.startswith(prefix):
                pattern = pattern[len(prefix) :]
            wild = "*" in pattern or "?" in pattern or "[" in pattern
            if not wild and pattern and "//" not in pattern and "/." not in "/" + pattern and pattern[0] not in "/~":
                self.literals.add(pattern.rstrip("/"))  # the common case: a plain relative path
                continue
            parts = [p for p in pattern.split("/") if p not in ("", ".")]
            if not parts or ".." in parts or pattern.startswith(("/", "~")):
                continue  # never matches: outside the project or empty
            if wild:
                self.globs.append(parts)
            else:
                self.literals.add("/".join(parts))

    def covers(self, path: str) -> bool:
        if not path.startswith(self.root.rstrip("/") + "/"):
            return False
        parts = path[len(self.root.rstrip("/")) + 1 :].split("/")
        prefix = ""
        for part in parts:
            prefix = f"{prefix}/{part}" if prefix else part
            if prefix in self.literals:
                return True
        return any(_match(glob, 0, parts, 0) for glob in self.globs)


def _match(pattern: list[str], i: int, parts: list[str], j: int) -> bool:
    """Does `pattern[i:]` match `parts[j:k]` for some k (a folder covers its contents)?"""
    while True:
        if i == len(pattern):
            return True
        if pattern[i] == "**":
            return any(_match(pattern, i + 1, parts, k) for k in range(j, len(parts) + 1))
        if j == len(parts) or not _segment(pattern[i], parts[j]):
            return False
        i += 1
        j += 1


def _segment(pattern: str, name: str) -> bool:
    if not _WILDCARDS.intersection(pattern):
        return pattern == name
    if "[" in pattern:
        from fnmatch import fnmatchcase

        return fnmatchcase(name, pattern)
    # '*' and '?' without importing fnmatch (which imports re): greedy with backtracking.
    p = n = 0
    star, mark = -1, 0
    while n < len(name):
        if p < len(pattern) and (pattern[p] == "?" or pattern[p] == name[n]):
            p += 1
            n += 1
        elif p < len(pattern) and pattern[p] == "*":
            star, mark = p, n
            p += 1
        elif star != -1:
            p = star + 1
            mark += 1
            n = mark
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)


# ---------------------------------------------------------------- Bash


def _judge_bash(ctx: _Context, command: str) -> str | None:
    if _runs_report_authoring(command):
        who = "the lead" if ctx.is_lead else f"{ctx.role} worker {ctx.worker_id}"
        return (
            f"only the user may grant REPORT AUTHORING, not {who}: `user-response-write --report-authoring` "
            "is theirs to run; allowed: ask the user to decide (HTML view Export, or user-response-write "
            "--report-authoring in their own terminal) and wait for the sidecar"
        )
    from okstra.harness.bash_writes import write_targets

    for target, cwd in write_targets(command, ctx.cwd, ctx.env):
        reason = _judge(ctx, target, "Bash write", lenient=True, cwd=cwd)
        if reason is not None:
            return reason
    return None


def _runs_report_authoring(command: str) -> bool:
    """`user-response-write --report-authoring` in any spelling the dispatcher accepts
    (`okstra user-response write`, `okstra user response write`, a path to the door)."""
    text = command.casefold()
    if "authoring" not in text:
        return False
    squashed = "-".join(text.replace("'", " ").replace('"', " ").replace("\\", " ").split())
    return "user-response-write" in squashed and "report-authoring" in squashed
