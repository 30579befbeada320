"""What a provider CLI printed: its answer, usage, served model, denials, and whether it failed.

One parser per catalog `outputFormat` (docs/DESIGN.md §5; the streams as the real
CLIs print them). Each returns an `ParsedOutput`; `judge` turns it and the exit code
into a `RunVerdict`; `worker_run` decides what lands where. `parse_event` reads one
line of a stream as it arrives (for activity, retries and feeds).

Token usage is normalised into `model.dispatch.Usage`:
- `input_tokens`: every prompt token the model read, cached ones included;
- `cached_tokens`: the part of those served from a cache;
- `output_tokens`: every generated token, reasoning/thinking included;
- `cost_usd`: only where the CLI reports it (claude's `total_cost_usd`).

Failure is judged from the stream the CLI reports it on, never from a banner:
claude   the `result` object (json, or the last stream-json line): `is_error` +
         `api_error_status` + the exit code, never `subtype` (an API error still
         says "success"). Usage and the served model from `modelUsage`, denied
         writes from `permission_denials`.
codex    JSONL: only `turn.failed` (and a non-zero exit) is a failure; top-level
         `error` events are retries ("Reconnecting... n/5"), `error` items are
         warnings; stderr always ends "Reading additional input from stdin...".
         Usage from the last `turn.completed` (thread totals are cumulative).
         No served model in its output.
gemini   json (one object) or stream-json (events, `result` last). Its error
         object goes to **stderr** after stack traces, stdout empty; retries are
         stderr lines "Attempt N failed with status 429...". Usage and the served
         model from `stats.models` (keyed by the model that served).
grok     json `{text, stopReason, ...}`; no usage, no served model (unknown).
kimi     stream-json lines; the answer is the last assistant message; no usage.
"""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from okstra.core.errors import InputError
from okstra.model.dispatch import Usage, rate_limited_reason

NO_ANSWER = "no answer in output"
EXCERPT = 200  # characters of an event's text kept in its record

# Event kinds: the provider started, wrote a message, used a tool, is retrying a
# failed request, reported an error or a warning, gave its result; any other line
# is `log`, a known banner is `noise` (not activity).
START, MESSAGE, TOOL, RETRY, ERROR, WARNING, RESULT, LOG, NOISE = (
    "start",
    "message",
    "tool",
    "retry",
    "error",
    "warning",
    "result",
    "log",
    "noise",
)
EVENT_KINDS = (START, MESSAGE, TOOL, RETRY, ERROR, WARNING, RESULT, LOG, NOISE)

_RATE_LIMIT = re.compile(
    r"rate[_ ]limit|usage limit|RESOURCE_EXHAUSTED|quota exceeded|too many requests|\b429\b|exhausted your capacity",
    re.IGNORECASE,
)
_RETRY_AFTER = re.compile(
    r"(?:try again in|retry after|retry-after:?|retry in|reset after)\s+([^.;,)\]]*\d[^.;,)\]]*)", re.IGNORECASE
)
# Lines every run of a CLI prints on stderr whatever happens: never a failure reason.
_NOISE = re.compile(
    r"^(?:Reading additional input from stdin\.\.\.|Warning: 256-color support not detected.*|Ripgrep is not available.*)$"
)
_GEMINI_RETRY = re.compile(r"^Attempt \d+ failed with status \d+\. Retrying with backoff")
_CODEX_RETRY = re.compile(r"^Reconnecting\.\.\.|\bretrying\b", re.IGNORECASE)


@dataclass(frozen=True)
class Event:
    """One line of a provider's stream: what it was, an excerpt, and the tokens it states.

    `tokens` is the token total the event itself reports (prompt incl. cached +
    output: the conversation's size so far), None when it reports none.
    """

    kind: str
    text: str
    tokens: int | None = None

    @property
    def activity(self) -> bool:
        return self.kind != NOISE

    @property
    def progress(self) -> bool:
        """The provider got through: anything but a retry, an unparsed line or a banner. It
        ends a run of retries (DESIGN §5: retrying is a state, not one event)."""
        return self.kind not in (RETRY, LOG, NOISE)


@dataclass(frozen=True)
class Denial:
    """A tool call a hook or the permission mode refused (claude `permission_denials`)."""

    tool: str
    target: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "target": self.target}


