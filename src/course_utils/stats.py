"""Comparing arms of an experiment run with the same seeds: paired differences, their tests and intervals.

Two arms that share a seed share its random choices (labelled sentences, head, batch order, the
student's pre-training), so the difference of each seed's pair removes what the seed does to
both. :func:`paired` summarises those differences with the paired t-test (Student 1908): its
two-sided p-value and the 95% t interval of the mean difference. Many tests at once are corrected
with :func:`holm` (Holm 1979). "Adds nothing" is a claim of its own, tested by :func:`equivalence`
(two one-sided t-tests against a margin, Schuirmann 1987): a difference that is not significant
may still be too uncertain to rule out one larger than the margin. :func:`auc` says how well a
score ranks two classes, and :func:`auc_chance_p` how often chance ranks them as well.
:func:`retention` pairs students with teachers: what each student keeps of the teacher of its seed.
:func:`power` says how often a paired t-test over ``n`` seeds finds a true difference, and
:func:`detectable` and :func:`seeds_for` turn it around: what a design can find, and what it needs.

The distributions are scipy's (``scipy.stats``); nothing here writes one by hand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

LEVEL = 0.95  # the intervals' coverage; tests are two-sided at 1 - LEVEL = 5%


def _per_seed(a, b) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"expected two 1-D sequences of one value per seed, of the same length, got shapes "
                         f"{a.shape} and {b.shape}")
    if len(a) < 2:
        raise ValueError(f"expected at least 2 seeds (a spread needs two), got {len(a)}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("expected finite values (an accuracy per seed), got nan or inf")
    return a, b


@dataclass(frozen=True)
class Paired:
    """The per-seed differences ``a - b`` of two arms: their mean, standard deviation (``n - 1`` in
    the denominator), count, t statistic, the two-sided p-value of the paired t-test and the 95%
    t interval ``(low, high)`` of the mean difference."""

    mean: float
    std: float
    n: int
    t: float
    p: float
    interval: tuple[float, float]
    level: float = LEVEL

    @property
    def significant(self) -> bool:
        """True when the paired t-test rejects "no difference" at the two-sided 5% level (uncorrected:
        several tests at once need :func:`holm`)."""
        return self.p < 1 - LEVEL

    def __str__(self) -> str:
        low, high = self.interval
        return (f"{self.mean:+.4f} ({self.level:.1%} interval {low:+.4f} to {high:+.4f}; n = {self.n}, "
                f"p = {self.p:.3g})")


def paired(a: Sequence[float], b: Sequence[float], level: float = LEVEL) -> Paired:
    """The paired comparison of ``a`` and ``b``, one value per seed each, in the same seed order;
    its interval at ``level`` (a Holm step's: :func:`holm_levels`)."""
    from scipy import stats as scipy_stats

    _level(level)
    a, b = _per_seed(a, b)
    differences = a - b
    n = len(differences)
    mean, std = float(differences.mean()), float(differences.std(ddof=1))
    if std == 0:  # every seed moved by the same amount: no spread to test against
        t = 0.0 if mean == 0 else math.copysign(math.inf, mean)
        p = 1.0 if mean == 0 else 0.0
        interval = (mean, mean)
    else:
        sem = std / math.sqrt(n)
        t = mean / sem
        p = float(2 * scipy_stats.t.sf(abs(t), df=n - 1))
        half = float(scipy_stats.t.ppf(0.5 + level / 2, df=n - 1)) * sem
        interval = (mean - half, mean + half)
    return Paired(mean=mean, std=std, n=n, t=float(t), p=p, interval=interval, level=level)


def _level(level) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) or not 0 < level < 1:
        raise ValueError(f"expected level, an interval's coverage, between 0 and 1 (0.95), got {level!r}")
    return float(level)


