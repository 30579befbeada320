"""Markdown in a report's text fields, rendered safely for the HTML view (DESIGN §8).

markdown-it-py (CommonMark) with raw HTML off: a `<script>` or any tag in report text is
shown as text, never markup. Images are off (the page makes no network request), and a
link is made only for http(s), mailto and in-page `#` targets: `javascript:`, `data:`,
`file:` and every other scheme stay plain text. The parser is built once per process.

A 1,000-finding report holds thousands of short one-paragraph texts whose only Markdown is
`code`; those take a fast path that produces exactly what the parser would (a property
test compares the two), so the view renders within its budget (DESIGN §13).
"""

from __future__ import annotations

import functools
import re
from typing import Any

_LINK_PREFIXES = ("http://", "https://", "mailto:", "#")
# Outside code spans, any of these may be Markdown: leave such text to the parser.
_SPECIAL = re.compile(r"[*_\[\]!\\~\n\r\x00\f\v]|&(#|[A-Za-z0-9]+;)|<[^<>\s]*[:@][^<>\s]*>")
_BLOCK_START = re.compile(r"[\s#>+*=|-]|[0-9]+[.)]")
_CODE = re.compile(r"(?<!`)`([^`]+)`(?!`)")


def _escape(text: str) -> str:
    """The parser's escaping (`'` is left as is); chained replaces are the fastest in CPython."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _safe_link(url: str) -> bool:
    return url.strip().lower().startswith(_LINK_PREFIXES)


@functools.cache
def _parser() -> Any:
    from markdown_it import MarkdownIt  # heavy import: only the HTML view needs it

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable(["image", "html_block", "html_inline"])
    md.validateLink = _safe_link
    return md


def _fast(text: str) -> str | None:
    """The parser's output for one plain paragraph with single-backtick code spans, else None."""
    if not text or "\n" in text or "\r" in text or _BLOCK_START.match(text) or text[-1].isspace():
        return None
    out, last = [], 0
    for match in _CODE.finditer(text):
        plain = text[last : match.start()]
        if "`" in plain or _SPECIAL.search(plain):
            return None
        code = match.group(1)
        if len(code) > 1 and code[0] == " " and code[-1] == " " and code.strip(" "):
            code = code[1:-1]
        out += [_escape(plain), "<code>", _escape(code), "</code>"]
        last = match.end()
    rest = text[last:]
    if "`" in rest or _SPECIAL.search(rest):
        return None
    out.append(_escape(rest))
    return "<p>" + "".join(out) + "</p>\n"


def to_html(text: str) -> str:
    """HTML for `text` read as Markdown; every character of the input is escaped or markup."""
    text = str(text)
    fast = _fast(text)
    return fast if fast is not None else _parser().render(text)
