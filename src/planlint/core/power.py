"""How many eval items a difference between two proportions needs, and what n items can show.

The normal approximations PL611 and PL615 use (docs/plan-format.md, "Can the
eval detect the target?", gives the formulas, their sources and why):

* unpaired (the trained model is scored on other items than the baseline):
  Fleiss, Levin and Paik (2003), the two-sample formula without continuity
  correction, which R's `stats::power.prop.test` computes;
* paired (the same items re-scored): McNemar's test as sized by Connor
  (1987), with the share of discordant items either declared or taken as
  it would be if the two models' outcomes on an item were independent.

Pure functions of numbers, standard library only (`statistics.NormalDist`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

ALPHA = 0.05  # two-sided
POWER = 0.8
_NORMAL = NormalDist()
_STEPS = 200  # bisection halvings: far below any difference a message shows


@dataclass(frozen=True)
class Design:
    """How the comparison will be tested: two-sided `alpha`, `power`, paired or not, and
    for a paired design the share of discordant items (None: as if independent)."""

    alpha: float = ALPHA
    power: float = POWER
    paired: bool = True
    discordance: float | None = None

    def z_alpha(self) -> float:
        return _NORMAL.inv_cdf(1 - self.alpha / 2)

    def z_beta(self) -> float:
        return _NORMAL.inv_cdf(self.power)


def discordance(p0: float, p1: float, design: Design) -> float:
    """ψ = p01 + p10, the share of items whose outcome differs between the two models:
    declared, or p0(1-p1) + p1(1-p0) when the outcomes are independent."""
    if design.discordance is not None:
        return design.discordance
    return p0 * (1 - p1) + p1 * (1 - p0)


def items_needed(p0: float, delta: float, design: Design) -> float:
    """The items (per side) that tell p0 from p0 + delta at the design's alpha and power,
    as a real number (round it up); infinity when no number of items can (a declared
    discordance smaller than delta: fewer items change outcome than the difference needs)."""
    if delta <= 0:
        return math.inf
    p1 = min(p0 + delta, 1.0)
    za, zb = design.z_alpha(), design.z_beta()
    if design.paired:
        psi = discordance(p0, p1, design)
        if psi < delta - 1e-12:  # only a declared one can be: independent outcomes give psi - delta = 2 p0 (1 - p1)
            return math.inf
        psi = max(psi, delta)
        root = za * math.sqrt(psi) + zb * math.sqrt(max(psi - delta * delta, 0.0))
    else:
        mean = (p0 + p1) / 2
        root = za * math.sqrt(2 * mean * (1 - mean)) + zb * math.sqrt(p0 * (1 - p0) + p1 * (1 - p1))
    return (root / delta) ** 2


def whole_items(needed: float) -> int | None:
    """`needed` rounded up to whole items (None for infinity); a hair of float noise is not an item."""
    if not math.isfinite(needed):
        return None
    return max(1, math.ceil(needed - 1e-9))


def largest_difference(p0: float, design: Design) -> float:
    """The largest improvement over p0 there is: up to 1, and within a declared discordance."""
    top = 1 - p0
    if design.paired and design.discordance is not None:
        top = min(top, design.discordance)
    return top


def detectable(p0: float, n: int, design: Design) -> float | None:
    """The smallest improvement over p0 that n items can show at the design's alpha and
    power (the minimal detectable difference), or None when even the largest one there is
    cannot be told from noise with n items."""
    top = largest_difference(p0, design)
    if top <= 0 or items_needed(p0, top, design) > n:
        return None
    low, high = 0.0, top  # items_needed(low) > n >= items_needed(high): it falls as delta grows
    for _ in range(_STEPS):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if items_needed(p0, middle, design) > n:
            low = middle
        else:
            high = middle
    return high


def significant(p0: float, p1: float, n: int, design: Design) -> bool:
    """Whether p1 measured on n items differs from p0 at the design's two-sided alpha:
    McNemar's z (p1 - p0) / sqrt(ψ / n) when paired, the pooled two-proportion z otherwise."""
    difference = p1 - p0
    if difference == 0 or n < 1:
        return False
    if design.paired:
        variance = discordance(p0, p1, design)
        variance = max(variance, abs(difference))  # ψ can never be below the difference it produced
    else:
        mean = (p0 + p1) / 2
        variance = 2 * mean * (1 - mean)
    return abs(difference) * math.sqrt(n) / math.sqrt(variance) >= design.z_alpha()
