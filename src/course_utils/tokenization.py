"""The course's WordPiece tokenizer: trained on the course corpus, bundled, loaded like any hub tokenizer.

BERT and DistilBERT read text through a WordPiece tokenizer: lower-case the text, split it into
words and punctuation, then split each word into the longest pieces found in a vocabulary, the
pieces after the first marked ``##`` (``"unkindness" -> ["un", "##kind", "##ness"]``).

No tokenizer can be downloaded here, so the course trains its own on its own corpus (:func:`course_utils.data.corpus`), wraps it as a ``transformers.BertTokenizer``
and saves it in Hugging Face format under ``course_utils/assets/tokenizer``. Lessons load it with
``transformers.AutoTokenizer.from_pretrained`` on that folder, the code path of every hub model.

Rebuild it (bit for bit the same files) with ``python -m course_utils.tokenization --rebuild``
or ``make assets``.
"""

from __future__ import annotations

import argparse
import collections
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import bundle, data, env

ASSETS = bundle.ASSETS
TOKENIZER_DIR = ASSETS / "tokenizer"
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
VOCAB_SIZE = 1500
MAX_LENGTH = 128  # the course models' max_position_embeddings (DistilBERT-base: 512)
HUB_TOKENIZERS = {"bert": "bert-base-uncased", "distilbert": "distilbert-base-uncased"}
SAVED_FILES = ("tokenizer.json", "tokenizer_config.json")


def words_of(texts) -> collections.Counter:
    """How often each word occurs in ``texts``, after BERT's normaliser and pre-tokeniser.

    Both come from the ``tokenizers`` library: lower case, accents stripped, text split on
    whitespace and punctuation. These are the steps the saved tokenizer applies before WordPiece.
    """
    from tokenizers import normalizers, pre_tokenizers

    normalizer, pre_tokenizer = normalizers.BertNormalizer(lowercase=True), pre_tokenizers.BertPreTokenizer()
    counts: collections.Counter = collections.Counter()
    for text in texts:
        counts.update(word for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)))
    return counts


