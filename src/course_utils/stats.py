"""Comparing two arms of an experiment run with the same seeds: paired differences and their test.

Two arms that share a seed share its random choices (labelled sentences, head, batch order, the
student's pre-training), so the difference of each seed's pair removes what the seed does to
both. :func:`paired` summarises those differences and applies the paired t-test (Student 1908):
a difference is called real when ``|t| = |mean| / (std / sqrt(n))`` exceeds the two-sided 5%
critical value of the t distribution with ``n - 1`` degrees of freedom.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

# Two-sided 5% critical values of Student's t distribution, t_{0.975}(df), for df = 1 ... 10
# (tests/test_stats.py recomputes them by integrating the density).
T_CRITICAL_95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
                 9: 2.262, 10: 2.228}


@dataclass(frozen=True)
class Paired:
    """The per-seed differences ``a - b`` of two arms: their mean, standard deviation (``n - 1``
    in the denominator), count, t statistic and the critical value it is compared with."""

    mean: float
    std: float
    n: int
    t: float
    critical: float

    @property
    def significant(self) -> bool:
        """True when the paired t-test rejects "no difference" at the two-sided 5% level."""
        return abs(self.t) > self.critical

    def __str__(self) -> str:
        verdict = "real" if self.significant else "not beyond the seeds' noise"
        return (f"{self.mean:+.4f} ± {self.std:.4f} (n = {self.n}, t = {self.t:.2f}, "
                f"|t| > {self.critical:g} needed: {verdict})")


def paired(a: Sequence[float], b: Sequence[float]) -> Paired:
    """The paired comparison of ``a`` and ``b``, one value per seed each, in the same seed order."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"expected two 1-D sequences of one value per seed, of the same length, got shapes "
                         f"{a.shape} and {b.shape}")
    n = len(a)
    if n - 1 not in T_CRITICAL_95:
        raise ValueError(f"expected between 2 and {max(T_CRITICAL_95) + 1} seeds, got {n}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("expected finite values (an accuracy per seed), got nan or inf")
    differences = a - b
    mean, std = float(differences.mean()), float(differences.std(ddof=1))
    if std == 0:
        t = 0.0 if mean == 0 else math.copysign(math.inf, mean)
    else:
        t = mean / (std / math.sqrt(n))
    return Paired(mean=mean, std=std, n=n, t=float(t), critical=T_CRITICAL_95[n - 1])
