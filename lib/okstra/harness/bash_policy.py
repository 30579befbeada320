"""Which Bash commands the write-guard allows during a run: an allow-list (DESIGN §10).

What a shell command writes cannot be known in general, so the guard does not
look for bad spellings: it allows a command only when every part of it is
understood and allowed, and denies the rest with a reason that says what is
allowed.

Understood: the command is split with a conservative tokeniser into simple
commands joined by `;`, `&&`, `||`, `|`, `&` or newlines. Words may be quoted
('...', "..." without `$` or backticks inside) or backslash-escaped; `~` and
`~/` at a word's start mean HOME. Anything the tokeniser cannot resolve without
running the shell is refused: `$` (variables, `$(...)`, `$'...'`), backticks,
unquoted glob or brace characters (`* ? [ ] { }`), `( )` (subshells, process
substitution), here-documents and here-strings, `!`, variable assignments, and
shell keywords (`if`, `for`, ...). The file system is never globbed and no
file is read.

Allowed: each simple command's first word names a command of the allow-list
below, its options pass that command's rule, and every file it writes (an
output redirection, or the operands of the few writing commands listed) is
judged like a Write by the caller (planned paths, own result, scratch).
Besides the list: the run's `allowedCommands` (config `allowed-commands`,
copied into the active run by render-bundle), in Claude Code's `Bash(...)`
style: `make test` allows exactly those words, `npm run build:*` those words
followed by anything.

Hot path: imports nothing (`re` only for a `sed` script, inside the branch).
"""

# Read-only tools: any operand, options refused where they write or run a program.
_READ_ONLY = frozenset(
    {
        "basename", "cat", "cksum", "cmp", "column", "comm", "cut", "date", "df", "diff", "dirname",
        "du", "echo", "egrep", "expand", "false", "fgrep", "file", "fmt", "fold", "grep", "head",
        "hexdump", "id", "jq", "join", "ls", "md5sum", "nl", "od", "paste", "printenv", "printf",
        "pwd", "readlink", "realpath", "rev", "seq", "sha1sum", "sha256sum", "sha512sum", "b2sum",
        "sleep", "stat", "strings", "tac", "tail", "test", "tr", "true", "uname", "unexpand", "wc",
        "which", "whoami", "rg", "tree", "uniq", "xxd", "sort", "find", "cd", "sed",
    }
)  # fmt: skip
# Options that make a read-only tool write a file or run a program.
_WRITING_OPTIONS = {
    "sort": ("-o", "--output", "--compress-program"),
    "rg": ("--pre",),
    "tree": ("-o",),
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"),
    "sed": ("-i", "--in-place", "-s", "--separate", "-f", "--file"),
    "date": ("-s", "--set"),
    "xxd": ("-r", "--revert"),
    "file": ("-C", "--compile"),
}
# Tools whose second operand is an output file (uniq IN OUT, xxd IN OUT).
_ONE_OPERAND = frozenset({"uniq", "xxd"})
# Writing tools whose every operand (or destination) the caller judges like a Write.
_WRITERS = {
    "mkdir": frozenset({"-p", "-v", "--parents", "--verbose"}),
    "touch": frozenset({"-c", "--no-create"}),
    "rm": frozenset({"-r", "-R", "-f", "-v", "-d", "-rf", "-fr", "-Rf", "-fR", "--recursive", "--force", "--verbose", "--dir"}),
    "rmdir": frozenset({"-p", "-v", "--parents", "--verbose"}),
    "cp": frozenset(
        {
            "-r",
            "-R",
            "-a",
            "-p",
            "-f",
            "-n",
            "-v",
            "-rf",
            "-fr",
            "--recursive",
            "--archive",
            "--force",
            "--no-clobber",
            "--verbose",
        }
    ),
    "mv": frozenset({"-f", "-n", "-v", "--force", "--no-clobber", "--verbose"}),
    "tee": frozenset({"-a", "--append"}),
}
_GIT_READ = frozenset(
    {"status", "log", "diff", "show", "rev-parse", "ls-files", "blame", "grep", "describe", "shortlog",
     "cat-file", "ls-tree", "merge-base", "rev-list", "whatchanged", "name-rev", "diff-tree", "diff-files",
     "diff-index", "for-each-ref", "show-ref", "count-objects", "check-ignore", "version", "help"}
)  # fmt: skip
# Subcommands that only list when given no operand or only these options.
_GIT_LISTING = {
    "branch": frozenset({"-a", "-r", "-v", "-vv", "--list", "-l", "--show-current", "--all", "--remotes", "--verbose"}),
    "tag": frozenset({"-l", "--list"}),
    "remote": frozenset({"-v", "--verbose"}),
    "stash": frozenset({"list"}),
    "worktree": frozenset({"list"}),
    "reflog": frozenset({"show"}),
    "config": frozenset({"--get", "--get-all", "--list", "-l", "--show-origin", "--get-regexp"}),
}
_GIT_STAGE_WRITE = frozenset({"add", "commit"})  # write only the repository (.git), never files

