"""One JupyterLab on loopback (offline mode, its own config, settings and runtime folders) and one headless Debian
Chromium that may reach loopback only, for the tests in this folder. They skip, saying why, where /usr/bin/chromium
is missing (``.ci/install-browser`` installs it)."""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never send 127.0.0.1 through a proxy


def pytest_collection_modifyitems(config, items):
    if not os.access(CHROMIUM, os.X_OK):
        for item in items:
            if Path(__file__).parent in Path(str(item.fspath)).parents:
                item.add_marker(pytest.mark.skip(reason=f"no Chromium at {CHROMIUM}: run .ci/install-browser"))


class Lab:
    """``jupyter lab`` serving a copy of notebooks/ on 127.0.0.1, a free port and a random token."""

    def __init__(self, root: Path, work: Path) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.root, self.token, self.log = root, secrets.token_hex(16), work / "lab.log"
        env = {**os.environ, "LLM_MODE": "offline", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
               **{name: str(work / name) for name in ("JUPYTER_CONFIG_DIR", "JUPYTERLAB_SETTINGS_DIR",
                                                     "JUPYTERLAB_WORKSPACES_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR")}}
        settings = work / "JUPYTERLAB_SETTINGS_DIR" / "@jupyterlab"
        for relative, value in {"notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
                                "apputils-extension/notification.jupyterlab-settings":
                                    {"fetchNews": "false", "checkForUpdates": False}}.items():
            (settings / relative).parent.mkdir(parents=True, exist_ok=True)
            (settings / relative).write_text(json.dumps(value))
        command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
                   f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
                   f"--ServerApp.root_dir={root}", "--ServerApp.terminals_enabled=False", "--LabApp.news_url=None",
                   "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--allow-root"]
        self.process = subprocess.Popen(command, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=self.log.open("w"),
                                        stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while not self.api("/api/status"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("jupyter lab did not start:\n" + self.log.read_text()[-3000:])
            time.sleep(0.25)

    def api(self, path: str, method: str = "GET"):
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        try:
            with _NO_PROXY.open(request, timeout=5) as response:
                body = response.read()
            return json.loads(body) if body else True
        except OSError:
            return None

    def url(self, notebook: str) -> str:  # a fresh workspace each time: no earlier tab is restored
        return f"http://127.0.0.1:{self.port}/lab/workspaces/t{secrets.token_hex(4)}/tree/{notebook}?token={self.token}"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        finally:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)  # kernels that outlived the server share its group
            except ProcessLookupError:
                pass


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab") / "notebooks"
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    server = Lab(root, tmp_path_factory.mktemp("lab-server"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def page(lab, tmp_path_factory):
    """A page of a fresh Chromium profile; a request to any host but loopback is refused and makes the test fail."""
    from playwright.sync_api import sync_playwright

    blocked: list[str] = []

    def only_loopback(route):
        host = route.request.url.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0]
        if route.request.url.startswith(("data:", "blob:")) or host in ("127.0.0.1", "localhost", "[::1]"):
            return route.continue_()
        blocked.append(route.request.url)
        return route.abort()

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium")), executable_path=str(CHROMIUM), headless=True,
            viewport={"width": 1400, "height": 1000}, args=["--no-sandbox", "--disable-gpu", "--no-first-run",
                                                            "--disable-background-networking", "--disable-component-update"])
        context.set_default_timeout(30_000)
        context.route("**/*", only_loopback)
        yield context.new_page()
        context.close()
    assert not blocked, f"the page tried to reach other hosts: {blocked}"
