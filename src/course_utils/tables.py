"""Labelled text tables: follow each token through each model, number by number.

Lessons print intermediate results (hidden states, gates, attention weights) as small tables whose
rows are named by tokens and whose columns are named by dimensions. Text, not figures: they read
the same in a notebook, on the site, in Colab and in a terminal, and nbval compares them exactly.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Sequence

import numpy as np

from .validation import non_negative_int


def _cell(value, decimals: int) -> str:
    if isinstance(value, (bool, np.bool_)) or isinstance(value, str):
        return str(value)
    if isinstance(value, Integral):
        return str(int(value))
    if isinstance(value, Real):
        return f"{float(value):.{decimals}f}"
    return str(value)


def format_table(rows, row_labels: Sequence[str], column_labels: Sequence[str], *, decimals: int = 4) -> str:
    """A table as text: a header of ``column_labels``, then one line per row, led by its label.

    ``rows`` is a 2-D array ``(R, C)`` or a list of ``R`` rows of ``C`` values each (numbers or
    strings). Floats get ``decimals`` decimals, integers none; columns are right-aligned, labels
    left-aligned.
    """
    rows = [list(row) for row in (rows.tolist() if isinstance(rows, np.ndarray) else rows)]
    decimals = non_negative_int("decimals", decimals)
    if len(rows) != len(row_labels):
        raise ValueError(f"expected one label per row: {len(rows)} rows, {len(row_labels)} row labels")
    for index, row in enumerate(rows):
        if len(row) != len(column_labels):
            raise ValueError(
                f"expected every row to have {len(column_labels)} values (one per column label), "
                f"row {index} ({row_labels[index]!r}) has {len(row)}"
            )
    cells = [[_cell(value, decimals) for value in row] for row in rows]
    label_width = max([len(str(label)) for label in row_labels] + [0])
    widths = [max([len(str(name))] + [len(row[j]) for row in cells]) for j, name in enumerate(column_labels)]
    lines = [" " * label_width + "  " + "  ".join(f"{name:>{w}}" for name, w in zip(column_labels, widths))]
    for label, row in zip(row_labels, cells):
        lines.append(f"{str(label):<{label_width}}  " + "  ".join(f"{value:>{w}}" for value, w in zip(row, widths)))
    return "\n".join(line.rstrip() for line in lines)


def print_table(rows, row_labels: Sequence[str], column_labels: Sequence[str], *, decimals: int = 4) -> None:
    """Print :func:`format_table` of the same arguments."""
    print(format_table(rows, row_labels, column_labels, decimals=decimals))
