"""Where a model keeps the polarity of the held-out words (lessons 06 and 07): probes of its word
table and of its masked-word guesses, each read as an AUC on the held-out adjectives.

No label ever shows a held-out word (:func:`course_utils.data.held_out_words`), yet the pre-trained
teacher knows which are positive: it fills "the dog is [MASK] kind." with "perfectly" and
"the dog is [MASK] cruel." with "utterly" (the corpus's semantic prosody, :data:`course_utils.data.PROSODY`).
Three probes say where that knowledge sits, each scored on the :func:`probe_words` held out, 9
positive and 14 negative forms (each adjective and its un- form), by :func:`course_utils.stats.auc`:

- :func:`adverb_preference`: the model's ``P(perfectly) / (P(perfectly) + P(utterly))`` at the
  [MASK] before each word: the knowledge as the whole model uses it;
- :func:`adverb_direction`: the projection of each word's row of the input embedding table on
  ``E[perfectly] - E[utterly]``: the knowledge in the table alone, on a direction no label chose
  (only its sign is read off the seen words: the table may put positive words at either end);
- :func:`logistic_probe`: a logistic regression fitted on the rows of the 30 seen forms (their
  polarity is in the labels) and read on the held-out forms' rows.

An AUC of 1 ranks every positive word above every negative one; 0.5 is chance. With 9 and 14
words, chance reaches 0.71 one time in twenty (:func:`course_utils.stats.auc_chance_p`).
"""

from __future__ import annotations

import functools

import numpy as np

from . import data, stats

TEMPLATE = "the dog is [MASK] {word}."  # lesson 06's masked sentence: the adverb before the adjective


@functools.lru_cache(maxsize=None)
def probe_words(held_out: bool = True) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """``(words, labels)``: the adjective forms that stand after a degree adverb (each evaluative
    adjective and, where it takes one, its un- form), held out (``held_out=True``: 23 forms, 9
    positive) or seen in the labels (30 forms); ``labels`` 1 for a positive form, 0 for a negative one."""
    held = data.held_out_words()
    words = [w for w in data.predicate_adjectives() if (w in held) == held_out]
    return tuple(words), tuple(int(data.polarity(w) > 0) for w in words)


def _token_ids(tokenizer, words) -> list[int]:
    ids = tokenizer.convert_tokens_to_ids(list(words))
    unknown = [w for w, i in zip(words, ids) if i == tokenizer.unk_token_id]
    if unknown:
        raise ValueError(f"expected every word to be one token of the tokenizer, got {unknown} as [UNK]")
    return ids


def adverb_preference(model, tokenizer, words) -> np.ndarray:
    """``(W,)``: for each word, ``P(perfectly) / (P(perfectly) + P(utterly))`` at the [MASK] of
    :data:`TEMPLATE` ("the dog is [MASK] kind."), by ``model`` (a masked LM of the course's
    tokenizer: the teacher, a student). Near 1: the model reads the word as positive."""
    import torch

    words = list(words)
    if not words or not all(isinstance(w, str) for w in words):
        raise ValueError(f"expected a non-empty list of words, got {words!r}")
    _token_ids(tokenizer, words)
    inputs = tokenizer([TEMPLATE.format(word=w) for w in words], return_tensors="pt", padding=True)
    where = inputs["input_ids"] == tokenizer.mask_token_id  # (W, T), one True a row
    perfectly, utterly = _token_ids(tokenizer, [data.PROSODY_ADVERBS[+1], data.PROSODY_ADVERBS[-1]])
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            logits = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"]).logits[where]
    finally:
        model.train(was_training)
    pair = logits[:, [perfectly, utterly]].double().softmax(-1)  # the two adverbs only: (W, 2)
    return pair[:, 0].numpy()


def word_table(model) -> np.ndarray:
    """``(V, D)``: the input word-embedding table of a BERT or DistilBERT model, as float64."""
    return model.get_input_embeddings().weight.detach().double().numpy().copy()


def adverb_direction(table: np.ndarray, tokenizer, words) -> np.ndarray:
    """``(W,)``: each word's row of ``table`` ``(V, D)`` projected on ``±(E[perfectly] - E[utterly])``,
    the sign that ranks the seen adjective forms (:func:`probe_words` with ``held_out=False``) the right
    way round: the direction comes from two adverbs, and only which end is positive from labels."""
    table = np.asarray(table, dtype=float)
    if table.ndim != 2:
        raise ValueError(f"expected a word table of shape (V, D), got {table.shape}")
    perfectly, utterly = _token_ids(tokenizer, [data.PROSODY_ADVERBS[+1], data.PROSODY_ADVERBS[-1]])
    direction = table[perfectly] - table[utterly]
    seen, seen_labels = probe_words(held_out=False)
    if stats.auc(table[_token_ids(tokenizer, seen)] @ direction, seen_labels) < 0.5:
        direction = -direction
    return table[_token_ids(tokenizer, words)] @ direction


def logistic_probe(train_rows: np.ndarray, train_labels, test_rows: np.ndarray, *, penalty: float = 1.0) -> np.ndarray:
    """The scores ``(N_test,)`` of a logistic regression fitted on ``train_rows (N, D)`` and their 0/1
    labels, with an L2 penalty ``penalty / 2 · |w|²`` (scikit-learn's default, C = 1), on features
    standardised with the training rows' means and spreads; L-BFGS from zero, so deterministic."""
    from scipy.optimize import minimize

    x, y = np.asarray(train_rows, dtype=float), np.asarray(train_labels, dtype=float)
    test = np.asarray(test_rows, dtype=float)
    if x.ndim != 2 or test.ndim != 2 or x.shape[1] != test.shape[1] or y.shape != (len(x),):
        raise ValueError(f"expected train rows (N, D) with N labels and test rows (M, D), got {x.shape}, "
                         f"{y.shape} and {test.shape}")
    mean, spread = x.mean(0), x.std(0) + 1e-12
    x, test = (x - mean) / spread, (test - mean) / spread
    signs = 2 * y - 1

    def loss(w):
        margins = signs * (x @ w[:-1] + w[-1])
        gradient_rows = -signs * (1 - 1 / (1 + np.exp(-margins)))
        value = np.logaddexp(0, -margins).sum() + penalty / 2 * w[:-1] @ w[:-1]
        gradient = np.append(x.T @ gradient_rows + penalty * w[:-1], gradient_rows.sum())
        return value, gradient

    fitted = minimize(loss, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B")
    return test @ fitted.x[:-1] + fitted.x[-1]


def probe(model, tokenizer) -> dict:
    """The three probes of ``model`` on the held-out adjective forms: ``{"adverb_preference",
    "adverb_direction", "logistic"}``, each ``{"auc", "chance_p"}`` (:func:`course_utils.stats.auc`,
    :func:`course_utils.stats.auc_chance_p`), and ``"preference"``: ``{word: P(perfectly) share}``."""
    words, labels = probe_words(held_out=True)
    seen, seen_labels = probe_words(held_out=False)
    table = word_table(model)
    scores = {
        "adverb_preference": adverb_preference(model, tokenizer, words),
        "adverb_direction": adverb_direction(table, tokenizer, words),
        "logistic": logistic_probe(table[_token_ids(tokenizer, seen)], seen_labels, table[_token_ids(tokenizer, words)]),
    }
    result = {name: {"auc": stats.auc(s, labels), "chance_p": stats.auc_chance_p(s, labels)} for name, s in scores.items()}
    result["preference"] = dict(zip(words, np.round(scores["adverb_preference"], 4).tolist()))
    return result