def train_wordpiece(texts, vocab_size: int = VOCAB_SIZE) -> dict[str, int]:
    """Learn a WordPiece vocabulary of ``vocab_size`` tokens from ``texts``: token -> id.

    The algorithm of ``tokenizers``' ``WordPieceTrainer`` (BPE merges with a ``##`` prefix on
    continuation pieces): start from the characters, then repeatedly merge the most frequent
    adjacent pair of pieces into a new piece, until the vocabulary is full. Ids: the special tokens
    (0-4), the characters in alphabetical order, then the merged pieces in the order learned.

    Why not call ``WordPieceTrainer`` itself? It breaks ties between equally frequent pairs in hash
    order, which differs from run to run: three trainings on this corpus gave three different
    vocabularies. Here ties go to the alphabetically first pair, so the bundle is rebuilt bit for bit.
    ``tests/test_tokenization.py`` compares the result with ``WordPieceTrainer``'s.
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size <= len(SPECIAL_TOKENS):
        raise ValueError(f"expected vocab_size to be an integer > {len(SPECIAL_TOKENS)}, got {vocab_size!r}")
    counts = words_of(texts)
    words = [[word[0]] + ["##" + ch for ch in word[1:]] for word in counts]  # "cats" -> c ##a ##t ##s
    frequency = list(counts.values())
    vocab = list(SPECIAL_TOKENS) + sorted({piece for word in words for piece in word} - set(SPECIAL_TOKENS))
    pairs: collections.Counter = collections.Counter()  # (left, right) -> occurrences in the corpus
    where = collections.defaultdict(set)  # (left, right) -> indices of the words holding it

    def count(i: int, sign: int) -> None:
        for pair in zip(words[i], words[i][1:]):
            pairs[pair] += sign * frequency[i]
            if sign > 0:
                where[pair].add(i)
            elif pairs[pair] == 0:
                del pairs[pair]

    for i in range(len(words)):
        count(i, +1)
    known = set(vocab)
    while len(vocab) < vocab_size and pairs:
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))  # most frequent; ties: alphabetical
        left, right = best
        merged = left + right.removeprefix("##")
        if merged not in known:
            known.add(merged)
            vocab.append(merged)
        for i in sorted(where.pop(best)):
            count(i, -1)
            word, new, j = words[i], [], 0
            while j < len(word):
                if j + 1 < len(word) and (word[j], word[j + 1]) == best:
                    new.append(merged)
                    j += 2
                else:
                    new.append(word[j])
                    j += 1
            words[i] = new
            count(i, +1)
    return {token: i for i, token in enumerate(vocab)}


def build_tokenizer(vocab: dict[str, int]):
    """A ``transformers.BertTokenizer`` (the fast, Rust-backed one) over ``vocab``."""
    from transformers import BertTokenizer

    ordered = dict(sorted(vocab.items(), key=lambda item: item[1]))
    return BertTokenizer(vocab=ordered, do_lower_case=True, model_max_length=MAX_LENGTH)


def rebuild(output_dir: Path = TOKENIZER_DIR) -> Path:
    """Train the course tokenizer on the training split of the corpus and save it to ``output_dir``.

    Only :data:`SAVED_FILES` are written; a folder holding other files is refused before training
    (:func:`course_utils.bundle.save_files`): nothing the course did not write is ever deleted.
    """
    output_dir = Path(output_dir)
    bundle.check_writable(output_dir, SAVED_FILES, what="the course tokenizer")  # before a minute of training
    texts = [sentence.text for sentence in data.corpus("train")]
    tokenizer = build_tokenizer(train_wordpiece(texts))
    return bundle.save_files(tokenizer.save_pretrained, output_dir, SAVED_FILES, what="the course tokenizer")


def load_bundled_tokenizer(**kwargs):
    """The bundled course tokenizer, through ``AutoTokenizer.from_pretrained`` on its folder.

    Its files are checked first (:func:`course_utils.bundle.verify`): a missing, truncated or
    damaged one raises :class:`course_utils.bundle.BundleError` naming it and the fix.
    ``kwargs`` go to ``from_pretrained`` (e.g. ``model_input_names``).
    """
    from transformers import AutoTokenizer

    bundle.verify(TOKENIZER_DIR, SAVED_FILES, fix=f"{bundle.RESTORE}; the tokenizer alone: "
                  "`python -m course_utils.tokenization --rebuild` (a minute)")
    return AutoTokenizer.from_pretrained(str(TOKENIZER_DIR), **kwargs)


def load_tokenizer(prefer: str = "hub", model: str = "distilbert", *, verbose: bool = True):
    """The tokenizer a lesson should use, and a one-line notice saying which one it is.

    ``prefer="hub"``: the real ``distilbert-base-uncased`` (or ``bert-base-uncased`` with
    ``model="bert"``) when the Hugging Face hub is reachable, else the bundled course tokenizer.
    ``prefer="bundled"``: always the bundled one. Offline this never waits on the network:
    :func:`course_utils.env.hub_status` decides from ``HF_HUB_OFFLINE`` or a probe of at most 3 s.

    With ``model="distilbert"`` the bundled tokenizer returns no ``token_type_ids``, as the real
    DistilBERT tokenizer does (DistilBERT has no token types; transformers 4.x rejects them).
    """
    if prefer not in ("hub", "bundled"):
        raise ValueError(f"expected prefer='hub' or prefer='bundled', got {prefer!r}")
    if model not in HUB_TOKENIZERS:
        raise ValueError(f"expected model to be one of {sorted(HUB_TOKENIZERS)}, got {model!r}")
    status = env.hub_status() if prefer == "hub" else "as asked"
    if status == "reachable":
        from transformers import AutoTokenizer

        name = HUB_TOKENIZERS[model]
        try:
            tokenizer = AutoTokenizer.from_pretrained(name)
        except OSError as error:  # reachable but failing: fall back, and say why
            if verbose:
                print(f"Could not load {name} from the hub ({type(error).__name__}); using the course tokenizer.")
        else:
            if verbose:
                print(f"Using the real {name} tokenizer from the Hugging Face hub ({len(tokenizer):,} tokens).")
            return tokenizer
    inputs = {"model_input_names": ["input_ids", "attention_mask"]} if model == "distilbert" else {}
    tokenizer = load_bundled_tokenizer(**inputs)
    if verbose:
        reason = "hub unreachable" if status == "unreachable" else status
        print(f"Using the course's bundled WordPiece tokenizer ({len(tokenizer):,} tokens; {reason}).")
    return tokenizer


def pad_batch(sequences, pad_id: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Pad token-id sequences on the right into one batch, as ``tokenizer(..., padding=True)`` does.

    ``sequences``: ``B`` lists of ids, of lengths ``T_1 ... T_B``. Returns ``input_ids (B, T)``
    with ``T = max(T_b)``, ``pad_id`` after the end of each sequence, and ``attention_mask (B, T)``,
    1 at real tokens and 0 at padding (Hugging Face's convention). The inputs are not changed.
    """
    if isinstance(sequences, (str, bytes)) or not hasattr(sequences, "__len__") or len(sequences) == 0:
        raise ValueError(f"expected a non-empty list of token-id sequences, got {sequences!r:.80}")
    rows = [np.asarray(sequence) for sequence in sequences]
    for b, row in enumerate(rows):
        if row.ndim != 1 or (row.size and row.dtype.kind not in "iu"):
            raise ValueError(f"expected sequence {b} to be a flat list of integer ids, got {sequences[b]!r:.80}")
    length = max(row.size for row in rows)
    input_ids = np.full((len(rows), length), pad_id, dtype=np.int64)
    attention_mask = np.zeros((len(rows), length), dtype=np.int64)
    for b, row in enumerate(rows):
        input_ids[b, : row.size] = row
        attention_mask[b, : row.size] = 1
    return input_ids, attention_mask


