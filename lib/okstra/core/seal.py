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
