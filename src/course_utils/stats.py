"""Comparing two arms of an experiment run with the same seeds: paired differences and their test.

Two arms that share a seed share its random choices (labelled sentences, head, batch order, the
student's pre-training), so the difference of each seed's pair removes what the seed does to
both. :func:`paired` summarises those differences and applies the paired t-test (Student 1908):
a difference is called real when ``|t| = |mean| / (std / sqrt(n))`` exceeds the two-sided 5%
critical value of the t distribution with ``n - 1`` degrees of freedom. :func:`retention` pairs
students with teachers the same way: what each student keeps of the teacher of its seed.
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


@dataclass(frozen=True)
class Retention:
    """What students keep of their teachers, one pair per seed: ``ratio`` is ``student / teacher``,
    ``above_majority`` is ``(student - majority) / (teacher - majority)``, the share of the teacher's
    gain over always answering the majority class that the student keeps (1: all of it, 0: none).
    ``mean`` and ``std`` (``n - 1`` in the denominator; 0 for one seed) are over the seeds."""

    seeds: tuple[int, ...]
    ratio: tuple[float, ...]
    above_majority: tuple[float, ...]
    majority: float

    @property
    def mean(self) -> dict[str, float]:
        """``{"ratio": ..., "above_majority": ...}``: each measure's mean over the seeds."""
        return {name: float(np.mean(getattr(self, name))) for name in ("ratio", "above_majority")}

    @property
    def std(self) -> dict[str, float]:
        """``{"ratio": ..., "above_majority": ...}``: each measure's spread over the seeds."""
        return {name: float(np.std(getattr(self, name), ddof=1)) if len(self.seeds) > 1 else 0.0
                for name in ("ratio", "above_majority")}


def retention(student: Sequence[float], teacher: Sequence[float], majority: float,
              seeds: Sequence[int] | None = None) -> Retention:
    """The :class:`Retention` of ``student`` accuracies over ``teacher`` accuracies, paired by seed.

    ``student`` and ``teacher``: 1-D, one accuracy in [0, 1] per seed, the same seed at the same
    place (the student fine-tuned with seed s against the teacher fine-tuned with seed s).
    ``majority``: the share of the majority class on the same test sentences, in [0, 1); every
    teacher must score above it, else its gain over the majority class is nothing to keep.
    ``seeds``: the seeds' names, ``0 ... n - 1`` when not given.
    """
    student, teacher = np.asarray(student, dtype=float), np.asarray(teacher, dtype=float)
    if student.ndim != 1 or student.shape != teacher.shape or len(student) == 0:
        raise ValueError(f"expected two 1-D sequences of one accuracy per seed, of the same non-zero length, "
                         f"got shapes {student.shape} and {teacher.shape}")
    for name, values in (("student", student), ("teacher", teacher)):
        if not (np.isfinite(values).all() and (values >= 0).all() and (values <= 1).all()):
            raise ValueError(f"expected {name} accuracies in [0, 1], got {values.tolist()}")
    if isinstance(majority, bool) or not isinstance(majority, (int, float, np.floating)) or not 0 <= majority < 1:
        raise ValueError(f"expected majority, the majority class's share, a number in [0, 1), got {majority!r}")
    if (teacher <= majority).any():
        raise ValueError(f"expected every teacher above the majority class's share {majority:.4f} (else it has "
                         f"no gain to keep), got {teacher.tolist()}")
    seeds = tuple(range(len(student))) if seeds is None else tuple(int(s) for s in seeds)
    if len(seeds) != len(student) or len(set(seeds)) != len(seeds):
        raise ValueError(f"expected one distinct seed per accuracy ({len(student)}), got {list(seeds)}")
    return Retention(seeds=seeds, ratio=tuple((student / teacher).tolist()),
                     above_majority=tuple(((student - majority) / (teacher - majority)).tolist()),
                     majority=float(majority))
