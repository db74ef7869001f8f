"""Checker of lesson 05's masked-language-model masking: ``mlm_mask(input_ids, maskable, mask_token_id,
vocab_size, generator) -> (masked_ids, labels)``, torch tensors.

The reference is :func:`course_utils.masking.mlm_mask` (with a torch generator): each maskable position
is chosen with probability 0.15; a chosen one becomes ``[MASK]`` with probability 0.8, a random
id of ``[0, vocab_size)`` with probability 0.1, and stays as it is otherwise; the labels hold the
original id at the chosen positions and -100 elsewhere; the input is not changed; all the
randomness comes from ``generator``.

Masks are random, so a learner's correct function, which may draw its random numbers in another
order than the reference, gives other masks: the checker tests what holds for *every* correct
function. Exactly, on every call: nothing but the chosen positions changes, a position where
``maskable`` is False (special tokens, padding) is never chosen, the labels are right, the ids
stay in the vocabulary, the input is unchanged, the same seed gives the same result and another
seed another one. Statistically, over several draws on two large batches: the share of maskable
positions chosen, and the shares of chosen positions that read ``[MASK]``, a random id or the
original id, must each lie in an exact binomial interval of probability ``1 - ALPHA``
(:func:`binomial_interval`). A random replacement can be, by chance, the original id or
``[MASK]`` itself (1/V each), so the expected shares are ``0.8 + 0.1/V``, ``0.1 (V - 2)/V`` and
``0.1 + 0.1/V``. Eight such tests in all (four per large case): by the union bound, a correct
function fails one with probability below ``8 * ALPHA = 8e-8``, far below one in a million;
the wrong versions of the tests (no 80/10/10 split, the 10% random not taken among the rest,
outcomes drawn independently) miss their interval by many times its width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from .. import masking
from .engine import Case, Exercise, Symptom, Tracked, require_callable, returned, run_checks

ALPHA = 1e-8  # the probability that a correct function falls outside one binomial interval
DRAWS = 20  # calls with one advancing generator, per large case
SPECIAL_IDS = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4}
MASK_ID = SPECIAL_IDS["[MASK]"]


def binomial_interval(n: int, p: float, alpha: float = ALPHA) -> tuple[int, int]:
    """The counts ``[low, high]`` that ``K ~ Binomial(n, p)`` falls in with probability at least ``1 - alpha``.

    Exact (no normal approximation): ``low`` is the smallest count with ``P(K < low) <= alpha / 2``,
    ``high`` the largest with ``P(K > high) <= alpha / 2``, from the probabilities of every count.
    """
    if n == 0:
        return 0, 0
    k = torch.arange(n + 1, dtype=torch.float64)
    log_pmf = (
        math.lgamma(n + 1) - torch.lgamma(k + 1) - torch.lgamma(n - k + 1) + k * math.log(p) + (n - k) * math.log1p(-p)
    )
    pmf = log_pmf.exp()
    below = torch.cumsum(pmf, 0) - pmf  # P(K < k)
    above = torch.flip(torch.cumsum(torch.flip(pmf, [0]), 0), [0]) - pmf  # P(K > k)
    low = int(torch.nonzero(below <= alpha / 2).max())
    high = int(torch.nonzero(above <= alpha / 2).min())
    return low, high


@dataclass(frozen=True)
class Batch:
    """One case: ``sentences`` rows of up to ``length`` tokens over a vocabulary of ``vocab_size``."""

    sentences: int
    length: int
    vocab_size: int
    seed: int
    draws: int = 1
    maskable_share: float = 0.9  # the rest of the ordinary tokens is also marked not maskable
    statistics: bool = False


def make_batch(batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """``input_ids (B, T)``: ``[CLS] tokens [SEP]`` then ``[PAD]``; ``maskable (B, T)``: False at the
    special tokens, the padding, and a few ordinary tokens besides."""
    generator = torch.Generator().manual_seed(batch.seed)
    first = len(SPECIAL_IDS)  # ordinary tokens come after the special ones
    b, t = batch.sentences, batch.length
    ids = torch.randint(first, batch.vocab_size, (b, t), generator=generator)
    lengths = torch.randint(min(3, t), t + 1, (b,), generator=generator)  # real tokens, [CLS] and [SEP] included
    position = torch.arange(t)
    ids[:, 0] = SPECIAL_IDS["[CLS]"]
    ids[position[None, :] == (lengths[:, None] - 1)] = SPECIAL_IDS["[SEP]"]
    ids[position[None, :] >= lengths[:, None]] = SPECIAL_IDS["[PAD]"]
    ordinary = ids >= first
    maskable = ordinary & (torch.rand((b, t), generator=generator) < batch.maskable_share)
    return ids, maskable


@dataclass
class Observed:
    """What an ``mlm_mask`` did on one case (the counts summed over the draws)."""

    vocab_size: int
    returned: str | None = None  # what is wrong with what it returned, else None
    input_changed: bool = False
    chose_unmaskable: int = 0  # chosen positions where maskable is False
    labels_everywhere: bool = False  # labels == input_ids at every position
    wrong_labels: int = 0  # chosen positions whose label is not the original id
    labels_are_replacements: bool = False  # the wrong labels are the ids the model is given
    changed_unchosen: int = 0  # positions not chosen whose id changed
    outside_vocabulary: int = 0
    maskable: int = 0
    chosen: int = 0
    as_mask: int = 0
    as_random: int = 0
    unchanged: int = 0
    distinct_random: int = 0
    same_seed_same_result: bool = True
    other_seed_other_result: bool | None = None
    statistics: bool = False
    random_ids: set = field(default_factory=set)
    bad_result: Any = None  # the first result of a wrong type or shape


def _returned_problem(result: Any, shape: tuple[int, ...]) -> str | None:
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return "not_pair"
    if not all(isinstance(x, torch.Tensor) for x in result):
        return "not_tensors"
    if any(tuple(x.shape) != shape for x in result):
        return "shape"
    masked, labels = result
    if masked.is_floating_point() or masked.dtype == torch.bool:
        return "ids_dtype"
    if labels.dtype != torch.int64:
        return "labels_dtype"
    return None


RETURNED = {
    "not_pair": "expected a pair (masked_ids, labels)",
    "not_tensors": "expected two torch tensors",
    "shape": "expected masked_ids and labels of the shape of input_ids (B, T)",
    "ids_dtype": "expected masked_ids to hold integer ids",
    "labels_dtype": "expected labels of dtype torch.int64 (long)",
}


def _tally(observed: Observed, ids, maskable, masked, labels) -> None:
    chosen = labels != masking.IGNORE_INDEX
    observed.chose_unmaskable += int((chosen & ~maskable).sum())
    observed.labels_everywhere = observed.labels_everywhere or bool(torch.equal(labels, ids))
    wrong = chosen & (labels != ids)
    observed.wrong_labels += int(wrong.sum())
    observed.labels_are_replacements = bool(wrong.any()) and bool(torch.equal(labels[wrong], masked[wrong]))
    observed.changed_unchosen += int((~chosen & (masked != ids)).sum())
    observed.outside_vocabulary += int(((masked < 0) | (masked >= observed.vocab_size)).sum())
    observed.maskable += int(maskable.sum())
    chosen = chosen & maskable
    observed.chosen += int(chosen.sum())
    as_mask = chosen & (masked == MASK_ID)
    unchanged = chosen & (masked == ids)
    as_random = chosen & ~as_mask & ~unchanged
    observed.as_mask += int(as_mask.sum())
    observed.unchanged += int(unchanged.sum())
    observed.as_random += int(as_random.sum())
    observed.random_ids |= set(masked[as_random].tolist())
    observed.distinct_random = len(observed.random_ids)


def observe(mlm_mask: Callable[..., Any], batch: Batch) -> Observed:
    """Call ``mlm_mask`` ``batch.draws`` times with one generator, once more with a fresh generator
    of the same seed and (for the large cases) once with another seed; tally what it did."""
    ids, maskable = make_batch(batch)
    observed = Observed(vocab_size=batch.vocab_size, statistics=batch.statistics)

    def call(generator):
        given_ids, given_maskable = ids.clone(), maskable.clone()
        result = mlm_mask(given_ids, given_maskable, MASK_ID, batch.vocab_size, generator)
        if not (torch.equal(given_ids, ids) and torch.equal(given_maskable, maskable)):
            observed.input_changed = True
        problem = _returned_problem(result, tuple(ids.shape))
        if problem and not observed.returned:
            observed.returned, observed.bad_result = problem, result
        return result

    with torch.random.fork_rng(devices=[]):  # a function that uses torch's global generator leaves it as it was
        generator = torch.Generator().manual_seed(batch.seed)
        first = None
        for _ in range(batch.draws):
            result = call(generator)
            if observed.returned or observed.input_changed:
                return observed
            first = first or tuple(x.clone() for x in result)
            _tally(observed, ids, maskable, *result)
        again = call(torch.Generator().manual_seed(batch.seed))
        observed.same_seed_same_result = all(torch.equal(x, y) for x, y in zip(first, again))
        if batch.statistics:
            other = call(torch.Generator().manual_seed(batch.seed + 1))
            observed.other_seed_other_result = not all(torch.equal(x, y) for x, y in zip(first, other))
    return observed


def expected_shares(vocab_size: int) -> dict[str, float]:
    """The probability of each outcome: chosen among the maskable; [MASK], random, unchanged among
    the chosen, as they look (a random id may be the original one, or [MASK], 1/V each)."""
    v = vocab_size
    return {"chosen": 0.15, "as_mask": 0.8 + 0.1 / v, "as_random": 0.1 * (v - 2) / v, "unchanged": 0.1 + 0.1 / v}


def _share_problems(result: Observed) -> list[str]:
    """The shares outside their binomial interval, in words."""
    shares = expected_shares(result.vocab_size)
    problems = []
    for name, total in (("chosen", result.maskable), ("as_mask", result.chosen), ("as_random", result.chosen),
                        ("unchanged", result.chosen)):  # fmt: skip
        count, p = getattr(result, name), shares[name]
        low, high = binomial_interval(total, p)
        if not low <= count <= high:
            what = {"chosen": "of the maskable positions were chosen", "as_mask": "of the chosen read [MASK]",
                    "as_random": "of the chosen read a random id", "unchanged": "of the chosen kept their id"}[name]
            problems.append(f"{count / max(total, 1):.3f} {what} (expected {p:.3f}: between "
                            f"{low / total:.3f} and {high / total:.3f} over {total:,})")
    return problems


def compare_masks(result: Any, expected: Any) -> str | None:
    """What the learner's masking did wrong, in words; None when nothing."""
    if not isinstance(result, Observed):
        return "expected the observations of the checker"  # never for a learner
    if result.returned:
        return RETURNED[result.returned]
    if result.input_changed:
        return "input_ids or maskable was changed in place"
    if result.outside_vocabulary:
        return f"{result.outside_vocabulary} ids are outside the vocabulary [0, vocab_size={result.vocab_size})"
    if result.chose_unmaskable:
        return f"{result.chose_unmaskable} positions where maskable is False have a label (were chosen)"
    if result.wrong_labels:
        return f"{result.wrong_labels} chosen positions have a label that is not their original id"
    if result.changed_unchosen:
        return f"{result.changed_unchosen} positions that were not chosen (label -100) have another id"
    if not result.same_seed_same_result:
        return "two calls with generators of the same seed gave different results"
    if result.other_seed_other_result is False:
        return "generators of different seeds gave the same result"
    if result.statistics:
        problems = _share_problems(result)
        if problems:
            return "over the draws, " + "; ".join(problems)
        if _few_random_ids(result):
            return (f"the {result.as_random:,} random replacements use only {result.distinct_random} different "
                    f"ids of a vocabulary of {result.vocab_size:,}")
    return None