@dataclass(frozen=True)
class ParsedOutput:
    """The parsed output of one provider run.

    `answer` is the final text (None when the output holds none); `usage` None
    means the provider reported none; `error` is the provider's own failure
    message when it reported one; `rate_limited` when that failure is a quota
    or rate limit (`retry_after` what it said about waiting); `served_model`
    the model the CLI says served; `denials` the tool calls it was refused;
    `note` why there is no answer, when that is known; `killed` the signal
    the output shows the CLI was killed by (gemini exits 0 on SIGTERM).
    """

    answer: str | None
    usage: Usage | None
    error: str | None = None
    rate_limited: bool = False
    retry_after: str | None = None
    served_model: str | None = None
    denials: tuple[Denial, ...] = ()
    note: str | None = None
    killed: str | None = None  # the signal the output shows the CLI died of, whatever its exit code


def is_rate_limit(text: str | None) -> bool:
    return bool(text) and bool(_RATE_LIMIT.search(text or ""))


def retry_after_of(text: str | None) -> str | None:
    match = _RETRY_AFTER.search(text or "")
    return match.group(1).strip() if match else None


def _one_line(text: Any, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _load(line: str) -> dict[str, Any] | None:
    try:
        doc = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def _line_at(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return text[start : end if end >= 0 else len(text)]


def _docs(text: str, pattern: re.Pattern[str], *, last: bool = False) -> Iterator[dict[str, Any]]:
    """The JSON objects on the lines where `pattern` matches, in order (or last first).

    Only matching lines are decoded: a 100 MB stream is scanned by the regex
    engine, not line by line in Python (docs/DESIGN.md §13).
    """
    positions = [m.start() for m in pattern.finditer(text)]
    seen: set[int] = set()
    for pos in reversed(positions) if last else positions:
        start = text.rfind("\n", 0, pos) + 1
        if start in seen:
            continue
        seen.add(start)
        doc = _load(_line_at(text, pos).strip())
        if doc is not None:
            yield doc


def _type_is(*kinds: str) -> re.Pattern[str]:
    return re.compile(r'"type"\s*:\s*"(?:' + "|".join(re.escape(k) for k in kinds) + r')"')


def _object(text: str) -> dict[str, Any] | None:
    """The first JSON object that starts a line of `text` and parses from there (may span lines)."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"^\s*\{", text, re.M):
        try:
            doc, _ = decoder.raw_decode(text, match.end() - 1)
        except (ValueError, RecursionError):
            continue
        if isinstance(doc, dict):
            return doc
    return None


def _last_object(text: str) -> dict[str, Any] | None:
    """The last JSON object that starts a line of `text` (an error report after stack traces)."""
    decoder = json.JSONDecoder()
    for match in reversed(list(re.finditer(r"^\{", text, re.M))):
        try:
            doc, _ = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(doc, dict):
            return doc
    return None


def _why_no_answer(stdout: str, what: str) -> str:
    stripped = stdout.strip()
    if not stripped:
        return "stdout is empty"
    tail = stripped[stripped.rfind("\n") + 1 :].strip()
    if tail.startswith("{") and _load(tail) is None:
        return "stdout ends in a truncated JSON line"
    return f"{len(stdout.encode('utf-8', 'replace'))} bytes of stdout hold no {what}"


def _failure(message: str, *, limited: bool = False, usage: Usage | None = None, **extra: Any) -> ParsedOutput:
    text = _one_line(message)
    return ParsedOutput(
        None,
        usage,
        error=text,
        rate_limited=limited or is_rate_limit(text),
        retry_after=retry_after_of(text),
        **extra,
    )


# -- claude --------------------------------------------------------------------------

_CLAUDE_RESULT = _type_is("result")
_CLAUDE_INIT = re.compile(r'"subtype"\s*:\s*"init"')


def parse_claude(stdout: str, stderr: str = "", exit_code: int = 0) -> ParsedOutput:
    result = next(_docs(stdout, _CLAUDE_RESULT, last=True), None)
    init = next(_docs(stdout, _CLAUDE_INIT), None) if result is None or not result.get("modelUsage") else None
    if result is None or result.get("type") != "result":
        served = init.get("model") if init and isinstance(init.get("model"), str) else None
        return ParsedOutput(None, None, served_model=served, note=_why_no_answer(stdout, "claude result object"))
    usage = _claude_usage(result)
    served = _claude_served(result) or (init.get("model") if init and isinstance(init.get("model"), str) else None)
    denials = _claude_denials(result.get("permission_denials"))
    text = result.get("result") if isinstance(result.get("result"), str) else None
    status = result.get("api_error_status")
    if result.get("is_error") is True or exit_code != 0:
        message = text or "; ".join(str(e) for e in result.get("errors") or []) or f"is_error ({result.get('subtype')})"
        if status and str(status) not in message:
            message = f"API error {status}: {message}"
        return _failure(message, limited=status == 429, usage=usage, served_model=served, denials=denials)
    answer = text if text and text.strip() else None
    return ParsedOutput(answer, usage, served_model=served, denials=denials, note=None if answer else "the result text is empty")


def _claude_served(result: Mapping[str, Any]) -> str | None:
    models = result.get("modelUsage")
    if not isinstance(models, Mapping) or not models:
        return None

    def weight(item: tuple[str, Any]) -> int:
        m = item[1] if isinstance(item[1], Mapping) else {}
        return _int(m.get("outputTokens")) + _int(m.get("inputTokens")) + _int(m.get("cacheReadInputTokens"))

    return str(max(models.items(), key=weight)[0])


def _claude_denials(raw: Any) -> tuple[Denial, ...]:
    if not isinstance(raw, list):
        return ()
    found = []
    for entry in raw:
        if not isinstance(entry, Mapping):
            continue
        tool_input = entry.get("tool_input") if isinstance(entry.get("tool_input"), Mapping) else {}
        target = next((str(tool_input[k]) for k in ("file_path", "notebook_path", "path", "command") if tool_input.get(k)), None)
        found.append(Denial(str(entry.get("tool_name") or "unknown"), target))
    return tuple(found)


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


# -- codex ---------------------------------------------------------------------------

_CODEX_TURN_END = _type_is("turn.completed", "turn.failed")
_CODEX_MESSAGE = _type_is("agent_message")


def parse_codex(stdout: str, stderr: str = "", exit_code: int = 0, answer_file_text: str | None = None) -> ParsedOutput:
    usage = None
    failed = None
    for event in _docs(stdout, _CODEX_TURN_END, last=True):
        if event.get("type") == "turn.failed" and failed is None and usage is None:
            err = event.get("error")
            failed = str(err.get("message")) if isinstance(err, Mapping) and err.get("message") else "turn failed"
        elif event.get("type") == "turn.completed" and isinstance(event.get("usage"), Mapping):
            u = event["usage"]
            # input_tokens already includes the cached ones; reasoning is part of output.
            usage = Usage(_int(u.get("input_tokens")), _int(u.get("output_tokens")), _int(u.get("cached_input_tokens")), None)
            break
    if failed is not None:
        return _failure(failed, usage=usage)
    last_message = None
    for event in _docs(stdout, _CODEX_MESSAGE, last=True):
        item = event.get("item")
        if event.get("type") == "item.completed" and isinstance(item, Mapping) and isinstance(item.get("text"), str):
            last_message = item["text"]
            break
    answer = answer_file_text if answer_file_text and answer_file_text.strip() else last_message
    answer = answer if answer and answer.strip() else None
    return ParsedOutput(answer, usage, note=None if answer else _why_no_answer(stdout, "agent_message"))


# -- gemini --------------------------------------------------------------------------

_GEMINI_RESULT = _type_is("result")
_GEMINI_INIT = _type_is("init")
_GEMINI_ASSISTANT = re.compile(r'"role"\s*:\s*"assistant"')


def parse_gemini(stdout: str, stderr: str = "", exit_code: int = 0) -> ParsedOutput:
    """gemini json (one object) and stream-json (events); errors from stderr's error object."""
    streamed = next(_docs(stdout, _GEMINI_RESULT, last=True), None)
    if streamed is not None and streamed.get("type") == "result":
        stats = streamed.get("stats") if isinstance(streamed.get("stats"), Mapping) else {}
        init = next(_docs(stdout, _GEMINI_INIT), None)
        served = _gemini_served(stats) or (init.get("model") if init and isinstance(init.get("model"), str) else None)
        usage = _gemini_usage(stats) or _gemini_flat_usage(stats)
        err = streamed.get("error")
        if streamed.get("status") not in (None, "success") or isinstance(err, Mapping):
            return _gemini_error(
                err if isinstance(err, Mapping) else {"message": f"status {streamed.get('status')}"}, usage, served
            )
        parts = [e.get("content") for e in _docs(stdout, _GEMINI_ASSISTANT) if e.get("type") == "message"]
        answer = "".join(p for p in parts if isinstance(p, str))
        return ParsedOutput(
            answer if answer.strip() else None,
            usage,
            served_model=served,
            note=None if answer.strip() else "no assistant message",
        )
    doc = _object(stdout) if stdout.strip() else None
    if doc is not None and ("response" in doc or "error" in doc or "stats" in doc):
        usage = _gemini_usage(doc.get("stats"))
        served = _gemini_served(doc.get("stats"))
        if isinstance(doc.get("error"), Mapping) and doc["error"]:
            return _gemini_error(doc["error"], usage, served)
        text = doc.get("response")
        answer = text if isinstance(text, str) and text.strip() else None
        return ParsedOutput(answer, usage, served_model=served, note=None if answer else "the response is empty")
    reported = _last_object(stderr) if "{" in stderr else None
    if reported is not None and isinstance(reported.get("error"), Mapping):
        return _gemini_error(reported["error"], None, None)
    init = next(_docs(stdout, _GEMINI_INIT), None)
    served = init.get("model") if init and isinstance(init.get("model"), str) else None
    tail = stdout.strip().rsplit("\n", 1)[-1]
    if exit_code == 0 and (not tail or _load(tail) is not None):  # observed: gemini exits 0, no result, on SIGTERM
        return ParsedOutput(
            None, None, served_model=served, note="exited 0 without a result, as gemini does on SIGTERM", killed="SIGTERM"
        )
    return ParsedOutput(None, None, served_model=served, note=_why_no_answer(stdout, "gemini response"))


def _gemini_error(err: Mapping[str, Any], usage: Usage | None, served: str | None) -> ParsedOutput:
    message = str(err.get("message") or err.get("type") or "error")
    code = err.get("code")
    if code is not None and str(code) not in message:
        message = f"{message} (code {code})"
    return _failure(message, limited=code == 429, usage=usage, served_model=served)


def _gemini_models(stats: Any) -> Mapping[str, Any]:
    if not isinstance(stats, Mapping) or not isinstance(stats.get("models"), Mapping):
        return {}
    return {k: v for k, v in stats["models"].items() if isinstance(v, Mapping)}


def _gemini_served(stats: Any) -> str | None:
    models = _gemini_models(stats)
    if not models:
        return None
    main = [k for k, v in models.items() if isinstance(v.get("roles"), Mapping) and "main" in v["roles"]]
    if main:
        return str(main[0])

    def weight(item: tuple[str, Mapping[str, Any]]) -> int:
        tokens = item[1].get("tokens")
        return _int(tokens.get("total")) if isinstance(tokens, Mapping) else 0

    return str(max(models.items(), key=weight)[0])


def _gemini_usage(stats: Any) -> Usage | None:
    tokens = [m.get("tokens") for m in _gemini_models(stats).values()]
    tokens = [t for t in tokens if isinstance(t, Mapping)]
    if not tokens:
        return None
    prompt = sum(_int(t.get("prompt")) or _int(t.get("input")) + _int(t.get("cached")) for t in tokens)
    output = sum(_int(t.get("candidates")) + _int(t.get("thoughts")) for t in tokens)
    cached = sum(_int(t.get("cached")) for t in tokens)
    return Usage(prompt, output, cached, None)


def _gemini_flat_usage(stats: Mapping[str, Any]) -> Usage | None:
    if "input_tokens" not in stats and "output_tokens" not in stats:
        return None
    return Usage(_int(stats.get("input_tokens")), _int(stats.get("output_tokens")), _int(stats.get("cached")), None)


# -- grok, kimi ----------------------------------------------------------------------


def parse_grok(stdout: str, stderr: str = "", exit_code: int = 0) -> ParsedOutput:
    doc = _object(stdout) if stdout.strip() else None
    if doc is None or ("text" not in doc and "stopReason" not in doc):
        return ParsedOutput(None, None, note=_why_no_answer(stdout, "grok result object"))
    text = doc.get("text")
    stop = doc.get("stopReason")
    if isinstance(stop, str) and stop.lower() in {"cancelled", "canceled", "error", "refusal"}:
        return ParsedOutput(None, None, f"stopped: {stop}")
    answer = text if isinstance(text, str) and text.strip() else None
    return ParsedOutput(answer, None, note=None if answer else "the text is empty")


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping) and p.get("type") in (None, "text")]
        joined = "".join(p for p in parts if isinstance(p, str))
        return joined or None
    return None


