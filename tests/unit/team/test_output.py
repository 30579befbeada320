"""Parsing each provider's real output shape into answer, usage and failure."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from okstra.model.dispatch import Usage, is_rate_limited
from okstra.team import output

FAKES = Path(__file__).resolve().parents[2] / "fakes"

CLAUDE_OK = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "duration_ms": 1234,
    "num_turns": 3,
    "result": "## Finding\nAll good.",
    "stop_reason": "end_turn",
    "session_id": "s1",
    "total_cost_usd": 0.012,
    "usage": {"input_tokens": 10, "output_tokens": 200, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 5000},
    "modelUsage": {
        "claude-sonnet-4-5": {
            "inputTokens": 10,
            "outputTokens": 200,
            "cacheReadInputTokens": 5000,
            "cacheCreationInputTokens": 0,
            "costUSD": 0.01,
        },
        "claude-haiku-4-5": {
            "inputTokens": 5,
            "outputTokens": 7,
            "cacheReadInputTokens": 0,
            "cacheCreationInputTokens": 100,
            "costUSD": 0.002,
        },
    },
    "permission_denials": [],
}


def test_claude_usage_sums_model_usage_over_models_and_takes_the_total_cost():
    got = output.parse("claude-json", json.dumps(CLAUDE_OK), "", 0)
    assert got.answer == "## Finding\nAll good."
    assert got.usage == Usage(input_tokens=10 + 5000 + 5 + 100, output_tokens=207, cached_tokens=5000, cost_usd=0.012)
    assert got.error is None


def test_claude_falls_back_to_usage_when_model_usage_is_absent():
    doc = {k: v for k, v in CLAUDE_OK.items() if k != "modelUsage"}
    assert output.parse("claude-json", json.dumps(doc)).usage == Usage(5010, 200, 5000, 0.012)


def test_claude_api_error_is_judged_by_is_error_not_subtype():
    doc = dict(CLAUDE_OK, is_error=True, api_error_status=529, result="API Error: 529 Overloaded", subtype="success")
    got = output.parse("claude-json", json.dumps(doc), "", 1)
    assert got.answer is None and "529" in got.error and not got.rate_limited
    verdict = output.judge(got, 1, "")
    assert not verdict.completed and verdict.reason.startswith("provider exited 1: API Error: 529")


def test_claude_rate_limit_reads_as_rate_limited():
    doc = dict(
        CLAUDE_OK,
        is_error=True,
        api_error_status=429,
        result='API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}',
    )
    got = output.parse("claude-json", json.dumps(doc), "", 1)
    assert got.rate_limited
    assert is_rate_limited(output.judge(got, 1, "").reason)


def test_claude_success_that_mentions_429_in_its_answer_is_not_a_rate_limit():
    doc = dict(CLAUDE_OK, result="The handler returns HTTP 429 when the rate limit is hit.")
    verdict = output.judge(output.parse("claude-json", json.dumps(doc)), 0, "")
    assert verdict.completed and verdict.answer.startswith("The handler")


CODEX = "\n".join(
    json.dumps(e)
    for e in [
        {"type": "thread.started", "thread_id": "t1"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "i0", "type": "agent_message", "text": "first"}},
        {"type": "turn.completed", "usage": {"input_tokens": 100, "cached_input_tokens": 50, "output_tokens": 10}},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "i1", "type": "error", "text": "warning: a mere warning"}},
        {"type": "item.completed", "item": {"id": "i2", "type": "agent_message", "text": "final answer"}},
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 24763, "cached_input_tokens": 24448, "output_tokens": 122, "reasoning_output_tokens": 64},
        },
    ]
)


def test_codex_takes_the_last_turn_usage_and_prefers_the_answer_file():
    got = output.parse("codex-jsonl", CODEX, "", 0, answer_file_text="from the -o file")
    assert got.usage == Usage(24763, 122, 24448, None)
    assert got.answer == "from the -o file"


def test_codex_without_answer_file_takes_the_last_agent_message():
    assert output.parse("codex-jsonl", CODEX, "", 0, answer_file_text=None).answer == "final answer"
    assert output.parse("codex-jsonl", CODEX, "", 0, answer_file_text="  \n").answer == "final answer"


def test_codex_usage_limit_is_rate_limited():
    text = "You've hit your usage limit. Upgrade to Pro, or try again in 2 hours."
    out = "\n".join(
        json.dumps(e)
        for e in [
            {"type": "thread.started", "thread_id": "t"},
            {"type": "error", "message": text},
            {"type": "turn.failed", "error": {"message": text}},
        ]
    )
    got = output.parse("codex-jsonl", out, "", 1)
    reason = output.judge(got, 1, "").reason
    assert got.rate_limited and reason == f"rate-limited: {text}; retry after 2 hours"


GEMINI = {
    "session_id": "g1",
    "response": "gemini answer",
    "stats": {
        "models": {
            "gemini-2.5-pro": {
                "api": {"totalRequests": 2},
                "tokens": {"input": 70, "prompt": 100, "candidates": 20, "total": 130, "cached": 30, "thoughts": 10, "tool": 0},
            },
            "gemini-2.5-flash": {
                "tokens": {"input": 5, "prompt": 5, "candidates": 1, "total": 6, "cached": 0, "thoughts": 0, "tool": 0}
            },
        },
        "tools": {},
        "files": {},
    },
}


def test_gemini_sums_the_models_tokens():
    got = output.parse("gemini-json", json.dumps(GEMINI, indent=2))
    assert got.answer == "gemini answer"
    assert got.usage == Usage(105, 31, 30, None)


def test_gemini_quota_error_is_rate_limited():
    doc = {"session_id": "g", "error": {"type": "ApiError", "message": "RESOURCE_EXHAUSTED: Quota exceeded", "code": 429}}
    got = output.parse("gemini-json", json.dumps(doc), "", 1)
    assert got.rate_limited and got.answer is None


def test_grok_and_kimi_report_no_usage():
    grok = output.parse(
        "grok-json", json.dumps({"text": "grok says", "stopReason": "EndTurn", "sessionId": "s", "requestId": "r"})
    )
    assert grok.answer == "grok says" and grok.usage is None
    kimi_out = "\n".join(
        json.dumps(e)
        for e in [
            {"role": "assistant", "content": "thinking", "tool_calls": [{"id": "c1"}]},
            {"role": "tool", "tool_call_id": "c1", "content": "tool output"},
            {"role": "assistant", "content": [{"type": "text", "text": "kimi "}, {"type": "text", "text": "answer"}]},
            {"role": "meta", "type": "session.resume_hint", "session_id": "k", "command": "kimi -r k"},
        ]
    )
    kimi = output.parse("kimi-stream-json", kimi_out)
    assert kimi.answer == "kimi answer" and kimi.usage is None


def test_grok_cancelled_is_an_error():
    got = output.parse("grok-json", json.dumps({"text": "", "stopReason": "Cancelled"}))
    assert output.judge(got, 0, "").reason == "provider error: stopped: Cancelled"


@pytest.mark.parametrize("fmt", sorted(output.PARSERS))
def test_garbage_output_has_no_answer(fmt):
    got = output.parse(fmt, "\x1b[2KThinking...\n<<< not json }{\n[1, 2]\n", "", 0)
    assert got.answer is None
    assert output.judge(got, 0, "").reason.startswith("no answer in output (")


def test_a_crash_names_the_exit_code_and_the_last_stderr_line():
    verdict = output.judge(output.parse("grok-json", ""), 3, "starting\nError: boom\n\n")
    assert verdict.reason == "provider exited 3: Error: boom"


def test_a_failed_run_with_a_rate_limit_on_stderr_is_rate_limited():
    verdict = output.judge(output.parse("kimi-stream-json", ""), 1, "Error: 429 Too Many Requests\n")
    assert verdict.reason == "rate-limited: Error: 429 Too Many Requests"


@given(st.text())
def test_no_output_ever_crashes_a_parser(text):
    for fmt in output.PARSERS:
        got = output.parse(fmt, text, text, 1)
        assert isinstance(got, output.ParsedOutput)
        output.judge(got, 0, text)


@pytest.mark.parametrize(
    "binary,fmt,extra",
    [
        ("claude", "claude-json", ["--model", "m", "--output-format", "json", "--permission-mode", "acceptEdits"]),
        ("gemini", "gemini-json", ["-m", "m", "--output-format", "json", "--approval-mode", "auto_edit", "--skip-trust"]),
        ("grok", "grok-json", ["-m", "m", "--output-format", "json", "--always-approve", "--no-auto-update"]),
        ("kimi", "kimi-stream-json", ["-m", "m", "--output-format", "stream-json"]),
    ],
)
@pytest.mark.parametrize("mode", ["ok", "rate-limit"])
def test_the_fakes_output_parses_like_the_real_cli(binary, fmt, extra, mode, tmp_path):
    env = dict(os.environ, OKSTRA_FAKE_MODE=mode)
    done = subprocess.run(
        [str(FAKES / binary), "-p", "**Task Type:** `analysis`", *extra], capture_output=True, text=True, env=env, timeout=30
    )
    verdict = output.judge(output.parse(fmt, done.stdout, done.stderr, done.returncode), done.returncode, done.stderr)
    if mode == "ok":
        assert verdict.completed and "analysis" in verdict.answer
        assert (verdict.usage is None) == (binary in ("grok", "kimi"))
    else:
        assert is_rate_limited(verdict.reason)


def test_the_codex_fake_writes_the_answer_file(tmp_path):
    answer = tmp_path / "answer.txt"
    done = subprocess.run(
        [
            str(FAKES / "codex"),
            "exec",
            "--skip-git-repo-check",
            "--json",
            "-s",
            "workspace-write",
            "-m",
            "gpt-5",
            "-o",
            str(answer),
            "**Task Type:** verification",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    got = output.parse("codex-jsonl", done.stdout, done.stderr, done.returncode, answer.read_text())
    assert "verification" in got.answer and got.usage.input_tokens > got.usage.cached_tokens > 0


def lines(*events):
    return "\n".join(json.dumps(e) for e in events) + "\n"


CODEX_BANNER = "2026-12-01T09:00:00Z WARN codex: model metadata\nReading additional input from stdin...\n"


def test_codex_reconnects_then_success_is_a_success_not_an_error():
    out = lines(
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.started"},
        {"type": "error", "message": "Reconnecting... 1/5 (stream disconnected before completion)"},
        {"type": "error", "message": "Reconnecting... 2/5 (stream disconnected before completion)"},
        {"type": "item.completed", "item": {"id": "i0", "type": "error", "message": "Model metadata for `m` not found"}},
        {"type": "item.completed", "item": {"id": "i1", "type": "agent_message", "text": "the answer"}},
        {"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 3}},
    )
    verdict = output.judge(output.parse("codex-jsonl", out, CODEX_BANNER, 0), 0, CODEX_BANNER)
    assert verdict.completed and verdict.answer == "the answer"


def test_codex_failure_reason_is_turn_failed_not_the_stdin_banner():
    out = lines(
        {"type": "turn.started"},
        {"type": "turn.failed", "error": {"message": "unexpected status 500 Internal Server Error: boom"}},
    )
    verdict = output.judge(output.parse("codex-jsonl", out, CODEX_BANNER, 1), 1, CODEX_BANNER)
    assert verdict.reason == "provider exited 1: unexpected status 500 Internal Server Error: boom"


@pytest.mark.parametrize(
    "text",
    [
        "You\u2019ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) or try again later.",
        "Quota exceeded. Check your plan and billing details.",
        "exceeded retry limit, last status: 429 Too Many Requests, request id: abc",
    ],
)
def test_codex_limit_texts_are_rate_limited_and_keep_the_text(text):
    out = lines({"type": "error", "message": text}, {"type": "turn.failed", "error": {"message": text}})
    reason = output.judge(output.parse("codex-jsonl", out, CODEX_BANNER, 1), 1, CODEX_BANNER).reason
    assert reason == f"rate-limited: {text}"


GEMINI_429_STDERR = (
    "Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended.\n"
    "Ripgrep is not available. Falling back to GrepTool.\n"
    "Attempt 1 failed with status 429. Retrying with backoff... ApiError: quota\n"
    "    at Models.generateContent (file:///gemini/dist/index.js:1:1)\n"
    + json.dumps(
        {
            "session_id": "g",
            "error": {"type": "Error", "message": "Resource has been exhausted (e.g. check quota). Retry in 41s.", "code": 429},
        },
        indent=2,
    )
    + "\n"
)


@pytest.mark.parametrize("fmt", ["gemini-json", "gemini-stream-json"])
def test_gemini_error_json_on_stderr_is_read_and_a_429_is_rate_limited(fmt):
    got = output.parse(fmt, "", GEMINI_429_STDERR, 173)
    verdict = output.judge(got, 173, GEMINI_429_STDERR)
    assert verdict.reason == (
        "rate-limited: Resource has been exhausted (e.g. check quota). Retry in 41s. (code 429); retry after 41s"
    )


def test_gemini_401_names_the_error_not_a_brace():
    stderr = "Error: stack\n" + json.dumps({"error": {"type": "Error", "message": "API key not valid", "code": 401}}, indent=2)
    verdict = output.judge(output.parse("gemini-json", "", stderr, 145), 145, stderr)
    assert verdict.reason == "provider exited 145: API key not valid (code 401)"


def test_a_forwarded_signal_is_named_whatever_the_exit_code():
    assert output.judge(output.parse("gemini-json", "", "", 0), 0, "", killed_by="SIGHUP").reason == "terminated by SIGHUP"
    verdict = output.judge(output.parse("gemini-stream-json", "", "", 0), 0, "")
    assert verdict.reason == "terminated by SIGTERM (provider exited 0 without a result, as gemini does on SIGTERM)"
    assert output.judge(output.parse("claude-json", "", "", 143), 143, "").reason == "terminated by SIGTERM (provider exited 143)"


def test_claude_served_model_is_the_model_usage_key_and_denials_are_kept():
    doc = dict(
        CLAUDE_OK,
        modelUsage={"claude-opus-4-8": {"inputTokens": 10, "outputTokens": 200}, "claude-haiku-4-5": {"inputTokens": 3}},
        permission_denials=[
            {"tool_name": "Write", "tool_use_id": "t1", "tool_input": {"file_path": "/p/README.md", "content": "x"}},
            {"tool_name": "Bash", "tool_use_id": "t2", "tool_input": {"command": "rm -rf build"}},
        ],
    )
    got = output.parse("claude-json", json.dumps(doc))
    assert got.served_model == "claude-opus-4-8"
    assert got.denials == (output.Denial("Write", "/p/README.md"), output.Denial("Bash", "rm -rf build"))


def test_claude_429_keeps_the_provider_text():
    doc = dict(
        CLAUDE_OK, is_error=True, api_error_status=429, result="API Error: Request rejected (429) · slow down", modelUsage={}
    )
    reason = output.judge(output.parse("claude-json", json.dumps(doc), "", 1), 1, "").reason
    assert reason == "rate-limited: API Error: Request rejected (429) · slow down"


def test_claude_stream_json_takes_the_final_result_and_the_init_model():
    out = lines(
        {"type": "system", "subtype": "init", "model": "claude-opus-4-8", "session_id": "s"},
        {"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 2, "error_status": 529},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "working"}]}},
        dict(CLAUDE_OK, modelUsage={}, result="done"),
    )
    got = output.parse("claude-stream-json", out)
    assert got.answer == "done" and got.served_model == "claude-opus-4-8"


def test_gemini_stream_json_joins_the_deltas_and_reads_the_served_model():
    out = lines(
        {"type": "init", "session_id": "g", "model": "gemini-3-pro-preview"},
        {"type": "message", "role": "user", "content": "prompt"},
        {"type": "message", "role": "assistant", "content": "part one, ", "delta": True},
        {"type": "message", "role": "assistant", "content": "part two", "delta": True},
        {
            "type": "result",
            "status": "success",
            "stats": {
                "total_tokens": 30,
                "input_tokens": 20,
                "output_tokens": 10,
                "cached": 5,
                "models": {"gemini-3.1-pro-preview": {"tokens": {"prompt": 20, "candidates": 10, "cached": 5, "total": 30}}},
            },
        },
    )
    got = output.parse("gemini-stream-json", out)
    assert got.answer == "part one, part two"
    assert got.served_model == "gemini-3.1-pro-preview" and got.usage == Usage(20, 10, 5, None)


@pytest.mark.parametrize(
    "fmt,line,stream,kind",
    [
        ("codex-jsonl", {"type": "error", "message": "Reconnecting... 1/5 (x)"}, "stdout", "retry"),
        ("codex-jsonl", {"type": "turn.failed", "error": {"message": "boom"}}, "stdout", "error"),
        ("codex-jsonl", {"type": "item.completed", "item": {"type": "error", "message": "m"}}, "stdout", "warning"),
        ("codex-jsonl", {"type": "item.started", "item": {"type": "command_execution", "command": "ls"}}, "stdout", "tool"),
        ("codex-jsonl", "Reading additional input from stdin...", "stderr", "noise"),
        ("gemini-stream-json", "Attempt 2 failed with status 429. Retrying with backoff...", "stderr", "retry"),
        (
            "gemini-stream-json",
            {"type": "tool_use", "tool_name": "write_file", "parameters": {"file_path": "a"}},
            "stdout",
            "tool",
        ),
        ("claude-stream-json", {"type": "system", "subtype": "api_retry", "attempt": 1}, "stdout", "retry"),
        ("claude-stream-json", {"type": "system", "subtype": "init", "model": "m"}, "stdout", "start"),
        (
            "claude-stream-json",
            {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Write"}]}},
            "stdout",
            "tool",
        ),
        ("kimi-stream-json", {"role": "assistant", "content": "hi"}, "stdout", "message"),
        ("claude-stream-json", '{"type": "assistant", "mess', "stdout", "log"),
    ],
)
def test_one_event_line_reads_as_a_typed_event(fmt, line, stream, kind):
    event = output.parse_event(fmt, line if isinstance(line, str) else json.dumps(line), stream)
    assert event is not None and event.kind == kind


def test_an_event_states_its_tokens_and_keeps_a_short_excerpt():
    done = {"type": "turn.completed", "usage": {"input_tokens": 100, "cached_input_tokens": 50, "output_tokens": 7}}
    assert output.parse_event("codex-jsonl", json.dumps(done)).tokens == 107
    long = output.parse_event("kimi-stream-json", json.dumps({"role": "assistant", "content": "word " * 500}))
    assert len(long.text) <= output.EXCERPT and "\n" not in long.text
    assert output.parse_event("codex-jsonl", b"\xff\xfe not utf-8\n").kind == "log"
    assert output.parse_event("codex-jsonl", "  \n") is None


@pytest.mark.parametrize("fmt", sorted(output.PARSERS))
def test_a_truncated_last_line_is_no_answer_saying_so(fmt):
    out = '{"type": "thread.started"}\n{"type": "result", "result": "half'
    verdict = output.judge(output.parse(fmt, out, "", 0), 0, "")
    assert verdict.reason == "no answer in output (stdout ends in a truncated JSON line)"


@given(st.binary(max_size=400))
def test_no_bytes_ever_crash_the_event_reader(data):
    for fmt in output.PARSERS:
        for stream in ("stdout", "stderr"):
            event = output.parse_event(fmt, data, stream)
            assert event is None or event.kind in output.EVENT_KINDS


@pytest.mark.parametrize(
    "line,stream,progress",
    [
        ('{"type":"error","message":"Reconnecting... 1/5 (stream disconnected before completion)"}', "stdout", False),
        ("Reading additional input from stdin...", "stderr", False),
        ("a line that is no event", "stdout", False),
        ('{"type":"item.completed","item":{"type":"reasoning","text":"thinking"}}', "stdout", True),
        ('{"type":"item.completed","item":{"type":"agent_message","text":"done"}}', "stdout", True),
        ('{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}', "stdout", True),
    ],
)
def test_only_an_event_that_shows_the_provider_got_through_ends_a_run_of_retries(line, stream, progress):
    """DESIGN §5: retrying is a state; a codex reconnect, a banner or an unparsed line does not end it."""
    assert output.parse_event("codex-jsonl", line, stream).progress is progress
