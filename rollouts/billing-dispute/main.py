"""Rollout of the example plan plans/billing-dispute-mixed-reward.yaml (an Osmosis workspace layout).

On the platform, `osmosis train submit configs/training/billing-dispute-mixed-reward.toml`
runs this entrypoint at the pinned commit. planlint never imports or runs it: it checks
that the file the submit config names exists and compiles as Python (PL901).
"""

from __future__ import annotations


def ledger_reward(expected: list[dict], actual: list[dict]) -> float:
    """1.0 when the sandbox ledger ends with exactly the expected adjustments, else 0.0."""

    def key(entry: dict) -> tuple:
        return (entry.get("account_id"), entry.get("invoice_id"), round(float(entry.get("amount", 0)), 2))

    return 1.0 if sorted(map(key, expected)) == sorted(map(key, actual)) else 0.0
