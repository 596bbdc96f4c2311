"""The package's version and the changelog agree: an unreleased section names the version the package will be,
and the package reports a development release of it until then (PEP 440 ``X.Y.Z.devN``)."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def test_package_version_is_the_changelogs_next_release():
    found = re.search(
        r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(), re.M
    )  # [project] (3.10: no tomllib)
    assert found, "pyproject.toml names the version"
    version = found.group(1)
    heading = re.search(r"^## (.+)$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert heading, "CHANGELOG.md has a version heading"
    unreleased = re.fullmatch(r"Unreleased \((\d+\.\d+\.\d+)\)", heading.group(1))
    if unreleased:
        assert re.fullmatch(rf"{re.escape(unreleased.group(1))}\.dev\d+", version), (version, heading.group(1))
    else:
        assert heading.group(1) == version
