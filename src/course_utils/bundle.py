"""The bundled assets on disk: written without touching other files, checked by sha256 at load.

Every file of ``course_utils/assets`` (the tokenizer, the four models, ``report.json``) has its
sha256 recorded in ``assets/manifest.json``, written by the code that writes the file
(``make assets``, ``python -m course_utils.tokenization --rebuild``). Loaders call :func:`verify`
first, so a missing, truncated or damaged file raises one :class:`BundleError` that names the
file and the fix, instead of loading silently wrong weights or failing deep inside a library.

:func:`save_files` is the only way the course writes a folder of files: the library saves into a
temporary folder, and only the expected files are copied into the target. Nothing else in the
target is ever deleted; a target that holds other files is refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Sequence

ASSETS = Path(__file__).parent / "assets"
MANIFEST = ASSETS / "manifest.json"
RESTORE = (
    "restore the committed files with `git checkout -- src/course_utils/assets` in a clone of the "
    "course (or reinstall the course package), or retrain them with `make assets` (about an hour)"
)


class BundleError(FileNotFoundError):
    """A file of the bundle is missing, truncated or damaged (a ``FileNotFoundError``, as before)."""


def sha256(path: Path) -> str:
    """The hex sha256 of the file at ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _key(path: Path) -> str | None:
    """``path`` relative to the bundle (``"teacher/config.json"``), or None outside it."""
    try:
        return Path(path).resolve().relative_to(ASSETS.resolve()).as_posix()
    except ValueError:
        return None


def _manifest() -> dict[str, str]:
    return json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {}


def digest() -> str:
    """One sha256 for the whole bundle (of its manifest, which holds every file's): it changes
    whenever ``make assets`` or a tokenizer rebuild changes any bundled file."""
    if not MANIFEST.is_file():
        raise BundleError(f"the bundle has no manifest at {MANIFEST}: {RESTORE}")
    return hashlib.sha256(MANIFEST.read_bytes()).hexdigest()


def record(paths: Sequence[Path]) -> None:
    """Write the sha256 of each bundled file of ``paths`` into the manifest (files outside the bundle are skipped)."""
    entries = {key: sha256(path) for path in paths if (key := _key(path)) is not None}
    if entries:
        with _manifest_lock():  # make assets' two workers may record files at the same moment
            manifest = {**_manifest(), **entries}
            text = json.dumps(dict(sorted(manifest.items())), indent=1) + "\n"
            partial = MANIFEST.with_name(f".{MANIFEST.name}.{os.getpid()}")
            partial.write_text(text)
            os.replace(partial, MANIFEST)  # whole or not at all, for a loader reading it meanwhile


@contextlib.contextmanager
def _manifest_lock():
    """Within: no other process records into the manifest (a lock file in the temporary folder;
    no lock where ``fcntl`` is missing, on Windows, where the course's models are not rebuilt)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    name = hashlib.sha256(str(MANIFEST.resolve()).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"course_utils-manifest-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def record_all() -> dict[str, str]:
    """Rewrite the manifest from the files of the bundle as they are now (no retraining); the manifest."""
    MANIFEST.unlink(missing_ok=True)
    record(sorted(p for p in ASSETS.rglob("*") if p.is_file() and p != MANIFEST))
    return _manifest()


def verify(folder: Path, names: Sequence[str], *, fix: str = RESTORE) -> None:
    """Raise :class:`BundleError` unless every file ``names`` of ``folder`` is present and, for a
    folder of the bundle, has the sha256 the manifest recorded. ``fix`` says what to do."""
    manifest = None
    for name in names:
        path = Path(folder) / name
        if not path.is_file():
            raise BundleError(f"the course file {path} is missing: {fix}")
        key = _key(path)
        if key is None:
            continue  # a folder outside the bundle (a test's, a learner's): nothing recorded
        manifest = _manifest() if manifest is None else manifest
        if key not in manifest:
            raise BundleError(f"the course file {path} has no sha256 in {MANIFEST}: {fix}")
        if sha256(path) != manifest[key]:
            raise BundleError(
                f"the course file {path} is damaged or truncated (its sha256 is not the one recorded "
                f"in {MANIFEST.name}): {fix}"
            )


def check_writable(folder: Path, names: Sequence[str], *, what: str) -> Path:
    """``folder`` if the course may write ``names`` into it: new, empty, or holding only ``names``
    (a previous build, to be overwritten). Else ``FileExistsError``: the course deletes nothing."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"expected a folder to write {what} into, got the file {folder}")
    others = sorted(p.name for p in folder.iterdir() if p.name not in names) if folder.exists() else []
    if others:
        shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        raise FileExistsError(
            f"refusing to write {what} into {folder}: it holds other files ({shown}). "
            f"Choose a new or empty folder; the course writes only {', '.join(names)} and deletes nothing."
        )
    return folder


def save_files(save: Callable[[str], object], folder: Path, names: Sequence[str], *, what: str) -> Path:
    """``save(tmp)`` into a temporary folder, then copy ``names`` from it into ``folder``; ``folder``.

    ``folder`` is checked first (:func:`check_writable`); the library's other files (a
    ``generation_config.json``, a ``vocab.txt``) stay in the temporary folder, so nothing is ever
    deleted from ``folder``. Files written into the bundle get their sha256 recorded (:func:`record`).
    """
    folder = check_writable(folder, names, what=what)
    with tempfile.TemporaryDirectory() as tmp:
        save(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for name in names:
            shutil.copyfile(Path(tmp) / name, folder / name)
    record([folder / name for name in names])
    return folder
