"""The lessons under other processors' kernels: the settings, and that they do reach torch."""

from __future__ import annotations

import pytest

from course_utils.authoring import kernels


def test_environment_sets_one_setting_and_clears_the_others(monkeypatch):
    monkeypatch.setenv("MKL_CBWR", "AUTO")  # left over from the caller: must not leak into another setting
    monkeypatch.setenv("HOME_OF_SOMETHING", "kept")
    env = kernels.environment("ATen portable")
    assert env["ATEN_CPU_CAPABILITY"] == "default" and "MKL_CBWR" not in env
    assert env["HOME_OF_SOMETHING"] == "kept" and env["HF_HUB_OFFLINE"] == "1" and env["PYTHONHASHSEED"] == "0"
    assert not {"ATEN_CPU_CAPABILITY", "MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS", "ONEDNN_MAX_CPU_ISA"} & set(
        kernels.environment("native"))
    with pytest.raises(ValueError, match="expected a setting among"):
        kernels.environment("avx512-please")


def test_nbval_settings_are_settings():
    assert set(kernels.NBVAL_SETTINGS) <= set(kernels.SETTINGS)


def test_largest_difference():
    assert kernels.largest_difference([1.0, 2.0], [1.0, 2.5]) == 0.5
    assert kernels.largest_difference([], []) == 0.0
    with pytest.raises(ValueError, match="one length"):
        kernels.largest_difference([1.0], [1.0, 2.0])


def test_the_portable_setting_reaches_torch():
    """torch reads ATEN_CPU_CAPABILITY in the fresh process: it reports its portable kernels."""
    assert kernels.probe("ATen portable")["capability"] == "DEFAULT"


def test_nbval_runs_strict_with_the_tolerance_on_the_lessons_named(monkeypatch):
    from course_utils.authoring.lessons import ROOT

    monkeypatch.chdir(ROOT / "lessons")
    command = kernels.nbval_command(["06_encoder.md", ROOT / "lessons" / "05_masking.ipynb"])
    assert command[-2:] == ["lessons/06_encoder.ipynb", "lessons/05_masking.ipynb"]  # the last first
    assert "--nbval" in command and "course_utils.authoring.nbval_tolerance" in command
    assert "course_utils.authoring.kernel_retry" in command
    assert len([c for c in kernels.nbval_command() if c.endswith(".ipynb")]) >= 9  # every lesson
    with pytest.raises(FileNotFoundError, match="expected a lesson notebook"):
        kernels.nbval_command(["10_missing.md"])
