"""Support code for the end-to-end JupyterLab browser tests.

Two halves:

* ``LabServer`` starts a real ``jupyter lab`` on 127.0.0.1 (free port, random
  token, no password, announcements/news/update checks off, isolated config,
  settings, workspace and runtime dirs, ``LLM_MODE=offline``) and stops it,
  kernels included.
* Page helpers that drive JupyterLab in Debian's headless Chromium through the
  Python ``playwright`` package: open a notebook, run all cells, wait for the
  kernel, find an ipywidgets slider by its description, move it, and read the
  output of the cell that holds it.

Nothing here is specific to one notebook; the tests say which slider to move
and what text to expect.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")

#: Flags for Chromium on these machines (closed network, root, no GPU).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]

VIEWPORT = {"width": 1400, "height": 1000}
SCREENSHOT_CHROME_PX = 200  # JupyterLab's menu bar, tab bar, notebook toolbar and status bar above and below a cell

# Bounded timeouts (seconds unless noted).
SERVER_START_TIMEOUT = 60
SERVER_STOP_TIMEOUT = 15
PAGE_TIMEOUT_MS = 30_000  # any single playwright action / wait
RUN_ALL_TIMEOUT_MS = 90_000  # all cells of one notebook, first import of matplotlib included

# Plugins whose only job is to talk to the internet.
DISABLED_LAB_PLUGINS = [
    "@jupyterlab/apputils-extension:announcements",
    "@jupyterlab/extensionmanager-extension:plugin",
]

# User settings written into a fresh JUPYTERLAB_SETTINGS_DIR.
LAB_USER_SETTINGS = {
    # Never fetch news, never check for updates, never ask about it.
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    # Keep every cell attached to the DOM so locators find off-screen widgets.
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        "windowingMode": "none",
    },
}


# urllib would send even 127.0.0.1 through an http_proxy from the environment; never proxy.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def chromium_available() -> bool:
    return CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """A JupyterLab server on loopback, serving ``root_dir``.

    Use as a context manager, or call ``start()`` / ``stop()``.
    """

    def __init__(self, root_dir: Path, work_dir: Path, extra_env: dict[str, str] | None = None):
        self.root_dir = Path(root_dir)
        self.work_dir = Path(work_dir)
        self.extra_env = dict(extra_env or {})
        self.port = free_port()
        self.token = secrets.token_hex(24)
        self.proc: subprocess.Popen | None = None
        self.log_path = self.work_dir / "jupyterlab.log"
        self._log = None

    # -- URLs -------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def lab_url(self, notebook: str, workspace: str | None = None) -> str:
        """URL opening ``notebook``; a named ``workspace`` starts from an empty layout."""
        path = urllib.parse.quote(notebook)
        ws = f"workspaces/{urllib.parse.quote(workspace)}/" if workspace else ""
        return f"{self.base_url}/lab/{ws}tree/{path}?token={self.token}"

    def api(self, method: str, path: str, timeout: float = 5):
        req = urllib.request.Request(
            f"{self.base_url}{path}", method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with _OPENER.open(req, timeout=timeout) as r:
            body = r.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Shut down every running kernel (one test's kernel must not eat the next test's CPU)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            for kernel in self.api("GET", "/api/kernels"):
                self.api("DELETE", f"/api/kernels/{kernel['id']}", timeout=15)
        except (urllib.error.URLError, OSError, ValueError) as e:
            print(f"(could not shut kernels down: {e})")

    # -- lifecycle --------------------------------------------------------
    def _prepare_dirs(self) -> dict[str, str]:
        dirs = {
            "JUPYTER_CONFIG_DIR": self.work_dir / "config",
            "JUPYTERLAB_SETTINGS_DIR": self.work_dir / "lab-settings",
            "JUPYTERLAB_WORKSPACES_DIR": self.work_dir / "lab-workspaces",
            "JUPYTER_RUNTIME_DIR": self.work_dir / "runtime",
            "IPYTHONDIR": self.work_dir / "ipython",
        }
        for d in dirs.values():
            d.mkdir(parents=True, exist_ok=True)
        labconfig = dirs["JUPYTER_CONFIG_DIR"] / "labconfig"
        labconfig.mkdir(exist_ok=True)
        (labconfig / "page_config.json").write_text(
            json.dumps({"disabledExtensions": {p: True for p in DISABLED_LAB_PLUGINS}}, indent=1)
        )
        for rel, data in LAB_USER_SETTINGS.items():
            f = dirs["JUPYTERLAB_SETTINGS_DIR"] / rel
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(json.dumps(data, indent=1))
        return {k: str(v) for k, v in dirs.items()}

    def start(self) -> "LabServer":
        env = dict(os.environ)
        env.update(self._prepare_dirs())
        env["LLM_MODE"] = "offline"
        env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        env.update(self.extra_env)
        cmd = [
            sys.executable, "-m", "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",  # (ServerApp.token, deprecated alias)
            f"--ServerApp.root_dir={self.root_dir}",
            "--ServerApp.terminals_enabled=False",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")  # CI containers run as root
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            cmd,
            cwd=self.root_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # own process group: kernels go down with it
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        url = f"{self.base_url}/api/status"
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        last_err: Exception | None = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"jupyter lab exited with code {self.proc.returncode}\n{self.log_tail()}"
                )
            req = urllib.request.Request(url, headers={"Authorization": f"token {self.token}"})
            try:
                with _OPENER.open(req, timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError) as e:
                last_err = e
            time.sleep(0.25)
        raise TimeoutError(
            f"jupyter lab not ready after {SERVER_START_TIMEOUT}s ({last_err})\n{self.log_tail()}"
        )

    def stop(self) -> None:
        """Stop the server (it shuts its kernels down), then kill whatever is left in its group."""
        proc, self.proc = self.proc, None
        if proc is not None:
            pgid = proc.pid  # start_new_session=True: the server leads its own process group
            if proc.poll() is None:
                proc.terminate()  # SIGTERM: jupyter server stops its kernels and exits
                try:
                    proc.wait(timeout=SERVER_STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5)
            # Kernels that outlived the server are still in its process group.
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, n: int = 40) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no server log)"
        return "---- jupyter lab log (tail) ----\n" + "\n".join(lines[-n:])

    def __enter__(self) -> "LabServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def copy_notebooks(src: Path, dst: Path) -> Path:
    """Copy a notebooks folder so JupyterLab's autosave never touches the repo."""
    shutil.copytree(
        src, dst,
        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", ".*"),
    )
    return dst


