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
