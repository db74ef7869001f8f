"""What the tests of explorers share: does a kernel-free twin replay its drawing function exactly?

"Exactly" is checked on the figure's JSON: after applying a slider step's update to the twin (the
changed trace attributes and the title), its traces, in order, are the traces that the drawing
function returns for that step's value, and its title is that figure's title.
"""

from __future__ import annotations

import json

import plotly.graph_objects as go
from plotly.utils import PlotlyJSONEncoder

from course_utils.widgets import Explorer


def plain(fig_or_trace) -> dict:
    return json.loads(json.dumps(fig_or_trace.to_plotly_json(), cls=PlotlyJSONEncoder))


def _set(tree: dict, path: str, value) -> None:
    """What plotly.js's restyle does with one attribute path: set it, or delete it for None."""
    *parents, leaf = path.split(".")
    for key in parents:
        tree = tree.setdefault(key, {})
    if value is None:
        tree.pop(leaf, None)
    else:
        tree[leaf] = value


def prune(tree):
    """Drop the containers left empty by deletions (plotly.js ignores them too)."""
    if isinstance(tree, dict):
        return {k: prune(v) for k, v in tree.items() if not (isinstance(v, dict) and not prune(v))}
    return tree


def step_view(twin: go.Figure, step: dict) -> tuple[list[dict], str]:
    """The twin after plotly.js applies ``step`` (method "update"): its traces and title."""
    assert step["method"] == "update"
    data_update, layout_update, indices = step["args"]
    traces = [plain(trace) for trace in twin.data]
    for path, values in data_update.items():
        assert len(values) == len(indices), path
        for index, value in zip(indices, values):
            _set(traces[index], path, value)
    return [prune(t) for t in traces], layout_update["title.text"]


def drawn(fig: go.Figure) -> tuple[list[dict], str]:
    return [prune(plain(trace)) for trace in fig.data], fig.layout.title.text


def assert_twin_replays_draw(explorer: Explorer, steps) -> None:
    control = explorer.control(explorer.twin)
    twin = explorer.static()
    assert [step["label"] for step in steps] == control.labels()
    assert len(steps) == len(control.values)
    for value, step in zip(control.values, steps):
        assert step_view(twin, step) == drawn(explorer.figure(**{control.name: value})), f"step {value!r}"
