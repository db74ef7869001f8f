"""Exercise checkers: call the learner's function on several cases and say what is wrong.

A checker ``check_<thing>(fn)`` runs ``fn`` on a handful of :class:`Case` s (random, edge,
non-square shapes, large values, float32 inputs) and compares each result with the reference
implementation of ``course_utils``. Then:

- all cases pass: it prints one line, ``✓ <thing>: all N cases pass.``;
- ``fn`` raises ``NotImplementedError`` before it ever returned (the exercise stub): it prints one
  line saying the exercise is not attempted yet and returns, so a lesson runs top to bottom with
  the stub in place; raised after ``fn`` returned on earlier cases (a half-written function), it
  is a failure: "not finished";
- a result is of a type the lesson's next cells cannot use (a list where an array belongs, a
  string where a float belongs, numpy for a torch input, a float where backward must run): it
  raises ``AssertionError`` saying so ("returned a str; return a float"), without a hint;
- a result is wrong: it raises ``AssertionError`` naming the case, what differs and the likely
  mistake. The diagnosis compares the wrong result with the outputs of the common wrong versions
  of the function (:class:`Mistake`), then looks for tell-tale properties (:class:`Symptom`);
- ``fn`` is not callable: ``TypeError``.

Each call runs in the engine's sandbox (:mod:`course_utils.checks.engine`): a time limit per case
(``engine.TIME_LIMIT_S``, 30 s), the function's printed output captured and shown cut, the
global random generators, torch's default dtype and numpy's print options restored afterwards
(with a warning naming what changed), inputs changed in place refused, and results of the wrong
kind (a list where an array belongs, floats where integers or booleans belong) refused.

Results are compared by value, with a tolerance, so every correct implementation passes, however
it is written (``@``, ``np.dot``, ``einsum``, torch, float32 arithmetic), as long as it returns
the kind of value the next cells use.

Writing a checker for a new lesson: describe the exercise with an :class:`Exercise` (its name, how
it is called, a comparison made by :func:`close_arrays` or :func:`equal_integers`, the mistakes and
symptoms with their hints, the type the next cells need (``returns``) and what they run with the
result (``follow``: a backward pass, say)), build the cases from the reference, with tolerances that
follow what the next cell does and at least one case where each named mistake differs from the
right answer far beyond them, and hand both to :func:`run_checks`. Add it to the registry of
``tests/checker_registry.py``, whose test runs the classes every checker must meet. The checkers of lesson 01 (:mod:`course_utils.checks.rnn`) are examples. Each lesson's
checkers live in a module of this package named after the lesson's topic; this module re-exports them.
"""

from .attention import check_scaled_dot_product_attention, check_softmax, check_weights_entropy
from .distill import check_distillation_loss, check_layer_map
from .distillation_step import check_distillation_step
from .encoder import check_encoder_block, check_encoder_layer_param_count, check_layer_norm, check_pre_ln_block
from .engine import (
    Case,
    Comparison,
    Exercise,
    Mistake,
    Symptom,
    Tracked,
    close_arrays,
    diagnose,
    equal_integers,
    not_attempted_message,
    not_finished_message,
    require_callable,
    run_checks,
    success_message,
)
from .masking import check_causal_mask, check_padding_mask, check_safe_masked_softmax
from .mlm import check_mlm_mask
from .multi_head import check_merge_heads, check_split_heads
from .positional import check_dots_by_distance, check_sinusoidal_encoding
from .rnn import check_lstm_param_count, check_rnn_step
from .since_distilbert import check_apply_rope, check_blocked_attention, check_decode_step, check_repeat_kv
from .start_losses import check_start_losses
from .task_heads import check_align_labels, check_classification_head
from .tokens import check_embedding_grad, check_embedding_lookup, check_frame_tokens, check_pad_batch
from .training import check_train_step

__all__ = [
    "Case",
    "Comparison",
    "Exercise",
    "Mistake",
    "Symptom",
    "Tracked",
    "check_apply_rope",
    "check_blocked_attention",
    "check_decode_step",
    "check_repeat_kv",
    "check_safe_masked_softmax",
    "check_align_labels",
    "check_causal_mask",
    "check_classification_head",
    "check_distillation_loss",
    "check_distillation_step",
    "check_dots_by_distance",
    "check_embedding_grad",
    "check_embedding_lookup",
    "check_encoder_block",
    "check_encoder_layer_param_count",
    "check_pre_ln_block",
    "check_frame_tokens",
    "check_layer_map",
    "check_pad_batch",
    "check_layer_norm",
    "check_lstm_param_count",
    "check_merge_heads",
    "check_mlm_mask",
    "check_padding_mask",
    "check_rnn_step",
    "check_scaled_dot_product_attention",
    "check_sinusoidal_encoding",
    "check_softmax",
    "check_split_heads",
    "check_start_losses",
    "check_train_step",
    "check_weights_entropy",
    "close_arrays",
    "diagnose",
    "equal_integers",
    "not_attempted_message",
    "not_finished_message",
    "require_callable",
    "run_checks",
    "success_message",
]
