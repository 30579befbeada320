#!/usr/bin/env bash
# Summary: Install okstra into a private prefix (default ~/.okstra)
#
# Usage: install.sh [--prefix DIR] [--with-skill] [--uninstall [--keep-hooks]]
#
# Installs a private virtual environment with the pinned runtime dependencies
# (requirements.txt), bin/ (each script's interpreter line pointing at that
# environment's Python), lib/, schemas/, templates/, hooks/, skills/ and the
# fake provider CLIs used by `make demo` (share/fakes/), and bash/zsh completion
# (share/completion/okstra.bash, okstra.zsh: source one from your shell's rc file). The installed tree has
# the same bin/ <-> lib/ shape as the repository, so every script finds the
# library from its own resolved path, also through a symlink.
#
# Re-running upgrades in place. --uninstall first takes okstra's hooks out of
# every project `hooks-install` put them into (listing each; --keep-hooks leaves
# them: they allow silently once okstra is gone), then removes exactly what was
# installed (listed in PREFIX/.okstra-install-manifest); okstra's own data
# there, such as config.yaml, is kept. --with-skill also links the okstra-run
# skill into ~/.claude/skills/ where Claude Code finds it.
#
# Exit codes: 0 done, 2 bad usage or a failed step.
set -euo pipefail

prog=install.sh
die() { printf '%s: %s\n' "$prog" "$*" >&2; exit 2; }

prefix="${HOME}/.okstra"
mode=install
with_skill=0
keep_hooks=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --uninstall) mode=uninstall; shift ;;
    --with-skill) with_skill=1; shift ;;
    --keep-hooks) keep_hooks=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1'; see 'install.sh --help'" ;;
  esac
done
[ -n "$prefix" ] || die "--prefix is empty"
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac

src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
manifest="$prefix/.okstra-install-manifest"
skill_link="${HOME}/.claude/skills/okstra-run"

uninstall() {
  [ -f "$manifest" ] || die "nothing installed at $prefix (no $manifest)"
  if [ "$keep_hooks" = 0 ] && [ -x "$prefix/bin/hooks-install" ]; then
    "$prefix/bin/hooks-install" --uninstall --all --prefix "$prefix" \
      || die "could not take okstra's hooks out of your projects (see above); fix that, or pass --keep-hooks"
  fi
  # Files first, then folders deepest first, each only if okstra put it there.
  while IFS= read -r rel; do
    [ -n "$rel" ] || continue
    if [ -L "$prefix/$rel" ] || [ -f "$prefix/$rel" ]; then rm -f "$prefix/$rel"; fi
  done < "$manifest"
  rm -rf "$prefix/venv" "$prefix/cache"
  # Bytecode caches beside okstra's modules (written at install, and by Python on use).
  for dir in lib hooks; do
    [ -d "$prefix/$dir" ] && find "$prefix/$dir" -type d -name __pycache__ -prune -exec rm -rf {} +
  done
  sort -r "$manifest" | while IFS= read -r rel; do
    if [ -d "$prefix/$rel" ]; then rmdir "$prefix/$rel" 2>/dev/null || true; fi
  done
  if [ -L "$skill_link" ] && [ "$(readlink "$skill_link")" = "$prefix/skills/okstra-run" ]; then
    rm -f "$skill_link"
  fi
  rm -f "$manifest"
  rmdir "$prefix" 2>/dev/null || true
  printf 'Uninstalled okstra from %s\n' "$prefix"
}

