"""The writes a shell command spells out, for the write-guard's Bash check (DESIGN §10).

What a command writes cannot be known in general: this reads the writes it can
see — redirections (`>`, `>>`, `>|`, `&>`, `N>`), `tee`, `cp`/`mv`/`install`/
`ln`/`rsync` destinations (also `-t DIR`), `dd of=`, `sed -i`/`perl -i`,
`touch`, `truncate`, `rm`, `mkdir` — honouring quotes, backslashes, `cd` within
the command, `VAR=` prefixes and wrappers like `sudo`/`env`/`timeout`, and
skipping here-document bodies. `$VAR` is expanded from the hook's environment;
a target that still holds `$(...)` or backticks is left to the after-the-fact
git diff check. Loaded only for Bash calls; no `os`, `re` or `shlex` (see
`core.fastfs`).
"""

from okstra.core import fastfs

_WILDCARDS = frozenset("*?[")


def _expand_vars(text: str, env) -> str:
    """`$NAME` and `${NAME}` from `env`; unknown names are left as they are."""
    out = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "$" and i + 1 < n and text[i + 1] == "{":
            end = text.find("}", i + 2)
            name = text[i + 2 : end] if end > 0 else ""
            if end > 0 and name in env:
                out.append(env[name])
                i = end + 1
                continue
        elif ch == "$" and i + 1 < n and (text[i + 1].isalpha() or text[i + 1] == "_"):
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            if text[i + 1 : j] in env:
                out.append(env[text[i + 1 : j]])
                i = j
                continue
        out.append(ch)
        i += 1
    return "".join(out)


_WRAPPERS = frozenset({"sudo", "env", "command", "nohup", "time", "nice", "exec", "builtin", "doas", "stdbuf", "timeout"})
_ALL_ARGS = frozenset({"tee", "touch", "rm", "unlink", "mkdir", "rmdir", "shred"})
_DEST_LAST = frozenset({"cp", "mv", "install", "ln", "rsync"})
_OPTION_VALUES = {"truncate": {"-s", "--size", "-r", "--reference"}, "install": {"-m", "--mode", "-o", "-g"}}


def write_targets(command: str, cwd: str, env) -> list[tuple[str, str]]:
    """The files a command visibly writes, each with the folder it is relative to."""
    targets: list[tuple[str, str]] = []
    for words, redirects in _simple_commands(command):
        for target in redirects:
            targets.append((target, cwd))
        args = _strip_wrappers(words)
        if not args:
            continue
        name = fastfs.basename(args[0])
        if name == "cd":
            rest = [a for a in args[1:] if not a.startswith("-")]
            if rest and "$" not in rest[0] and "`" not in rest[0]:
                cwd = fastfs.normpath(fastfs.join(cwd, fastfs.expanduser(rest[0], env)))
            elif not rest:
                cwd = fastfs.expanduser("~", env)
            continue
        for target in _command_targets(name, args[1:], cwd, env):
            targets.append((target, cwd))
    return [(t, c) for t, c in _expand(targets, env) if t]


def _strip_wrappers(words: list[str]) -> list[str]:
    i = 0
    while i < len(words):
        word = words[i]
        if "=" in word and not word.startswith("-") and word.split("=", 1)[0].replace("_", "a").isalnum():
            i += 1  # VAR=value prefix
        elif word in _GROUPING:
            i += 1
        elif fastfs.basename(word) in _WRAPPERS:
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
            if fastfs.basename(word) == "timeout" and i < len(words):
                i += 1  # the duration
        else:
            break
    return words[i:]


def _split_options(name: str, args: list[str]) -> tuple[list[str], dict[str, str]]:
    plain: list[str] = []
    options: dict[str, str] = {}
    takes_value = _OPTION_VALUES.get(name, set())
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            plain.extend(args[i + 1 :])
            break
        if arg.startswith("-") and arg != "-":
            if "=" in arg and arg.startswith("--"):
                key, value = arg.split("=", 1)
                options[key] = value
            elif arg in ("-t", "--target-directory") or arg in takes_value:
                options[arg] = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            else:
                options[arg] = ""
        else:
            plain.append(arg)
        i += 1
    return plain, options


def _command_targets(name: str, args: list[str], cwd: str, env) -> list[str]:
    if name == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    if name in ("sed", "perl"):
        return _in_place_files(name, args)
    if name not in _ALL_ARGS and name not in _DEST_LAST and name != "truncate":
        return []
    plain, options = _split_options(name, args)
    if name in _ALL_ARGS or name == "truncate":
        return plain
    folder = options.get("-t") or options.get("--target-directory")
    if folder:
        return [fastfs.join(folder, fastfs.basename(src)) for src in plain] + [folder]
    if name == "install" and "-d" in options:
        return plain
    if len(plain) < 2:
        return []
    dest, sources = plain[-1], plain[:-1]
    full = fastfs.join(cwd, fastfs.expanduser(dest, env))
    if fastfs.isdir(full) or dest.endswith("/"):
        return [fastfs.join(dest, fastfs.basename(src.rstrip("/"))) for src in sources] + [dest]
    return [dest]


