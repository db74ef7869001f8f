"""The timing of make test's stages (course_utils.authoring.stages)."""

from __future__ import annotations

import json
import sys

import pytest

from course_utils.authoring import stages


def test_run_records_each_stage_in_order_and_passes_the_status_through(tmp_path):
    record = tmp_path / "stage-seconds.json"
    assert stages.run("lint", [sys.executable, "-c", "pass"], record) == 0
    assert stages.run("unit", [sys.executable, "-c", "import time; time.sleep(0.2); raise SystemExit(3)"], record) == 3
    assert stages.run("lint", [sys.executable, "-c", "pass"], record) == 0  # run again: moves to the end
    seen = json.loads(record.read_text())
    assert list(seen) == ["unit", "lint"]
    assert seen["unit"] >= 0.2


def test_the_table_gives_each_stage_its_budget_flags_those_over_it_and_sums_them():
    text = stages.table({"unit": 100.0, "site": 900.0, "extra": 5.0}, {"unit": 240, "site": 480}, total_budget=1200)
    lines = text.splitlines()
    assert "| unit | 100 | 240 |  |" in lines
    assert "| site | 900 | 480 | OVER BUDGET |" in lines
    assert "| extra | 5 | – |  |" in lines
    assert lines[-1] == "| total | 1005 (16.8 min) | 1200 |  |"
    assert "OVER BUDGET" in stages.table({"site": 1300.0}, {}, total_budget=1200).splitlines()[-1]


def test_the_budgets_name_every_stage_of_make_test_and_fit_the_readme_s_20_minutes():
    from course_utils.authoring.lessons import ROOT

    recipe = (ROOT / "Makefile").read_text().split("\ntest:", 1)[1].split("\n\n", 1)[0]
    timed = [line.split("run ", 1)[1].split(" --", 1)[0] for line in recipe.splitlines() if "$(STAGE) run " in line]
    assert timed == list(stages.BUDGET_S), timed
    assert sum(stages.BUDGET_S.values()) <= stages.TOTAL_BUDGET_S == 20 * 60


def test_a_stage_without_a_command_says_what_was_expected(tmp_path):
    with pytest.raises(ValueError, match="expected a command to run after '--'"):
        stages.run("unit", [], tmp_path / "x.json")
    assert stages.summary(tmp_path / "none.json").startswith("no stage recorded")