_KIMI_ASSISTANT = re.compile(r'"role"\s*:\s*"assistant"')


def parse_kimi(stdout: str, stderr: str = "", exit_code: int = 0) -> ParsedOutput:
    for doc in _docs(stdout, _KIMI_ASSISTANT, last=True):
        text = _content_text(doc.get("content")) if doc.get("role") == "assistant" else None
        if text and text.strip():
            return ParsedOutput(text, None)
    return ParsedOutput(None, None, note=_why_no_answer(stdout, "assistant message"))


PARSERS = {
    "claude-json": parse_claude,
    "claude-stream-json": parse_claude,
    "codex-jsonl": parse_codex,
    "gemini-json": parse_gemini,
    "gemini-stream-json": parse_gemini,
    "grok-json": parse_grok,
    "kimi-stream-json": parse_kimi,
}
# Formats that print events while the CLI works: their silence means a stall.
STREAMING = frozenset({"claude-stream-json", "codex-jsonl", "gemini-stream-json", "kimi-stream-json"})


def parse(
    output_format: str, stdout: str, stderr: str = "", exit_code: int = 0, answer_file_text: str | None = None
) -> ParsedOutput:
    """Parse one provider run's output by its catalog `outputFormat`."""
    if output_format not in PARSERS:
        raise InputError(
            f"provider catalog: outputFormat {output_format!r} is not one okstra parses",
            hint=f"use one of {', '.join(sorted(PARSERS))}",
        )
    if output_format == "codex-jsonl":
        return parse_codex(stdout, stderr, exit_code, answer_file_text)
    return PARSERS[output_format](stdout, stderr, exit_code)