def _in_place_files(name: str, args: list[str]) -> list[str]:
    """The files `sed -i` / `perl -i` rewrite: the operands after the script."""
    in_place = False
    script_given = False
    files: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            files.extend(args[i + 1 :] if script_given else args[i + 2 :])
            break
        if arg.startswith("--"):
            in_place |= arg.startswith("--in-place")
            if arg in ("--expression", "--file"):
                script_given = True
                i += 1
        elif arg.startswith("-") and arg != "-":
            flags = arg[1:]
            if name == "sed":
                at = flags.find("i")
                if at >= 0 and all(c in "nErsuz" for c in flags[:at]):
                    in_place = True  # -i, -i.bak, -ni: the rest of the cluster is a suffix
                elif flags[-1] in "ef":
                    script_given = True
                    i += 1
            else:
                in_place |= "i" in flags.split(".")[0]
                if flags.split(".")[0].endswith("e"):
                    script_given = True
                    i += 1
        elif not script_given:
            script_given = True
        else:
            files.append(arg)
        i += 1
    return files if in_place else []


def _expand(targets: list[tuple[str, str]], env) -> list[tuple[str, str]]:
    out = []
    for target, cwd in targets:
        if "$" in target:
            target = _expand_vars(target, env)
        if "$" in target or "`" in target:
            continue  # not knowable here; the after-the-fact diff check sees it
        if _WILDCARDS.intersection(target):
            import glob

            found = glob.glob(fastfs.join(cwd, fastfs.expanduser(target, env)))
            out.extend((f, cwd) for f in found)
            if found:
                continue
        out.append((target, cwd))
    return out


def _skip_heredocs(command: str, i: int, delimiters: list[str]) -> int:
    """Skip the bodies of here-documents (their text is input, not commands)."""
    for delimiter in delimiters:
        while i < len(command):
            end = command.find("\n", i)
            line = command[i:] if end == -1 else command[i:end]
            i = len(command) if end == -1 else end + 1
            if line.lstrip("\t") == delimiter:
                break
    return i


_OPERATORS = ("&&", "||", ";;", "|&", ";", "&", "|", "\n", "(", ")")
_GROUPING = frozenset({"{", "}", "!", "then", "do", "else", "elif", "if", "while", "until"})


def _simple_commands(command: str) -> list[tuple[list[str], list[str]]]:
    """Split a shell command into simple commands: (words, redirection targets).

    Quotes and backslashes are honoured; `$(...)`/backticks are kept as text;
    here-documents and input redirections are skipped. Not a full shell
    parser: enough to see the writes a command spells out.
    """
    result: list[tuple[list[str], list[str]]] = []
    words: list[str] = []
    redirects: list[str] = []
    pending_redirect = False
    skip_word = False
    heredoc_next = False
    heredocs: list[str] = []
    word: list[str] = []
    has_word = False
    i, n = 0, len(command)

    def finish_word() -> None:
        nonlocal word, has_word, pending_redirect, skip_word, heredoc_next
        if not has_word:
            return
        text = "".join(word)
        if pending_redirect:
            redirects.append(text)
            pending_redirect = False
        elif skip_word:
            skip_word = False
            if heredoc_next:
                heredocs.append(text)
                heredoc_next = False
        else:
            words.append(text)
        word = []
        has_word = False

    def finish_command() -> None:
        nonlocal words, redirects, pending_redirect, skip_word
        finish_word()
        if words or redirects:
            result.append((words, redirects))
        words, redirects = [], []
        pending_redirect = skip_word = False

    while i < n:
        ch = command[i]
        if ch == "\\" and i + 1 < n:
            word.append(command[i + 1])
            has_word = True
            i += 2
            continue
        if ch == "'":
            end = command.find("'", i + 1)
            end = n if end == -1 else end
            word.append(command[i + 1 : end])
            has_word = True
            i = end + 1
            continue
        if ch == '"':
            j = i + 1
            while j < n and command[j] != '"':
                if command[j] == "\\" and j + 1 < n and command[j + 1] in '"\\$`':
                    word.append(command[j + 1])
                    j += 2
                    continue
                word.append(command[j])
                j += 1
            has_word = True
            i = j + 1
            continue
        if ch == "#" and not has_word:
            end = command.find("\n", i)
            i = n if end == -1 else end
            continue
        if ch in " \t":
            finish_word()
            i += 1
            continue
        if ch == "$" and command.startswith("$(", i):
            depth, j = 0, i
            while j < n:
                if command[j] == "(":
                    depth += 1
                elif command[j] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            word.append(command[i : j + 1])
            has_word = True
            i = j + 1
            continue
        if ch in "<>" or (ch == "&" and command.startswith("&>", i)):
            # A leading fd number (2>) belongs to the operator, not to the words.
            if has_word and "".join(word).isdigit():
                word, has_word = [], False
            else:
                finish_word()
            if command.startswith("<<", i):
                here_string = command.startswith("<<<", i)
                i += 3 if here_string else 2
                if command.startswith("-", i):
                    i += 1
                skip_word = True  # the here-doc delimiter or here-string
                heredoc_next = not here_string
                continue
            j = i
            if ch == "&":
                j += 1
            j += 1  # the < or >
            op = command[i:j]
            while j < n and command[j] in ">|&":
                if command[j] == "&" and op.endswith(">") and j + 1 < n and (command[j + 1].isdigit() or command[j + 1] == "-"):
                    break
                op += command[j]
                j += 1
            if op.endswith(">") and command.startswith("&", j):
                # fd duplication (2>&1, >&2, >&-): no file
                j += 1
                while j < n and (command[j].isdigit() or command[j] == "-"):
                    j += 1
                i = j
                continue
            if op == "<":
                skip_word = True
            else:
                pending_redirect = True
            i = j
            continue
        matched = next((op for op in _OPERATORS if command.startswith(op, i)), None)
        if matched is not None:
            finish_command()
            i += len(matched)
            if matched == "\n" and heredocs:
                i = _skip_heredocs(command, i, heredocs)
                heredocs = []
            continue
        word.append(ch)
        has_word = True
        i += 1
    finish_command()
    return result
