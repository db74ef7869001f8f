"""python -m course_utils.authoring.study: the study's numbers as its declaration reads them."""

from __future__ import annotations

import numpy as np

from course_utils import data, models
from course_utils.authoring import study


def _report() -> dict:
    """Every arm of the grid with its seeds, its accuracies and which test sentences it got right."""
    test = data.sentiment_task("test")
    unseen = np.array([data.slice_of(s) == "unseen" for s in test])
    rng = np.random.default_rng(0)
    levels = {"erased, triple loss": 0.78, models.budget_run(250): 0.70, models.budget_run(500): 0.72,
              models.budget_run(1000): 0.75, models.budget_run(2000): 0.80}

    def entry(seed, level, **extra):
        right = rng.random(len(test)) < np.where(unseen, level, 0.93)
        return {"seed": seed, "sentiment_accuracy_test": float(right.mean()),
                "accuracy_by_slice_test": {"seen": 0.95, "mixed": 0.9, "unseen": float(right[unseen].mean())},
                "right_test": models.pack_right(right), **extra}

    runs = [entry(seed, levels.get(run, 0.74), run=run) for run in models.STUDENT_GRID for seed in models.RUN_SEEDS[run]]
    seconds = {f"student {run!r} seed {seed}": 36.0 + (0.3 * models.run_recipe(run)["steps"] * (
        1.0 if models.STUDENT_RUNS[run][1] and models.STUDENT_RUNS[run][1].get("ce") == 0.0 else 1.9)
        if models.STUDENT_RUNS[run][1] is not None else 0.0) for run in models.STUDENT_GRID for seed in models.RUN_SEEDS[run]}
    return {"teacher_fine_tuning_runs": [entry(seed, 0.8) for seed in models.TEACHER_SEEDS],
            "students": {"runs": runs}, "task_distillation": {"runs": []}, "job_seconds": seconds,
            "targets_s": {"study": {"wall": 3000.0}}}


def test_the_table_gives_every_arm_each_verdict_with_its_interval_the_bootstrap_and_the_budget():
    text = study.table(_report())
    for run in models.STUDENT_GRID:
        assert f"| {run} |" in text
    assert "| teacher | 8 |" in text
    for contrast in models.STUDY_CONTRASTS + models.EXPLORATORY_CONTRASTS:
        assert contrast.name in text
    assert "98.3%" in text and "| higher |" in text and "exploratory" in text
    assert "bootstrap interval" in text and "worth" in text and "masked-word steps take" in text
    assert "a triple-loss step costs 1.90 masked-word steps" in text
    assert "| make study, wall | | | 3000 |" in text
