"""course_utils.bundle: the bundled files are written without deleting anything, and checked by sha256."""

from __future__ import annotations

import shutil

import pytest
import torch

from course_utils import bundle, models, tokenization


def test_the_manifest_records_every_bundled_file_as_it_is():
    files = {p.relative_to(bundle.ASSETS).as_posix() for p in bundle.ASSETS.rglob("*") if p.is_file()}
    manifest = bundle._manifest()
    assert set(manifest) == files - {"manifest.json"}
    for key, digest in manifest.items():
        assert bundle.sha256(bundle.ASSETS / key) == digest, f"{key}: run bundle.record_all() after `make assets`"


@pytest.fixture
def copied_bundle(tmp_path, monkeypatch):
    """A copy of the bundle that the loaders read, so a test can damage it."""
    assets = tmp_path / "assets"
    shutil.copytree(bundle.ASSETS, assets)
    monkeypatch.setattr(bundle, "ASSETS", assets)
    monkeypatch.setattr(bundle, "MANIFEST", assets / "manifest.json")
    monkeypatch.setattr(tokenization, "TOKENIZER_DIR", assets / "tokenizer")
    monkeypatch.setattr(models, "REPORT", assets / "report.json")
    for name in models.BUNDLED:
        monkeypatch.setitem(models.BUNDLED, name, assets / name)
    return assets


def test_the_copied_bundle_loads(copied_bundle):
    assert models.load_bundled("student") is not None and tokenization.load_bundled_tokenizer() is not None


def test_the_digest_follows_every_file_of_the_bundle(copied_bundle):
    before = bundle.digest()
    report = copied_bundle / "report.json"
    report.write_text(report.read_text().replace("{", "{ ", 1))
    bundle.record([report])
    assert bundle.digest() != before
    (copied_bundle / "manifest.json").unlink()
    with pytest.raises(bundle.BundleError, match="no manifest"):
        bundle.digest()


def _flip(path, offset, length=4096):
    data = bytearray(path.read_bytes())
    data[offset : offset + length] = bytes(b ^ 0xFF for b in data[offset : offset + length])
    path.write_bytes(bytes(data))


def _nan_bytes(path):
    data = bytearray(path.read_bytes())
    data[-400:] = torch.full((100,), float("nan")).numpy().tobytes()
    path.write_bytes(bytes(data))


def _truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


DAMAGES = {
    "4 KiB of flipped bytes": lambda path: _flip(path, path.stat().st_size // 2),
    "nan bytes": _nan_bytes,
    "truncated": _truncate,
    "missing": lambda path: path.unlink(),
}


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("file", ["teacher/model.safetensors", "student/config.json"])
def test_a_damaged_model_file_raises_one_error_naming_it_and_the_fix(copied_bundle, damage, file):
    DAMAGES[damage](copied_bundle / file)
    with pytest.raises(bundle.BundleError, match="git checkout -- src/course_utils/assets") as error:
        models.load_bundled(file.split("/")[0])
    assert str(copied_bundle / file) in str(error.value)


@pytest.mark.parametrize("damage", ["missing", "truncated", "4 KiB of flipped bytes"])
@pytest.mark.parametrize("file", tokenization.SAVED_FILES)
def test_a_damaged_tokenizer_file_raises_one_error_naming_it_and_the_fix(copied_bundle, damage, file):
    if damage == "4 KiB of flipped bytes":
        _flip(copied_bundle / "tokenizer" / file, 0, 64)
    else:
        DAMAGES[damage](copied_bundle / "tokenizer" / file)
    with pytest.raises(bundle.BundleError, match=f"{file}.*tokenization --rebuild"):
        tokenization.load_bundled_tokenizer()


def test_a_damaged_report_raises(copied_bundle):
    _truncate(copied_bundle / "report.json")
    with pytest.raises(bundle.BundleError, match="report.json is damaged or truncated"):
        models.report()


def test_save_files_copies_only_its_files_and_records_them(copied_bundle, tmp_path):
    def save(folder):
        for name in ("config.json", "model.safetensors", "generation_config.json"):
            (tmp_path / "x").write_text(name)
            shutil.copyfile(tmp_path / "x", f"{folder}/{name}")

    target = copied_bundle / "teacher"
    bundle.save_files(save, target, models.MODEL_FILES, what="a model")
    assert sorted(p.name for p in target.iterdir()) == list(models.MODEL_FILES)
    bundle.verify(target, models.MODEL_FILES)  # the new files' sha256 were recorded


@pytest.mark.parametrize("write", [
    lambda folder: tokenization.rebuild(folder),
    lambda folder: models.save(models.load_bundled("student"), folder),
], ids=["tokenizer rebuild", "model save"])
def test_a_folder_holding_other_files_is_refused_and_nothing_is_deleted(tmp_path, write):
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "sub").mkdir()
    with pytest.raises(FileExistsError, match=r"refusing to write .* \(notes.txt, sub\).*deletes nothing"):
        write(tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine" and (tmp_path / "sub").is_dir()


def test_the_command_line_refuses_the_repository_root(tmp_path, capsys):
    (tmp_path / "Makefile").write_text("keep me")
    with pytest.raises(FileExistsError, match="Makefile"):
        tokenization.main(["--rebuild", "--output", str(tmp_path)])
    assert (tmp_path / "Makefile").read_text() == "keep me"


def test_a_file_given_as_the_folder_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(NotADirectoryError, match="expected a folder"):
        bundle.check_writable(tmp_path / "f", ["a"], what="x")


def test_files_recorded_at_the_same_moment_are_all_kept_and_readers_never_see_half_a_manifest(copied_bundle):
    """make assets' two workers may record their models at the same moment, while others verify."""
    import json
    import threading

    files = []
    for i in range(8):
        (copied_bundle / f"extra{i}").mkdir()
        files.append(copied_bundle / f"extra{i}" / "model.safetensors")
        files[-1].write_text(f"weights {i}")
    errors, start = [], threading.Barrier(len(files) + 1)

    def write(path):
        start.wait()
        for _ in range(30):
            bundle.record([path])

    def read():
        start.wait()
        for _ in range(300):
            try:
                json.loads(bundle.MANIFEST.read_text())
            except ValueError as error:  # a manifest read half-written
                errors.append(error)

    threads = [threading.Thread(target=write, args=(path,)) for path in files] + [threading.Thread(target=read)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    manifest = bundle._manifest()
    assert all(manifest[f"extra{i}/model.safetensors"] == bundle.sha256(path) for i, path in enumerate(files))
    assert errors == [] and not list(copied_bundle.glob(".manifest.json*"))
