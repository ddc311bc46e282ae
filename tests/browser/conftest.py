"""Fixtures for the end-to-end JupyterLab tests: one server, one Chromium, a fresh page per test.

The tests are marked ``browser``. They skip (with the reason in the ``-ra`` summary) only when
Debian's Chromium is not at /usr/bin/chromium; run ``.ci/install-browser`` to install it.
"""
from __future__ import annotations

import os
import sys
import urllib.parse
from pathlib import Path

import pytest

from . import lab_driver

REPO_ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
SCREENSHOT_DIR = REPO_ROOT / "docs" / "screenshots"

NO_BROWSER_REASON = (
    f"Chromium not found at {lab_driver.CHROMIUM}: browser tests need Debian's chromium "
    "(run .ci/install-browser, i.e. apt-get install -y chromium)"
)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "browser: end-to-end test in a real JupyterLab driven by headless Chromium "
        "(skipped only when /usr/bin/chromium is missing)",
    )


def pytest_collection_modifyitems(config, items):
    if lab_driver.chromium_available():
        return
    here = Path(__file__).parent
    skip = pytest.mark.skip(reason=NO_BROWSER_REASON)
    marked = False
    for item in items:
        if "browser" in item.keywords and here in Path(str(item.fspath)).parents:
            item.add_marker(skip)
            marked = True
    if marked:
        print(f"\nSKIPPING browser tests: {NO_BROWSER_REASON}", file=sys.stderr)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    # Keep each phase's report on the item so fixtures can tell a failed test in teardown.
    rep = yield
    setattr(item, f"rep_{rep.when}", rep)
    return rep


@pytest.fixture(scope="session")
def lab_root(tmp_path_factory) -> Path:
    """A temporary copy of notebooks/ (JupyterLab autosaves; the repo's files stay untouched)."""
    root = tmp_path_factory.mktemp("lab") / "notebooks"
    if NOTEBOOKS_DIR.is_dir():
        lab_driver.copy_notebooks(NOTEBOOKS_DIR, root)
    else:
        root.mkdir()
    return root


@pytest.fixture(scope="session")
def lab_server(lab_root, tmp_path_factory):
    """JupyterLab on 127.0.0.1, free port, random token; always shut down at the end."""
    work = tmp_path_factory.mktemp("lab-server")
    server = lab_driver.LabServer(lab_root, work)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser_context(tmp_path_factory):
    """Headless Debian Chromium with a fresh user-data-dir; only loopback requests are let through."""
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as p:
        context, blocked = lab_driver.launch_context(p, profile)
        context.blocked_requests = blocked  # type: ignore[attr-defined]
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def lab_page(request, lab_server, browser_context, tmp_path_factory):
    """A new tab for one test. On failure: screenshot + server log tail; always: kernels shut down."""
    page = browser_context.new_page()
    blocked = browser_context.blocked_requests
    blocked_before = len(blocked)
    try:
        yield page
    finally:
        failed = getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed
        if failed:
            shot = tmp_path_factory.mktemp("failure") / (
                urllib.parse.quote(request.node.name, safe="") + ".png"
            )
            try:
                page.screenshot(path=str(shot), timeout=10_000)
                print(f"\nfailure screenshot: {shot}")
            except Exception as e:  # the page may be gone; the report matters more
                print(f"\n(no failure screenshot: {e})")
            print(lab_server.log_tail())
        page.close()
        lab_server.shutdown_kernels()
    new_blocked = blocked[blocked_before:]
    assert not new_blocked, f"the page tried to reach non-loopback hosts: {new_blocked}"


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory) -> Path:
    """Where the tests' screenshots go: a temporary folder, so ``pytest`` leaves the working tree clean.

    ``UPDATE_SCREENSHOTS=1 pytest tests/browser`` writes them to docs/screenshots/ instead, on purpose
    (the README's pictures).
    """
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
        return SCREENSHOT_DIR
    folder = tmp_path_factory.mktemp("screenshots")
    print(f"\nscreenshots go to {folder} (UPDATE_SCREENSHOTS=1 writes docs/screenshots/)")
    return folder
