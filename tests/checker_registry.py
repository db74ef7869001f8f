"""Every exercise checker and its reference, for the tests that run one class of learner's version
through all of them (``tests/test_checks_classes.py``).

A class is a way of getting an exercise almost right that has nothing to do with the exercise's
maths, so that every checker must meet it the same way:

- ``stub``: the untouched stub, raising ``NotImplementedError`` at once: "not attempted yet", once;
- ``reference``: the course's own function: every case passes;
- ``list``: the reference's result as Python lists (``.tolist()``; a number as a one-element list):
  refused as a type ("returned a list; return ..."), with no hint from the known mistakes;
- ``unfinished``: the reference, raising ``NotImplementedError`` from its second call on (a
  half-written function): "not finished", a failure, not "not attempted";
- ``float32``: the reference's result cast to float32 (a number to ``np.float32``): accepted where
  the lesson's next cells work in float32, else refused naming the dtype.

Each entry says what each class must give, or why it does not apply (``NOT_APPLICABLE``).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch

from course_utils import (
    attention,
    checks,
    data,
    decoder,
    distill,
    embeddings,
    encoder_pieces,
    grouped_query,
    masking,
    online_softmax,
    positional,
    rnn,
    rope,
    students,
    task_heads,
    tokenization,
    training,
)
from course_utils.checks import distillation_step as distillation_step_checker
from course_utils.checks import mlm as mlm_checker

PASSES = "passes"  # the class must pass every case
RETURNED_A_LIST = r"returned a list; return "
NOT_FINISHED = r"is not finished: it raised NotImplementedError on the case"
INTEGERS_NOT_FLOATS = r"expected (an integer|integers)|return integer"
BOOLEANS_NOT_FLOATS = r"return a boolean mask"
FLOAT64_KEPT = r"(?s)differs from the reference.*Hint: the numbers look right, but the result has dtype float32 where the reference has float64"


@dataclass(frozen=True)
class Entry:
    """A checker, its reference (called as the learner's function is), and what each class gives:
    ``PASSES``, a regular expression the failure must match, or a reason the class does not apply."""

    checker: Callable[[Callable[..., Any]], Any]
    reference: Callable[..., Any]
    expect: dict[str, str] = field(default_factory=dict)


NOT_APPLICABLE: dict[tuple[str, str], str] = {}


def _entry(name: str, checker, reference, *, as_list: str = RETURNED_A_LIST, float32: str = PASSES,
           not_applicable: dict[str, str] | None = None) -> tuple[str, Entry]:
    expect = {"list": as_list, "float32": float32, "unfinished": NOT_FINISHED}
    for cls, reason in (not_applicable or {}).items():
        expect.pop(cls)
        NOT_APPLICABLE[(name, cls)] = reason
    return name, Entry(checker, reference, expect)


ALREADY_A_LIST = "the exercise returns a Python list: a list is the right type"
TEXT = "the result is text (tokens), which has no float32"

CHECKERS: dict[str, Entry] = dict([
    _entry("frame_tokens", checks.check_frame_tokens, data.frame_tokens,
           not_applicable={"list": ALREADY_A_LIST, "float32": TEXT}),
    _entry("rnn_step", checks.check_rnn_step, rnn.rnn_step),
    _entry("lstm_param_count", checks.check_lstm_param_count, rnn.lstm_param_count, float32=INTEGERS_NOT_FLOATS),
    _entry("pad_batch", checks.check_pad_batch, tokenization.pad_batch, float32=INTEGERS_NOT_FLOATS),
    # a lookup copies rows: exact, in the table's dtype (no lesson cell runs it in float32)
    _entry("embedding_lookup", checks.check_embedding_lookup, embeddings.embedding_lookup,
           float32=FLOAT64_KEPT),
    _entry("embedding_grad", checks.check_embedding_grad, embeddings.embedding_grad),
    _entry("train_step", checks.check_train_step, training.train_step),
    _entry("sinusoidal_encoding", checks.check_sinusoidal_encoding, positional.sinusoidal_encoding),
    _entry("dots_by_distance", checks.check_dots_by_distance, positional.dots_by_distance),
    _entry("softmax", checks.check_softmax, attention.softmax),
    _entry("scaled_dot_product_attention", checks.check_scaled_dot_product_attention,
           attention.scaled_dot_product_attention),
    _entry("weights_entropy", checks.check_weights_entropy, attention.weights_entropy),
    _entry("split_heads", checks.check_split_heads, attention.split_heads),
    _entry("merge_heads", checks.check_merge_heads, attention.merge_heads),
    _entry("padding_mask", checks.check_padding_mask, masking.padding_mask, float32=BOOLEANS_NOT_FLOATS),
    _entry("causal_mask", checks.check_causal_mask, masking.causal_mask, float32=BOOLEANS_NOT_FLOATS),
    _entry("safe_masked_softmax", checks.check_safe_masked_softmax, masking.safe_masked_softmax),
    _entry("mlm_mask", checks.check_mlm_mask, mlm_checker.reference, float32=INTEGERS_NOT_FLOATS),
    _entry("layer_norm", checks.check_layer_norm, encoder_pieces.layer_norm),
    _entry("encoder_block", checks.check_encoder_block, encoder_pieces.encoder_block),
    _entry("pre_ln_block", checks.check_pre_ln_block, encoder_pieces.pre_ln_block),
    _entry("encoder_layer_param_count", checks.check_encoder_layer_param_count,
           encoder_pieces.encoder_layer_param_count, float32=INTEGERS_NOT_FLOATS),
    _entry("distillation_loss", checks.check_distillation_loss, distill.distillation_loss),
    _entry("layer_map", checks.check_layer_map, students.layer_map, float32=INTEGERS_NOT_FLOATS,
           not_applicable={"list": ALREADY_A_LIST}),
    _entry("start_losses", checks.check_start_losses, students.start_losses),
    _entry("distillation_step", checks.check_distillation_step, distillation_step_checker.reference_distillation_step),
    _entry("classification_head", checks.check_classification_head, task_heads.classification_head),
    _entry("align_labels", checks.check_align_labels, task_heads.align_labels, float32=INTEGERS_NOT_FLOATS,
           not_applicable={"list": ALREADY_A_LIST}),
    _entry("decode_step", checks.check_decode_step, decoder.decode_step),
    _entry("apply_rope", checks.check_apply_rope, rope.apply_rope),
    _entry("repeat_kv", checks.check_repeat_kv, grouped_query.repeat_kv),
    _entry("blocked_attention", checks.check_blocked_attention, online_softmax.blocked_attention),
])


# --------------------------------------------------------------------------------------------
# The classes: each wraps a reference into a learner's version


def as_lists(value: Any) -> Any:
    """``value`` with every array or tensor turned into Python lists, a number into a one-element list;
    a pair stays a pair, a dict a dict, an object with loss attributes a dict of lists."""
    if isinstance(value, (torch.Tensor, np.ndarray)):
        return value.tolist() if value.ndim else [value.item()]  # a 0-d one: a one-element list
    if isinstance(value, tuple):
        return tuple(as_lists(v) for v in value)
    if isinstance(value, dict):
        return {k: as_lists(v) for k, v in value.items()}
    if isinstance(value, numbers.Number) and not isinstance(value, bool):
        return [value]
    if hasattr(value, "total"):  # distill.TripleLoss
        return {k: as_lists(getattr(value, k)) for k in ("total", "ce", "mlm", "cos")}
    return value


def as_float32(value: Any) -> Any:
    """``value`` with every array or tensor cast to float32 (a tensor keeps its graph), a number to ``np.float32``."""
    if isinstance(value, torch.Tensor):
        return value.to(torch.float32)
    if isinstance(value, np.ndarray):
        return value.astype(np.float32)
    if isinstance(value, tuple):
        return tuple(as_float32(v) for v in value)
    if isinstance(value, list):
        return [as_float32(v) for v in value]
    if isinstance(value, dict):
        return {k: as_float32(v) for k, v in value.items()}
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return np.float32(value)
    if hasattr(value, "total"):  # distill.TripleLoss
        return {k: as_float32(getattr(value, k)) for k in ("total", "ce", "mlm", "cos")}
    return value


def returning(reference: Callable[..., Any], convert: Callable[[Any], Any]) -> Callable[..., Any]:
    def learner(*args):
        return convert(reference(*args))

    return learner


def unfinished(reference: Callable[..., Any]) -> Callable[..., Any]:
    """The reference, raising NotImplementedError from its second call on."""
    calls = []

    def learner(*args):
        calls.append(1)
        if len(calls) >= 2:
            raise NotImplementedError  # the next part: your code here
        return reference(*args)

    return learner


def stub(*args):
    raise NotImplementedError  # your code here


CLASSES: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    "list": lambda reference: returning(reference, as_lists),
    "float32": lambda reference: returning(reference, as_float32),
    "unfinished": unfinished,
}
