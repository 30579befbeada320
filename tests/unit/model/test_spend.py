"""model.spend: the estimate from a prompt, the recorded cost, the budget refusal with its numbers."""

from __future__ import annotations

import pytest

from okstra.core.errors import RefusedError
from okstra.model import spend
from okstra.model.catalog import EstimateRule, Model, Prices, Provider
from okstra.model.dispatch import Estimate, Usage

PRICES = Prices(3.0, 0.3, 15.0, "2025-11-20")
MODEL = Model("m", "M", "m", PRICES)
PROVIDER = Provider(
    "p",
    "P",
    "p",
    (MODEL,),
    "m",
    ("{binary}", "{prompt}"),
    "argument",
    "claude-json",
    "x",
    "cli-wrapper",
    EstimateRule(4.0, 1000, 2000),
)


def test_the_estimate_counts_the_prompt_the_cli_context_and_the_expected_answer():
    est = spend.estimate(PROVIDER, MODEL, "x" * 4001)
    assert est.input_tokens == 1001 + 1000
    assert est.cost_usd == pytest.approx((1001 * 3.0 + 1000 * 0.3 + 2000 * 15.0) / 1e6)


def test_a_model_without_prices_has_an_unknown_cost():
    assert spend.estimate(PROVIDER, Model("n", "N", "n"), "abcd").cost_usd is None


def test_recorded_cost_prefers_the_providers_own_figure_else_tokens_at_the_prices():
    assert spend.cost_of(Usage(100, 10, 0, 0.5), PRICES) == 0.5
    assert spend.cost_of(Usage(1_000_000, 0, 400_000, None), PRICES) == pytest.approx(0.6 * 3.0 + 0.4 * 0.3)
    assert spend.cost_of(Usage(None, None, None, None), PRICES) is None
    assert spend.cost_of(None, PRICES) is None


def test_the_budget_refuses_with_every_number_and_lets_an_affordable_dispatch_through():
    budget = spend.Budget(0.05, "render-bundle --budget-usd")
    spend.check(budget, "r", 0.01, [("a", Estimate(1000, 0.04))])
    with pytest.raises(RefusedError) as caught:
        spend.check(budget, "r", 0.02, [("a", Estimate(1000, 0.01)), ("b attempt 1", Estimate(2500, 0.03))])
    assert caught.value.message == (
        "the estimate for b attempt 1 is $0.0300 (2,500 input tokens): run r would reach $0.0600, past its budget "
        "of $0.0500 (render-bundle --budget-usd; $0.0200 spent or committed before)"
    )
    spend.check(None, "r", 99.0, [("a", Estimate(1, 5.0))])