# okstra's own commands (bin/): each with its rule. `okstra NOUN VERB` is the same door.
OKSTRA_READ_ONLY = frozenset(
    {"okstra", "team-status", "worker-wait", "worker-probe", "user-response-list", "user-response-show",
     "stage-map", "prompt-check"}
)  # fmt: skip
OKSTRA_RUNNING = frozenset(
    {"render-bundle", "team-dispatch", "team-reclaim", "team-teardown", "team-watch", "round-prepare",
     "report-draft", "render-final-report", "render-report-views", "report-finalize", "stage-record",
     "worker-run", "run-end", "stage-check", "stage-merge", "user-response-import"}
)  # fmt: skip
# Doors whose rule depends on their arguments (see _okstra); every bin/ door is in one of the three.
OKSTRA_BY_ARGUMENTS = frozenset({"user-response-write", "hooks-install", "okstra-config", "runs-prune"})
# The dispatcher's own words: they print (help, version, a completion script) and run nothing.
_OKSTRA_OWN_WORDS = frozenset({"-h", "--help", "--version", "help", "completion"})
_KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "select",
     "function", "time", "coproc", "[[", "]]", "{", "}", "!", "eval", "exec", "source", ".", "alias"}
)  # fmt: skip

ASK = "ask the user to run it in their own terminal, or to add it to config allowed-commands"


class Denied(Exception):
    """A part of the command that is not understood or not allowed; the message says which."""


def check(command: str, asker) -> str | None:
    """None when every part of `command` is understood and allowed, else the reason.

    `asker` supplies: `cwd`, `home`, `allowed_commands`, `may_commit` (git add/commit),
    `okstra_bin` (okstra's door folder, resolved) and `judge_write(path, cwd)` -> reason or None.
    """
    try:
        cwd = asker.cwd
        for words, redirects in tokenise(command, asker.home):
            for op, target in redirects:
                if op in ("<", "0<"):
                    continue
                if target in ("/dev/null", "/dev/stdout", "/dev/stderr"):
                    continue
                reason = asker.judge_write(target, cwd)
                if reason is not None:
                    raise Denied(reason)
            if words:
                cwd = _command(words, cwd, asker)
    except Denied as exc:
        return f"{exc}; allowed: {summary()}; otherwise {ASK}"
    return None


def summary() -> str:
    return (
        "in Bash during a run, read-only tools (cat, grep, ls, git status/log/diff/show, ...), okstra's commands, "
        "mkdir/touch/cp/mv/rm/tee and > onto paths a Write may change, and the run's allowedCommands, "
        "as plain words without $, backticks, globs, here-documents or interpreters"
    )


# ---------------------------------------------------------------- tokeniser

