"""Tests of the checker of lesson 05's MLM masking: check_mlm_mask.

Every correct version passes (the package's reference, one uniform number per position,
bernoulli draws as Hugging Face's collator, random ids that avoid the special tokens, in-place
writes into a clone); each wrong version a learner writes is rejected with the hint that names
its mistake; the stub prints one line; the binomial intervals are exact.
"""

from __future__ import annotations

import math

import pytest
import torch

from course_utils import checks
from course_utils.checks import mlm
from tests.checker_cases import rejects as _rejects
from tests.checker_cases import stub as _stub

PASS = "✓ mlm_mask: all 4 cases pass.\n"


def _one_uniform(input_ids, maskable, mask_token_id, vocab_size, generator):
    chosen = (torch.rand(input_ids.shape, generator=generator) < 0.15) & maskable
    labels = torch.where(chosen, input_ids, -100)
    u = torch.rand(input_ids.shape, generator=generator)  # one number decides the outcome
    random_ids = torch.randint(vocab_size, input_ids.shape, generator=generator)
    masked = torch.where(chosen & (u < 0.8), mask_token_id, input_ids)
    masked = torch.where(chosen & (u >= 0.8) & (u < 0.9), random_ids, masked)
    return masked, labels


def _bernoulli_clone(input_ids, maskable, mask_token_id, vocab_size, generator):
    masked = input_ids.clone()
    labels = input_ids.clone()
    chosen = torch.bernoulli(torch.full(input_ids.shape, 0.15), generator=generator).bool() & maskable
    labels[~chosen] = -100
    as_mask = torch.bernoulli(torch.full(input_ids.shape, 0.8), generator=generator).bool() & chosen
    masked[as_mask] = mask_token_id
    as_random = torch.bernoulli(torch.full(input_ids.shape, 0.5), generator=generator).bool() & chosen & ~as_mask
    masked[as_random] = torch.randint(vocab_size, (int(as_random.sum()),), generator=generator)
    return masked, labels


def _no_special_replacements(input_ids, maskable, mask_token_id, vocab_size, generator):
    """Random ids only among the ordinary tokens (after the special ones, ids 0-4 here)."""
    chosen = (torch.rand(input_ids.shape, generator=generator) < 0.15) & maskable
    u = torch.rand(input_ids.shape, generator=generator)
    random_ids = torch.randint(5, vocab_size, input_ids.shape, generator=generator)
    masked = input_ids.masked_fill(chosen & (u < 0.8), mask_token_id)
    masked = torch.where(chosen & (u >= 0.9), input_ids, torch.where(chosen & (u >= 0.8), random_ids, masked))
    return masked, torch.where(chosen, input_ids, torch.tensor(-100))


CORRECT = {
    "the package's reference": mlm.reference,
    "one uniform number per position": _one_uniform,
    "bernoulli draws into clones": _bernoulli_clone,
    "random ids avoid the special tokens": _no_special_replacements,
}


@pytest.mark.parametrize("implementation", CORRECT.values(), ids=CORRECT.keys())
def test_check_mlm_mask_accepts_correct_implementations(implementation, capsys):
    assert checks.check_mlm_mask(implementation) is None
    assert capsys.readouterr().out == PASS


def _mask(*, maskable_used=True, labels="original", unchosen_change=False, split="exclusive", in_place=False,
          global_rng=False, one_random_id=False, vocab_offset=0, labels_dtype=torch.int64):  # fmt: skip
    """An mlm_mask with one mistake switched on."""

    def mlm_mask(input_ids, maskable, mask_token_id, vocab_size, generator):
        g = None if global_rng else generator
        shape = input_ids.shape
        chosen = torch.rand(shape, generator=g) < 0.15
        if maskable_used:
            chosen &= maskable
        masked = input_ids if in_place else input_ids.clone()
        scope = torch.ones(shape, dtype=torch.bool) if unchosen_change else chosen
        if split == "exclusive":
            u = torch.rand(shape, generator=g)
            as_mask, as_random = scope & (u < 0.8), scope & (u >= 0.8) & (u < 0.9)
        elif split == "independent":
            as_mask = scope & (torch.rand(shape, generator=g) < 0.8)
            as_random = scope & (torch.rand(shape, generator=g) < 0.1)
        else:  # "unscaled": the random 10% taken among the rest as 10% of it
            as_mask = scope & (torch.rand(shape, generator=g) < 0.8)
            as_random = scope & ~as_mask & (torch.rand(shape, generator=g) < 0.1)
        if one_random_id:
            random_ids = torch.randint(vocab_size, (1,), generator=g).expand(shape)
        else:
            random_ids = torch.randint(vocab_offset, vocab_size + vocab_offset, shape, generator=g)
        original = input_ids.clone()
        masked[as_mask] = mask_token_id
        masked[as_random] = random_ids[as_random]
        if labels == "original":
            result_labels = torch.where(chosen, original, -100)
        elif labels == "everywhere":
            result_labels = original
        else:  # "replacements": the ids the model is given
            result_labels = torch.where(chosen, masked, -100)
        return masked, result_labels.to(labels_dtype)

    return mlm_mask


