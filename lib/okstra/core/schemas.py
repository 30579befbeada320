"""JSON Schemas (2020-12): loaded once per process, errors with their JSON paths.

jsonschema is imported inside the functions that need it, so modules on the
write-guard hot path can import this module's callers without paying for it.

Speed (DESIGN §13: render-final-report validates a 2 MB report within its
budget): a schema is read and built only when first used, and never
meta-checked at run time (our schemas are okstra's own files; a unit test
checks each once). A document is first put to a yes/no check compiled once
from the schema: it calls jsonschema's own keyword functions for every
keyword that looks at one value, and walks the structure (properties, items,
$ref, allOf, if/then/else, ...) itself, without jsonschema's per-node
validator objects. Only when that check says no does jsonschema run in full,
and its errors are the answer. A schema using a keyword the walk does not know
is validated by jsonschema alone.

A document read on every run command (the provider catalog, a config file) is
checked with `remember=True`: a valid one leaves a memo (`core.memo`, kind
"valid") named by the sha256 of its schema and its canonical JSON, and the next
check of the same document against the same schema finds it and skips
jsonschema, whose import alone costs a command about 0.2 s (DESIGN §13).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from okstra.core import home, memo, seal
from okstra.core.errors import StateError

SCHEMA_DIR = home.ROOT / "schemas"

Check = Callable[[Any], bool]

# Keywords that look at one value and never into a subschema: the check calls
# jsonschema's own function for each (`type` and `pattern` inlined: the hot ones).
_LEAVES = frozenset(
    {
        "const",
        "enum",
        "format",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "required",
        "dependentRequired",
    }
)
_DRAFT = "https://json-schema.org/draft/2020-12/schema"


def path_of(name: str) -> Path:
    return SCHEMA_DIR / f"{name}.schema.json"


@functools.cache
def validator(name: str) -> Any:
    from jsonschema import Draft202012Validator

    schema = json.loads(path_of(name).read_text(encoding="utf-8"))
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


class _Unsupported(Exception):
    """The schema uses something the compiled check does not walk: jsonschema alone decides."""


@functools.cache
def _check(name: str) -> Check | None:
    try:
        return _compile(validator(name))
    except _Unsupported:
        return None


def _compile(full: Any) -> Check:
    """A yes/no check with exactly the verdict of `full.is_valid` on JSON documents."""
    root = full.schema
    if not isinstance(root, dict) or root.get("$schema", _DRAFT) != _DRAFT:
        raise _Unsupported("$schema")
    keywords = full.VALIDATORS
    is_type = full.is_type
    compiled: dict[int, Check] = {}

    def resolve(ref: str) -> Any:
        if "%" in ref or not (ref == "#" or ref.startswith("#/")):
            raise _Unsupported(ref)
        node = root
        for part in ref[2:].split("/") if ref != "#" else ():
            part = part.replace("~1", "/").replace("~0", "~")
            try:
                node = node[int(part)] if isinstance(node, list) else node[part]
            except (KeyError, IndexError, ValueError, TypeError):
                raise _Unsupported(ref) from None
        return node

    def leaf(keyword: str, value: Any, schema: dict) -> Check:
        function = keywords[keyword]
        return lambda x: next(iter(function(full, value, x, schema) or ()), None) is None

    def of_type(types: Any) -> Check:
        names = [types] if isinstance(types, str) else types  # jsonschema's ensure_list
        return lambda x: any(is_type(x, t) for t in names)

    def matches(pattern: str) -> Check:
        search = re.compile(pattern).search  # jsonschema: re.search(pattern, instance)
        return lambda x: not isinstance(x, str) or search(x) is not None

    def properties(subs: list[tuple[str, Check]]) -> Check:
        def check(x: Any) -> bool:
            if isinstance(x, dict):
                for key, sub in subs:
                    if key in x and not sub(x[key]):
                        return False
            return True

        return check

    def additional(known: frozenset[str], sub: Check) -> Check:
        return lambda x: not isinstance(x, dict) or all(sub(v) for k, v in x.items() if k not in known)

    def every_item(sub: Check) -> Check:
        return lambda x: not isinstance(x, list) or all(sub(i) for i in x)

    def every_name(sub: Check) -> Check:
        return lambda x: not isinstance(x, dict) or all(sub(k) for k in x)

    def contains(sub: Check) -> Check:
        return lambda x: not isinstance(x, list) or any(sub(i) for i in x)

    def one_of(subs: list[Check]) -> Check:
        return lambda x: sum(1 for s in subs if s(x)) == 1

    def if_then_else(test: Check, then: Check, otherwise: Check) -> Check:
        return lambda x: then(x) if test(x) else otherwise(x)

    def part(keyword: str, value: Any, schema: dict) -> Check:
        if keyword == "type":
            return of_type(value)
        if keyword == "pattern":
            return matches(value)
        if keyword in _LEAVES:
            return leaf(keyword, value, schema)
        if keyword == "$ref":
            return node(resolve(value))
        if keyword == "properties":
            return properties([(key, node(sub)) for key, sub in value.items()])
        if keyword == "additionalProperties":
            # jsonschema's extras: keys neither in `properties` nor matching `patternProperties`.
            if "patternProperties" in schema:
                raise _Unsupported(keyword)
            return additional(frozenset(schema.get("properties", {})), node(value))
        if keyword == "items":
            if "prefixItems" in schema:
                raise _Unsupported(keyword)
            return every_item(node(value))
        if keyword == "propertyNames":
            return every_name(node(value))
        if keyword == "contains":
            if "minContains" in schema or "maxContains" in schema:
                raise _Unsupported(keyword)
            return contains(node(value))
        if keyword == "allOf":
            return every([node(sub) for sub in value])
        if keyword == "anyOf":
            subs = [node(sub) for sub in value]
            return lambda x: any(s(x) for s in subs)
        if keyword == "oneOf":
            return one_of([node(sub) for sub in value])
        if keyword == "not":
            sub = node(value)
            return lambda x: not sub(x)
        if keyword == "if":
            return if_then_else(node(value), node(schema.get("then", True)), node(schema.get("else", True)))
        raise _Unsupported(keyword)  # $dynamicRef, patternProperties, prefixItems, unevaluated*, ...

    def every(checks: list[Check]) -> Check:
        if len(checks) == 1:
            return checks[0]

        def check(x: Any) -> bool:
            for c in checks:
                if not c(x):
                    return False
            return True

        return check

    def node(schema: Any) -> Check:
        if schema is True:
            return lambda x: True
        if schema is False:
            return lambda x: False
        if not isinstance(schema, dict):
            raise _Unsupported(repr(schema))
        if schema is not root and ("$id" in schema or "$schema" in schema or "$anchor" in schema):
            raise _Unsupported("a nested $id, $schema or $anchor")
        key = id(schema)
        if key not in compiled:
            # A $ref cycle meets this entry while the node is still being built.
            late: list[Check] = []
            compiled[key] = lambda x: late[0](x)
            # `then`/`else` act through `if`; jsonschema skips keywords it has no function for.
            built = every([part(k, v, schema) for k, v in schema.items() if k in keywords])
            late.append(built)
            compiled[key] = built
        return compiled[key]

    return node(root)


def _message(error: Any) -> str:
    """A failed `pattern` says what the field expects (the schema's `x-expected`), not the regex."""
    expected = error.schema.get("x-expected") if isinstance(error.schema, dict) else None
    if error.validator == "pattern" and expected:
        return f"{error.instance!r} is not {expected}"
    return error.message


def _position(path: Any) -> list[tuple[int, str]]:
    """A JSON path as a sort key: list items by their index (`[2]` before `[10]`), keys by name."""
    return [(part, "") if isinstance(part, int) else (-1, str(part)) for part in path]


def problems(name: str, document: Any, *, remember: bool = False) -> list[str]:
    """Every violation, one `<json path>: <message>` line each, in document order.
    `remember`: consult and keep a memo of this document's validity (module docstring)."""
    known = _validity_memo(name, document) if remember else None
    if known is not None and memo.recall("valid", known)[0]:
        return []
    check = _check(name)
    if check is not None and check(document):
        if known is not None:
            memo.keep("valid", known, True)
        return []
    found = sorted(validator(name).iter_errors(document), key=lambda e: (_position(e.absolute_path), e.message))
    return [f"{e.json_path}: {_message(e)}" for e in found]


def _validity_memo(name: str, document: Any) -> str | None:
    """The memo name of `document`'s validity against schema `name`; None for what is not JSON data."""
    try:
        canonical = seal.canonical(document)
    except (TypeError, ValueError):
        return None
    return memo.key(b"valid", name.encode(), path_of(name).read_bytes(), canonical)


def check_state(name: str, document: Any, source: str) -> None:
    """Refuse an invalid state document with exit 2, naming the file and the first problems."""
    found = problems(name, document)
    if found:
        more = f" (+{len(found) - 3} more)" if len(found) > 3 else ""
        raise StateError(f"{source}: not a valid {name} document: {'; '.join(found[:3])}{more}")
