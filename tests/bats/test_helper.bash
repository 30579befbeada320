# Shared set-up for every bats file: `load test_helper` then `setup() { okstra_setup; }`.
# Each test gets its own OKSTRA_ROOT, HOME and project folder under
# $BATS_TEST_TMPDIR, a PATH with the repo's bin/ first, and no OKSTRA_* leaks.

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

REPO_ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
export REPO_ROOT

okstra_setup() {
  local var
  for var in $(compgen -e | grep -E '^(OKSTRA_|CLAUDE_|CLAUDECODE$|TMUX)'); do unset "$var"; done
  export HOME="$BATS_TEST_TMPDIR/home"
  export OKSTRA_ROOT="$HOME/.okstra"
  export PROJECT="$BATS_TEST_TMPDIR/project"
  mkdir -p "$HOME" "$PROJECT"
  git -C "$PROJECT" init -q
  export PATH="$REPO_ROOT/bin:$PATH"
  cd "$PROJECT" || return 1
}

# A listing of every file under a folder with its checksum: compare before and
# after a refused command to prove nothing on disk changed.
tree_snapshot() { # <dir>
  local dir=$1
  [ -d "$dir" ] || { printf 'absent\n'; return 0; }
  (cd "$dir" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}
