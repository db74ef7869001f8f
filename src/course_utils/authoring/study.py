"""``python -m course_utils.authoring.study``: lesson 07's study, as its declaration (models.py) reads it.

Prints, from ``assets/report.json`` (or ``--report FILE``), every arm's mean accuracy on the fresh
test pool with its 95% t interval over seeds; each declared contrast with its interval at its Holm
step's level, its raw and Holm-adjusted p-values and its verdict; the primary's bootstrap interval
over seeds and test sentences; every exploratory contrast with its unadjusted 95% interval and no
verdict; the budget curve and what the teacher's outputs are worth in masked-word steps and in
seconds; and each arm's job seconds. Markdown, for the instructor guide and the issue's note.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

from .. import models


def _mean_interval(values: list[float]) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean of ``values`` with its 95% t interval (scipy's)."""
    from scipy import stats as scipy_stats

    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, math.nan, math.nan
    low, high = scipy_stats.t.interval(0.95, len(values) - 1, loc=mean, scale=scipy_stats.sem(values))
    return mean, float(low), float(high)


def _points(value: float) -> str:
    return f"{100 * value:+.1f}"


def arms_table(report: dict) -> str:
    """Each arm's (and the teacher's) mean accuracy on the unseen slice and the whole test pool."""
    names = ["teacher", *[run for run in models.STUDENT_GRID if run not in models.STUDY_CUTS]]
    lines = ["| arm | seeds | unseen slice (95% interval) | whole test pool (95% interval) |", "|---|---|---|---|"]
    for name in names:
        cells = []
        for part in ("unseen", "all"):
            values = list(models._accuracies(report, name, part).values())
            mean, low, high = _mean_interval(values)
            cells.append(f"{mean:.3f} ({low:.3f} to {high:.3f})")
        count = len(models._accuracies(report, name, "all"))
        lines.append(f"| {name} | {count} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def contrasts_table(report: dict) -> str:
    """The declared contrasts (Holm over three, intervals at their step's level) and the exploratory ones."""
    lines = ["| contrast | first - second, points | interval | level | p | Holm p | verdict |",
             "|---|---|---|---|---|---|---|"]
    for result in models.study_results(report) + models.study_results(report, "exploratory"):
        d, c = result.difference, result.contrast
        low, high = d.interval
        holm = "" if result.p_holm is None else f"{result.p_holm:.3g}"
        lines.append(f"| {c.name} ({c.first} - {c.second}, {c.part}; {d.n} seeds) | {_points(d.mean)} | "
                     f"{_points(low)} to {_points(high)} | {d.level:.1%} | {d.p:.3g} | {holm} | {result.outcome} |")
    return "\n".join(lines)


def budget_lines(report: dict) -> list[str]:
    """The budget curve, what the teacher's outputs are worth in steps and in seconds."""
    worth = models.budget_worth(report)
    seconds = report.get("job_seconds", {})

    def training_seconds(run):
        jobs = [v for k, v in seconds.items() if k.startswith(f"student {run!r} seed ")]
        fixed = [v for k, v in seconds.items() if k.startswith("student 'copy, no distillation' seed ")]
        return statistics.fmean(jobs) - statistics.fmean(fixed) if jobs and fixed else math.nan

    mlm_step = training_seconds(models.budget_run(2000)) / 2000
    triple = training_seconds("erased, triple loss")
    lines = ["Budget curve, unseen slice (means): " + ", ".join(f"{s:,} steps {m:.3f}" for s, m in worth.curve.items())
             + f"; the triple loss at 250 steps: {worth.target:.3f}.",
             f"The teacher's outputs are worth {worth}."]
    if math.isfinite(mlm_step) and math.isfinite(triple):
        lines.append(f"Seconds (job seconds less the fixed part, a job with no training): 250 triple-loss steps "
                     f"{triple:.0f} s; a masked-word step {mlm_step:.3f} s, so a triple-loss step costs "
                     f"{triple / 250 / mlm_step:.2f} masked-word steps"
                     + (f"; {worth.estimate:,.0f} masked-word steps take {worth.estimate * mlm_step:.0f} s."
                        if math.isfinite(worth.estimate) else "."))
    return lines


def job_seconds_table(report: dict) -> str:
    """Each arm's job seconds (mean, and the sum over its seeds) and the study's wall time."""
    import tempfile

    from . import assets

    planned = {job.name for job in assets.plan(assets.TARGETS["study"], tempfile.gettempdir(), "study")}
    planned.add(assets.BUNDLED_STUDENT_JOB)
    seconds = {name: s for name, s in report.get("job_seconds", {}).items() if name in planned}
    lines = ["| job | runs | mean s | total s |", "|---|---|---|---|"]
    groups: dict[str, list[float]] = {}
    for name, value in seconds.items():
        if name.startswith(("student ", "few-label ")):
            groups.setdefault(name.rsplit(" seed ", 1)[0], []).append(value)
    for name, values in groups.items():
        lines.append(f"| {name} | {len(values)} | {statistics.fmean(values):.0f} | {sum(values):.0f} |")
    study = report.get("targets_s", {}).get("study")
    if study:
        lines.append(f"| make study, wall | | | {study['wall']:.0f} |")
    return "\n".join(lines)


def table(report: dict) -> str:
    """Everything above, in order."""
    primary = models.primary_bootstrap(report)
    parts = [arms_table(report), contrasts_table(report),
             f"Primary, bootstrap over seeds and the unseen slice's sentences: {primary}.", *budget_lines(report),
             job_seconds_table(report)]
    return "\n\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_utils.authoring.study", description=__doc__.split("\n")[0])
    parser.add_argument("--report", type=Path, help="a report.json (default: the bundled one)")
    args = parser.parse_args(argv)
    report = json.loads(args.report.read_text()) if args.report else models.report()
    if report.get("study_stale"):
        print(f"note: {report['study_stale']}")
    print(table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
