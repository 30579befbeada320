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