_SEPARATORS = ("&&", "||", "|&", ";", "&", "|", "\n")
_UNQUOTED_REFUSED = {
    "$": "a $ expansion (variable, $(...), $'...')",
    "`": "a backtick substitution",
    "*": "a glob (*)",
    "?": "a glob (?)",
    "[": "a glob ([...])",
    "]": "a glob ([...])",
    "{": "a brace expansion or group ({...})",
    "}": "a brace expansion or group ({...})",
    "(": "a subshell or process substitution ((...))",
    ")": "a subshell or process substitution ((...))",
    "!": "a ! (negation or history)",
}


Simple = tuple[list[str], list[tuple[str, str]]]  # (words, [(redirect operator, target)])


def tokenise(command: str, home: str) -> list[Simple]:
    """Simple commands as (words, [(redirect operator, target)]); Denied when not understood."""
    if "\x00" in command:
        raise Denied("the command holds a NUL byte")
    return _Tokeniser(command, home).run()


class _Tokeniser:
    """A conservative reading of one shell command line: quotes, escapes, redirections and
    separators are understood; every expansion, glob, group or here-document is Denied."""

    def __init__(self, command: str, home: str) -> None:
        self.command, self.home, self.n = command, home, len(command)
        self.result: list[Simple] = []
        self.words: list[str] = []
        self.redirects: list[tuple[str, str]] = []
        self.pending: str | None = None  # a redirect operator waiting for its target
        self.word: list[str] = []
        self.has_word = False
        self.quoted = False  # the current word has a quoted part (no ~ expansion, not an fd number)

    def run(self) -> list[Simple]:
        command, n, i = self.command, self.n, 0
        while i < n:
            ch = command[i]
            if ch == "\\":
                i = self._escape(i)
            elif ch == "'":
                i = self._single_quoted(i)
            elif ch == '"':
                i = self._double_quoted(i)
            elif ch == "#" and not self.has_word:
                end = command.find("\n", i)
                i = n if end < 0 else end
            elif ch in " \t\r":
                self._finish_word()
                i += 1
            elif ch in "<>" or command.startswith("&>", i):
                i = self._redirection(i)
            else:
                sep = next((s for s in _SEPARATORS if command.startswith(s, i)), None)
                if sep is not None:
                    self._finish_command()
                    i += len(sep)
                    continue
                if ch in _UNQUOTED_REFUSED:
                    raise Denied(f"{_UNQUOTED_REFUSED[ch]} is not resolved by the guard")
                if ch < " ":
                    raise Denied(f"a control character {ch!r}")
                self.word.append(ch)
                self.has_word = True
                i += 1
        self._finish_command()
        return self.result

    def _escape(self, i: int) -> int:
        command = self.command
        if i + 1 < self.n and command[i + 1] == "\n":
            return i + 2  # line continuation
        if i + 1 >= self.n:
            raise Denied("a trailing backslash")
        self.word.append(command[i + 1])
        self.has_word = self.quoted = True
        return i + 2

    def _single_quoted(self, i: int) -> int:
        end = self.command.find("'", i + 1)
        if end < 0:
            raise Denied("an unterminated ' quote")
        self.word.append(self.command[i + 1 : end])
        self.has_word = self.quoted = True
        return end + 1

    def _double_quoted(self, i: int) -> int:
        command, n, word = self.command, self.n, self.word
        j = i + 1
        while j < n and command[j] != '"':
            c = command[j]
            if c in "$`":
                raise Denied(f"{_UNQUOTED_REFUSED[c]} inside double quotes")
            if c == "\\" and j + 1 < n and command[j + 1] in '"\\$`\n':
                if command[j + 1] != "\n":
                    word.append(command[j + 1])
                j += 2
                continue
            word.append(c)
            j += 1
        if j >= n:
            raise Denied('an unterminated " quote')
        self.has_word = self.quoted = True
        return j + 1

    def _redirection(self, i: int) -> int:
        command, n = self.command, self.n
        fd = ""
        if self.has_word and not self.quoted and "".join(self.word).isdigit():
            fd = "".join(self.word)
            self.word, self.has_word = [], False
        else:
            self._finish_word()
        if self.pending is not None:
            raise Denied(f"a redirection {self.pending} without a target")
        if command.startswith("<<", i):
            raise Denied("a here-document or here-string (<<); pass the input as a file")
        j = i + 1 if command[i] in "<>" else i + 2
        while j < n and command[j] in ">|":
            j += 1
        op = fd + command[i:j]
        if j < n and command[j] == "&":  # >&2, 2>&1, <&0, >&-: a descriptor, no file
            k = j + 1
            while k < n and (command[k].isdigit() or command[k] == "-"):
                k += 1
            if k > j + 1 and (k == n or command[k] in " \t\n;&|"):
                return k
            raise Denied(f"the redirection {op}& to something other than a descriptor")
        if op.rstrip("0123456789").startswith("<>") or "<>" in op:
            op = op.replace("<>", ">")  # read-write opens for writing: judged as a write
        self.pending = op
        return j

    def _finish_word(self) -> None:
        if not self.has_word:
            return
        text = "".join(self.word)
        if not self.quoted and (text == "~" or text.startswith("~/")):
            text = self.home.rstrip("/") + text[1:]
        elif not self.quoted and text.startswith("~"):
            raise Denied(f"{text!r}: ~user is not resolved")
        if self.pending is not None:
            self.redirects.append((self.pending, text))
            self.pending = None
        else:
            self.words.append(text)
        self.word, self.has_word, self.quoted = [], False, False

    def _finish_command(self) -> None:
        self._finish_word()
        if self.pending is not None:
            raise Denied(f"a redirection {self.pending} without a target")
        if self.words or self.redirects:
            self.result.append((self.words, self.redirects))
        self.words, self.redirects = [], []


