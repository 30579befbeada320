"""What a provider CLI printed: its answer, its token usage, and whether it failed.

One parser per catalog `outputFormat` (reference/ecosystem.md §4, "Observed on the
real CLIs"). Each returns an `Outcome`; `worker_run` decides the dispatch status.

Token usage is normalised into `model.dispatch.Usage`:
- `input_tokens`: every prompt token the model read, cached ones included;
- `cached_tokens`: the part of those served from a cache;
- `output_tokens`: every generated token, reasoning/thinking included;
- `cost_usd`: only where the CLI reports it (claude's `total_cost_usd`).

claude   one JSON result object. Failure is `is_error` or a non-zero exit, never
         `subtype` (an API error still says `"success"`). Usage from `modelUsage`
         summed over models (covers subagents), else `usage`.
codex    JSONL events. Answer from the `-o` file, else the last `agent_message`;
         usage from the **last** `turn.completed` (thread totals are cumulative);
         `turn.failed` / `error` events carry the failure.
gemini   one JSON object: `response`, `stats.models[*].tokens` summed, `error`.
grok     one JSON object `{text, stopReason, ...}`; no usage (None = unknown).
kimi     stream-json lines; the answer is the last assistant message; no usage.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from okstra.model.dispatch import Usage

RATE_LIMITED = "rate-limited"
NO_ANSWER = "no answer in output"

_RATE_LIMIT = re.compile(
    r"rate[_ ]limit|usage limit|RESOURCE_EXHAUSTED|quota exceeded|too many requests|\b429\b|exhausted your capacity",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Outcome:
    """The parsed output of one provider run.

    `answer` is the final text (None when the output holds none); `usage` None
    means the provider reported none; `error` is the provider's own failure
    message when it reported one; `rate_limited` when that failure is a quota
    or rate limit.
    """

    answer: str | None
    usage: Usage | None
    error: str | None = None
    rate_limited: bool = False


def is_rate_limit(text: str | None) -> bool:
    return bool(text) and bool(_RATE_LIMIT.search(text or ""))


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _json_objects(text: str) -> Iterator[dict[str, Any]]:
    """Every JSON object in `text`: the whole text first, else one per line."""
    stripped = text.strip()
    if not stripped:
        return
    try:
        whole = json.loads(stripped)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        yield whole
        return
    for line in stripped.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict):
            yield doc


def _failure(message: str) -> tuple[str, bool]:
    return _one_line(message), is_rate_limit(message)


def parse_claude(stdout: str, stderr: str = "", exit_code: int = 0) -> Outcome:
    result = None
    for doc in _json_objects(stdout):
        if doc.get("type") == "result":
            result = doc
    if result is None:
        return Outcome(None, None)
    usage = _claude_usage(result)
    text = result.get("result") if isinstance(result.get("result"), str) else None
    if result.get("is_error") is True or exit_code != 0:
        message = text or "; ".join(str(e) for e in result.get("errors") or []) or f"is_error ({result.get('subtype')})"
        if result.get("api_error_status") and str(result["api_error_status"]) not in message:
            message = f"API error {result['api_error_status']}: {message}"
        error, limited = _failure(message)
        limited = limited or result.get("api_error_status") == 429
        return Outcome(None, usage, error, limited)
    return Outcome(text if text and text.strip() else None, usage)


def _claude_usage(result: Mapping[str, Any]) -> Usage | None:
    cost = result.get("total_cost_usd")
    cost = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None
    models = result.get("modelUsage")
    if isinstance(models, Mapping) and models:
        entries = [m for m in models.values() if isinstance(m, Mapping)]
        fresh = sum(_int(m.get("inputTokens")) for m in entries)
        read = sum(_int(m.get("cacheReadInputTokens")) for m in entries)
        created = sum(_int(m.get("cacheCreationInputTokens")) for m in entries)
        output = sum(_int(m.get("outputTokens")) for m in entries)
        if cost is None:
            costs = [m.get("costUSD") for m in entries if isinstance(m.get("costUSD"), (int, float))]
            cost = float(sum(costs)) if costs else None
        return Usage(fresh + read + created, output, read, cost)
    usage = result.get("usage")
    if isinstance(usage, Mapping) and usage:
        read = _int(usage.get("cache_read_input_tokens"))
        created = _int(usage.get("cache_creation_input_tokens"))
        return Usage(_int(usage.get("input_tokens")) + read + created, _int(usage.get("output_tokens")), read, cost)
    return None if cost is None else Usage(cost_usd=cost)


def parse_codex(stdout: str, stderr: str = "", exit_code: int = 0, answer_file_text: str | None = None) -> Outcome:
    last_message = None
    usage = None
    error = None
    for event in _json_objects(stdout):
        kind = event.get("type")
        if kind == "item.completed" and isinstance(event.get("item"), Mapping):
            item = event["item"]
            if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                last_message = item["text"]
        elif kind == "turn.completed" and isinstance(event.get("usage"), Mapping):
            u = event["usage"]
            # input_tokens already includes the cached ones; reasoning is part of output.
            usage = Usage(_int(u.get("input_tokens")), _int(u.get("output_tokens")), _int(u.get("cached_input_tokens")), None)
        elif kind == "turn.failed":
            err = event.get("error")
            error = str(err.get("message")) if isinstance(err, Mapping) and err.get("message") else "turn failed"
        elif kind == "error" and event.get("message") and error is None:
            error = str(event["message"])
    answer = answer_file_text if answer_file_text and answer_file_text.strip() else last_message
    if error is not None:
        failure, limited = _failure(error)
        return Outcome(None, usage, failure, limited)
    return Outcome(answer if answer and answer.strip() else None, usage)


def parse_gemini(stdout: str, stderr: str = "", exit_code: int = 0) -> Outcome:
    doc = next((d for d in _json_objects(stdout) if "response" in d or "error" in d or "stats" in d), None)
    if doc is None:
        return Outcome(None, None)
    usage = _gemini_usage(doc.get("stats"))
    err = doc.get("error")
    if isinstance(err, Mapping) and err:
        message = str(err.get("message") or err.get("type") or "error")
        failure, limited = _failure(message)
        return Outcome(None, usage, failure, limited or err.get("code") == 429)
    text = doc.get("response")
    return Outcome(text if isinstance(text, str) and text.strip() else None, usage)


def _gemini_usage(stats: Any) -> Usage | None:
    if not isinstance(stats, Mapping) or not isinstance(stats.get("models"), Mapping):
        return None
    tokens = [m.get("tokens") for m in stats["models"].values() if isinstance(m, Mapping)]
    tokens = [t for t in tokens if isinstance(t, Mapping)]
    if not tokens:
        return None
    prompt = sum(_int(t.get("prompt")) or _int(t.get("input")) + _int(t.get("cached")) for t in tokens)
    output = sum(_int(t.get("candidates")) + _int(t.get("thoughts")) for t in tokens)
    cached = sum(_int(t.get("cached")) for t in tokens)
    return Usage(prompt, output, cached, None)


def parse_grok(stdout: str, stderr: str = "", exit_code: int = 0) -> Outcome:
    doc = next((d for d in _json_objects(stdout) if "text" in d or "stopReason" in d), None)
    if doc is None:
        return Outcome(None, None)
    text = doc.get("text")
    stop = doc.get("stopReason")
    if isinstance(stop, str) and stop.lower() in {"cancelled", "canceled", "error", "refusal"}:
        return Outcome(None, None, f"stopped: {stop}")
    return Outcome(text if isinstance(text, str) and text.strip() else None, None)


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping) and p.get("type") in (None, "text")]
        joined = "".join(p for p in parts if isinstance(p, str))
        return joined or None
    return None


def parse_kimi(stdout: str, stderr: str = "", exit_code: int = 0) -> Outcome:
    answer = None
    for doc in _json_objects(stdout):
        if doc.get("role") == "assistant":
            text = _content_text(doc.get("content"))
            if text and text.strip():
                answer = text
    return Outcome(answer, None)


PARSERS = {
    "claude-json": parse_claude,
    "codex-jsonl": parse_codex,
    "gemini-json": parse_gemini,
    "grok-json": parse_grok,
    "kimi-stream-json": parse_kimi,
}


def parse(output_format: str, stdout: str, stderr: str = "", exit_code: int = 0, answer_file_text: str | None = None) -> Outcome:
    """Parse one provider run's output by its catalog `outputFormat`."""
    if output_format not in PARSERS:
        raise ValueError(f"unknown output format {output_format!r}")
    if output_format == "codex-jsonl":
        return parse_codex(stdout, stderr, exit_code, answer_file_text)
    return PARSERS[output_format](stdout, stderr, exit_code)


@dataclass(frozen=True)
class Verdict:
    """The terminal status a run earns: `completed` with an answer, or `error` with a reason."""

    completed: bool
    reason: str | None
    answer: str | None
    usage: Usage | None


def judge(outcome: Outcome, exit_code: int, stderr: str) -> Verdict:
    """Turn a parsed output and the exit code into the dispatch's terminal verdict.

    Reasons: "rate-limited" for a quota/rate limit (reported in the output, or
    in stderr of a failed run), "provider exited N: <last stderr line>",
    "provider error: <message>", "no answer in output".
    """
    last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
    if outcome.rate_limited or (exit_code != 0 and outcome.error is None and is_rate_limit(last)):
        return Verdict(False, RATE_LIMITED, None, outcome.usage)
    if exit_code != 0:
        detail = _one_line(last) if last else (outcome.error or "no error output")
        return Verdict(False, f"provider exited {exit_code}: {detail}", None, outcome.usage)
    if outcome.error is not None:
        return Verdict(False, f"provider error: {outcome.error}", None, outcome.usage)
    if outcome.answer is None:
        return Verdict(False, NO_ANSWER, None, outcome.usage)
    return Verdict(True, None, outcome.answer, outcome.usage)