def _few_random_ids(result: Observed) -> bool:
    """Fewer different random ids than half of what uniform draws give (almost surely about
    ``min(V, n)`` for ``n`` draws over ``V`` ids): one id drawn for all positions, or a few."""
    return result.distinct_random < min(result.vocab_size, result.as_random) // 2


def _shares(result: Observed) -> tuple[float, float, float]:
    chosen = max(result.chosen, 1)
    return result.as_mask / chosen, result.as_random / chosen, result.unchanged / chosen


def _near(values: tuple[float, ...], targets: tuple[float, ...], tol: float = 0.03) -> bool:
    return all(abs(v - t) <= tol for v, t in zip(values, targets))


def _result_types(observed: Observed, case: Case) -> str | None:
    """A result of the wrong type (not a pair, not tensors, ids or labels of another dtype), in the
    words of a type problem; a wrong shape is the comparison's."""
    result, code = observed.bad_result, observed.returned
    if code == "not_pair":
        return returned(result, "a pair (masked_ids, labels) of torch tensors", "return masked, labels")
    if code == "not_tensors":
        item = next(x for x in result if not isinstance(x, torch.Tensor))
        return returned(item, "torch tensors (masked_ids, labels)", "the inputs are torch tensors: build the "
                        "results with torch functions")
    if code == "ids_dtype":
        return (f"returned masked_ids of dtype {result[0].dtype}; return integer ids, in the dtype of input_ids "
                "(torch.where(as_mask, mask_token_id, input_ids) keeps it)")
    if code == "labels_dtype":
        return (f"returned labels of dtype {result[1].dtype}; return integer labels of dtype torch.int64, as "
                "F.cross_entropy wants them (.long())")
    return None


