"""Provider catalog records: model lookup, provider lookup, argv substitution."""

from __future__ import annotations

from pathlib import Path

import pytest

from okstra.core.errors import RefusedError
from okstra.model.catalog import Catalog, Model, Provider

PROVIDER = Provider(
    id="codex",
    display="Codex",
    binary="codex",
    models=(Model("gpt-5-codex", "GPT-5 Codex", "gpt-5-codex"), Model("gpt-5", "GPT-5", "gpt-5")),
    default_model="gpt-5-codex",
    command=("{binary}", "exec", "-m", "{model}", "-o", "{answer_file}", "-C", "{workdir}", "{prompt}"),
    prompt_delivery="argument",
    output_format="codex-jsonl",
    usage_source="turn.completed",
    runner="cli-wrapper",
)


def test_argv_substitutes_each_placeholder_element_by_element():
    argv = PROVIDER.argv(PROVIDER.model("gpt-5"), "do it", Path("/p/answer.md"), Path("/p"))
    assert argv == ["codex", "exec", "-m", "gpt-5", "-o", "/p/answer.md", "-C", "/p", "do it"]


def test_a_prompt_holding_placeholders_or_shell_text_stays_one_literal_argument():
    prompt = "{model} $(rm -rf /) `x` ; && {answer_file}\nnext line"
    argv = PROVIDER.argv(PROVIDER.default, prompt, Path("/a b/ans.md"), Path("/a b"))
    assert argv[-1] == prompt
    assert argv[5] == "/a b/ans.md"
    assert len(argv) == len(PROVIDER.command)


def test_argv_passes_the_cli_model_not_the_model_id():
    kimi = Provider(
        "kimi",
        "Kimi",
        "kimi",
        (Model("kimi-k2", "Kimi K2 Thinking", "kimi-k2-thinking-turbo"),),
        "kimi-k2",
        ("{binary}", "-p", "{prompt}", "-m", "{model}"),
        "argument",
        "kimi-stream-json",
        "none",
        "cli-wrapper",
    )
    assert kimi.argv(kimi.model("kimi-k2"), "x", Path("a"), Path(".")) == ["kimi", "-p", "x", "-m", "kimi-k2-thinking-turbo"]


def test_an_unknown_model_is_refused_listing_the_known_ids():
    with pytest.raises(RefusedError, match=r"no model 'gpt-9'; known models of codex: gpt-5-codex, gpt-5"):
        PROVIDER.model("gpt-9")


def test_an_unknown_provider_is_refused_listing_the_known_ones():
    catalog = Catalog((PROVIDER,))
    assert catalog.ids() == ("codex",)
    assert catalog.provider("codex") is PROVIDER
    with pytest.raises(RefusedError, match=r"unknown provider 'grok'; known providers: codex"):
        catalog.provider("grok")
