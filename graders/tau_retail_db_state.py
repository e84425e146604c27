"""Grader `db-state` of the example plan plans/retail-refund-grpo.yaml (tau-retail-db-state 1.4.2).

The plan records this file as the grader's `source` and its SHA-256: planlint
hashes it on every lint (PL311), and in a pull request that edits it without
a new grader version it reports PL710. planlint never imports or runs it.
"""

from __future__ import annotations

TABLES = ("orders", "refunds")


def db_state_reward(expected: dict[str, list[dict]], actual: dict[str, list[dict]]) -> float:
    """1.0 when the orders and refunds tables end exactly as the task expects, else 0.0.

    A refund row that should not exist (an ineligible order refunded) fails the
    episode, however the conversation went.
    """

    def rows(state: dict[str, list[dict]], table: str) -> list[tuple]:
        return sorted(tuple(sorted(row.items())) for row in state.get(table, []))

    return 1.0 if all(rows(expected, table) == rows(actual, table) for table in TABLES) else 0.0
