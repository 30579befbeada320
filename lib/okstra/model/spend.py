"""Spend: a dispatch's estimate before it runs, its recorded cost after, the run's budget.

The estimate (README "Scope and spend"): input tokens = the prompt's characters
divided by the provider's `estimate.charsPerToken`, plus `estimate.contextTokens`
(what the CLI itself sends before the prompt: system prompt, tool definitions);
cost = prompt tokens at the model's input price + context tokens at its cached-input
price + `estimate.outputTokens` at its output price (catalog `prices`, USD per
million tokens as of their `asOf` date, overridable under `providers:` in config).
A recorded cost is the provider's own figure when it reports one (claude), else
the recorded tokens at the same prices, else unknown.

A run's budget (`render-bundle --budget-usd N`, else `budget-usd` in config)
refuses a dispatch whose estimate would take the run past it: already committed =
each dispatch's recorded cost when it has one, else its estimate once launched.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from okstra.core.errors import RefusedError
from okstra.model.catalog import Catalog, Model, Prices, Provider
from okstra.model.dispatch import PENDING, Dispatch, Estimate, Usage

SPEND_VERSION = "1.0"


def _per_million(tokens: float, price: float) -> float:
    return tokens * price / 1_000_000


def estimate(provider: Provider, model: Model, prompt: str) -> Estimate:
    rule = provider.estimate
    prompt_tokens = math.ceil(len(prompt) / rule.chars_per_token)
    p = model.prices
    cost = None
    if p is not None:
        cost = _per_million(prompt_tokens, p.input_per_mtok)
        cost += _per_million(rule.context_tokens, p.cached_input_per_mtok)
        cost += _per_million(rule.output_tokens, p.output_per_mtok)
        cost = round(cost, 6)
    return Estimate(prompt_tokens + rule.context_tokens, cost)


def cost_of(usage: Usage | None, prices: Prices | None) -> float | None:
    """The recorded cost of a finished dispatch (None: unknown)."""
    if usage is None:
        return None
    if usage.cost_usd is not None:
        return usage.cost_usd
    if prices is None or usage.input_tokens is None:
        return None
    cached = usage.cached_tokens or 0
    fresh = max(0, usage.input_tokens - cached)
    total = _per_million(fresh, prices.input_per_mtok) + _per_million(cached, prices.cached_input_per_mtok)
    return round(total + _per_million(usage.output_tokens or 0, prices.output_per_mtok), 6)


def _prices(catalog: Catalog, d: Dispatch) -> Prices | None:
    try:
        return catalog.provider(d.provider).model(d.model_id).prices
    except RefusedError:
        return None


@dataclass(frozen=True)
class Line:
    """Spend of one dispatch attempt."""

    worker_id: str
    attempt: int
    provider: str
    model_id: str
    status: str
    estimate: Estimate | None
    spent: float | None  # recorded cost (None: not finished, or the provider reports no usage)

    @property
    def committed(self) -> float:
        """What the budget counts: the recorded cost, else the estimate once launched."""
        if self.spent is not None:
            return self.spent
        if self.status == PENDING or self.estimate is None:
            return 0.0
        return self.estimate.cost_usd or 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "workerId": self.worker_id,
            "attempt": self.attempt,
            "provider": self.provider,
            "modelId": self.model_id,
            "status": self.status,
            "estimate": self.estimate.to_dict() if self.estimate else None,
            "spentUsd": self.spent,
        }


def lines(dispatches: Iterable[Dispatch], catalog: Catalog) -> list[Line]:
    return [
        Line(d.worker_id, d.attempt, d.provider, d.model_id, d.status, d.estimate, cost_of(d.usage, _prices(catalog, d)))
        for d in dispatches
    ]


@dataclass(frozen=True)
class Budget:
    usd: float
    source: str  # where it was set: "render-bundle --budget-usd" or the config file


def budget_document(budget: Budget) -> dict[str, Any]:
    """The run's `spend.json`: its budget as set when the run was rendered."""
    return {"schemaVersion": SPEND_VERSION, "budgetUsd": budget.usd, "source": budget.source}


def budget_from(raw: Any, source: str) -> Budget | None:
    from okstra.core.errors import StateError

    if not isinstance(raw, dict) or not isinstance(raw.get("budgetUsd"), (int, float)) or raw["budgetUsd"] < 0:
        raise StateError(f"{source}: expected {{budgetUsd: a number >= 0, source}}")
    return Budget(float(raw["budgetUsd"]), str(raw.get("source") or source))


def money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.4f}"


def check(budget: Budget | None, run_id: str, committed: float, new: Sequence[tuple[str, Estimate]]) -> None:
    """Refuse (before anything starts) when the new dispatches' estimates would take the
    run past its budget; the message gives every number."""
    if budget is None or not new:
        return
    total = committed
    for label, est in new:
        total += est.cost_usd or 0.0
        if total > budget.usd:
            raise RefusedError(
                f"the estimate for {label} is {money(est.cost_usd)} ({est.input_tokens:,} input tokens): "
                f"run {run_id} would reach {money(total)}, past its budget of {money(budget.usd)} "
                f"({budget.source}; {money(committed)} spent or committed before)",
                hint="raise the budget (render-bundle --budget-usd N, or config set budget-usd N), "
                "or dispatch fewer workers or cheaper models",
            )


def prices_as_of(catalog: Catalog) -> str | None:
    """The newest `asOf` date of the catalog's prices (None: no prices)."""
    dates = [m.prices.as_of for p in catalog.providers for m in p.models if m.prices is not None]
    return max(dates) if dates else None


@dataclass(frozen=True)
class Summary:
    """team-status's spend block: per worker and in total, against the budget."""

    lines: tuple[Line, ...]
    budget: Budget | None
    as_of: str | None

    def per_worker(self) -> dict[str, tuple[float | None, float]]:
        """worker -> (spent as recorded, None when nothing is known; committed)."""
        out: dict[str, tuple[float | None, float]] = {}
        for line in self.lines:
            spent, committed = out.get(line.worker_id, (None, 0.0))
            if line.spent is not None:
                spent = (spent or 0.0) + line.spent
            out[line.worker_id] = (spent, committed + line.committed)
        return out

    @property
    def spent(self) -> float:
        return round(sum(line.spent or 0.0 for line in self.lines), 6)

    @property
    def committed(self) -> float:
        return round(sum(line.committed for line in self.lines), 6)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pricesAsOf": self.as_of,
            "budgetUsd": self.budget.usd if self.budget else None,
            "budgetSource": self.budget.source if self.budget else None,
            "spentUsd": self.spent,
            "committedUsd": self.committed,
            "workers": [
                {"workerId": w, "spentUsd": spent, "committedUsd": round(c, 6)} for w, (spent, c) in self.per_worker().items()
            ],
            "attempts": [line.to_dict() for line in self.lines],
        }

    def render(self) -> str:
        budget = f"{money(self.budget.usd)} ({self.budget.source})" if self.budget else "none"
        rows = [f"SPEND (prices as of {self.as_of or 'unknown'}; spent = recorded usage, committed adds running estimates)"]
        for worker, (spent, committed) in self.per_worker().items():
            rows.append(f"  {worker:<20} spent {money(spent):>12}  committed {money(committed):>12}")
        rows.append(f"  {'total':<20} spent {money(self.spent):>12}  committed {money(self.committed):>12}  budget {budget}")
        return "\n".join(rows)
