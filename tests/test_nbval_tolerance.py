"""nbval's comparison made processor-proof: a last-digit difference passes, anything else fails."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import nbformat
import plotly.graph_objects as go
import plotly.io as pio

from course_utils import precision, rendering
from course_utils.authoring import nbval_tolerance


def figure_html(values):
    """A figure's HTML as nbval sees it: its div id's digest sanitized (tests/sanitize.cfg)."""
    spec = json.loads(pio.to_json(go.Figure(go.Scatter(y=values), layout=dict(title="T")), engine="json"))
    return rendering.figure_html(precision.rounded_figure(spec), "fig-1-DIGEST")


def test_same_html_compares_a_figure_by_its_data():
    a, b = figure_html([0.1234, 2.0]), figure_html([0.1235, 2.0])
    assert a != b and nbval_tolerance.same_html(a, b)
    far = figure_html([0.1244, 2.0])
    assert not nbval_tolerance.same_html(a, far)
    assert not nbval_tolerance.same_html(a, a.replace('aria-label="T"', 'aria-label="U"'))
    assert nbval_tolerance.same_html("<b>0.50</b>", "<b>0.51</b>")
    assert not nbval_tolerance.same_html("<b>0.50</b>", "<i>0.50</i>")


def test_same_value_by_kind():
    assert nbval_tolerance.same_value("stdout", ["accuracy ", "0.953\n"], "accuracy 0.954\n")
    assert not nbval_tolerance.same_value("stdout", "accuracy 0.953\n", "accuracy 0.955\n")
    assert nbval_tolerance.same_value("application/json", {"a": 0.1234}, {"a": 0.1235})
    assert not nbval_tolerance.same_value("image/png", b"x", b"y")


# Each cell prints the same line; its committed output is what another processor might have printed.
PRINTED = "loss 0.1235, steps 3\n"
COMMITTED = {
    "this processor": "loss 0.1235, steps 3\n",
    "across a rounding boundary": "loss 0.1236, steps 3\n",
    "two units apart": "loss 0.1237, steps 3\n",
    "another count": "loss 0.1235, steps 4\n",
    "other words": "gain 0.1235, steps 3\n",
}


def failed_cells(tmp_path, tolerant: bool) -> set[str]:
    """nbval, strict, with or without the plugin, on a notebook of one cell per COMMITTED output:
    the names of the cells that fail."""
    cells = [nbformat.v4.new_code_cell('print(f"loss {0.12355:.4f}, steps {3}")', execution_count=i + 1,
                                       outputs=[nbformat.v4.new_output("stream", name="stdout", text=text)])
             for i, text in enumerate(COMMITTED.values())]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "lesson.ipynb"
    nbformat.write(notebook, path)
    plugin = ["-p", "course_utils.authoring.nbval_tolerance"] if tolerant else []
    plugin += ["-p", "course_utils.authoring.kernel_retry"]  # beside other tests' kernels (-n auto)
    run = subprocess.run([sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-p", "no:cacheprovider",
                          "-p", "no:xdist", "-rf", *plugin, str(path)], capture_output=True, text=True, cwd=tmp_path)
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed)", run.stdout.splitlines()[-1])}
    assert sum(counts.values()) == len(COMMITTED), run.stdout[-3000:] + run.stderr[-2000:]  # every cell ran
    failed = {int(n) for n in re.findall(r"FAILED lesson.ipynb::Cell (\d+)", run.stdout)}
    return {name for i, name in enumerate(COMMITTED) if i in failed}


def test_strict_nbval_fails_across_a_rounding_boundary_and_the_plugin_does_not(tmp_path):
    assert failed_cells(tmp_path, tolerant=False) == set(COMMITTED) - {"this processor"}
    assert failed_cells(tmp_path, tolerant=True) == {"two units apart", "another count", "other words"}
