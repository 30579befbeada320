#!/usr/bin/env bats

load test_helper

setup() { okstra_setup; }

@test "help lists commands with their summaries" {
  run okstra help
  assert_success
  assert_line --partial "Commands:"
}

@test "runs a command named by noun and verb" {
  run okstra team status --help
  assert_success
  assert_line --index 0 --partial "Summary: "
}

@test "help for one command prints that command's help" {
  run okstra help team-status
  assert_success
  assert_line --index 0 --partial "Summary: "
}

@test "an unknown command exits 2 with one line and no traceback" {
  run --separate-stderr okstra nope
  assert_failure 2
  [ "$stderr" = "okstra: no such command 'nope'; see 'okstra help'" ]
  [ -z "$output" ]
}

@test "a near miss suggests the nearest names" {
  run --separate-stderr okstra team statu
  assert_failure 2
  [[ "$stderr" == "okstra: no such command 'team-statu'; did you mean team-status"* ]]
}

@test "prints its version" {
  run okstra --version
  assert_success
  assert_output --regexp '^okstra [0-9]+\.[0-9]+\.[0-9]+$'
}

@test "passes on the exit code of the command it runs" {
  run okstra team status --no-such-flag
  assert_failure 2
}

# complete WORD...: what the generated bash completion offers for the last word.
complete_words() {
  bash -c 'source <(okstra completion bash); COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _okstra_complete; printf "%s\n" "${COMPREPLY[@]}"' _ "$@"
}

@test "bash completion offers each command's own options, also through okstra noun verb" {
  run complete_words team-status --ex
  assert_success
  assert_output "--explain"
  run complete_words okstra team reclaim --d
  assert_output "--dry-run"
  run complete_words okstra config --sc
  assert_output "--scope"
  run complete_words okstra runs-p
  assert_output "runs-prune"
}

@test "the completion scripts follow the parsers: a new option shows up without editing them" {
  run okstra completion bash
  assert_success
  assert_line "    runs-prune) opts='--help --version --older-than --dry-run --project-root --json' ;;"
  run okstra completion zsh
  assert_success
  assert_line "autoload -U +X bashcompinit && bashcompinit"
  run --separate-stderr okstra completion fish
  assert_failure 2
  [ "$stderr" = "okstra: completion takes one shell: bash or zsh; okstra completion bash > okstra.bash" ]
}

@test "every command answers --version with okstra's one version" {
  version=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import okstra; print(okstra.__version__)' "$REPO_ROOT/lib")
  run okstra --version
  assert_output "okstra $version"
  run team-status --version
  assert_output "team-status (okstra $version)"
  run okstra config --version
  assert_output "okstra-config (okstra $version)"
}