# ---------------------------------------------------------------------------
# Browser
# ---------------------------------------------------------------------------

def _is_loopback(url: str) -> bool:
    m = re.match(r"^[a-z]+://(\[[^\]]+\]|[^/:?#]+)", url)
    if not m:  # data:, blob:, about: ...
        return True
    return m.group(1).lower() in {"127.0.0.1", "localhost", "[::1]"}


def launch_context(playwright, user_data_dir: Path):
    """Headless Debian Chromium with a fresh profile; only loopback traffic allowed.

    Returns ``(context, blocked)``, ``blocked`` being the list of URLs refused.
    """
    context = playwright.chromium.launch_persistent_context(
        str(user_data_dir),
        executable_path=str(CHROMIUM),
        headless=True,
        args=CHROMIUM_ARGS,
        viewport=VIEWPORT,
        timeout=PAGE_TIMEOUT_MS,
    )
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    blocked: list[str] = []

    def guard(route):
        url = route.request.url
        if _is_loopback(url):
            route.continue_()
        else:
            blocked.append(url)
            route.abort()

    context.route("**/*", guard)
    return context, blocked


# ---------------------------------------------------------------------------
# JupyterLab page helpers
# ---------------------------------------------------------------------------

def open_notebook(page, server: LabServer, notebook: str) -> None:
    """Open ``notebook`` (path relative to the server root) and wait for its kernel.

    Each call uses a new named workspace, so no earlier test's tabs are restored.
    """
    workspace = "t" + secrets.token_hex(4)
    page.goto(server.lab_url(notebook, workspace), wait_until="domcontentloaded",
              timeout=PAGE_TIMEOUT_MS)
    panel = notebook_panel(page)
    panel.locator(".jp-Cell").first.wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
    collapse_left_sidebar(page)
    wait_kernel_ready(page, server, notebook)


