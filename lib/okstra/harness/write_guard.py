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

The rules, while a run is active (`.okstra/active-run.json` or its seal
`.okstra/active-run.seal`, read through the one hydrating loader
`model.active_run`, which refuses odd state: a missing pointer beside a seal,
a symlink, folder, FIFO, second hard link, unreadable or non-JSON file, or a
pointer whose sha256 differs from the seal's):
- nobody but the user records a decision: no write to a user-response
  sidecar (`reports/user-responses/`), no `user-response-write` with a
  decision block, in any spelling (the Bash allow-list reads the words after
  quotes are removed);
- okstra's state under `.okstra/` (active run, manifests, team state,
  sidecars, config, sequences, rendered reports, logs) is written by okstra's
  commands only; the lead may edit a run's prompts and a report's data file
  that no sidecar has decided yet, a worker its own result and evidence;
- `.claude/` settings and okstra's own installation are not written during a run;
- during an implementation stage (an approved stage is recorded) the lead and
  an implementer worker write only the stage's planned paths;
- analyst, planner, verifier, critic, report-writer and translator workers
  (and an implementer outside a stage) write only their own result file and
  evidence folder;
- a file with more than one hard link is not written (which name is it?).

Paths are resolved the way the filesystem will: relative to the hook input's
`cwd`, `~`, `..`, and symlinks (a symlink inside an allowed folder pointing
outside is judged by where it points). Allowances match case-sensitively;
sidecar and state detection matches case-insensitively, so on a
case-insensitive filesystem a case-changed spelling cannot reach them. Planned
paths are project-relative globs matched segment by segment: `*`, `?` and
`[...]` stay within one segment, `**` spans any number of segments, and a
pattern that names a folder covers everything inside it.

Bash: allow what is understood and allowed, deny the rest
(`harness.bash_policy`): simple commands from an allow-list (read-only tools,
okstra's commands each with its rule, the run's `allowedCommands`) whose every
written file is judged like a Write. A stage's scope is also checked after the
fact against the git diff (stage-check); this hook is the first line, not the
only one.

The hook never blocks: state files are type-checked before opening and opened
with O_NONBLOCK; nothing is globbed; inputs past a size are denied unread.

Hot path (DESIGN §13): this module imports `posix`, `sys`, `okstra.core.fastfs`,
`okstra.core.jsonlite`, `okstra.core.errors` and `okstra.model.active_run` only.
The Bash reader (`harness.bash_policy`), `fnmatch`, `json` and okstra's
settings are imported inside the branches that need them. Paths are handled
with `core.fastfs` (the `os.path` algorithms on the builtin `posix` module)
rather than through `core.paths`, which imports `pathlib`.
"""

import posix
import sys

from okstra.core import fastfs, jsonlite, names
from okstra.core.errors import OkstraError
from okstra.core.names import DATA_SUFFIX, OKSTRA_DIR, REPORT_PREFIX, REPORTS_DIR, RESPONSES_DIR
from okstra.model import active_run, roles

FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
SIDECAR_PARTS = (REPORTS_DIR, RESPONSES_DIR)
CLAUDE_DIR = ".claude"
MAX_INPUT = 1 << 23  # hook JSON past 8 MiB is not read (answer within 1 s, DESIGN §10)
MAX_COMMAND = 1 << 16  # a Bash command past 64 KiB is not read
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
        raw = stdin.read(MAX_INPUT + 1)
        data, malformed = _parse(raw) if len(raw) <= MAX_INPUT else ({}, f"more than {MAX_INPUT} bytes")
        root = _project_root(env, data)
        active = root is not None and signalled(root)
        if not active:
            if malformed:
                _log(env, f"malformed hook input with no active run, allowed: {malformed}")
            return 0
        reason = f"the hook input is not usable ({malformed})" if malformed else decide(data, env, root)
    except OkstraError as exc:
        if not active:
            _log(env, f"error with no active run, allowed: {exc}")
            return 0
        reason = f"the active run's state is not usable, so nothing is allowed until it is: {exc}"
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


def signalled(root: str) -> bool:
    """Is a run active in `root`: the pointer or its seal is there (any type, even a
    dangling link) — the same test as the sh door's `[ -e ] || [ -L ]`."""
    return active_run.present(fastfs.join(root, active_run.ACTIVE_RUN_FILE)) or active_run.present(
        fastfs.join(root, active_run.SEAL_FILE)
    )


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
        if signalled(here):
            return here
        parent = fastfs.dirname(here)
        if parent == here:
            return None
        here = parent


