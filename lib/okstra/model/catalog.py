"""The provider catalog as typed records (DESIGN §3).

A `Provider` is one worker CLI: its models (the **model id** is the catalog
key; the display name and the value passed to the CLI often differ), its
default model, the argv template that runs it non-interactively, how its
prompt is delivered, the shape of its output, where it reports token usage
and which runner hosts it. `okstra.run.catalog.load()` builds a `Catalog`
from the built-in YAML and the config overrides; this module only holds the
records and their small rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core.errors import RefusedError

PLACEHOLDERS = ("binary", "prompt", "model", "answer_file", "workdir")
PROMPT_DELIVERIES = ("argument",)
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


@dataclass(frozen=True)
class Prices:
    """USD per million tokens, list prices as of `as_of` (catalog `prices`, overridable in config)."""

    input_per_mtok: float
    cached_input_per_mtok: float
    output_per_mtok: float
    as_of: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "inputPerMTok": f"{self.input_per_mtok:g}",
            "cachedInputPerMTok": f"{self.cached_input_per_mtok:g}",
            "outputPerMTok": f"{self.output_per_mtok:g}",
            "asOf": self.as_of,
        }


@dataclass(frozen=True)
class EstimateRule:
    """How a dispatch's input tokens are estimated from its prompt before it runs: prompt
    characters per token, plus the tokens the CLI itself sends (system prompt, tools), and
    the answer's expected output tokens (catalog `estimate`, README "Scope and spend")."""

    chars_per_token: float = 4.0
    context_tokens: int = 0
    output_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "charsPerToken": f"{self.chars_per_token:g}",
            "contextTokens": str(self.context_tokens),
            "outputTokens": str(self.output_tokens),
        }


@dataclass(frozen=True)
class Model:
    id: str
    display: str
    cli_model: str
    prices: Prices | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"id": self.id, "display": self.display, "cliModel": self.cli_model}
        if self.prices is not None:
            out["prices"] = self.prices.to_dict()
        return out


@dataclass(frozen=True)
class Provider:
    id: str
    display: str
    binary: str
    models: tuple[Model, ...]
    default_model: str
    command: tuple[str, ...]
    prompt_delivery: str
    output_format: str
    usage_source: str
    runner: str
    estimate: EstimateRule = EstimateRule()
    # The CLI's own knobs set in its environment (e.g. CLAUDE_CODE_MAX_RETRIES), and
    # how its retry loop is bounded, in words (docs/DESIGN.md §5).
    env: tuple[tuple[str, str], ...] = ()
    retry_bound: str | None = None

    def model_ids(self) -> tuple[str, ...]:
        return tuple(m.id for m in self.models)

    def model(self, model_id: str) -> Model:
        """The model whose **id** is `model_id`; refused with the known ids otherwise."""
        for m in self.models:
            if m.id == model_id:
                return m
        raise RefusedError(
            f"provider {self.id!r} has no model {model_id!r}",
            hint=f"known models of {self.id}: {', '.join(self.model_ids())}",
        )

    @property
    def default(self) -> Model:
        return self.model(self.default_model)

    def argv(self, model: Model, prompt: str, answer_file: Path, workdir: Path) -> list[str]:
        """The command line, placeholders substituted element by element (never a shell)."""
        values = {
            "binary": self.binary,
            "prompt": prompt,
            "model": model.cli_model,
            "answer_file": str(answer_file),
            "workdir": str(workdir),
        }
        # One pass per element: substituted text (a prompt holding "{model}") is never re-scanned.
        return [_PLACEHOLDER.sub(lambda m: values[m.group(1)], element) for element in self.command]

    def to_dict(self) -> dict[str, Any]:
        return {
            "display": self.display,
            "binary": self.binary,
            "models": {m.id: {k: v for k, v in m.to_dict().items() if k != "id"} for m in self.models},
            "defaultModel": self.default_model,
            "command": list(self.command),
            "promptDelivery": self.prompt_delivery,
            "outputFormat": self.output_format,
            "usageSource": self.usage_source,
            "runner": self.runner,
            "estimate": self.estimate.to_dict(),
            **({"env": dict(self.env)} if self.env else {}),
            **({"retryBound": self.retry_bound} if self.retry_bound else {}),
        }


@dataclass(frozen=True)
class Catalog:
    providers: tuple[Provider, ...]

    def ids(self) -> tuple[str, ...]:
        return tuple(p.id for p in self.providers)

    def provider(self, provider_id: str, source: str | None = None) -> Provider:
        """The provider `provider_id`; the one refusal of an unknown provider id, naming `source`."""
        for p in self.providers:
            if p.id == provider_id:
                return p
        where = f"{source}: " if source else ""
        raise RefusedError(f"{where}unknown provider {provider_id!r}", hint=f"known providers: {', '.join(self.ids())}")

    def to_dict(self) -> dict[str, Any]:
        return {"providers": {p.id: p.to_dict() for p in self.providers}}


def provider_from_dict(provider_id: str, raw: Mapping[str, Any]) -> Provider:
    """One provider from its validated catalog entry (`providers.<id>` in the YAML)."""
    models = tuple(
        Model(model_id, str(entry["display"]), str(entry.get("cliModel", model_id)), _prices(entry.get("prices")))
        for model_id, entry in raw["models"].items()
    )
    rule = raw.get("estimate")
    return Provider(
        id=provider_id,
        display=str(raw["display"]),
        binary=str(raw["binary"]),
        models=models,
        default_model=str(raw["defaultModel"]),
        command=tuple(str(e) for e in raw["command"]),
        prompt_delivery=str(raw.get("promptDelivery", "argument")),
        output_format=str(raw["outputFormat"]),
        usage_source=str(raw["usageSource"]),
        runner=str(raw["runner"]),
        estimate=EstimateRule(float(rule["charsPerToken"]), int(rule["contextTokens"]), int(rule["outputTokens"]))
        if isinstance(rule, Mapping)
        else EstimateRule(),
        env=tuple((str(k), str(v)) for k, v in (raw.get("env") or {}).items()),
        retry_bound=str(raw["retryBound"]) if raw.get("retryBound") else None,
    )


def _prices(raw: Any) -> Prices | None:
    if not isinstance(raw, Mapping):
        return None
    return Prices(float(raw["inputPerMTok"]), float(raw["cachedInputPerMTok"]), float(raw["outputPerMTok"]), str(raw["asOf"]))


def from_dict(raw: Mapping[str, Any]) -> Catalog:
    return Catalog(tuple(provider_from_dict(pid, entry) for pid, entry in raw["providers"].items()))
