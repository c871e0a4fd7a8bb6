"""A call's cost comes from the price table (USD per million tokens); no price, no number."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from analyst.accounts import usage

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        # 1M in at $3, 100k out at $15.
        ("anthropic/claude-sonnet-4-5", Decimal("4.5")),
        # 1M in at $2, 100k out at $8.
        ("openai/gpt-4.1", Decimal("2.8")),
        ("ollama/qwen2.5", Decimal(0)),
        ("ollama/llama3.1:70b", Decimal(0)),
    ],
)
def test_the_default_models_are_priced(model, expected):
    assert usage.cost_usd(model, 1_000_000, 100_000) == expected


def test_small_counts_keep_their_fractions():
    # 12 in at $3/M and 7 out at $15/M: $0.000036 + $0.000105.
    assert usage.cost_usd("anthropic/claude-sonnet-4-5", 12, 7) == Decimal("0.000141")


@pytest.mark.parametrize("model", ["anthropic/claude-test", "openai/gpt-4.1-mini", "mystery"])
def test_a_model_without_a_price_has_no_cost(model):
    assert usage.cost_usd(model, 1000, 1000) is None


@pytest.mark.parametrize(("input_tokens", "output_tokens"), [(None, 10), (10, None), (None, None)])
def test_an_unreported_count_makes_the_cost_unknown(input_tokens, output_tokens):
    assert usage.cost_usd("anthropic/claude-sonnet-4-5", input_tokens, output_tokens) is None


def test_an_exact_route_beats_a_pattern_and_null_unprices_it(settings):
    settings.ANALYST_PRICES = {
        "ollama/*": {"input": 0, "output": 0},
        "ollama/big": {"input": 1, "output": 1},
        "openai/*": {"input": 5, "output": 5},
        "openai/gpt-4.1": None,
        "*": {"input": 9, "output": 9},
    }
    assert usage.cost_usd("ollama/big", 1_000_000, 0) == Decimal(1)
    assert usage.cost_usd("ollama/small", 1_000_000, 0) == Decimal(0)
    assert usage.cost_usd("openai/gpt-4.1", 1_000_000, 0) is None
    assert usage.cost_usd("openai/o3", 1_000_000, 0) == Decimal(5), "the longest pattern wins"
    assert usage.cost_usd("acme/x", 1_000_000, 0) == Decimal(9)


def settings_in_a_process(**env: str) -> subprocess.CompletedProcess[str]:
    code = "from django.conf import settings; import json; print(json.dumps(settings.ANALYST_PRICES))"
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "x", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_env_var_adds_to_and_overrides_the_defaults():
    prices = {"openai/gpt-4.1": {"input": 1.5, "output": 6}, "acme/fast": {"input": 0.1, "output": 0.2}}
    ran = settings_in_a_process(ANALYST_PRICES=json.dumps(prices))
    assert ran.returncode == 0, ran.stderr
    table = json.loads(ran.stdout.strip().splitlines()[-1])
    assert table["openai/gpt-4.1"] == {"input": 1.5, "output": 6}
    assert table["acme/fast"] == {"input": 0.1, "output": 0.2}
    assert table["anthropic/claude-sonnet-4-5"] == {"input": 3, "output": 15}


def test_a_malformed_price_stops_the_start():
    ran = settings_in_a_process(ANALYST_PRICES=json.dumps({"acme/fast": {"input": "cheap"}}))
    assert ran.returncode != 0
    assert "ANALYST_PRICES['acme/fast']" in ran.stderr