def _run_exists(env) -> bool:
    """After an error before the input was understood: is a run active around here?"""
    try:
        root = _project_root(env, {})
        return root is not None and signalled(root)
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
        self.scope = roles.write_scope(self.role)
        self.is_lead = self.scope == roles.SCOPE_LEAD
        self.result = _real(env.get("OKSTRA_RESULT_PATH"), root, env)
        self.evidence = _real(env.get("OKSTRA_EVIDENCE_DIR"), root, env)
        self.stage = self.run.stage if self.run is not None else None
        self.claude_dir = fastfs.realpath(fastfs.join(root, CLAUDE_DIR))
        self.install_dir = _install_dir(root)
        self._planned = None

    @property
    def planned(self) -> "_Planned":
        if self._planned is None:
            self._planned = _Planned(self.stage.planned_paths if self.stage else (), self.root)
        return self._planned

    def rel(self, path: str) -> str:
        return _relative(path, self.root)


def _install_dir(root: str) -> str | None:
    """okstra's own files (hooks, lib): not written during a run, unless okstra is the
    project being worked on."""
    here = fastfs.realpath(fastfs.dirname(fastfs.dirname(fastfs.dirname(fastfs.dirname(__file__)))))
    return None if _inside(here, root) or _inside(root, here) else here


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
    if _is_sidecar(lexical, ctx) or _is_sidecar(path, ctx):
        return (
            f"{via} to {shown} touches a user-response sidecar, which only the user writes "
            "(through the report's HTML view Export or user-response-write in their own terminal); "
            "allowed: show the user the open questions (user-response-show) and wait for their answer"
        )
    if path in ctx.protected or lexical in ctx.protected:
        return (
            f"{via} to {shown} would change the active run, which render-bundle writes; "
            "allowed: run render-bundle (a new stage: render-bundle --stage N) to change what is approved"
        )
    links = _links(path)
    if links > 1:
        return f"{via} to {shown}: the file has {links} hard links, so the guard cannot tell which file it is; allowed: a file with one name"
    for folder, what in ((ctx.claude_dir, "Claude Code's settings (.claude/)"), (ctx.install_dir, "okstra's installation")):
        if folder and (_inside(path, folder) or _inside(lexical, folder)):
            return f"{via} to {shown} changes {what}, which stays as it is during a run; allowed: ask the user"
    if _inside(path.casefold(), ctx.okstra_dir.casefold()) or _inside(lexical.casefold(), ctx.okstra_dir.casefold()):
        return _judge_okstra(ctx, path, via, shown)
    if lenient and not _inside(path, ctx.root) and _is_scratch(path, ctx.env):
        return None
    if ctx.is_lead:
        if ctx.stage is None or ctx.planned.covers(path):
            return None
        return f"{via} to {shown} is outside {_stage_name(ctx)}; allowed: {_stage_allowance(ctx)}"
    if _own_output(ctx, path):
        return None
    if ctx.scope == roles.SCOPE_STAGE and ctx.stage is not None:
        if ctx.planned.covers(path):
            return None
        return f"{via} to {shown} by {ctx.role} worker {ctx.worker_id} is outside {_stage_name(ctx)}; allowed: {_stage_allowance(ctx)}"
    why = "" if ctx.scope != roles.SCOPE_STAGE else " (no implementation stage is approved)"
    return (
        f"{via} to {shown}: {ctx.role} worker {ctx.worker_id} may write only its own result and evidence{why}; "
        f"allowed: {_own_allowance(ctx)}"
    )