# ---------------------------------------------------------------- commands


def _command(words: list[str], cwd: str, asker) -> str:
    """Judge one simple command; return the working folder after it (cd)."""
    first = words[0]
    if "=" in first and first.split("=", 1)[0].replace("_", "a").isalnum():
        raise Denied(f"the variable assignment {first.split('=', 1)[0]}= (it can change what runs)")
    if first in _KEYWORDS:
        raise Denied(f"the shell keyword or builtin {first!r}; only simple commands are read")
    if _configured(words, asker.allowed_commands):
        return cwd
    name = _door_name(first, asker.okstra_bin)
    if name is not None:
        _okstra(name, words, asker)
        return cwd
    if "/" in first:
        raise Denied(f"{first!r} is a path to a program that is neither okstra's nor in allowedCommands")
    if first == "git":
        _git(words[1:], asker)
        return cwd
    if first in _WRITERS:
        _writer(first, words[1:], cwd, asker)
        return cwd
    if first not in _READ_ONLY:
        raise Denied(f"{first!r} is not on the allow-list")
    args = words[1:]
    for option in _WRITING_OPTIONS.get(first, ()):
        for arg in args:
            if arg == option or (option.startswith("--") and arg.startswith(option + "=")) or _in_cluster(arg, option):
                raise Denied(f"{first} {option} writes a file or runs a program")
    if first in _ONE_OPERAND and len([a for a in args if not a.startswith("-")]) > 1:
        raise Denied(f"{first} with a second operand writes that file")
    if first == "sed":
        _sed(args)
    if first == "cd":
        rest = [a for a in args if a != "--"]
        if not rest:
            return asker.home
        if len(rest) > 1 or rest[0].startswith("-"):
            raise Denied("cd takes one folder here")
        return _join(cwd, rest[0])
    return cwd


def _in_cluster(arg: str, option: str) -> bool:
    """A short option inside a cluster or with its value attached (-io, -ofile, -ni)."""
    if len(option) != 2 or option.startswith("--") or not arg.startswith("-") or arg.startswith("--"):
        return False
    return option[1] in arg[1:] if option[1] in "io" else arg.startswith(option)


