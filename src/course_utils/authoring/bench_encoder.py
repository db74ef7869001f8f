"""How fast the course's encoder is next to Hugging Face's eager DistilBERT (``make bench``).

Both models get the same random weights at DistilBERT-base size (``EncoderConfig()``), the same
batch (8 sequences of 128 tokens, the last rows padded) and run in eval mode under
``torch.inference_mode()``. After a warm-up, the two are timed in alternation, the order flipping
every round, so that load from other processes on a shared machine falls on both alike. Each
round gives one ratio (ours / theirs); the verdict uses the median ratio. Budget (issue 5): 1.25.

    python -m course_utils.authoring.bench_encoder [--rounds 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass

RATIO_BUDGET = 1.25


@dataclass(frozen=True)
class EncoderTiming:
    """Median seconds per forward pass of each model and the median of the per-round ratios."""

    ours_s: float
    hf_s: float
    ratio: float
    rounds: int
    batch: int
    seq_len: int

    @property
    def passed(self) -> bool:
        return self.ratio <= RATIO_BUDGET

    def row(self) -> str:
        """A row of ``make bench``'s table (its "seconds" column holds the ratio here)."""
        verdict = "ok" if self.passed else "OVER BUDGET"
        what = (
            f"encoder / Hugging Face eager, {self.batch}x{self.seq_len} tokens "
            f"({self.ours_s * 1e3:.0f} ms vs {self.hf_s * 1e3:.0f} ms): ratio"
        )
        return f"| {what} | {self.ratio:.2f} | {RATIO_BUDGET:.2f} | {verdict} |"


def time_encoder(
    batch: int = 8, seq_len: int = 128, rounds: int = 15, warmup: int = 3, seed: int = 0, config=None
) -> EncoderTiming:
    """Time ``DistilBertEncoder`` against ``transformers.DistilBertModel`` (eager), same weights.

    ``config`` an ``EncoderConfig``; None means DistilBERT-base's sizes (the budget's setting).
    """
    import torch
    from transformers import DistilBertModel

    from ..encoder import DistilBertEncoder, EncoderConfig

    torch.manual_seed(seed)
    config = EncoderConfig() if config is None else config
    ours = DistilBertEncoder(config).eval()
    theirs = DistilBertModel(config.to_hf(attn_implementation="eager")).eval()
    theirs.load_state_dict(ours.to_hf_state_dict(), strict=True)
    input_ids = torch.randint(0, config.vocab_size, (batch, seq_len))
    attention_mask = torch.ones(batch, seq_len, dtype=torch.long)
    attention_mask[batch // 2 :, seq_len * 3 // 4 :] = 0  # half the rows padded: the mask is used

    def run_ours() -> None:
        ours(input_ids, attention_mask)

    def run_theirs() -> None:
        theirs(input_ids, attention_mask=attention_mask)

    def seconds(run) -> float:
        start = time.perf_counter()
        run()
        return time.perf_counter() - start

    ours_s, theirs_s = [], []
    with torch.inference_mode():
        for _ in range(warmup):
            run_ours()
            run_theirs()
        for index in range(rounds):
            if index % 2:
                theirs_s.append(seconds(run_theirs))
                ours_s.append(seconds(run_ours))
            else:
                ours_s.append(seconds(run_ours))
                theirs_s.append(seconds(run_theirs))
    ratio = statistics.median(a / b for a, b in zip(ours_s, theirs_s))
    return EncoderTiming(statistics.median(ours_s), statistics.median(theirs_s), ratio, rounds, batch, seq_len)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_utils.authoring.bench_encoder", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds of each model (default 15)")
    args = parser.parse_args(argv)
    timing = time_encoder(rounds=args.rounds)
    print(timing.row())
    return 0 if timing.passed else 1


if __name__ == "__main__":
    sys.exit(main())
