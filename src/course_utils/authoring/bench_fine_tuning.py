"""How long a step of the course's fine-tuning takes, with and without its two savings (``make bench``).

The bundled student with a new sentiment head, on one CPU thread (as ``make assets`` runs it),
takes steps of the recipe's batch size on the sentiment task's training sentences: random
batches or batches of similar lengths (``group_by_length``), with AdamW's loop over the weights
or its fused kernel. The four settings are timed in alternation, round after round, so that load
from other processes falls on all alike; each row is the median seconds per step.

    python -m course_utils.authoring.bench_fine_tuning [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

SETTINGS = {  # name -> (batches of similar lengths, fused AdamW)
    "random batches, AdamW loop": (False, False),
    "batches of similar lengths, AdamW loop": (True, False),
    "random batches, fused AdamW": (False, True),
    "batches of similar lengths, fused AdamW (the recipe)": (True, True),
}


def time_fine_tuning_steps(rounds: int = 5, steps: int = 20) -> dict[str, float]:
    """Median seconds per fine-tuning step of each of :data:`SETTINGS`, over ``rounds`` rounds of ``steps`` steps."""
    import torch

    from .. import data, models, tokenization, training

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        tokenizer = tokenization.load_bundled_tokenizer()
        train = training.encode(data.sentiment_task("train"), tokenizer)
        recipe = models.FINE_TUNING
        lengths = [len(row) for row in train.ids]
        per_step = {name: [] for name in SETTINGS}
        runs = {}
        for name, (grouped, fused) in SETTINGS.items():
            torch.manual_seed(0)
            with models.quiet_loading():  # the head is new on purpose
                model = models.load_bundled("student", model_class=_classifier_class(), num_labels=2).train()
            optimizer, schedule = training.optimiser(model, steps=steps * (rounds + 1), lr=recipe["lr"],
                                                     warmup=recipe["warmup"], weight_decay=recipe["weight_decay"],
                                                     decay=recipe["decay"], fused=fused)
            batches = training.step_batches(len(lengths), recipe["batch_size"], 0, steps * (rounds + 1),
                                            lengths if grouped else None)
            runs[name] = (model, optimizer, schedule, batches)

        def take_steps(name: str, n: int) -> float:
            model, optimizer, schedule, batches = runs[name]
            start = time.perf_counter()
            for _, indices in zip(range(n), batches):
                input_ids, attention_mask = training.pad([train.ids[i] for i in indices], tokenizer.pad_token_id)
                labels = training.label_tensor([train.labels[i] for i in indices])
                loss = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss
                training.update(model, loss, optimizer, schedule)
            return (time.perf_counter() - start) / n

        for name in SETTINGS:  # warm-up: the first steps allocate
            take_steps(name, steps)
        for round_ in range(rounds):
            for name in SETTINGS if round_ % 2 == 0 else reversed(SETTINGS):
                per_step[name].append(take_steps(name, steps))
        return {name: statistics.median(values) for name, values in per_step.items()}
    finally:
        torch.set_num_threads(threads)


def _classifier_class():
    from transformers import DistilBertForSequenceClassification

    return DistilBertForSequenceClassification


def rows(seconds: dict[str, float]) -> list[str]:
    """Rows of ``make bench``'s table: milliseconds per step, and the speed-up over the first setting."""
    first = seconds[next(iter(SETTINGS))]
    return [f"| fine-tuning step, {name}: ms (x{first / value:.2f}) | {value * 1e3:.1f} | - | - |"
            for name, value in seconds.items()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_utils.authoring.bench_fine_tuning",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    print("\n".join(rows(time_fine_tuning_steps(args.rounds))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
