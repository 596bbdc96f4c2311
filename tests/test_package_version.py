"""The package's version and the changelog agree: an unreleased section names the version the package will be,
and the package reports a development release of it until then (PEP 440 ``X.Y.Z.devN``)."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def test_package_version_is_the_changelogs_next_release():
    found = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(), re.M)  # [project]
    assert found, "pyproject.toml names the version"
    version = found.group(1)
    heading = re.search(r"^## (.+)$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert heading, "CHANGELOG.md has a version heading"
    unreleased = re.fullmatch(r"Unreleased \((\d+\.\d+\.\d+)\)", heading.group(1))
    if unreleased:
        assert re.fullmatch(rf"{re.escape(unreleased.group(1))}\.dev\d+", version), (version, heading.group(1))
    else:
        assert heading.group(1) == version


def test_requires_python_floor_is_one_every_pinned_package_installs_on():
    """User review 11, M5: pyproject said ``>=3.10`` while constraints.txt pins packages (python-dateutil 4.0.0,
    zizmor 1.32.0) that need 3.11. Each pin installed here declares its own floor; the package's is at least each."""
    from importlib import metadata

    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    found = re.search(r'^requires-python = ">=(\d+)\.(\d+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert found, "pyproject.toml names a Python floor"
    floor = Version(f"{found.group(1)}.{found.group(2)}")
    pins = re.findall(r"^([A-Za-z0-9_.-]+)==", (ROOT / "constraints.txt").read_text(), re.M)
    checked, too_low = 0, []
    for name in pins:
        try:
            wants = metadata.metadata(name).get("Requires-Python")
        except metadata.PackageNotFoundError:
            continue  # a pin this venv did not need (a platform's wheel)
        checked += 1
        if wants and not SpecifierSet(wants).contains(floor):
            too_low.append(f"{name}: Requires-Python {wants}")
    assert checked >= 40, f"only {checked} of {len(pins)} pins are installed: not the developer venv"
    assert not too_low, f"requires-python >={floor} admits a Python these pins refuse: {too_low}"
    assert f"Python {found.group(1)}.{found.group(2)} or later" in (ROOT / "README.md").read_text()