# -- one line of a stream --------------------------------------------------------------


def _excerpt(text: Any) -> str:
    return _one_line(text, EXCERPT)


def _tool_text(name: Any, args: Any) -> str:
    target = None
    if isinstance(args, Mapping):
        target = next((args[k] for k in ("file_path", "path", "command", "pattern", "url") if args.get(k)), None)
    return _excerpt(f"{name} {target}" if target else str(name))


def _claude_event(doc: Mapping[str, Any]) -> Event:
    kind = doc.get("type")
    if kind == "system":
        sub = doc.get("subtype")
        if sub == "init":
            return Event(START, _excerpt(f"session started, model {doc.get('model')}"))
        if sub == "api_retry":
            what = doc.get("error_status") or doc.get("error") or "error"
            return Event(RETRY, _excerpt(f"API retry {doc.get('attempt')}/{doc.get('max_retries')} after {what}"))
        return Event(LOG, _excerpt(f"system {sub}"))
    if kind in ("assistant", "user"):
        message = doc.get("message") if isinstance(doc.get("message"), Mapping) else {}
        usage = message.get("usage") if isinstance(message.get("usage"), Mapping) else None
        tokens = None
        if usage:
            tokens = sum(
                _int(usage.get(k))
                for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")
            )
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            if isinstance(block, Mapping) and block.get("type") == "tool_use":
                return Event(TOOL, _tool_text(block.get("name"), block.get("input")), tokens)
            if isinstance(block, Mapping) and block.get("type") == "tool_result":
                return Event(TOOL, _excerpt("tool result" + (" (error)" if block.get("is_error") else "")), tokens)
        text = _content_text(content) or ""
        return Event(MESSAGE, _excerpt(text), tokens)
    if kind == "result":
        usage = _claude_usage(doc)
        tokens = (usage.input_tokens or 0) + (usage.output_tokens or 0) if usage else None
        if doc.get("is_error") is True:
            return Event(ERROR, _excerpt(doc.get("result") or doc.get("subtype")), tokens)
        return Event(RESULT, _excerpt(doc.get("result") or ""), tokens)
    if kind == "stream_event":
        return Event(MESSAGE, "")
    return Event(LOG, _excerpt(kind))


