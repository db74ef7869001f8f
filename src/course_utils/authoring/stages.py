"""How long each stage of ``make test`` takes, against what it should take on the 2-core machine.

``make test`` runs each of its stages through :func:`run` and ends with :func:`summary`, a table of
each stage's wall time beside its budget (:data:`BUDGET_S`) and the total, so that the instructor's
wait is printed every time and a stage that has grown is seen in the run that grew it::

    python -m course_utils.authoring.stages run NAME -- COMMAND ...   # runs COMMAND, records its seconds
    python -m course_utils.authoring.stages summary                   # the table
    python -m course_utils.authoring.stages reset                     # forget the last run's stages

The seconds are kept in ``_build/stage-seconds.json``; ``run`` exits with COMMAND's status. A stage
over its budget is flagged in the table, not failed: a busy machine is slower, and a timing is a
measure, not a check (the instructor guide's testing section gives the table these budgets come from).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from .lessons import ROOT

RECORD = ROOT / "_build" / "stage-seconds.json"

# Seconds each stage of `make test` should take on the 2-core development machine with nothing else
# running: about 1.5 to 2 times what it took there after issue 57 (the guide's table), so that their
# sum stays within the README's 20 minutes.
BUDGET_S = {
    "lint": 10,
    "unit": 240,
    "notebooks": 240,
    "validated-cache": 10,
    "pdf": 120,
    "book": 60,
    "site": 480,
}
TOTAL_BUDGET_S = 20 * 60


def _read(record: Path) -> dict[str, float]:
    try:
        return json.loads(record.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def record_stage(name: str, seconds: float, record: Path = RECORD) -> None:
    """Add (or replace) ``name``'s wall time in ``record``, keeping the order the stages ran in."""
    stages = _read(record)
    stages.pop(name, None)
    stages[name] = round(seconds, 1)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(stages, indent=1) + "\n")


def run(name: str, command: list[str], record: Path = RECORD) -> int:
    """Run ``command``, record its wall time as stage ``name``; returns its exit status."""
    if not command:
        raise ValueError(f"stage {name!r}: expected a command to run after '--', got none")
    start = time.monotonic()
    status = subprocess.call(command)
    record_stage(name, time.monotonic() - start, record)
    return status


def table(stages: dict[str, float], budgets: dict[str, float] = BUDGET_S, total_budget: float = TOTAL_BUDGET_S) -> str:
    """A markdown table: each stage's seconds, its budget, and a flag where it went over; the total."""
    rows = ["| stage | seconds | budget | |", "|---|---|---|---|"]
    for name, seconds in stages.items():
        budget = budgets.get(name)
        flag = "OVER BUDGET" if budget is not None and seconds > budget else ""
        rows.append(f"| {name} | {seconds:.0f} | {budget if budget is not None else '–'} | {flag} |")
    total = sum(stages.values())
    flag = "OVER BUDGET" if total > total_budget else ""
    rows.append(f"| total | {total:.0f} ({total / 60:.1f} min) | {total_budget:.0f} | {flag} |")
    return "\n".join(rows)


def summary(record: Path = RECORD) -> str:
    stages = _read(record)
    if not stages:
        return f"no stage recorded in {record}"
    return table(stages)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["run", "summary", "reset"])
    parser.add_argument("name", nargs="?", help="the stage's name (run)")
    args = parser.parse_args(argv)
    if args.action == "run":
        if not args.name:
            parser.error("run needs a stage name: run NAME -- COMMAND ...")
        return run(args.name, command)
    if args.action == "reset":
        RECORD.unlink(missing_ok=True)
        return 0
    print(f"make test's stages on this machine (budgets: the 2-core machine, {RECORD.relative_to(ROOT)}):")
    print(summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