@dataclass(frozen=True)
class Welch:
    """The difference ``mean(a) - mean(b)`` of two independent groups (different runs, no pairing):
    the groups' sizes, Welch's degrees of freedom, t, the two-sided p-value and the 95% interval."""

    mean: float
    n: tuple[int, int]
    df: float
    t: float
    p: float
    interval: tuple[float, float]

    def __str__(self) -> str:
        low, high = self.interval
        return (f"{self.mean:+.4f} (95% interval {low:+.4f} to {high:+.4f}; n = {self.n[0]} and {self.n[1]}, "
                f"df = {self.df:.1f}, p = {self.p:.3g})")


def power(difference: float, std: float, n: int, alpha: float = 1 - LEVEL) -> float:
    """How often the two-sided paired t-test at level ``alpha`` rejects "no difference" over ``n``
    seeds when the arms truly differ by ``difference`` and the per-seed differences have standard
    deviation ``std`` (normal): the noncentral t distribution with ``n - 1`` degrees of freedom and
    noncentrality ``difference / (std / sqrt(n))``. ``alpha`` is the level the test is held to: a
    test corrected by :func:`holm` among k is first held to ``alpha / k``."""
    from scipy import stats as scipy_stats

    if not (isinstance(n, (int, np.integer)) and n >= 2):
        raise ValueError(f"expected n, a number of seeds, to be an integer of at least 2, got {n!r}")
    if not (std > 0 and math.isfinite(std)):
        raise ValueError(f"expected std, the spread of the per-seed differences, to be positive, got {std!r}")
    if not (0 < alpha < 1):
        raise ValueError(f"expected alpha between 0 and 1, got {alpha!r}")
    df = n - 1
    critical = scipy_stats.t.ppf(1 - alpha / 2, df)
    shift = abs(difference) / (std / math.sqrt(n))
    return float(scipy_stats.nct.sf(critical, df, shift) + scipy_stats.nct.cdf(-critical, df, shift))


def detectable(std: float, n: int, alpha: float = 1 - LEVEL, target: float = 0.8) -> float:
    """The smallest true difference :func:`power` finds with probability ``target`` over ``n`` seeds."""
    from scipy import optimize

    if not (0 < target < 1):
        raise ValueError(f"expected target, a power, between 0 and 1, got {target!r}")
    power(std, std, n, alpha)  # checks the arguments
    high = std
    while power(high, std, n, alpha) < target:
        high *= 2
    return float(optimize.brentq(lambda d: power(d, std, n, alpha) - target, 0.0, high, xtol=1e-10))


def seeds_for(difference: float, std: float, alpha: float = 1 - LEVEL, target: float = 0.8, most: int = 1000) -> int:
    """The fewest seeds with which :func:`power` finds ``difference`` with probability ``target``."""
    if not difference:
        raise ValueError("expected a difference other than 0 (no design finds a difference of 0)")
    for n in range(2, most + 1):
        if power(difference, std, n, alpha) >= target:
            return n
    raise ValueError(f"more than {most} seeds would be needed to find {difference} with std {std}")


