"""The lessons on other processors' kernels: what moves, and whether the committed outputs hold.

torch picks its CPU kernels by instruction set (``torch.backends.cpu.get_cpu_capability()``:
AVX512, AVX2 or the portable DEFAULT), and so do its BLAS (MKL here) and oneDNN. A machine of
another kind (an AMD EPYC without AVX-512, an older Intel, Apple silicon) computes the same
float32 results with other kernels, and they differ in their last bits. This module puts the
lessons through the kernels this machine can imitate:

- ``measure``: for each setting of the environment variables that choose kernels, how far the
  bundled teacher's logits, a BLAS product and GELU move from this machine's own kernels
  (each run in a fresh process, as the variables are read once);
- ``nbval``: nbval, strict as ``make test`` runs it, on every lesson under the ``portable``
  setting and, on a machine with AVX-512, under the ``avx2`` one (an AVX2 machine, as far as
  this one can imitate it).

``python -m course_utils.authoring.kernels`` does both (``make portability``; ``.ci/run`` runs it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .lessons import ROOT, page_sources

# Each setting: the variables that choose kernels, as another processor would have them chosen.
SETTINGS: dict[str, dict[str, str]] = {
    "native": {},
    "ATen portable": {"ATEN_CPU_CAPABILITY": "default"},
    "ATen AVX2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "MKL AVX2": {"MKL_ENABLE_INSTRUCTIONS": "AVX2"},
    "MKL compatible": {"MKL_CBWR": "COMPATIBLE"},
    "oneDNN AVX2": {"ONEDNN_MAX_CPU_ISA": "AVX2"},
    # the two that nbval runs: every library on its most portable path, and every library one
    # instruction set down (AVX2), the closest this machine comes to an AMD EPYC or an older Intel
    "portable": {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "SSE41"},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
}
NBVAL_SETTINGS = ("portable", "avx2")

# What each run computes (in a fresh process): the capability torch reports and three results.
PROBE = r"""
import json, torch
from transformers import DistilBertForMaskedLM
from course_utils import data, models, tokenization
torch.manual_seed(0)
tokenizer = tokenization.load_bundled_tokenizer()
teacher = models.load_bundled("teacher", model_class=DistilBertForMaskedLM).eval()
batch = tokenizer([s.text for s in data.corpus("test")[:8]], padding=True, return_tensors="pt")
with torch.no_grad():
    logits = teacher(**batch).logits
a, b = torch.randn(256, 384), torch.randn(384, 256)
grid = torch.linspace(-6, 6, 12001, dtype=torch.float64)
print(json.dumps({"capability": torch.backends.cpu.get_cpu_capability(),
                  "teacher_logits": logits.flatten().tolist(), "blas_product": (a @ b).flatten().tolist(),
                  "gelu_float64": torch.nn.functional.gelu(grid).tolist()}))
"""


def environment(setting: str) -> dict[str, str]:
    """This process's environment with ``setting``'s kernel variables, the others of
    :data:`SETTINGS` removed, and the lessons' offline variables (as the Makefile exports them)."""
    if setting not in SETTINGS:
        raise ValueError(f"expected a setting among {sorted(SETTINGS)}, got {setting!r}")
    chosen = {name for values in SETTINGS.values() for name in values}
    env = {k: v for k, v in os.environ.items() if k not in chosen}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONHASHSEED="0", OMP_WAIT_POLICY="PASSIVE",
               PYDEVD_DISABLE_FILE_VALIDATION="1")
    env.update(SETTINGS[setting])
    return env