WRONG = {
    "maskable ignored": (_mask(maskable_used=False), "maskable is False.*& maskable"),
    "labels = the input ids": (_mask(labels="everywhere"), "labels are the input ids everywhere.*-100"),
    "labels = the replaced ids": (_mask(labels="replacements"), "not their original id.*the \\*original\\* id"),
    "[MASK] and random outside the chosen": (_mask(unchosen_change=True), "were not chosen.*& chosen"),
    "two independent draws": (_mask(split="independent"),
                              "0.7[0-9]+ of the chosen read \\[MASK\\].*exclude each other"),
    "the random 10% not rescaled": (_mask(split="unscaled"), "read a random id.*0.1 / \\(1 - 0.8\\) = 0.5, not 0.1"),
    "input_ids changed in place": (_mask(in_place=True), "changed in place.*input_ids.clone\\(\\)"),
    "the generator ignored": (_mask(global_rng=True), "same seed gave different results.*generator=generator"),
    "one random id for all": (_mask(one_random_id=True), "use only [0-9]+ different ids.*not one id for all"),
    "random ids beyond the vocabulary": (_mask(vocab_offset=1), "outside the vocabulary.*upper bound is excluded"),
    "labels of int32": (_mask(labels_dtype=torch.int32), "dtype torch.int64.*\\.long\\(\\)"),
}


@pytest.mark.parametrize("implementation, hint", WRONG.values(), ids=WRONG.keys())
def test_check_mlm_mask_names_the_mistake(implementation, hint, capsys):
    _rejects(checks.check_mlm_mask, implementation, hint, capsys)


def test_check_mlm_mask_stub_and_odd_answers(capsys):
    assert checks.check_mlm_mask(_stub) is None
    assert capsys.readouterr().out.startswith("○ mlm_mask: not attempted yet.")
    odd = {"a single tensor": lambda i, *rest: i.clone(), "numpy": lambda i, *rest: (i.numpy(), i.numpy()),
           "None": lambda i, *rest: None}
    for fn in odd.values():
        with pytest.raises(AssertionError, match="mlm_mask"):
            checks.check_mlm_mask(fn)
    with pytest.raises(AssertionError, match="(?s)raised TypeError.*torch.Generator"):
        checks.check_mlm_mask(lambda input_ids, maskable, *rest: torch.rand(3, generator=1))
    with pytest.raises(TypeError, match="without calling it"):
        checks.check_mlm_mask(0.5)


@pytest.mark.parametrize("n, p", [(20, 0.3), (500, 0.15), (1000, 0.8)])
def test_binomial_interval_is_exact(n, p):
    """The tails outside [low, high] each hold at most alpha/2, and one more count would exceed it."""
    alpha = 1e-3
    low, high = mlm.binomial_interval(n, p, alpha)
    pmf = [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]
    assert sum(pmf[:low]) <= alpha / 2 < sum(pmf[: low + 1])
    assert sum(pmf[high + 1 :]) <= alpha / 2 < sum(pmf[high:])


def test_the_statistical_cases_are_large_and_the_reference_is_well_inside():
    """Enough draws that the wrong splits miss by many interval widths; the reference passes."""
    for _, batch in mlm.CASES:
        if batch.statistics:
            observed = mlm.observe(mlm.reference, batch)
            assert observed.chosen > 5_000 and not mlm._share_problems(observed)