@dataclass(frozen=True)
class WordPieceStep:
    """One step of WordPiece's greedy split: at character ``start`` of the word, the candidates
    ``tried`` longest first (``##`` before a continuation), the last of them the piece ``kept``
    (``None`` when no candidate is in the vocabulary: the whole word becomes ``[UNK]``)."""

    start: int
    tried: tuple[str, ...]
    kept: str | None


def wordpiece_steps(word: str, vocab, *, prefix: str = "##", unknown: str = "[UNK]") -> list[WordPieceStep]:
    """WordPiece's greedy longest-match-first split of one ``word`` (already lower-cased and cut
    from its sentence), step by step: at each step, try the rest of the word, then one character
    shorter, and so on, until a candidate is in ``vocab`` (a mapping or set of tokens); keep it and
    go on after it. Pieces after the first carry ``prefix``. Returns the steps; their ``kept``
    pieces are what a BERT tokenizer gives (``[WordPieceStep(0, ("unkindness", ..., "un"), "un"),
    ...]``). When a step finds nothing the last step's ``kept`` is ``None``: the word is
    ``unknown``, whole, as BERT's ``WordpieceTokenizer`` does.
    """
    if not isinstance(word, str) or not word or any(c.isspace() for c in word):
        raise ValueError(f"expected one word, a non-empty string without spaces, got {word!r}")
    if not hasattr(vocab, "__contains__") or not len(vocab):
        raise ValueError(f"expected a vocabulary (a dict or set of tokens), got {type(vocab).__name__}")
    steps, start = [], 0
    while start < len(word):
        tried = []
        for end in range(len(word), start, -1):
            candidate = (prefix if start else "") + word[start:end]
            tried.append(candidate)
            if candidate in vocab:
                steps.append(WordPieceStep(start, tuple(tried), candidate))
                start = end
                break
        else:
            steps.append(WordPieceStep(start, tuple(tried), None))
            break
    return steps


def wordpiece_pieces(steps: list[WordPieceStep], unknown: str = "[UNK]") -> list[str]:
    """The pieces of :func:`wordpiece_steps`' split: the kept candidates, or ``[unknown]``."""
    return [unknown] if any(step.kept is None for step in steps) else [step.kept for step in steps]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_utils.tokenization", description=__doc__.split("\n")[0])
    parser.add_argument("--rebuild", action="store_true", help="retrain the bundled tokenizer from the corpus")
    parser.add_argument("--output", type=Path, default=TOKENIZER_DIR, help="folder to write (default: the bundle)")
    args = parser.parse_args(argv)
    if not args.rebuild:
        parser.print_help()
        return 0
    start = time.perf_counter()
    folder = rebuild(args.output)
    print(f"wrote the course tokenizer to {folder} in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
