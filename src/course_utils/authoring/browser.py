"""``make browser``: a headless Chromium for the site test, on any machine.

In order: a Chromium already installed (``COURSE_BROWSER``, ``chromium``, ``chromium-browser``,
``google-chrome``); else Debian's or Ubuntu's package through ``apt-get`` (with ``sudo`` when not
root); else, where there is no apt (macOS, other Linux), Playwright's own Chromium
(``python -m playwright install chromium``), which the site test then launches. Each choice
prints one line saying what it does; when none works, the error says what to install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome")


def system_chromium(preferred: str | None = None) -> str | None:
    """The path of an installed Chromium (``preferred`` first), or None."""
    for name in filter(None, (preferred, *NAMES)):
        path = shutil.which(name)
        if path:
            return path
    return None


def playwright_chromium() -> str | None:
    """The path of Playwright's own Chromium when it is installed, else None."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    try:
        with sync_playwright() as playwright:
            path = playwright.chromium.executable_path
    except Exception:  # noqa: BLE001 - playwright raises its own errors when its browsers are absent
        return None
    return path if path and Path(path).is_file() else None


def _apt_install(package: str) -> bool:
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    if sudo and not shutil.which("sudo"):
        return False
    print(f"installing {package} with apt-get", flush=True)
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", package]):
        if subprocess.run(sudo + command, env=environment, stdout=subprocess.DEVNULL).returncode != 0:
            return False
    return True


def ensure(preferred: str = "chromium") -> str:
    """A usable headless Chromium: the system's, apt's, or Playwright's; raises with what to install."""
    found = system_chromium(preferred)
    if found:
        return found
    if shutil.which("apt-get") and _apt_install(preferred):
        found = system_chromium(preferred)
        if found:
            return found
    found = playwright_chromium()
    if found:
        return found
    if not shutil.which("apt-get"):
        print("no system Chromium and no apt-get: installing Playwright's own Chromium "
              "(python -m playwright install chromium)", flush=True)
        subprocess.run([sys.executable, "-m", "playwright", "install", "chromium"], check=False)
        found = playwright_chromium()
        if found:
            return found
    raise RuntimeError(
        "no headless Chromium for the site test: install Chromium (Debian/Ubuntu: apt-get install chromium; "
        "macOS: brew install --cask chromium), or Playwright's own with "
        ".venv/bin/python -m playwright install chromium"
    )


def main() -> int:
    try:
        ensure(os.environ.get("COURSE_BROWSER") or "chromium")
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