def _judge_okstra(ctx: _Context, path: str, via: str, shown: str) -> str | None:
    """Under `.okstra/`: okstra's state is written by okstra's commands only (DESIGN §10).
    The lead may edit a run's prompts and an undecided report's data file; a worker its
    own result and evidence, when they lie inside the active run's folder."""
    run_dir = fastfs.realpath(fastfs.join(ctx.root, ctx.run.run_dir))
    parts = path[len(run_dir) + 1 :].split("/") if _inside(path, run_dir) and path != run_dir else []
    if not ctx.is_lead and parts and parts[0] == "results" and _own_output(ctx, path):
        return None
    if ctx.is_lead and len(parts) >= 2 and parts[0] == "prompts":
        return None
    if ctx.is_lead and len(parts) == 2 and parts[0] == REPORTS_DIR and parts[1].endswith(DATA_SUFFIX):
        decided = _sidecar_of(run_dir, parts[1])
        if decided is None or not active_run.present(decided):
            return None
        return (
            f"{via} to {shown}: the user has answered this report (its sidecar exists), so its data is what "
            "they decided on; allowed: a new report through round-prepare/report-draft"
        )
    return (
        f"{via} to {shown} changes okstra's state, which only okstra's commands write; allowed: "
        "the run's prompts and an undecided report's .data.json (lead), a worker's own result and evidence; "
        "use okstra's commands for the rest"
    )


def _sidecar_of(run_dir: str, data_name: str) -> str | None:
    """The sidecar path of `final-report-<type>-<NNN>.data.json` (model.names)."""
    stem = data_name[: -len(DATA_SUFFIX)]
    if not stem.startswith(REPORT_PREFIX):
        return None
    return fastfs.join(run_dir, *SIDECAR_PARTS, names.sidecar_name(stem))


def _links(path: str) -> int:
    try:
        info = posix.lstat(path)
    except (OSError, ValueError):
        return 0
    return info.st_nlink if info.st_mode & 0o170000 == 0o100000 else 0


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


def _is_scratch(path: str, env) -> bool:
    if path in DEVICES or path.startswith("/dev/fd/") or path.startswith("/proc/self/fd/"):
        return True
    temps = list(TEMP_DIRS)
    if env.get("TMPDIR"):
        temps.append(env["TMPDIR"])
    return any(_inside(path, fastfs.realpath(t)) for t in temps)


def planned_matcher(patterns: tuple[str, ...], root: str) -> "_Planned":
    """The planned-paths matcher (`.covers(absolute_path)`), for `stage-check` too: one set of glob rules."""
    return _Planned(tuple(patterns), root)


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


def _match(pattern: list[str], i: int, parts: list[str], j: int, memo: dict | None = None) -> bool:
    """Does `pattern[i:]` match `parts[j:k]` for some k (a folder covers its contents)?
    Memoised on (i, j), so many `**` cost len(pattern) x len(parts) steps, not an exponent."""
    if memo is None:
        memo = {}
    key = (i, j)
    if key in memo:
        return memo[key]
    if i == len(pattern):
        found = True
    elif pattern[i] == "**":
        found = any(_match(pattern, i + 1, parts, k, memo) for k in range(j, len(parts) + 1))
    else:
        found = j < len(parts) and _segment(pattern[i], parts[j]) and _match(pattern, i + 1, parts, j + 1, memo)
    memo[key] = found
    return found


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
    if len(command) > MAX_COMMAND:
        return (
            f"a Bash command of {len(command)} characters is more than the guard reads ({MAX_COMMAND}); allowed: shorter commands"
        )
    from okstra.harness import bash_policy

    return bash_policy.check(command, _Asker(ctx))


class _Asker:
    """What the Bash allow-list needs to know about the caller."""

    def __init__(self, ctx: _Context) -> None:
        self.ctx = ctx
        self.cwd = ctx.cwd
        self.home = fastfs.expanduser("~", ctx.env)
        self.allowed_commands = ctx.run.allowed_commands
        self.may_commit = ctx.is_lead or ctx.scope == roles.SCOPE_STAGE
        self.okstra_bin = fastfs.realpath(
            fastfs.join(fastfs.dirname(fastfs.dirname(fastfs.dirname(fastfs.dirname(__file__)))), "bin")
        )

    def judge_write(self, target: str, cwd: str) -> str | None:
        return _judge(self.ctx, target, "Bash write", lenient=True, cwd=cwd)