def _returned(code: str) -> Callable[[Observed, Case], bool]:
    return lambda result, case: result.returned == code


_MLM_MASK = Exercise(
    name="mlm_mask",
    call="mlm_mask(input_ids, maskable, mask_token_id, vocab_size, generator) with input_ids a (B, T) "
    "torch tensor of ids, maskable a (B, T) boolean tensor and generator a torch.Generator, and expects "
    "(masked_ids, labels), two (B, T) tensors",
    compare=compare_masks,
    returns=_result_types,
    symptoms=(
        Symptom("return two things, masked_ids and labels: `return masked, labels`.", _returned("not_pair")),
        Symptom("return torch tensors (the inputs are torch tensors; build the results with torch functions).",
                _returned("not_tensors")),
        Symptom("masked_ids and labels have the shape of input_ids: draw the random numbers with "
                "torch.rand(input_ids.shape, generator=generator).", _returned("shape")),
        Symptom("masked_ids are token ids: keep the dtype of input_ids (torch.where(as_mask, mask_token_id, "
                "input_ids) does).", _returned("ids_dtype")),
        Symptom("make the labels int64, as F.cross_entropy wants them: torch.where(chosen, input_ids, -100) of "
                "int64 ids is int64, or add .long().", _returned("labels_dtype")),
        Symptom(
            "do not change input_ids in place (input_ids[chosen] = mask_token_id writes into the caller's "
            "tensor, and the labels then hold [MASK]): start from a copy, masked = input_ids.clone(), or build "
            "new tensors with torch.where.",
            lambda result, case: result.input_changed,
        ),
        Symptom(
            "random ids are drawn from the vocabulary, [0, vocab_size): torch.randint(vocab_size, shape, "
            "generator=generator) (its upper bound is excluded).",
            lambda result, case: result.outside_vocabulary > 0,
        ),
        Symptom(
            "the labels are the input ids everywhere: they must be -100 (IGNORE_INDEX) at every position not "
            "chosen, so that the loss scores only the chosen ones: torch.where(chosen, input_ids, -100).",
            lambda result, case: result.labels_everywhere,
        ),
        Symptom(
            "a position where maskable is False (a special token, padding) was chosen: combine the random "
            "choice with the mask, chosen = (torch.rand(...) < 0.15) & maskable.",
            lambda result, case: result.chose_unmaskable > 0,
        ),
        Symptom(
            "the labels hold the ids the model is given ([MASK], the random id): the label is the *original* id, "
            "what the model must recover. Build the labels from input_ids, not from the masked ids.",
            lambda result, case: result.labels_are_replacements,
        ),
        Symptom(
            "only chosen positions may change: the 80% [MASK] and the 10% random are shares *of the chosen "
            "positions*, so combine each with `& chosen`.",
            lambda result, case: result.changed_unchosen > 0,
        ),
        Symptom(
            "use the generator you are given for every random draw: torch.rand(shape, generator=generator), "
            "torch.randint(..., generator=generator). Without it the draws come from torch's global generator, "
            "and a seed does not give the same mask again.",
            lambda result, case: not result.same_seed_same_result or result.other_seed_other_result is False,
        ),
        Symptom(
            "the three outcomes of a chosen position must exclude each other: with two independent draws, "
            "10% random overwrites some of the 80% [MASK] (leaving 72%). Draw one number u per position: "
            "u < 0.8 -> [MASK], 0.8 <= u < 0.9 -> random, else unchanged; or take the random ones among the "
            "positions not masked, with probability 0.1 / (1 - 0.8) = 0.5.",
            lambda result, case: _near(_shares(result), (0.72, 0.10, 0.18)),
        ),
        Symptom(
            "the 10% random is 10% of all chosen positions, so among the 20% that are not [MASK] it is half of "
            "them: probability 0.1 / (1 - 0.8) = 0.5, not 0.1.",
            lambda result, case: _near(_shares(result), (0.80, 0.02, 0.18)),
        ),
        Symptom(
            "the random replacements are not spread over the vocabulary: draw one id per position, "
            "torch.randint(vocab_size, input_ids.shape, generator=generator), not one id for all.",
            lambda result, case: result.statistics and _few_random_ids(result),
        ),
    ),
    fallback="choose each maskable position with probability 0.15; of the chosen, 80% become mask_token_id, "
    "10% a random id of [0, vocab_size), 10% stay as they are; labels: the original id where chosen, -100 "
    "elsewhere.",
    on_error="input_ids and maskable are torch tensors (B, T) (ids int64, maskable bool); generator is a "
    "torch.Generator: pass it to torch.rand / torch.randint / torch.bernoulli as generator=generator.",
)

