"""The autograd-lens wheel holds the library only, at the one version, with tested bounds.

The wheel is built here from a copy of the project's files (pip wheel, offline, with the
installed setuptools) so that the build leaves nothing in the working tree.
"""
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from project import ROOT

import lesson_checks


def _source_version():
    text = (ROOT / "src" / "autograd_lens" / "__init__.py").read_text()
    return re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE).group(1)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    tree = tmp_path_factory.mktemp("project")
    for path in ROOT.iterdir():  # setup files at the top (pyproject.toml, README.md, ...)
        if path.is_file():
            shutil.copy2(path, tree / path.name)
    shutil.copytree(ROOT / "src", tree / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "--no-index", "--no-cache-dir",
                    "--wheel-dir", str(out), str(tree)], check=True, capture_output=True)
    (built,) = out.glob("*.whl")
    with zipfile.ZipFile(built) as archive:
        files = archive.namelist()
        metadata = archive.read(next(f for f in files if f.endswith(".dist-info/METADATA")))
    return built.name, files, metadata.decode()


def test_the_wheel_holds_autograd_lens_only(wheel):
    name, files, _ = wheel
    version = _source_version()
    assert name == f"autograd_lens-{version}-py3-none-any.whl"
    packages = {f.split("/")[0] for f in files}
    assert packages == {"autograd_lens", f"autograd_lens-{version}.dist-info"}
    library = {str(p.relative_to(ROOT / "src")) for p in (ROOT / "src").rglob("*.py")}
    assert library == {f for f in files if f.endswith(".py")}  # every module, nothing more


def test_the_version_is_written_once(wheel):
    _, _, metadata = wheel
    assert f"\nVersion: {_source_version()}\n" in metadata
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert 'version = {attr = "autograd_lens.__version__"}' in pyproject
    assert _source_version() not in pyproject


def test_each_lower_bound_is_the_tested_version(wheel):
    _, _, metadata = wheel
    pins = dict(re.findall(r"^([\w.-]+)==([\w.]+)", (ROOT / "requirements.txt").read_text(),
                           re.MULTILINE))
    bounds = re.findall(r"^Requires-Dist: ([\w.-]+)>=([\w.]+)", metadata, re.MULTILINE)
    assert {"torch", "torchviz", "graphviz"} <= {name for name, _ in bounds}
    for name, lowest in bounds:
        assert pins[name] in (lowest, lowest + ".0"), \
            f"{name}>={lowest} in pyproject.toml, but requirements.txt tests {pins[name]}"


def test_the_lessons_checkers_come_from_course():
    assert Path(lesson_checks.__file__).parent == ROOT / "course" / "lesson_checks"