def welch(a: Sequence[float], b: Sequence[float]) -> Welch:
    """Welch's unequal-variance t-test and interval (Welch 1947) of ``mean(a) - mean(b)``, for two
    groups of independent runs (the teacher pilot's pre-training runs of two models), at :data:`LEVEL`."""
    from scipy import stats as scipy_stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 1 or b.ndim != 1 or len(a) < 2 or len(b) < 2:
        raise ValueError(f"expected two 1-D groups of at least 2 runs each, got shapes {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("expected finite values (an accuracy per run), got nan or inf")
    mean = float(a.mean() - b.mean())
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    if va + vb == 0:  # no spread in either group: nothing to test against
        t = 0.0 if mean == 0 else math.copysign(math.inf, mean)
        return Welch(mean, (len(a), len(b)), math.nan, t, 1.0 if mean == 0 else 0.0, (mean, mean))
    df = float((va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1)))
    sem = math.sqrt(va + vb)
    t = mean / sem
    half = float(scipy_stats.t.ppf(0.5 + LEVEL / 2, df=df)) * sem
    return Welch(mean, (len(a), len(b)), df, float(t), float(2 * scipy_stats.t.sf(abs(t), df=df)),
                 (mean - half, mean + half))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of ``p_values`` (in their order): a test is rejected at level α
    when its adjusted p-value is below α, which keeps the chance of any false rejection among them
    at most α. The smallest p is multiplied by the number of tests ``m``, the next by ``m - 1``, ...,
    each kept at least as large as the one before it and at most 1."""
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1 or len(p) == 0:
        raise ValueError(f"expected a 1-D sequence of p-values, got shape {p.shape}")
    if not (np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()):
        raise ValueError(f"expected p-values in [0, 1], got {p.tolist()}")
    order = np.argsort(p, kind="stable")
    m = len(p)
    adjusted = np.empty(m)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return adjusted.tolist()


def holm_levels(p_values: Sequence[float], alpha: float = 1 - LEVEL) -> list[float]:
    """The coverage of each test's interval that agrees with Holm's decision at ``alpha`` (in the
    order of ``p_values``): Bonferroni at the test's step. Sorted by p, step ``k`` (from 0) of ``m``
    is held to ``alpha / (m - k)``; Holm rejects steps until the first that fails, and every later
    test is held to that failed step's level. So a t interval at ``1 - alpha / (m - k)`` excludes 0
    exactly when Holm rejects its test: ``[0.983, 0.975, 0.95]`` for three tests that all reject."""
    p = np.asarray(p_values, dtype=float)
    holm(p)  # checks the p-values
    if not 0 < alpha < 1:
        raise ValueError(f"expected alpha between 0 and 1, got {alpha!r}")
    order = np.argsort(p, kind="stable")
    m = len(p)
    levels = np.empty(m)
    held = None
    for step, index in enumerate(order):
        step_alpha = alpha / (m - step) if held is None else held
        if held is None and p[index] >= step_alpha:
            held = step_alpha  # the first failure: it and every later test at its level
        levels[index] = 1 - step_alpha
    return levels.tolist()


@dataclass(frozen=True)
class Bootstrap:
    """A bootstrap interval of a mean paired difference over seeds and test sentences."""

    mean: float
    interval: tuple[float, float]
    level: float
    resamples: int

    def __str__(self) -> str:
        low, high = self.interval
        return f"{self.mean:+.4f} ({self.level:.1%} bootstrap interval {low:+.4f} to {high:+.4f})"


def bootstrap_paired(right_a, right_b, level: float = LEVEL, resamples: int = 10_000, seed: int = 0) -> Bootstrap:
    """The percentile bootstrap interval of ``mean over seeds of (accuracy of a - accuracy of b)``,
    resampling both the seeds (the same for both arms: they are paired) and the test sentences (the
    same for every seed and arm), so that the interval counts the test set's own sampling too.

    ``right_a``, ``right_b``: ``(seeds, sentences)`` booleans, which sentences each seed's classifier
    of each arm got right, the seeds in the same order."""
    a, b = np.asarray(right_a), np.asarray(right_b)
    if a.ndim != 2 or a.shape != b.shape or a.shape[0] < 2 or a.shape[1] < 2:
        raise ValueError(f"expected two (seeds, sentences) arrays of the same shape, at least 2 x 2, got shapes "
                         f"{a.shape} and {b.shape}")
    if a.dtype != bool or b.dtype != bool:
        raise ValueError(f"expected booleans (right or wrong per sentence), got {a.dtype} and {b.dtype}")
    level = _level(level)
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 100:
        raise ValueError(f"expected resamples, an int of at least 100, got {resamples!r}")
    seeds, sentences = a.shape
    difference = a.astype(np.int32) - b.astype(np.int32)  # (seeds, sentences): +1, 0 or -1
    rng = np.random.default_rng(seed)
    statistics = np.empty(resamples)
    for start in range(0, resamples, 1000):  # in blocks: a block's counts are 1000 x sentences
        size = min(1000, resamples - start)
        counts = rng.multinomial(sentences, np.full(sentences, 1 / sentences), size=size)  # (size, sentences)
        per_seed = counts @ difference.T / sentences  # (size, seeds): each seed's difference on the resample
        chosen = rng.integers(0, seeds, size=(size, seeds))
        statistics[start:start + size] = np.take_along_axis(per_seed, chosen, axis=1).mean(axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(statistics, [tail, 1 - tail])
    return Bootstrap(float(difference.mean()), (float(low), float(high)), level, resamples)


@dataclass(frozen=True)
class Equivalence:
    """Two one-sided paired t-tests of ``a - b`` against ``± margin``: ``p`` is the larger of their
    p-values; below 5%, the difference is within the margin (the arms are equivalent to within it).
    ``interval`` is the 90% t interval that the test's decision matches (inside the margins iff
    ``p < 0.05``)."""

    mean: float
    margin: float
    n: int
    p: float
    interval: tuple[float, float]

    @property
    def equivalent(self) -> bool:
        """True when both one-sided tests reject at 5% (uncorrected)."""
        return self.p < 1 - LEVEL


def equivalence(a: Sequence[float], b: Sequence[float], margin: float) -> Equivalence:
    """Whether the paired difference ``a - b`` lies within ``(-margin, +margin)``: TOST (Schuirmann 1987)."""
    from scipy import stats as scipy_stats

    if isinstance(margin, bool) or not isinstance(margin, (int, float, np.floating)) or not margin > 0:
        raise ValueError(f"expected margin, the largest difference that counts as none, a positive number, "
                         f"got {margin!r}")
    a, b = _per_seed(a, b)
    differences = a - b
    n = len(differences)
    mean, std = float(differences.mean()), float(differences.std(ddof=1))
    if std == 0:
        p = 0.0 if abs(mean) < margin else 1.0
        return Equivalence(mean=mean, margin=float(margin), n=n, p=p, interval=(mean, mean))
    sem = std / math.sqrt(n)
    above_lower = float(scipy_stats.t.sf((mean + margin) / sem, df=n - 1))  # H0: mean <= -margin
    below_upper = float(scipy_stats.t.cdf((mean - margin) / sem, df=n - 1))  # H0: mean >= +margin
    half = float(scipy_stats.t.ppf(LEVEL, df=n - 1)) * sem  # the 90% interval
    return Equivalence(mean=mean, margin=float(margin), n=n, p=max(above_lower, below_upper),
                       interval=(mean - half, mean + half))


def auc(scores: Sequence[float], labels: Sequence[int]) -> float:
    """The area under the ROC curve: the chance that a random positive (label 1) scores above a
    random negative (label 0), ties counting half. 1: the score ranks every positive first; 0.5: no
    better than chance; 0: every negative first. ``scores`` and ``labels``: ``(N,)``."""
    scores, labels = np.asarray(scores, dtype=float), np.asarray(labels)
    if scores.ndim != 1 or scores.shape != labels.shape:
        raise ValueError(f"expected one score per label, two 1-D sequences of the same length, got shapes "
                         f"{scores.shape} and {labels.shape}")
    if not np.isin(labels, (0, 1)).all() or not (labels == 1).any() or not (labels == 0).any():
        raise ValueError(f"expected labels 0 and 1, each at least once, got {sorted(set(labels.tolist()))}")
    if not np.isfinite(scores).all():
        raise ValueError("expected finite scores, got nan or inf")
    positive, negative = scores[labels == 1], scores[labels == 0]
    above = (positive[:, None] > negative[None, :]).sum() + 0.5 * (positive[:, None] == negative[None, :]).sum()
    return float(above / (len(positive) * len(negative)))


def auc_chance_p(scores: Sequence[float], labels: Sequence[int]) -> float:
    """The one-sided p-value of :func:`auc` under chance: how often a random assignment of the labels
    ranks the positives at least this far above the negatives (the Mann-Whitney U test, exact for
    small samples without ties; ``scipy.stats.mannwhitneyu``)."""
    from scipy import stats as scipy_stats

    auc(scores, labels)  # the same checks
    scores, labels = np.asarray(scores, dtype=float), np.asarray(labels)
    method = "exact" if len(np.unique(scores)) == len(scores) else "asymptotic"  # exact needs no ties
    return float(scipy_stats.mannwhitneyu(scores[labels == 1], scores[labels == 0], alternative="greater",
                                          method=method).pvalue)


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


@dataclass(frozen=True)
class StepsWorth:
    """How many steps of a cheaper method reach a method's mean: ``estimate`` (``inf``: more than the
    largest budget measured; the smallest budget when the curve starts above it) and its bootstrap
    ``interval`` at ``level`` (a bound of ``inf``: more than the largest budget)."""

    estimate: float
    interval: tuple[float, float]
    level: float
    target: float
    curve: dict

    def __str__(self) -> str:
        def steps(value):
            return f"more than {max(self.curve):,}" if math.isinf(value) else f"{value:,.0f}"

        low, high = self.interval
        return f"{steps(self.estimate)} steps ({self.level:.0%} interval {steps(low)} to {steps(high)})"


def _crossing(budgets: np.ndarray, means: np.ndarray, target: float) -> float:
    """Where the curve ``means`` over ``budgets`` (sorted), joined linearly in log2(steps), first
    reaches ``target``: ``budgets[0]`` if it starts there, ``inf`` if it never does."""
    if means[0] >= target:
        return float(budgets[0])
    for k in range(1, len(budgets)):
        if means[k] >= target:
            x0, x1 = np.log2(budgets[k - 1]), np.log2(budgets[k])
            share = (target - means[k - 1]) / (means[k] - means[k - 1])
            return float(2 ** (x0 + share * (x1 - x0)))
    return math.inf


def steps_worth(curve: dict, target: Sequence[float], level: float = LEVEL, resamples: int = 10_000,
                seed: int = 0) -> StepsWorth:
    """The budget at which a curve of runs reaches a target method's mean accuracy (lesson 07's "what
    the teacher's outputs are worth in masked-word steps"), with a bootstrap interval.

    ``curve``: ``{steps: [accuracy of each seed]}`` (at least two budgets, two seeds each);
    ``target``: the target method's accuracy per seed. The estimate is :func:`_crossing` of the
    curve's means and the target's mean; each resample draws the seeds of every budget and of the
    target independently, with replacement (the arms' seeds differ), and the interval is the
    percentile interval of the resampled crossings (a crossing past the largest budget is ``inf``)."""
    if not isinstance(curve, dict) or len(curve) < 2:
        raise ValueError(f"expected curve, {{steps: [accuracy per seed]}}, with at least two budgets, got {curve!r}")
    budgets = np.array(sorted(curve), dtype=float)
    if (budgets <= 0).any():
        raise ValueError(f"expected positive numbers of steps, got {sorted(curve)}")
    runs = [np.asarray(curve[int(b)] if int(b) in curve else curve[b], dtype=float) for b in budgets]
    target = np.asarray(target, dtype=float)
    for values in (*runs, target):
        if values.ndim != 1 or len(values) < 2 or not np.isfinite(values).all():
            raise ValueError("expected at least two finite accuracies (one per seed) for every budget and the target")
    level = _level(level)
    rng = np.random.default_rng(seed)
    means = np.array([r.mean() for r in runs])
    estimate = _crossing(budgets, means, float(target.mean()))
    crossings = np.empty(resamples)
    resampled = [r[rng.integers(0, len(r), size=(resamples, len(r)))].mean(axis=1) for r in runs]
    goal = target[rng.integers(0, len(target), size=(resamples, len(target)))].mean(axis=1)
    for i in range(resamples):
        crossings[i] = _crossing(budgets, np.array([m[i] for m in resampled]), goal[i])
    tail = (1 - level) / 2
    low, high = (float(np.quantile(crossings, q, method="lower" if q < 0.5 else "higher")) for q in (tail, 1 - tail))
    return StepsWorth(estimate, (low, high), level, float(target.mean()),
                      {int(b): float(m) for b, m in zip(budgets, means)})