def _codex_event(doc: Mapping[str, Any]) -> Event:
    kind = doc.get("type")
    if kind in ("thread.started", "turn.started"):
        return Event(START, str(kind))
    if kind == "turn.completed":
        u = doc.get("usage") if isinstance(doc.get("usage"), Mapping) else {}
        return Event(RESULT, "turn completed", _int(u.get("input_tokens")) + _int(u.get("output_tokens")) if u else None)
    if kind == "turn.failed":
        err = doc.get("error")
        return Event(ERROR, _excerpt(err.get("message") if isinstance(err, Mapping) else "turn failed"))
    if kind == "error":
        message = str(doc.get("message") or "error")
        return Event(RETRY if _CODEX_RETRY.search(message) else ERROR, _excerpt(message))
    item = doc.get("item") if isinstance(doc.get("item"), Mapping) else None
    if item is not None:
        itype = item.get("type")
        if itype == "agent_message":
            return Event(MESSAGE, _excerpt(item.get("text") or ""))
        if itype == "reasoning":
            return Event(MESSAGE, _excerpt(f"reasoning: {item.get('text') or ''}"))
        if itype == "error":
            return Event(WARNING, _excerpt(item.get("message") or item.get("text") or "error item"))
        if itype == "command_execution":
            return Event(TOOL, _tool_text("shell", {"command": item.get("command")}))
        if itype == "file_change":
            changes = item.get("changes") if isinstance(item.get("changes"), list) else []
            files = ", ".join(str(c.get("path")) for c in changes if isinstance(c, Mapping))
            return Event(TOOL, _excerpt(f"edit {files}"))
        return Event(TOOL if itype in ("mcp_tool_call", "web_search") else MESSAGE, _excerpt(itype))
    return Event(LOG, _excerpt(kind))