def wait_kernel_ready(page, server: LabServer, notebook: str,
                      timeout_ms: int = PAGE_TIMEOUT_MS) -> None:
    """Wait until the notebook's kernel is started, connected and idle.

    The toolbar's execution indicator says 'idle' for a moment *before* the
    kernel exists (then 'initializing', then 'idle' again), so it is only
    believed once the server also lists a session for this notebook whose
    kernel is idle with the page connected; both must hold twice in a row.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    in_a_row = 0
    state = None
    while time.monotonic() < deadline:
        ui = _execution_status(page)
        state = (ui, _server_kernel_state(server, notebook))
        if ui == "idle" and state[1] == ("idle", True):
            in_a_row += 1
            if in_a_row >= 2:
                return
        else:
            in_a_row = 0
        page.wait_for_timeout(250)
    raise TimeoutError(
        f"kernel for {notebook} not ready after {timeout_ms / 1000:.0f}s "
        f"(page indicator, (server state, connected)) = {state}\n{server.log_tail()}"
    )


def _execution_status(page) -> str | None:
    return page.evaluate(
        """() => {
            const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
            const ind = panel && panel.querySelector('.jp-Notebook-ExecutionIndicator');
            return ind ? ind.getAttribute('data-status') : null;
        }"""
    )


def _server_kernel_state(server: LabServer, notebook: str):
    try:
        sessions = server.api("GET", "/api/sessions")
    except (urllib.error.URLError, OSError, ValueError):
        return None
    for sess in sessions or []:
        if sess.get("path") == notebook and sess.get("kernel"):
            k = sess["kernel"]
            return (k.get("execution_state"), (k.get("connections") or 0) > 0)
    return None


def notebook_panel(page):
    """The notebook panel currently shown in the main area."""
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)").first


def collapse_left_sidebar(page) -> None:
    """Close the file browser so the notebook gets the full width (as a user would)."""
    current = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
    if current.count():
        current.first.click()


def run_all_cells(page, timeout_ms: int = RUN_ALL_TIMEOUT_MS) -> None:
    """Run > Run All Cells from the menu bar, then wait until every cell has run."""
    # Make sure the notebook (not the file browser) has focus so the command is enabled.
    notebook_panel(page).locator(".jp-Cell").first.click()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    wait_run_all_done(page, timeout_ms)


def wait_run_all_done(page, timeout_ms: int = RUN_ALL_TIMEOUT_MS) -> None:
    """Wait until no code cell is queued/running ('[*]') and the kernel is idle.

    Cells are marked '[*]' synchronously when Run All is clicked, so an idle
    kernel with no '[*]' prompt left means the whole notebook has run.
    """
    page.wait_for_function(
        """() => {
            const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
            if (!panel) return false;
            const ind = panel.querySelector('.jp-Notebook-ExecutionIndicator');
            if (!ind || ind.getAttribute('data-status') !== 'idle') return false;
            const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
            if (prompts.some(p => p.textContent.includes('*'))) return false;
            return prompts.some(p => /\\[\\d+\\]/.test(p.textContent));
        }""",
        timeout=timeout_ms,
        polling=250,
    )


def error_outputs(page) -> list[str]:
    """Text of every traceback shown in the notebook (empty if none)."""
    panel = notebook_panel(page)
    errs = panel.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    out = []
    for i in range(errs.count()):
        text = errs.nth(i).inner_text()
        if "Traceback" in text or re.search(r"^\w*Error\b", text, re.M):
            out.append(text)
    return out


def unexecuted_code_cells(page) -> list[str]:
    """First line of every non-empty code cell without an execution count."""
    return page.evaluate(
        """() => {
            const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
            const out = [];
            for (const cell of panel.querySelectorAll('.jp-CodeCell')) {
                const prompt = cell.querySelector('.jp-InputPrompt');
                const src = (cell.querySelector('.cm-content')?.innerText || '').trim();
                if (src && !/\\[\\d+\\]/.test(prompt ? prompt.textContent : '')) {
                    out.push(src.split('\\n')[0]);
                }
            }
            return out;
        }"""
    )


def _normalise(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip().rstrip(":").strip().lower()


def find_slider(page, description: str):
    """The ipywidgets slider whose description label matches ``description``.

    Match is case-insensitive and ignores whitespace and a trailing colon; an
    exact match wins, otherwise a unique 'contains' match is accepted.
    """
    panel = notebook_panel(page)
    sliders = panel.locator(".widget-slider")
    sliders.first.wait_for(state="attached", timeout=PAGE_TIMEOUT_MS)
    labels = [
        sliders.nth(i).locator(".widget-label").first.text_content() or ""
        for i in range(sliders.count())
    ]
    want = _normalise(description)
    exact = [i for i, lab in enumerate(labels) if _normalise(lab) == want]
    loose = [i for i, lab in enumerate(labels) if want in _normalise(lab)]
    idx = exact or (loose if len(loose) == 1 else [])
    if not idx:
        raise AssertionError(
            f"no ipywidgets slider described {description!r}; sliders on the page: {labels}"
        )
    return sliders.nth(idx[0])


def slider_descriptions(page) -> list[str]:
    panel = notebook_panel(page)
    sliders = panel.locator(".widget-slider")
    return [
        (sliders.nth(i).locator(".widget-label").first.text_content() or "").strip()
        for i in range(sliders.count())
    ]


def slider_readout(slider) -> str:
    return (slider.locator(".widget-readout").first.text_content() or "").strip()


def move_slider(page, description: str, steps: int) -> str:
    """Move a slider ``steps`` steps (negative: left) with the arrow keys.

    Focuses the slider handle as a user would (Tab lands there; we focus it
    directly) and presses ArrowRight/ArrowLeft. Returns the new readout text
    once the readout shows a value different from before.
    """
    slider = find_slider(page, description)
    slider.scroll_into_view_if_needed()
    before = slider_readout(slider)
    handle = slider.locator(".noUi-handle").first
    handle.focus()
    key = "ArrowRight" if steps > 0 else "ArrowLeft"
    for _ in range(abs(steps)):
        handle.press(key)
    if steps:
        _wait_readout_change(page, slider, before)
    return slider_readout(slider)


def set_slider_value(page, description: str, value) -> str:
    """Type ``value`` into the slider's (contenteditable) readout and press Enter."""
    slider = find_slider(page, description)
    slider.scroll_into_view_if_needed()
    readout = slider.locator(".widget-readout").first
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(str(value))
    page.keyboard.press("Enter")
    return slider_readout(slider)


