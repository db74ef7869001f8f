"""``make bench``: how long each lesson takes to execute, and how long the book takes to build.

Also the course's encoder against Hugging Face's (:mod:`.bench_encoder`) and a fine-tuning step
with and without the recipe's two savings (:mod:`.bench_fine_tuning`).

Lessons run exactly as ``make lessons`` runs them (fresh kernel, offline), but their notebooks are
not rewritten. The book is built twice into a temporary folder, so ``_build/`` is left alone:
once clean (every lesson executed) and once more with nothing changed (every lesson cached).
Prints a markdown table; each row says whether its budget holds.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import require_checkout
from .bench_encoder import time_encoder
from .bench_fine_tuning import rows as fine_tuning_rows
from .bench_fine_tuning import time_fine_tuning_steps
from .lessons import ROOT, is_lab, page_sources, run_lesson

# Budgets in seconds, from the issues that introduced each lesson; lessons not listed get DEFAULT.
LESSON_BUDGET_S = {"00_welcome": 30, "01_rnn_recap": 30, "02_tokens_embeddings": 45, "03_positional_encoding": 45,
                   "04_self_attention": 45, "05_masking": 45, "06_encoder": 60,
                   "07_distillation": 180, "08_using_distilbert": 180, "09_since_distilbert": 90}
DEFAULT_LESSON_BUDGET_S = 180
CACHED_BUILD_BUDGET_S = 60


def time_lesson(path: Path) -> float:
    """Seconds to execute one lesson from its markdown in a fresh kernel (outputs discarded)."""
    return run_lesson(path)[1]


def time_book_build(output: Path) -> float:
    """Seconds for one strict ``jupyter-book build`` of the book into ``output``."""
    command = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(ROOT), "--path-output", str(output),
               "--builder", "html", "-W", "--keep-going", "--quiet"]
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"the book build failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return elapsed


def row(name: str, seconds: float, budget: float | None) -> str:
    """One markdown table row; ``budget`` None means the row has no budget."""
    if budget is None:
        return f"| {name} | {seconds:.1f} | - | - |"
    verdict = "ok" if seconds <= budget else "OVER BUDGET"
    return f"| {name} | {seconds:.1f} | {budget:.0f} | {verdict} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_utils.authoring.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--no-book", action="store_true", help="time the lessons only")
    args = parser.parse_args(argv)
    require_checkout()
    rows, over = [], 0
    for path in page_sources():
        seconds = time_lesson(path)
        budget = LESSON_BUDGET_S.get(path.stem, DEFAULT_LESSON_BUDGET_S)
        rows.append(row(f"{'lab' if is_lab(path) else 'lesson'} {path.stem}", seconds, budget))
        over += seconds > budget
        print(rows[-1], flush=True)
    encoder = time_encoder()  # issue 5: the course's encoder within 1.25x of Hugging Face's eager DistilBERT
    rows.append(encoder.row())
    over += not encoder.passed
    print(rows[-1], flush=True)
    for line in fine_tuning_rows(time_fine_tuning_steps()):  # the recipe's two savings (group_by_length, fused)
        rows.append(line)
        print(line, flush=True)
    if not args.no_book:
        with tempfile.TemporaryDirectory(prefix="course-bench-") as tmp:
            clean = time_book_build(Path(tmp))
            rows.append(row("book build, clean (executes every lesson)", clean, None))
            print(rows[-1], flush=True)
            cached = time_book_build(Path(tmp))
            rows.append(row("book build, cached (no change)", cached, CACHED_BUILD_BUDGET_S))
            over += cached > CACHED_BUILD_BUDGET_S
    print("\n| what | seconds | budget (s) | verdict |\n|---|---:|---:|---|")
    print("\n".join(rows))
    print(f"\nmachine: {os.cpu_count()} CPU cores, Python {sys.version.split()[0]}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
