"""The one sha256 okstra binds its records with (DESIGN §14).

Imports nothing at module level: the write-guard's hot path (DESIGN §13) uses it
to check the active-run seal, and hashlib alone costs milliseconds there.
"""


def sha256_hex(data: bytes) -> str:
    try:
        from _sha256 import sha256  # the C module alone: hashlib costs ~5 ms (DESIGN §13)
    except ImportError:  # pragma: no cover - other builds
        from hashlib import sha256
    return sha256(data).hexdigest()


# -- the seal of a state file okstra writes (DESIGN §14) ------------------------------
# A text state file (a sidecar) ends with one line holding the sha256 of everything
# before it. The writer adds it in the same atomic write as the content, so a kill can
# never leave a file and a seal that disagree; a reader refuses a file whose seal is
# missing or does not match: it was changed by something other than okstra's writer.

_PREFIX = "<!-- okstra-seal sha256:"
_SUFFIX = " -->"
_HINT = (
    "okstra's own commands write it; restore it, or move it away and record again (user-response-write in the user's terminal)"
)


def seal_text(text: str) -> str:
    """`text` (ending with a newline) followed by its seal line."""
    return f"{text}{_PREFIX}{sha256_hex(text.encode('utf-8'))}{_SUFFIX}\n"


def open_text(text: str, source: str, *, required: bool) -> str:
    """The text a seal line seals, checked against it. A missing seal is refused when
    `required` (a state file okstra wrote), else the text is returned as it is (an export
    from the HTML view has none). StateError (exit 2) names `source`."""
    from okstra.core.errors import StateError

    head, _, last = text.removesuffix("\n").rpartition("\n")
    if not last.startswith(_PREFIX):
        if required:
            raise StateError(f"{source} has no okstra seal: it was written outside okstra", hint=_HINT)
        return text
    body = head + "\n"
    if last != f"{_PREFIX}{sha256_hex(body.encode('utf-8'))}{_SUFFIX}" or not text.endswith("\n"):
        raise StateError(f"{source} was changed outside okstra (its sha256 differs from the seal okstra wrote)", hint=_HINT)
    return body


# -- the seal of a JSON state file okstra writes (DESIGN §14) ---------------------------
# A JSON state file (the team state) carries its seal as a top-level "seal" member:
# "sha256:<hex>" of the canonical form of the document without that member. The
# canonical form (sorted keys, no whitespace, UTF-8) is defined here once, so the
# writer and the reader cannot disagree about what was sealed.

SEAL_KEY = "seal"
_JSON_PREFIX = "sha256:"


def canonical(value: object) -> bytes:
    """The canonical form of JSON data: sorted keys, no whitespace, UTF-8 (TypeError or
    ValueError for what is not JSON data)."""
    import json

    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _canonical(document: dict) -> bytes:
    return canonical({key: value for key, value in document.items() if key != SEAL_KEY})


def seal_json(document: dict) -> dict:
    """`document` with its seal member, ready for the same atomic write."""
    return {**document, SEAL_KEY: _JSON_PREFIX + sha256_hex(_canonical(document))}


def open_json(document: object, source: str, hint: str) -> dict:
    """`document` without its seal member, checked against it. A document with no seal,
    or one that differs, is refused: StateError (exit 2) naming `source`."""
    from okstra.core.errors import StateError

    if not isinstance(document, dict) or SEAL_KEY not in document:
        raise StateError(f"{source} has no okstra seal: it was written outside okstra (or by an older okstra)", hint=hint)
    if document[SEAL_KEY] != _JSON_PREFIX + sha256_hex(_canonical(document)):
        raise StateError(f"{source} was changed outside okstra (its sha256 differs from the seal okstra wrote)", hint=hint)
    return {key: value for key, value in document.items() if key != SEAL_KEY}