install_tree() {
  local python=${PYTHON:-python3}
  command -v "$python" >/dev/null 2>&1 || die "$python not found; install Python 3.11 or newer"
  "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "$python is older than 3.11"
  mkdir -p "$prefix"
  if [ ! -x "$prefix/venv/bin/python" ]; then
    "$python" -m venv "$prefix/venv" || die "could not create $prefix/venv"
  fi
  local want have
  want=$(sha256sum "$src/requirements.txt" | cut -d' ' -f1)
  have=$(cat "$prefix/venv/.okstra-requirements" 2>/dev/null || true)
  if [ "$want" != "$have" ]; then
    # pip's notes about unreachable extra indexes are noise here; real errors still show.
    "$prefix/venv/bin/python" -m pip install -q --disable-pip-version-check -r "$src/requirements.txt" \
      2> >(grep -v "^WARNING: Location" >&2) || die "pip could not install requirements.txt into $prefix/venv"
    printf '%s\n' "$want" > "$prefix/venv/.okstra-requirements"
  fi

  local old_manifest="" new_manifest
  [ -f "$manifest" ] && old_manifest=$(cat "$manifest")
  new_manifest=$(mktemp)
  # Upgrade: remove what the previous install put there, so renamed files go.
  if [ -n "$old_manifest" ]; then
    printf '%s\n' "$old_manifest" | while IFS= read -r rel; do
      if [ -f "$prefix/$rel" ] || [ -L "$prefix/$rel" ]; then rm -f "$prefix/$rel"; fi
    done
  fi
  local dir file rel
  for dir in lib schemas templates hooks skills; do
    [ -d "$src/$dir" ] || continue
    while IFS= read -r -d '' file; do
      rel=${file#"$src"/}
      install -d "$prefix/$(dirname "$rel")"
      if [ -x "$file" ]; then install -m 755 "$file" "$prefix/$rel"; else install -m 644 "$file" "$prefix/$rel"; fi
      printf '%s\n' "$rel" >> "$new_manifest"
    done < <(find "$src/$dir" -type f ! -name '*.pyc' ! -name '.*.tmp' ! -name '*.lock' ! -path '*/__pycache__/*' -print0 | sort -z)
  done
  # Bytecode now, not on first use: with PYTHONDONTWRITEBYTECODE set, or a prefix the user
  # cannot write, every command would compile its modules again on every call. Checked by
  # the source's hash, not its time: a re-install of the same files changes no byte.
  "$prefix/venv/bin/python" -m compileall -q --invalidation-mode checked-hash "$prefix/lib" "$prefix/hooks" >/dev/null \
    || die "could not compile okstra's modules in $prefix/lib"
  install -d "$prefix/bin"
  for file in "$src"/bin/*; do
    rel="bin/$(basename "$file")"
    { printf '#!%s\n' "$prefix/venv/bin/python"; tail -n +2 "$file"; } > "$prefix/$rel.tmp"
    chmod 755 "$prefix/$rel.tmp"
    mv -f "$prefix/$rel.tmp" "$prefix/$rel"
    printf '%s\n' "$rel" >> "$new_manifest"
  done
  # Completion scripts generated from the installed commands' own parsers (README "Shell completion").
  install -d "$prefix/share/completion"
  for shell in bash zsh; do
    rel="share/completion/okstra.$shell"
    "$prefix/bin/okstra" completion "$shell" > "$prefix/$rel" || die "could not generate the $shell completion"
    printf '%s\n' "$rel" >> "$new_manifest"
  done
  if [ -d "$src/tests/fakes" ]; then
    for file in "$src"/tests/fakes/*; do
      [ -f "$file" ] || continue
      rel="share/fakes/$(basename "$file")"
      install -d "$prefix/share/fakes"
      install -m 755 "$file" "$prefix/$rel"
      printf '%s\n' "$rel" >> "$new_manifest"
    done
  fi
  # Folders too, so uninstall can remove the ones it made (deepest first).
  while IFS= read -r rel; do
    dir=$(dirname "$rel")
    while [ "$dir" != "." ]; do printf '%s\n' "$dir"; dir=$(dirname "$dir"); done
  done < "$new_manifest" > "$new_manifest.dirs"
  sort -u "$new_manifest" "$new_manifest.dirs" > "$manifest"
  rm -f "$new_manifest" "$new_manifest.dirs"
  if [ "$with_skill" = 1 ]; then
    mkdir -p "$(dirname "$skill_link")"
    ln -sfn "$prefix/skills/okstra-run" "$skill_link"
  fi
  printf 'Installed okstra to %s (run %s/bin/okstra help)\n' "$prefix" "$prefix"
}

if [ "$mode" = uninstall ]; then uninstall; else install_tree; fi