def _wait_readout_change(page, slider, before: str) -> None:
    deadline = time.monotonic() + PAGE_TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        if slider_readout(slider) != before:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"slider readout stayed at {before!r} after the key presses")


def slider_cell(slider):
    """The notebook cell that holds ``slider``."""
    return slider.locator("xpath=ancestor::div[contains(concat(' ', normalize-space(@class), ' '), ' jp-Cell ')][1]")


#: Where a slider's result shows, in order of preference, inside the slider's cell:
#: an ipywidgets Output (``interact``/``interactive``/``interactive_output``), else
#: HTML/HTMLMath widgets (a panel that writes its readout as ``<pre>`` HTML).
OUTPUT_SELECTORS = (".widget-output", ".widget-html, .widget-htmlmath")


def output_locator(page, description: str):
    """Locator for what the slider drives, inside the cell that holds the slider.

    Falls back to the cell's whole output area (sliders' own labels included).
    """
    cell = slider_cell(find_slider(page, description))
    for selector in OUTPUT_SELECTORS:
        loc = cell.locator(selector)
        if loc.count():
            return loc
    return cell.locator(".jp-Cell-outputArea")


def output_text(page, description: str) -> str:
    """Text currently shown by the output(s) that the slider drives."""
    loc = output_locator(page, description)
    return "\n".join(loc.nth(i).inner_text() for i in range(loc.count()))


def wait_output_contains(page, description: str, expected, timeout_ms: int = PAGE_TIMEOUT_MS) -> str:
    """Wait until the slider's output matches ``expected`` (str or compiled regex).

    Returns the output text; on timeout raises AssertionError with the text seen.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    text = ""
    while time.monotonic() < deadline:
        text = output_text(page, description)
        ok = expected.search(text) if isinstance(expected, re.Pattern) else expected in text
        if ok:
            return text
        page.wait_for_timeout(150)
    raise AssertionError(
        f"output driven by slider {description!r} never showed {expected!r}; last text:\n{text}"
    )


def screenshot_slider(page, description: str, path: Path) -> Path:
    """Screenshot of JupyterLab with the slider's whole cell in view: its sliders, text and the entire chart.

    The viewport is made tall enough for the cell (JupyterLab's menus and status bar included) for the
    shot, then put back.
    """
    slider = find_slider(page, description)
    cell = slider_cell(slider)
    cell.scroll_into_view_if_needed()
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.mouse.move(0, 0)
    before = page.viewport_size or VIEWPORT
    box = cell.bounding_box()
    needed = int(box["height"]) + SCREENSHOT_CHROME_PX if box else before["height"]
    if needed > before["height"]:
        page.set_viewport_size({"width": before["width"], "height": needed})
        page.wait_for_timeout(500)  # JupyterLab re-lays out the notebook panel
    # The top of the slider's cell at the top of the notebook panel: sliders, readout and chart all show.
    cell.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if not cell_fully_visible(page, description):
            raise AssertionError(f"the cell of slider {description!r} does not fit the screenshot: its chart "
                                 "would be cut off")
        page.screenshot(path=str(path), timeout=PAGE_TIMEOUT_MS)
    finally:
        page.set_viewport_size(before)
    return path


def cell_fully_visible(page, description: str) -> bool:
    """True when the slider's whole cell lies inside the viewport (what ``screenshot_slider`` shows)."""
    cell = slider_cell(find_slider(page, description))
    box = cell.bounding_box()
    size = page.viewport_size or VIEWPORT
    return bool(box) and box["y"] >= 0 and box["y"] + box["height"] <= size["height"]
