"""Markdown in report text (DESIGN §8): raw HTML stays text, only safe links, and the fast
path for plain one-paragraph text gives exactly what the parser gives."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okstra.report import markdown

PIECES = list("ab `<>&\"'*_[]#-1.:@;|\\!~\t\n") + ["&amp;", "<http://x>", "`` ", "é", "\u00a0", "\u2003", "한"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14).map("".join))
def test_the_fast_path_gives_exactly_what_the_parser_gives(text):
    fast = markdown._fast(text)
    if fast is not None:
        assert fast == markdown._parser().render(text)


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "x\n\n<div onclick=alert(1)>y</div>",
        "[a](javascript:alert(1))",
        "[a](JaVaScRiPt:alert(1))",
        "[a]( javascript:alert(1))",
        "[a](data:text/html,<script>alert(1)</script>)",
        "[a](file:///etc/passwd)",
        "<javascript:alert(1)>",
        "![i](http://example.com/i.png)",
        "[a][r]\n\n[r]: javascript:alert(1)",
    ],
)
def test_raw_html_stays_text_and_unsafe_links_are_not_made(text):
    html = markdown.to_html(text)
    assert "<script" not in html and "<img" not in html and "<div" not in html
    assert 'href="javascript' not in html.lower() and 'href="data' not in html and 'href="file' not in html


def test_markdown_becomes_markup():
    assert markdown.to_html("Uses `x` and **y**, [d](https://e.x/)") == (
        '<p>Uses <code>x</code> and <strong>y</strong>, <a href="https://e.x/">d</a></p>\n'
    )
