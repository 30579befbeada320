#!/usr/bin/env bats
# install.sh: a private venv, bin/ pointing at it, the same bin/ <-> lib/ shape,
# idempotent, and an uninstall that leaves nothing behind.

load test_helper

setup_file() {
  # The tests share one prefix path (below), so they run one after another.
  export BATS_NO_PARALLELIZE_WITHIN_FILE=true
}

setup() {
  okstra_setup
  # One path for the file, where okstra_install restores its saved install; emptied per test.
  PREFIX="$BATS_FILE_TMPDIR/prefix"
  rm -rf "$PREFIX"
}

@test "installs every command with the venv's interpreter and each answers --help and --version" {
  run "$REPO_ROOT/install.sh" --prefix "$PREFIX"
  assert_success
  assert_output "Installed okstra to $PREFIX (run $PREFIX/bin/okstra help)"
  for cmd in "$REPO_ROOT"/bin/*; do
    name=$(basename "$cmd")
    [ -x "$PREFIX/bin/$name" ]
    [ "$(head -n 1 "$PREFIX/bin/$name")" = "#!$PREFIX/venv/bin/python" ]
    run env -i HOME="$HOME" PATH=/usr/bin:/bin "$PREFIX/bin/$name" --help
    assert_success
    run env -i HOME="$HOME" PATH=/usr/bin:/bin "$PREFIX/bin/$name" --version
    assert_success
    [[ "$output" == "$name (okstra "*")" || "$output" == "okstra "* ]]
  done
}

@test "install compiles every module, so a command compiles nothing even under PYTHONDONTWRITEBYTECODE" {
  okstra_install "$PREFIX"
  # Python's verbose import log says "code object from '<pyc>'" for bytecode it loaded and
  # "code object from <source>.py" for a module it had to compile.
  OKSTRA_ROOT="$PREFIX" PYTHONVERBOSE=1 PYTHONDONTWRITEBYTECODE=1 "$PREFIX/bin/okstra-config" get backend \
    2> "$BATS_TEST_TMPDIR/verbose" >/dev/null
  run grep -c "code object from '$PREFIX/lib/okstra/.*\.pyc'" "$BATS_TEST_TMPDIR/verbose"
  [ "$output" -gt 5 ]
  run grep "code object from $PREFIX/lib/.*\.py$" "$BATS_TEST_TMPDIR/verbose"
  assert_output ""
  sources=$(cd "$PREFIX" && find lib hooks -name '*.py' | wc -l)
  compiled=$(cd "$PREFIX" && find lib hooks -name '*.pyc' | wc -l)
  [ "$compiled" -eq "$sources" ]
}

@test "an installed command works through a symlink" {
  okstra_install "$PREFIX"
  mkdir -p "$HOME/.local/bin"
  ln -s "$PREFIX/bin/okstra" "$HOME/.local/bin/okstra"
  run env -i HOME="$HOME" PATH=/usr/bin:/bin "$HOME/.local/bin/okstra" help
  assert_success
  assert_line --partial "Commands:"
}

@test "re-running upgrades in place and changes nothing else" {
  okstra_install "$PREFIX"
  first=$(cd "$PREFIX" && find . -path ./venv -prune -o -type f -print | sort | xargs sha256sum)
  run "$REPO_ROOT/install.sh" --prefix "$PREFIX"
  assert_success
  second=$(cd "$PREFIX" && find . -path ./venv -prune -o -type f -print | sort | xargs sha256sum)
  [ "$first" = "$second" ]
}

@test "uninstall leaves nothing behind but the user's own files" {
  okstra_install "$PREFIX"
  printf 'backend: tmux-pane\n' > "$PREFIX/config.yaml"
  # Reading the config leaves a memo of its validity in okstra's cache; uninstall takes it too.
  OKSTRA_ROOT="$PREFIX" "$PREFIX/bin/okstra-config" get backend
  [ -n "$(find "$PREFIX/cache" -type f | head -n 1)" ]
  run "$REPO_ROOT/install.sh" --prefix "$PREFIX" --uninstall
  assert_success
  assert_output "Uninstalled okstra from $PREFIX"
  run find "$PREFIX" -mindepth 1
  assert_output "$PREFIX/config.yaml"
}

@test "uninstall of an empty prefix removes the prefix" {
  okstra_install "$PREFIX"
  "$REPO_ROOT/install.sh" --prefix "$PREFIX" --uninstall >/dev/null
  [ ! -e "$PREFIX" ]
}

@test "an unknown argument exits 2 with one line" {
  run --separate-stderr "$REPO_ROOT/install.sh" --nope
  assert_failure 2
  [ "$stderr" = "install.sh: unknown argument '--nope'; see 'install.sh --help'" ]
}

@test "uninstall where nothing is installed exits 2" {
  run --separate-stderr "$REPO_ROOT/install.sh" --prefix "$PREFIX" --uninstall
  assert_failure 2
  [[ "$stderr" == "install.sh: nothing installed at $PREFIX"* ]]
}

@test "--with-skill links the okstra-run skill where Claude Code finds it, and uninstall unlinks it" {
  run "$REPO_ROOT/install.sh" --prefix "$PREFIX" --with-skill
  assert_success
  link="$HOME/.claude/skills/okstra-run"
  [ -L "$link" ]
  [ "$(readlink "$link")" = "$PREFIX/skills/okstra-run" ]
  head -n 2 "$link/SKILL.md" | grep -qx "name: okstra-run"
  [ -x "$PREFIX/hooks/write-guard" ] && [ -f "$PREFIX/hooks/write-guard.py" ]
  run "$REPO_ROOT/install.sh" --prefix "$PREFIX" --uninstall
  assert_success
  [ ! -e "$link" ] && [ ! -L "$link" ]
}

@test "uninstall leaves a skill link that is not okstra's alone" {
  okstra_install "$PREFIX"
  mkdir -p "$HOME/.claude/skills" "$HOME/my-skill"
  ln -s "$HOME/my-skill" "$HOME/.claude/skills/okstra-run"
  "$REPO_ROOT/install.sh" --prefix "$PREFIX" --uninstall >/dev/null
  [ "$(readlink "$HOME/.claude/skills/okstra-run")" = "$HOME/my-skill" ]
}

@test "uninstall after the hooks ran (and cached bytecode) still leaves nothing" {
  okstra_install "$PREFIX"
  mkdir -p "$PROJECT/.okstra"
  printf '{"runId":"a--b--r001","taskKey":"a/b","taskType":"analysis","runDir":".okstra/runs/a--b--r001","runManifestPath":".okstra/runs/a--b--r001/run-manifest.json","phase":"analysis","approvedStage":null}\n' > "$PROJECT/.okstra/active-run.json"
  CLAUDE_PROJECT_DIR="$PROJECT" "$PREFIX/hooks/write-guard" <<<'{"cwd":"/","tool_name":"Write","tool_input":{"file_path":"/tmp/x"}}' >/dev/null
  [ -n "$(find "$PREFIX/lib" -name '*.pyc' | head -n 1)" ]
  "$REPO_ROOT/install.sh" --prefix "$PREFIX" --uninstall >/dev/null
  [ ! -e "$PREFIX" ]
}

# hook_lines PROJECT: every okstra hook command line in the project's settings files.
hook_lines() {
  python3 - "$1" <<'PY'
import json, sys, pathlib
for name in ("settings.local.json", "settings.json"):
    path = pathlib.Path(sys.argv[1], ".claude", name)
    if path.exists():
        doc = json.loads(path.read_text())
        for entries in doc.get("hooks", {}).values():
            for entry in entries:
                for h in entry["hooks"]:
                    if h["command"].endswith("# okstra-hook"):
                        print(h["command"])
PY
}

two_projects_with_hooks() {
  # okstra in the default prefix, ~/.okstra, with one home for the file (emptied here) so
  # okstra_install can restore its saved install at the same path.
  export HOME="$BATS_FILE_TMPDIR/home" OKSTRA_ROOT="$BATS_FILE_TMPDIR/home/.okstra"
  rm -rf "$HOME"
  mkdir -p "$HOME"
  okstra_install "$HOME/.okstra"
  A="$BATS_TEST_TMPDIR/a" B="$BATS_TEST_TMPDIR/b"
  mkdir -p "$A" "$B"
  git -C "$A" init -q
  "$HOME/.okstra/bin/hooks-install" --project "$A" >/dev/null 2>&1
  "$HOME/.okstra/bin/hooks-install" --project "$B" --shared >/dev/null 2>&1
  # Each project is mid-run, so a hook that still ran okstra would have work to do.
  for p in "$A" "$B"; do
    mkdir -p "$p/.okstra"
    printf '{"runId":"a--b--r001","taskKey":"a/b","taskType":"analysis","runDir":".okstra/runs/a--b--r001","runManifestPath":".okstra/runs/a--b--r001/run-manifest.json","phase":"analysis","approvedStage":null}\n' > "$p/.okstra/active-run.json"
  done
  [ "$(hook_lines "$A" | wc -l)" -eq 2 ] && [ "$(hook_lines "$B" | wc -l)" -eq 2 ]
}

@test "uninstall lists the projects it put hooks into and takes the hooks out of each" {
  two_projects_with_hooks
  lines_a=$(hook_lines "$A")
  run "$REPO_ROOT/install.sh" --uninstall
  assert_success
  assert_line --index 0 "$A/.claude/settings.local.json: okstra hooks removed the file okstra created"
  assert_line --index 1 "$B/.claude/settings.json: okstra hooks removed the file okstra created"
  assert_line --index 2 "Uninstalled okstra from $HOME/.okstra"
  [ -z "$(hook_lines "$A")" ] && [ -z "$(hook_lines "$B")" ]
  [ ! -e "$HOME/.okstra" ]
  # A session that still had the old lines loaded runs them: they allow, silently.
  while IFS= read -r line; do
    run --separate-stderr env CLAUDE_PROJECT_DIR="$A" sh -c "$line" <<<'{"tool_name":"Write","tool_input":{"file_path":"/etc/x"}}'
    assert_success
    assert_output ""
    [ -z "$stderr" ]
  done <<<"$lines_a"
}

@test "uninstall --keep-hooks leaves the hooks, and each installed line then allows with no output" {
  two_projects_with_hooks
  run "$REPO_ROOT/install.sh" --uninstall --keep-hooks
  assert_success
  assert_output "Uninstalled okstra from $HOME/.okstra"
  [ ! -e "$HOME/.okstra/hooks/write-guard" ]
  for p in "$A" "$B"; do
    while IFS= read -r line; do
      run --separate-stderr env CLAUDE_PROJECT_DIR="$p" sh -c "$line" <<<'{"tool_name":"Write","tool_input":{"file_path":"/etc/x"}}'
      assert_success
      assert_output ""
      [ -z "$stderr" ]
    done < <(hook_lines "$p")
  done
}

@test "installed hook lines carry no user-specific path" {
  two_projects_with_hooks
  run hook_lines "$A"
  refute_output --partial "$HOME"
  assert_line --index 0 "hook=\"\${OKSTRA_ROOT:-\$HOME/.okstra}\"/hooks/write-guard; [ -x \"\$hook\" ] || exit 0; exec \"\$hook\" # okstra-hook"
}

@test "a pip-style install into a fresh venv gives the same commands and the same okstra help list" {
  # A copy of the tree, so the build leaves nothing in the repository; --no-deps: the
  # listing needs no runtime dependency (pipx/uv would fetch requirements.txt's pins).
  src="$BATS_TEST_TMPDIR/src"
  mkdir -p "$src"
  tar -C "$REPO_ROOT" --exclude=./.venv --exclude=./.deps --exclude=./build --exclude=./.git -cf - . | tar -C "$src" -xf -
  python3 -m venv "$BATS_TEST_TMPDIR/venv"
  run "$BATS_TEST_TMPDIR/venv/bin/pip" install -q --no-deps --disable-pip-version-check "$src"
  assert_success
  run env -i HOME="$HOME" PATH=/usr/bin:/bin "$BATS_TEST_TMPDIR/venv/bin/okstra" help
  assert_success
  [ "$output" = "$("$REPO_ROOT/bin/okstra" help)" ]
  for cmd in "$REPO_ROOT"/bin/*; do
    name=$(basename "$cmd")
    run "$BATS_TEST_TMPDIR/venv/bin/$name" --version
    assert_success
    [[ "$output" == *"(okstra $(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import okstra; print(okstra.__version__)' "$REPO_ROOT/lib"))" || "$output" == "okstra "* ]]
  done
  [ ! -e "$BATS_TEST_TMPDIR/venv/bin/config" ]
  run "$BATS_TEST_TMPDIR/venv/bin/okstra" config --help
  assert_success
  assert_line --index 0 "Summary: Read and change okstra's settings (global and project config)"
}