def probe(setting: str) -> dict:
    """The capability torch reports and the three results, computed under ``setting``."""
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=environment(setting),
                         cwd=ROOT, check=False)
    if run.returncode:
        raise RuntimeError(f"the probe failed under {setting!r}:\n{run.stderr[-2000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def largest_difference(a: list[float], b: list[float]) -> float:
    """The largest absolute difference between two equally long lists of numbers."""
    if len(a) != len(b):
        raise ValueError(f"expected results of one length, got {len(a)} and {len(b)}")
    return max((abs(x - y) for x, y in zip(a, b)), default=0.0)


def measure(settings=tuple(SETTINGS)) -> list[dict]:
    """For each setting, the capability torch reports and each result's largest difference from
    the native kernels' (0.0: the same bits)."""
    native = probe("native")
    rows = []
    for setting in settings:
        result = native if setting == "native" else probe(setting)
        rows.append({"setting": setting, "capability": result["capability"],
                     **{key: largest_difference(native[key], result[key])
                        for key in ("teacher_logits", "blas_product", "gelu_float64")}})
    return rows


def print_measures(rows: list[dict]) -> None:
    """The table of :func:`measure`."""
    print(f"{'setting':<15} {'torch reports':<14} {'teacher logits':>15} {'BLAS product':>13} {'GELU float64':>13}")
    for row in rows:
        print(f"{row['setting']:<15} {row['capability']:<14} {row['teacher_logits']:>15.2g} "
              f"{row['blas_product']:>13.2g} {row['gelu_float64']:>13.2g}")


def nbval_command(lessons: list[Path] | None = None) -> list[str]:
    """The pytest command of :func:`nbval`: strict, as ``make test`` runs it, on ``lessons``
    (``.md`` or ``.ipynb`` paths, relative to the current directory or absolute; default: every
    lesson), two at a time, the last first, through the watchdog that stops and reruns a hung run
    (:mod:`course_utils.authoring.watchdog`), a kernel that dies at start started again
    (:mod:`course_utils.authoring.kernel_retry`)."""
    sources = page_sources() if not lessons else [Path(p).resolve() for p in lessons]
    for path in sources:
        if not path.with_suffix(".ipynb").is_file():
            raise FileNotFoundError(f"expected a lesson notebook, got {path.with_suffix('.ipynb')}")
    notebooks = [str(p.with_suffix(".ipynb").relative_to(ROOT)) for p in sorted(sources, reverse=True)]
    watched = [sys.executable, "-m", "course_utils.authoring.watchdog", "--"]
    return [*watched, sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "--nbval-sanitize-with",
            "tests/sanitize.cfg", "--nbval-cell-timeout=600", "-p", "course_utils.authoring.nbval_tolerance",
            "-p", "course_utils.authoring.kernel_retry", "-p", "no:cacheprovider", "-q", "-n", "2", "--dist", "loadfile", *notebooks]


def nbval(setting: str, lessons: list[Path] | None = None) -> int:
    """nbval, strict as ``make test`` runs it, on ``lessons`` (default: every lesson) under
    ``setting``; pytest's exit status."""
    command = nbval_command(lessons)
    print(f"\nnbval under {setting!r}: {' '.join(f'{k}={v}' for k, v in SETTINGS[setting].items())}", flush=True)
    start = time.perf_counter()
    status = subprocess.run(command, env=environment(setting), cwd=ROOT, check=False).returncode
    print(f"nbval under {setting!r}: exit {status} in {time.perf_counter() - start:.0f} s", flush=True)
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-nbval", action="store_true", help="only measure what each setting changes")
    parser.add_argument("lessons", nargs="*", type=Path, help="lessons to check (default: every lesson)")
    args = parser.parse_args(argv)
    import torch

    native = torch.backends.cpu.get_cpu_capability()
    print(f"this machine: torch {torch.__version__} reports CPU capability {native}")
    print_measures(measure())
    if args.no_nbval:
        return 0
    settings = [s for s in NBVAL_SETTINGS if not (s == "avx2" and native != "AVX512")]
    if "avx2" not in settings:
        print(f"(no 'avx2' run: torch's own kernels here are {native}, not AVX512)")
    failed = [s for s in settings if nbval(s, args.lessons or None)]
    print("the committed outputs hold under " + ", ".join(settings) if not failed else f"nbval failed under {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
