"""The statistics behind PL611 and PL615 (planlint.core.power), against values computed elsewhere.

Unpaired: R's `stats::power.prop.test` implements the normal approximation of
Fleiss, Levin and Paik (2003) without continuity correction, the formula
core.power uses. The first three rows are the examples of its help page with
the results the page states (power 0.740, n 76.7, p2 0.8026); the others were
computed with R 4.2.2 (`power.prop.test(p1=, p2=, power=.8, tol=1e-12)$n` and
`power.prop.test(n=, p1=, power=.8, tol=1e-12)$p2`).

Paired: Connor (1987), "Sample size for testing differences in proportions for
the paired-sample design", Biometrics 43(1):207-211, p. 209; the worked case
p01 = 0.45, p10 = 0.05 (2-sided alpha 0.05, power 0.8) needs 22.01 pairs, 23
whole ones, as HyLown's calculator for that formula states. The rows with the
discordance of independent outcomes, psi = p0(1-p1) + p1(1-p0), were computed
with that formula in R 4.2.2 (uniroot for the detectable difference).
"""

from __future__ import annotations

import math

import pytest

from planlint.core.power import Design, detectable, discordance, items_needed, significant, whole_items

UNPAIRED = Design(paired=False)
PAIRED = Design()

# (p0, target, n, R's items needed for the target, R's p2 reachable with n items)
FLEISS = [
    (0.41, 0.10, 300, 388.7513227, 0.5239000071),
    (0.37, 0.08, 400, 592.1459473, 0.4675920041),
    (0.90, 0.05, 1000, 434.4320224, 0.9344979375),
    (0.05, 0.03, 200, 1058.855111, 0.1299252195),
    (0.58, 0.12, 500, 249.9819675, 0.6657752458),
]
# (p0, target, n, items needed for the target, detectable difference with n), psi of independent outcomes
CONNOR_INDEPENDENT = [
    (0.41, 0.10, 300, 391.4906104, 0.1144251393),
    (0.37, 0.08, 400, 594.8873633, 0.09793247225),
    (0.90, 0.05, 1000, 437.171961, 0.0345411873),
    (0.05, 0.03, 200, 1061.598326, 0.08061196139),
    (0.58, 0.12, 500, 252.7178299, 0.08600555247),
]


def test_r_help_page_examples():
    # power.prop.test(p1 = .50, p2 = .75, power = .90)  ## => n = 76.7
    assert items_needed(0.50, 0.25, Design(power=0.9, paired=False)) == pytest.approx(76.7, abs=0.05)
    # power.prop.test(n = 50, p1 = .5, power = .90)  ## => p2 = 0.8026
    assert 0.5 + detectable(0.5, 50, Design(power=0.9, paired=False)) == pytest.approx(0.8026, abs=5e-4)
    # power.prop.test(n = 50, p1 = .50, p2 = .75)  ## => power = 0.740: 50 items are short of 0.25 at 0.8 power...
    assert items_needed(0.5, 0.25, UNPAIRED) > 50
    # ...and exactly enough at the power 0.740 the page gives
    assert items_needed(0.5, 0.25, Design(power=0.7401659, paired=False)) == pytest.approx(50, abs=1e-3)


@pytest.mark.parametrize("p0, target, n, needed, reachable", FLEISS)
def test_unpaired_matches_power_prop_test(p0, target, n, needed, reachable):
    assert items_needed(p0, target, UNPAIRED) == pytest.approx(needed, rel=1e-8)
    assert p0 + detectable(p0, n, UNPAIRED) == pytest.approx(reachable, abs=1e-8)


def test_connor_worked_example():
    design = Design(discordance=0.45 + 0.05)
    assert items_needed(0.05, 0.40, design) == pytest.approx(22.01132443, rel=1e-8)
    assert whole_items(items_needed(0.05, 0.40, design)) == 23