def _join(cwd: str, path: str) -> str:
    from okstra.core import fastfs

    return fastfs.normpath(fastfs.join(cwd, path))


def _configured(words: list[str], patterns: tuple[str, ...]) -> bool:
    """Claude Code's Bash(...) rule style: `cmd args` exactly, `cmd args:*` as a prefix."""
    line = " ".join(words)
    for pattern in patterns:
        pattern = pattern.strip()
        if pattern.startswith("Bash(") and pattern.endswith(")"):
            pattern = pattern[5:-1]
        if pattern.endswith(":*"):
            prefix = pattern[:-2].strip()
            if prefix and (line == prefix or line.startswith(prefix + " ")):
                return True
        elif pattern and line == pattern:
            return True
    return False


def _door_name(first: str, okstra_bin: str | None) -> str | None:
    from okstra.core import fastfs

    name = fastfs.basename(first)
    if name not in _ALL_DOORS:
        return None
    if "/" in first:
        real = fastfs.dirname(fastfs.realpath(first))
        if okstra_bin is None or real != okstra_bin:
            raise Denied(f"{first!r} is not okstra's {name} (okstra's doors are in {okstra_bin})")
    return name


# `config` is the word of `okstra config`, whose door is `okstra-config` (no bare name on PATH).
_ALL_DOORS = OKSTRA_READ_ONLY | OKSTRA_RUNNING | OKSTRA_BY_ARGUMENTS | {"config"}
# user-response-write without a decision block: answers relayed for the user (marked so).
_ANSWER_OPTIONS = frozenset({"--report", "--answers", "--project-root", "--json", "--help", "-h"})


def _okstra(name: str, words: list[str], asker) -> None:
    args = words[1:]
    if name == "okstra":  # `okstra NOUN VERB ...` runs the door NOUN-VERB (commands/okstra.py)
        if not args or args[0] in _OKSTRA_OWN_WORDS:
            return None
        for length in range(min(3, len(args)), 0, -1):
            joined = "-".join(args[:length])
            if joined in _ALL_DOORS and joined != "okstra":
                return _okstra(joined, [joined, *args[length:]], asker)
        raise Denied(f"okstra {' '.join(args[:3])} is not a command the guard knows")
    if name == "user-response-write":
        for arg in args:
            option = arg.split("=", 1)[0]
            if arg.startswith("-") and option not in _ANSWER_OPTIONS:
                # --plan-decision records PLAN DECISION, --scope-waiver SCOPE WAIVER, ... (DESIGN §9).
                block = "asks for them" if option == "--interactive" else option.lstrip("-").replace("-", " ").upper()
                raise Denied(
                    f"user-response-write {option} records a decision ({block}), which only the user makes: "
                    "in the report's HTML view (Export) or with user-response-write in their own terminal"
                )
        return None
    if name == "user-response-import":
        raise Denied("user-response-import records the user's exported decisions; the user runs it")
    if name == "runs-prune" and "--dry-run" not in args:
        raise Denied("runs-prune removes runs (an approved plan among them); during a run only --dry-run lists them")
    if name == "hooks-install":
        raise Denied("hooks-install changes the hooks that guard this run; the user runs it when no run is active")
    if name in ("config", "okstra-config"):
        verb = next((a for a in args if not a.startswith("-")), "")
        if verb not in ("get", "list", "path", ""):
            raise Denied(f"config {verb} changes okstra's settings (allowed-commands among them) during a run")
    return None


