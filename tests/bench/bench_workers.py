"""Worker rows (docs/DESIGN.md §13): a stalled provider noticed, and the stream parsers' throughput.

Stall: the installed `worker-run` runs the installed fake codex in `stall` mode
(it prints its start events, then nothing, like a hung request); the
installed `worker-wait --idle-window W` runs beside it. Figure: the time from
the provider's last event (`lastActivityAt`, as worker-run stamped it) to
worker-wait's exit with `stalled`; budget: the idle window + 1 s.

Throughput: a 100 MB stream log per streaming format (claude stream-json,
codex --json, gemini stream-json) is generated in the temporary folder (never
committed) and parsed whole as worker-run does at the end of a run (decode,
parse, judge); figure in MB/s against 50 MB/s. A 100 MB log of garbage with
undecodable bytes and a truncated last line must end in one line of reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from bench.run import Context, Row
from fixtures.runs import make_run
from okstra.core.clock import parse_iso
from okstra.team import output

IDLE_WINDOW = 3.0
LOG_BYTES = 100 * 1024 * 1024
TARGET_MB_S = 50.0


def _stall(ctx: Context) -> tuple[float, str]:
    root = ctx.tmp / "bench-stall"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    layout, _ = make_run(root.resolve(), ["codex"])
    env = dict(os.environ, PATH=f"{ctx.prefix / 'share' / 'fakes'}{os.pathsep}{os.environ['PATH']}", OKSTRA_FAKE_MODE="stall")
    worker = subprocess.Popen(
        [str(ctx.prefix / "bin" / "worker-run"), "--run-manifest", str(layout.manifest), "--worker", "codex-analyst"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=root,
    )
    try:
        end = time.monotonic() + 30
        while time.monotonic() < end:  # worker-wait waits only for a launched dispatch: let it start first
            try:
                if json.loads(layout.heartbeat_path("codex-analyst").read_text()).get("lastActivityAt"):
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        waiter = subprocess.Popen(
            [
                str(ctx.prefix / "bin" / "worker-wait"),
                *("--run-manifest", str(layout.manifest), "--idle-window", f"{IDLE_WINDOW:g}", "--timeout", "60", "--json"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=root,
        )
        out, err = waiter.communicate(timeout=90)
        exited = time.time()
    finally:
        worker.terminate()
        worker.wait(timeout=15)
    if not out.strip():
        raise RuntimeError(f"worker-wait printed nothing (exit {waiter.returncode}): {err.strip()}")
    [health] = json.loads(out)["workers"]
    if waiter.returncode != 1 or not health["reason"].startswith("stalled"):
        raise RuntimeError(f"worker-wait did not report a stall: exit {waiter.returncode}, {health['reason']}")
    last = parse_iso(health["evidence"]["lastActivityAt"])
    return exited - last, health["reason"]


def _claude_line(i: int) -> str:
    text = f"step {i}: reading lib/module_{i % 97}.py and checking the handler " * 12
    if i % 3 == 0:
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": "Read", "input": {"file_path": f"/p/lib/m{i}.py"}}
        return json.dumps({"type": "assistant", "message": {"content": [block]}, "session_id": "s"})
    return json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}, "session_id": "s"})


def _codex_line(i: int) -> str:
    if i % 2:
        item = {"id": f"item_{i}", "type": "command_execution", "command": f"rg handler lib/m{i}.py", "status": "completed"}
        item["aggregated_output"] = "lib/module.py:12: def handler(request):\n" * 12
        return json.dumps({"type": "item.completed", "item": item})
    return json.dumps({"type": "item.completed", "item": {"id": f"item_{i}", "type": "reasoning", "text": "thinking " * 60}})


def _gemini_line(i: int) -> str:
    if i % 2:
        return json.dumps(
            {"type": "tool_use", "tool_name": "read_file", "tool_id": f"t{i}", "parameters": {"file_path": f"m{i}"}}
        )
    return json.dumps({"type": "tool_result", "tool_id": f"t{i - 1}", "status": "success", "output": "def handler(): ...\n" * 30})


_FORMATS = {
    "claude-stream-json": (
        json.dumps({"type": "system", "subtype": "init", "model": "claude-opus-4-8", "session_id": "s"}),
        _claude_line,
        json.dumps(
            {
                "type": "result",
                "is_error": False,
                "result": "# Findings\n\ndone",
                "modelUsage": {"claude-opus-4-8": {"inputTokens": 10, "outputTokens": 20}},
                "permission_denials": [],
            }
        ),
    ),
    "codex-jsonl": (
        json.dumps({"type": "thread.started", "thread_id": "t"}),
        _codex_line,
        json.dumps({"type": "item.completed", "item": {"id": "last", "type": "agent_message", "text": "# Findings\n\ndone"}})
        + "\n"
        + json.dumps({"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 20}}),
    ),
    "gemini-stream-json": (
        json.dumps({"type": "init", "session_id": "g", "model": "gemini-3.1-pro-preview"}),
        _gemini_line,
        json.dumps({"type": "message", "role": "assistant", "content": "# Findings\n\ndone", "delta": True})
        + "\n"
        + json.dumps({"type": "result", "status": "success", "stats": {"models": {"gemini-3.1-pro-preview": {"tokens": {}}}}}),
    ),
}


def _log(path: Path, first: str, line, last: str) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(first + "\n")
        size, i = len(first) + 1, 0
        while size < LOG_BYTES:
            text = line(i) + "\n"
            handle.write(text)
            size += len(text)
            i += 1
        handle.write(last + "\n")
    return path


def _throughput(path: Path, fmt: str) -> tuple[float, output.RunVerdict]:
    t0 = time.perf_counter()
    stdout = path.read_bytes().decode("utf-8", "backslashreplace")
    verdict = output.judge(output.parse(fmt, stdout, "", 0), 0, "")
    elapsed = time.perf_counter() - t0
    return path.stat().st_size / (1024 * 1024) / elapsed, verdict


def _garbage(path: Path) -> Path:
    chunk = b"\x1b[2K\rThinking... \xff\xfe\xfd not json }{ " * 64 + b"\n"
    with open(path, "wb") as handle:
        for _ in range(LOG_BYTES // len(chunk)):
            handle.write(chunk)
        handle.write(b'{"type": "result", "result": "cut off mid-li')
    return path


def rows(ctx: Context) -> list[Row]:
    stalled_after, reason = _stall(ctx)
    found = [
        Row(
            f"stall: provider's last event to worker-wait reporting stalled (idle window {IDLE_WINDOW:g} s)",
            stalled_after,
            "s",
            "idle window + 1 s",
            IDLE_WINDOW + 1.0,
            "<= 1.0",
            f"worker-wait said: {reason}; load average {os.getloadavg()[0]:.1f}",
        )
    ]
    for fmt, (first, line, last) in _FORMATS.items():
        path = _log(ctx.tmp / f"{fmt}.log", first, line, last)
        rate, verdict = _throughput(path, fmt)
        path.unlink()
        if not verdict.completed:
            raise RuntimeError(f"{fmt}: the 100 MB log did not parse to an answer: {verdict.reason}")
        found.append(Row(f"parse a 100 MB {fmt} stream log", rate, "MB/s", "50 MB/s", TARGET_MB_S, ">= 1.0"))
    path = _garbage(ctx.tmp / "garbage.log")
    _, verdict = _throughput(path, "claude-stream-json")  # a correctness check, not a budget: decoding bad bytes is slow
    path.unlink()
    if verdict.completed or "\n" in (verdict.reason or "") or len(verdict.reason or "") > 300:
        raise RuntimeError(f"a 100 MB garbage log must end in one line of reason, got {verdict.reason!r}")
    return found