def _gemini_event(doc: Mapping[str, Any]) -> Event:
    kind = doc.get("type")
    if kind == "init":
        return Event(START, _excerpt(f"session started, model {doc.get('model')}"))
    if kind == "message":
        return Event(MESSAGE, _excerpt(doc.get("content") or ""))
    if kind == "tool_use":
        return Event(TOOL, _tool_text(doc.get("tool_name"), doc.get("parameters")))
    if kind == "tool_result":
        return Event(TOOL, _excerpt(f"tool result {doc.get('status') or ''}"))
    if kind == "error":
        return Event(WARNING if doc.get("severity") == "warning" else ERROR, _excerpt(doc.get("message") or "error"))
    if kind == "result":
        stats = doc.get("stats") if isinstance(doc.get("stats"), Mapping) else {}
        tokens = _int(stats.get("total_tokens")) or None
        if doc.get("status") not in (None, "success"):
            err = doc.get("error")
            return Event(ERROR, _excerpt(err.get("message") if isinstance(err, Mapping) else doc.get("status")), tokens)
        return Event(RESULT, str(doc.get("status") or "success"), tokens)
    if "response" in doc or "error" in doc:  # the one object of `--output-format json`
        return Event(
            ERROR if isinstance(doc.get("error"), Mapping) else RESULT, _excerpt(doc.get("response") or doc.get("error"))
        )
    return Event(LOG, _excerpt(kind))


def _kimi_event(doc: Mapping[str, Any]) -> Event:
    role = doc.get("role")
    if role == "assistant":
        calls = doc.get("tool_calls")
        if isinstance(calls, list) and calls:
            first = calls[0] if isinstance(calls[0], Mapping) else {}
            fn = first.get("function") if isinstance(first.get("function"), Mapping) else {}
            return Event(TOOL, _excerpt(fn.get("name") or "tool call"))
        return Event(MESSAGE, _excerpt(_content_text(doc.get("content")) or ""))
    if role == "tool":
        return Event(TOOL, "tool result")
    return Event(LOG, _excerpt(doc.get("type") or role))


def _grok_event(doc: Mapping[str, Any]) -> Event:
    if "text" in doc or "stopReason" in doc:
        return Event(RESULT, _excerpt(doc.get("text") or doc.get("stopReason")))
    return Event(LOG, _excerpt(doc.get("type") or "event"))