def _git(args: list[str], asker) -> None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "-C" and i + 1 < len(args):
            i += 2
            continue
        if args[i] in ("--no-pager", "--no-optional-locks", "-P"):
            i += 1
            continue
        raise Denied(f"git {args[i]} (a global option that can change what git runs or writes)")
    if i == len(args):
        return
    sub, rest = args[i], args[i + 1 :]
    if any(a == "--output" or a.startswith("--output=") or a in ("--ext-diff", "--textconv", "--exec") for a in rest):
        raise Denied(f"git {sub} with --output/--ext-diff/--textconv/--exec writes a file or runs a program")
    if sub in _GIT_READ:
        return
    if sub in _GIT_LISTING:
        allowed = _GIT_LISTING[sub]
        if all(
            a in allowed
            or (sub == "config" and not a.startswith("-") and any(o in rest for o in ("--get", "--get-all", "--get-regexp")))
            for a in rest
        ):
            return
        raise Denied(f"git {sub} {' '.join(rest)} changes the repository; only its listing forms are allowed")
    if sub in _GIT_STAGE_WRITE and asker.may_commit:
        if any(a in ("--amend", "-a", "--all", "-A", "--fixup", "--squash", "-f", "--force") for a in rest):
            raise Denied(f"git {sub} with an option that reaches beyond the named paths")
        if sub == "add":
            for path in (a for a in rest if not a.startswith("-")):
                reason = asker.judge_write(path, asker.cwd)
                if reason is not None:
                    raise Denied(f"git add {path}: {reason}")
        return
    raise Denied(f"git {sub} changes files or the repository (checkout, apply, reset, ... are the user's)")


def _writer(name: str, args: list[str], cwd: str, asker) -> None:
    operands: list[str] = []
    options_done = False
    for arg in args:
        if not options_done and arg == "--":
            options_done = True
        elif not options_done and arg.startswith("-") and arg != "-":
            if arg not in _WRITERS[name]:
                raise Denied(f"{name} {arg} is not an option the guard reads (allowed: {' '.join(sorted(_WRITERS[name]))})")
        else:
            operands.append(arg)
    if not operands and name != "tee":
        raise Denied(f"{name} without operands")
    if name == "cp":
        if len(operands) < 2:
            raise Denied("cp needs a source and a destination")
        operands = operands[-1:]  # only the destination is written; sources are read
    for target in operands:
        reason = asker.judge_write(target, cwd)
        if reason is not None:
            raise Denied(f"{name} {target}: {reason}")
        if name in ("cp", "mv"):
            from okstra.core import fastfs

            full = _join(cwd, target)
            if fastfs.isdir(full):
                for source in args:
                    if not source.startswith("-") and source != target:
                        inner = asker.judge_write(fastfs.join(full, fastfs.basename(source.rstrip("/"))), cwd)
                        if inner is not None:
                            raise Denied(f"{name} into {target}: {inner}")


def _sed(args: list[str]) -> None:
    """sed only with scripts of print/delete/quit/substitute (no w, W, e, r, R commands or flags)."""
    import re

    scripts: list[str] = []
    i = 0
    given = False
    while i < len(args):
        arg = args[i]
        if arg in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1])
            given = True
            i += 2
            continue
        if arg.startswith("--expression="):
            scripts.append(arg.split("=", 1)[1])
            given = True
        elif arg.startswith("-") and arg != "-":
            if not all(c in "nErsuz" for c in arg[1:]) and arg not in (
                "--quiet",
                "--silent",
                "--regexp-extended",
                "--posix",
                "--null-data",
            ):
                raise Denied(f"sed {arg} is not an option the guard reads")
        elif not given:
            scripts.append(arg)
            given = True
        i += 1
    address = r"(?:\d+|\$|/(?:[^/\\]|\\.)*/)"
    command = r"(?:[pdqP=]|s(/(?:[^/\\]|\\.)*/(?:[^/\\]|\\.)*/)[gpI0-9]*)"
    one = rf"\s*(?:{address}(?:\s*,\s*{address})?)?\s*!?\s*{command}\s*"
    pattern = re.compile(rf"^{one}(?:[;\n]{one})*;?\s*$")
    for script in scripts:
        if not pattern.match(script):
            raise Denied(f"the sed script {script[:40]!r} (only p, d, q, = and s/// with flags g, p, I, N are read)")
