"""The GitHub Actions workflows: linted by actionlint, and doing what the course needs.

They cannot run here, so they are checked two ways: ``actionlint`` (pinned in requirements.lock,
with shellcheck for the ``run:`` scripts) must report nothing, and each workflow's key properties
(its triggers, its command, its permissions) are asserted from the parsed YAML.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
BIN = Path(sys.executable).parent


def tool(name: str) -> Path:
    path = BIN / name
    if not path.is_file():
        pytest.fail(
            f"{name} is not installed next to {sys.executable}: it is pinned in requirements.lock (make install)"
        )
    return path


def load(name: str) -> dict:
    """A workflow as a dict. PyYAML reads the key ``on`` as True (YAML 1.1); it is put back as "on"."""
    spec = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    if True in spec:
        spec["on"] = spec.pop(True)
    return spec


def steps(spec: dict) -> list[dict]:
    return [step for job in spec["jobs"].values() for step in job.get("steps", [])]


def run_scripts(spec: dict) -> str:
    return "\n".join(step.get("run", "") for step in steps(spec))


def uses(spec: dict) -> list[str]:
    return [step["uses"].split("@")[0] for step in steps(spec) if "uses" in step]


def actionlint(*paths: Path) -> subprocess.CompletedProcess:
    command = [str(tool("actionlint")), "-no-color", "-oneline", f"-shellcheck={tool('shellcheck')}", "-pyflakes="]
    return subprocess.run(command + [str(p) for p in paths], capture_output=True, text=True, cwd=ROOT)


def test_the_three_workflows_exist():
    assert sorted(p.name for p in WORKFLOWS.glob("*.yml")) == ["ci.yml", "colab.yml", "deploy.yml"]


def test_actionlint_finds_nothing_in_the_workflows():
    result = actionlint(*sorted(WORKFLOWS.glob("*.yml")))
    assert result.returncode == 0, f"actionlint reported:\n{result.stdout}{result.stderr}"
    assert result.stdout == ""


def test_actionlint_does_fail_on_a_broken_workflow(tmp_path):
    """The lint can fail: an unknown expression, a shell mistake and an old action are reported."""
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\n"
        "jobs:\n"
        "  a:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - uses: actions/checkout@v1\n"
        "      - run: echo ${{ matrix.missing }}\n"
        "      - run: cat $(ls *.txt)\n"
    )
    result = actionlint(broken)
    assert result.returncode == 1
    for finding in ['property "missing" is not defined', "shellcheck reported issue", "actions/checkout@v1"]:
        assert finding in result.stdout, f"actionlint missed {finding!r}:\n{result.stdout}"


def test_ci_runs_make_test_on_pushes_and_pull_requests():
    spec = load("ci.yml")
    assert {"push", "pull_request"} <= set(spec["on"])
    assert spec["on"]["push"] is None, "CI must run on pushes to every branch"
    job = spec["jobs"]["test"]
    assert job["runs-on"] == "ubuntu-latest"
    python = [s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python@")]
    assert python and python[0]["with"]["python-version"] == "3.11"
    assert any(line.strip().startswith("make test") for line in run_scripts(spec).splitlines())
    assert spec["permissions"] == {"contents": "read"}


def test_ci_runs_make_compat_for_every_stack_under_its_python():
    from course_utils.authoring.compat import STACKS

    job = load("ci.yml")["jobs"]["compat"]
    assert job["strategy"]["fail-fast"] is False
    matrix = {(entry["stack"], entry["python"]) for entry in job["strategy"]["matrix"]["include"]}
    assert matrix == {(stack.name, stack.python) for stack in STACKS}
    script = run_scripts({"jobs": {"compat": job}})
    assert "make compat STACKS=${{ matrix.stack }}" in script


def branch_gate(config_text: str, ref_name: str, tmp_path: Path) -> str:
    """Run the deploy workflow's first job's script on a checkout with ``config_text`` as its
    _config.yml, as a push to ``ref_name``; returns its ``publish`` output."""
    [script] = [step["run"] for step in load("deploy.yml")["jobs"]["branch"]["steps"] if "run" in step]
    (tmp_path / "_config.yml").write_text(config_text)
    output = tmp_path / "github_output"
    output.write_text("")
    env = {"PATH": "/usr/bin:/bin", "GITHUB_REF_NAME": ref_name, "GITHUB_OUTPUT": str(output)}
    subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, check=True, capture_output=True, text=True)
    [line] = output.read_text().splitlines()
    return line.removeprefix("publish=")


def test_deploy_publishes_from_the_branch_that_config_names(tmp_path):
    """A fork publishing from its own branch (the instructor guide's example) set in _config.yml deploys from
    it; the workflow used to deploy on a push to main only."""
    spec = load("deploy.yml")
    assert "branches" not in (spec["on"]["push"] or {}), "the branch is _config.yml's, not the workflow's"
    assert spec["jobs"]["build"]["needs"] == "branch"
    assert spec["jobs"]["build"]["if"] == "needs.branch.outputs.publish == 'true'"
    ours = (ROOT / "_config.yml").read_text()
    assert branch_gate(ours, "main", tmp_path) == "true"
    assert branch_gate(ours, "feature", tmp_path) == "false"
    fork = ours.replace("  branch: main\n", "  branch: course-2026  # the fork's\n")
    assert fork != ours
    assert branch_gate(fork, "course-2026", tmp_path) == "true"
    assert branch_gate(fork, "main", tmp_path) == "false"
    with pytest.raises(subprocess.CalledProcessError):
        branch_gate("title: no repository\n", "main", tmp_path)


def test_deploy_publishes_the_built_book_to_pages():
    spec = load("deploy.yml")
    assert spec["permissions"] == {}, "nothing at workflow level: each job says what it needs"
    assert spec["jobs"]["build"]["permissions"] == {"contents": "read", "pages": "read"}
    assert spec["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert spec["concurrency"]["group"] == "pages" and spec["concurrency"]["cancel-in-progress"] is False
    build, deploy = spec["jobs"]["build"], spec["jobs"]["deploy"]
    assert "make book" in run_scripts({"jobs": {"build": build}})
    [upload] = [s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact@")]
    assert upload["with"]["path"] == "_build/html"
    assert deploy["needs"] == "build"
    assert deploy["environment"]["name"] == "github-pages"
    assert uses({"jobs": {"deploy": deploy}}) == ["actions/deploy-pages"]


def test_colab_job_runs_every_lesson_in_the_colab_image_weekly_and_reports_failure():
    spec = load("colab.yml")
    assert set(spec["on"]) == {"schedule", "workflow_dispatch"}
    [schedule] = spec["on"]["schedule"]
    minute, hour, day, month, weekday = schedule["cron"].split()
    assert day == month == "*" and weekday.isdigit(), f"expected a weekly cron, got {schedule['cron']!r}"
    assert spec["env"]["COLAB_IMAGE"].startswith("us-docker.pkg.dev/colab-images/public/runtime")
    lessons_job, report = spec["jobs"]["lessons"], spec["jobs"]["report"]
    script = run_scripts({"jobs": {"lessons": lessons_job}})
    assert '"$COLAB_IMAGE"' in script
    assert "pip install --quiet ." in script, "the package must be installed from the checkout"
    assert "--nbval-lax" in script and "lessons/" in script
    assert report["needs"] == "lessons" and report["if"] == "failure()"
    assert report["permissions"] == {"issues": "write"}
    assert "gh issue create" in run_scripts({"jobs": {"report": report}})
    assert spec["permissions"] == {"contents": "read"}, "only the report job may write issues"


def test_workflows_do_not_name_the_repository():
    """The repository URL is written in _config.yml only (see tests/test_lessons.py)."""
    from course_utils.authoring.lessons import repository

    for path in WORKFLOWS.glob("*.yml"):
        assert repository().github_path not in path.read_text(encoding="utf-8"), path.name


@pytest.mark.parametrize("name", ["ci.yml", "colab.yml", "deploy.yml"])
def test_no_workflow_grants_write_access_at_workflow_level(name):
    """A job that installs packages and runs code holds only read access; a write is granted to the
    one job that needs it, in that job's own ``permissions``."""
    granted = load(name).get("permissions", {})
    assert all(level in ("read", "none") for level in granted.values()), granted
