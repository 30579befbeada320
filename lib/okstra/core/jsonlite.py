"""JSON for the write-guard hot path, without importing `json`.

`import json` pulls in `re` and `enum` (about 6 ms on a small machine, half the
interpreter's start-up), and the write-guard hook has a budget of 1.3 x that
start-up for everything (DESIGN §13). This module drives the C scanner that
`json.loads` itself uses (`_json.make_scanner`) and the C string encoder, so
it parses and writes the same JSON with nothing but builtins loaded. Where the
C accelerator is missing it falls back to `json`. Everything off the hot path
uses `json` / `core.fsio` as usual.
"""

_WHITESPACE = " \t\n\r"
_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


class JSONError(ValueError):
    """Not valid JSON; the message says where (line and column) and what."""


class _Context:
    # The attributes `_json.make_scanner` reads, with json.loads' defaults.
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__
    memo: dict = {}


try:
    from _json import encode_basestring_ascii as _encode_string
    from _json import make_scanner as _make_scanner

    _scan = _make_scanner(_Context())
except ImportError:  # pragma: no cover - CPython always ships _json
    _scan = None
    _encode_string = None


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    column = pos - text.rfind("\n", 0, pos)
    return f"line {line} column {column}"


def loads(text: str):
    """Parse one JSON document; raise JSONError naming line and column."""
    if _scan is None:  # pragma: no cover
        import json

        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise JSONError(f"line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    if text.startswith("\ufeff"):
        raise JSONError("line 1 column 1: unexpected UTF-8 byte-order mark")
    end = len(text)
    pos = 0
    while pos < end and text[pos] in _WHITESPACE:
        pos += 1
    try:
        value, pos = _scan(text, pos)
    except StopIteration as exc:
        raise JSONError(f"{_where(text, exc.value)}: expecting a value") from None
    except RecursionError:
        raise JSONError("nested too deeply") from None
    except (ValueError, SystemError):
        # The C scanner raises json.JSONDecodeError only when json.decoder is loaded
        # (else a SystemError): let `json` itself say what is wrong. Errors only.
        _explain(text)
        raise JSONError("not valid JSON") from None
    while pos < end and text[pos] in _WHITESPACE:
        pos += 1
    if pos != end:
        raise JSONError(f"{_where(text, pos)}: extra data after the document")
    return value


def _explain(text: str) -> None:
    import json

    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise JSONError(f"line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:
        raise JSONError(str(exc)) from None


def string(value: str) -> str:
    """A JSON string literal (ASCII-only, like json.dumps with ensure_ascii)."""
    if _encode_string is None:  # pragma: no cover
        import json

        return json.dumps(value)
    return _encode_string(value)


def dumps_flat(document: dict[str, object]) -> str:
    """Compact JSON of nested dicts whose leaves are strings (hook outputs)."""
    parts = []
    for key, value in document.items():
        body = dumps_flat(value) if isinstance(value, dict) else string(str(value))
        parts.append(f"{string(key)}:{body}")
    return "{" + ",".join(parts) + "}"
