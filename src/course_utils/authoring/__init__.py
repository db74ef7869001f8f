"""Tools for instructors and authors (not used by the lessons themselves).

- :mod:`.lessons`: the repository settings of ``_config.yml``, the Colab badge and set-up cell
  derived from them, executing lessons into their committed ``.ipynb`` twins;
- :mod:`.lockfile`: the pinned stack (``requirements.lock``) and its conda mirror (``environment.yml``);
- :mod:`.bench`: lesson execution times and book build times;
- :mod:`.assets`: ``make assets``, the bundled tokenizer and models retrained stage by stage;
- :mod:`.pilot`: ``make pilot``, issue 58's teacher pilot, on the validation split only.

Every tool acts on the checkout it is run in: the book of the current directory, the nearest
folder at or above it holding ``_config.yml`` and ``lessons/`` (:data:`ROOT`). An environment may
import ``course_utils`` from another checkout (an editable install made elsewhere, a shared
``.venv``); the tools then refuse to run (:func:`require_checkout`), naming both places, rather
than run one checkout's code on the other's lessons or write into a checkout you are not in.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The checkout this package was imported from (an editable install), when it is one.
PACKAGE_CHECKOUT = Path(__file__).resolve().parents[3]


class CheckoutError(RuntimeError):
    """The tools cannot tell, or must not touch, the checkout they would act on."""


def is_book(folder: Path) -> bool:
    """Whether ``folder`` is a course checkout: it holds ``_config.yml`` and ``lessons/``."""
    return (Path(folder) / "_config.yml").is_file() and (Path(folder) / "lessons").is_dir()


def find_book(start: Path | None = None) -> Path | None:
    """The nearest course checkout at or above ``start`` (the current directory), else None."""
    start = Path.cwd() if start is None else Path(start)
    if not start.exists():
        raise FileNotFoundError(f"expected an existing folder to look for the course checkout from, got {start}")
    for folder in [start.resolve(), *start.resolve().parents]:
        if is_book(folder):
            return folder
    return None


def checkout(start: Path | None = None, package_checkout: Path = PACKAGE_CHECKOUT) -> Path:
    """The checkout the tools act on: the book of ``start`` (the current directory).

    Raises :class:`CheckoutError` when there is none, or when ``course_utils`` is imported from
    another checkout (``package_checkout``, when it is a book): the message names both.
    """
    here = find_book(start)
    package = Path(package_checkout).resolve() if is_book(package_checkout) else None
    where = Path.cwd() if start is None else Path(start)
    if here is None:
        raise CheckoutError(
            f"{where} is not inside a course checkout (no folder at or above it holds _config.yml and lessons/): "
            "run the tool from the checkout" + (f" (course_utils is imported from {package})" if package else "")
        )
    if package is not None and package != here:
        raise CheckoutError(
            f"you are in the checkout {here}, but this environment's course_utils comes from the checkout "
            f"{package}: the tool would run the code of one on the lessons of the other. Install this checkout "
            f"into the environment (`{sys.executable} -m pip install --no-deps -e {here}`), use an environment "
            f"of its own (`make install` in {here}), or run the tool from {package}."
        )
    return here


def require_checkout() -> Path:
    """:func:`checkout` for the command-line tools: exits with its message instead of a traceback."""
    try:
        return checkout()
    except CheckoutError as error:
        sys.exit(f"error: {error}")


def _root() -> Path:
    try:
        return find_book() or PACKAGE_CHECKOUT
    except FileNotFoundError:  # the current directory was deleted
        return PACKAGE_CHECKOUT


# Where the tools act: the current directory's book (or, outside any, this package's checkout, which
# the command-line tools then refuse). Read once, when the tools are imported.
ROOT = _root()