@pytest.mark.parametrize("p0, target, n, needed, smallest", CONNOR_INDEPENDENT)
def test_paired_with_independent_outcomes(p0, target, n, needed, smallest):
    assert items_needed(p0, target, PAIRED) == pytest.approx(needed, rel=1e-8)
    assert detectable(p0, n, PAIRED) == pytest.approx(smallest, abs=1e-8)


def test_a_declared_discordance():
    design = Design(discordance=0.2)
    assert items_needed(0.37, 0.08, design) == pytest.approx(242.9062063, rel=1e-8)  # R, Connor's formula
    assert detectable(0.37, 400, design) == pytest.approx(0.06246089439, abs=1e-8)
    assert items_needed(0.37, 0.25, design) == math.inf  # an improvement of 0.25 changes at least 25% of the outcomes
    assert discordance(0.37, 0.45, design) == 0.2


def test_pairing_independent_outcomes_costs_a_little_more_than_unpaired():
    """With independent outcomes the paired null variance is 2 p q + delta^2 / 2: a hair more items."""
    for p0, target, *_ in FLEISS:
        assert items_needed(p0, target, UNPAIRED) < items_needed(p0, target, PAIRED) < items_needed(p0, target, UNPAIRED) * 1.02


def test_items_needed_falls_as_the_target_grows():
    """The detectable difference is found by bisection, which needs this."""
    for design in (UNPAIRED, PAIRED, Design(discordance=0.3)):
        for p0 in (0.0, 0.01, 0.2, 0.5, 0.77, 0.99):
            top = 1 - p0 if design.discordance is None else min(1 - p0, design.discordance)
            steps = [top * i / 400 for i in range(1, 401)]
            needed = [items_needed(p0, delta, design) for delta in steps]
            assert all(a >= b for a, b in zip(needed, needed[1:])), (design, p0)


def test_nothing_is_detectable_with_too_few_items():
    assert detectable(0.41, 2, PAIRED) is None
    assert detectable(0.41, 2, UNPAIRED) is None
    assert detectable(1.0, 10_000, PAIRED) is None  # no improvement is left


def test_edges_of_the_range_are_exact():
    # 0.9 + 0.1 reaches 1: independent outcomes then have psi = delta exactly, not a hair below it
    assert math.isfinite(items_needed(0.9, 0.1, PAIRED))
    assert whole_items(items_needed(0.9, 0.1, PAIRED)) == 77
    assert items_needed(0.4, 0.0, PAIRED) == math.inf


def test_alpha_and_power_change_the_items():
    assert items_needed(0.41, 0.1, Design(alpha=0.01)) > items_needed(0.41, 0.1, PAIRED)
    assert items_needed(0.41, 0.1, Design(power=0.9)) > items_needed(0.41, 0.1, PAIRED)
    # unpaired, power 0.5: the z of power vanishes and n = (z_alpha sqrt(2 p q) / delta)^2
    p0, delta = 0.41, 0.1
    mean = p0 + delta / 2
    expected = (1.959963985 * math.sqrt(2 * mean * (1 - mean)) / delta) ** 2
    assert items_needed(p0, delta, Design(power=0.5, paired=False)) == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize("p0, p1, n, paired, expected", [
    (0.41, 0.47, 400, True, False),  # z = 0.06 * 20 / sqrt(0.4946) = 1.71
    (0.41, 0.53, 400, True, True),   # z = 3.38
    (0.41, 0.53, 400, False, True),
    (0.50, 0.60, 100, False, False),  # pooled z = 0.1 * 10 / sqrt(2 * 0.55 * 0.45) = 1.42
    (0.50, 0.65, 200, False, True),   # pooled z = 0.15 * sqrt(200) / sqrt(2 * 0.575 * 0.425) = 3.04
    (0.41, 0.41, 10_000, True, False),
    (0.41, 0.30, 400, True, True),  # a significant drop
])
def test_significance(p0, p1, n, paired, expected):
    assert significant(p0, p1, n, Design(paired=paired)) is expected