CASES = (
    ("300 sentences of up to 40 tokens, vocabulary of 60, 20 draws with one generator",
     Batch(300, 40, 60, seed=11, draws=DRAWS, statistics=True)),
    ("200 sentences of up to 30 tokens, vocabulary of 1,500, 20 draws", Batch(200, 30, 1500, seed=12, draws=DRAWS,
                                                                           statistics=True)),
    ("one sentence of 12 tokens", Batch(1, 12, 30, seed=13)),
    ("nothing maskable (every token marked False)", Batch(3, 6, 30, seed=14, maskable_share=0.0)),
)  # fmt: skip


def reference(input_ids, maskable, mask_token_id, vocab_size, generator):
    """:func:`course_utils.masking.mlm_mask` called as the exercise's function is (all positional)."""
    return masking.mlm_mask(input_ids, maskable, mask_token_id=mask_token_id, vocab_size=vocab_size,
                            generator=generator)  # fmt: skip


def check_mlm_mask(fn: Callable[..., Any]) -> None:
    """Check a learner's ``mlm_mask(input_ids, maskable, mask_token_id, vocab_size, generator)`` (torch).

    Four cases: two large batches (vocabularies of 60 and 1,500, 20 draws each, with the
    statistical tests of the module's documentation), one sentence, and a batch where nothing
    is maskable (nothing may change).
    """
    require_callable(_MLM_MASK.name, fn)
    cases = [Case(name, (batch,), None) for name, batch in CASES]

    learner = Tracked(fn)  # a function that returns on its first calls and then raises is not finished

    def watched(batch: Batch) -> Observed:
        return observe(learner, batch)

    run_checks(_MLM_MASK, watched, cases, learner=learner)