_EVENT_READERS = {
    "claude": _claude_event,
    "codex": _codex_event,
    "gemini": _gemini_event,
    "grok": _grok_event,
    "kimi": _kimi_event,
}


def parse_event(output_format: str, line: str | bytes | bytearray, stream: str = "stdout") -> Event | None:
    """One line a provider printed (on `stream`, "stdout" or "stderr") as an `Event`; None for a blank line.

    Never raises on content: garbage, truncated JSON and undecodable bytes are a
    `log` event; known banners are `noise`; retry lines are `retry`.
    """
    if isinstance(line, (bytes, bytearray)):
        line = line.decode("utf-8", "backslashreplace")
    text = line.strip()
    if not text:
        return None
    if _NOISE.match(text):
        return Event(NOISE, _excerpt(text))
    if stream == "stderr":
        if _GEMINI_RETRY.match(text):
            return Event(RETRY, _excerpt(text))
        return Event(LOG, _excerpt(text))
    doc = _load(text) if text.startswith("{") else None
    if doc is None:
        return Event(LOG, _excerpt(text))
    reader = _EVENT_READERS.get(output_format.split("-", 1)[0])
    return reader(doc) if reader else Event(LOG, _excerpt(text))


# -- the verdict ------------------------------------------------------------------------


@dataclass(frozen=True)
class RunVerdict:
    """The terminal status a run earns: `completed` with an answer, or `error` with a reason."""

    completed: bool
    reason: str | None
    answer: str | None
    usage: Usage | None
    outcome: ParsedOutput | None = None


def _last_stderr_line(stderr: str) -> str:
    """The last stderr line that says something: banners and bare JSON punctuation skipped."""
    for line in reversed(stderr.splitlines()):
        line = line.strip()
        if line and not _NOISE.match(line) and line not in ("}", "{", "]", "[", "},", "],"):
            return line
    return ""


def signal_name(exit_code: int) -> str | None:
    """The signal a shell-style exit code 128+N stands for (SIGTERM for 143), for the common ones."""
    for sig in (signal.SIGTERM, signal.SIGKILL, signal.SIGINT, signal.SIGHUP):
        if exit_code == 128 + sig:
            return sig.name
    return None


def judge(outcome: ParsedOutput, exit_code: int, stderr: str, *, killed_by: str | None = None) -> RunVerdict:
    """Turn a parsed output and the exit code into the dispatch's terminal verdict.

    Reasons, first that applies: "terminated by SIG…" when okstra forwarded a
    signal (`killed_by`), "terminated by SIG… (provider …)" when the output or
    an exit code of 128+N shows the CLI was killed;
    "rate-limited: <provider text>[; retry after …]"; "provider exited N:
    <the provider's own error>"; "provider error: <message>"; "no answer in
    output (<why>)".
    """
    usage = outcome.usage
    last = _last_stderr_line(stderr)
    limited_text = outcome.error if outcome.rate_limited else None
    if limited_text is None and exit_code != 0 and outcome.error is None and is_rate_limit(last):
        limited_text = _one_line(last)
    if killed_by is not None:  # okstra forwarded the signal: the CLI's own exit code says nothing more
        return RunVerdict(False, f"terminated by {killed_by}", None, usage, outcome)
    if outcome.killed is not None:
        return RunVerdict(False, f"terminated by {outcome.killed} (provider {outcome.note})", None, usage, outcome)
    if limited_text is not None:
        retry_after = outcome.retry_after or retry_after_of(limited_text)
        return RunVerdict(False, rate_limited_reason(limited_text, retry_after), None, usage, outcome)
    if exit_code != 0:
        by_signal = signal_name(exit_code)
        if by_signal is not None:
            return RunVerdict(False, f"terminated by {by_signal} (provider exited {exit_code})", None, usage, outcome)
        detail = outcome.error or (_one_line(last) if last else "no error output")
        return RunVerdict(False, f"provider exited {exit_code}: {detail}", None, usage, outcome)
    if outcome.error is not None:
        return RunVerdict(False, f"provider error: {outcome.error}", None, usage, outcome)
    if outcome.answer is None:
        why = f" ({outcome.note})" if outcome.note else ""
        return RunVerdict(False, NO_ANSWER + why, None, usage, outcome)
    return RunVerdict(True, None, outcome.answer, usage, outcome)
