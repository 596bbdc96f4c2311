"""The library's source, components/, as a whole: no resource is declared inside an apply."""

from __future__ import annotations

import pytest


def test_components_reject_resources_inside_apply():
    # House rule: no resource is created inside an apply; the plan would show it only
    # after the apply ran, and a preview with unknowns would hide it.
    import ast

    from tests.conftest import ROOT

    paths = list((ROOT / "components").glob("*.py"))
    assert paths
    for path in paths:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "apply":
                for arg in node.args:
                    for inner in ast.walk(arg):
                        if isinstance(inner, ast.Call) and getattr(inner.func, "attr", "") == "apply":
                            pytest.fail(f"nested apply in {path}")
                        name = (
                            getattr(inner.func, "attr", getattr(inner.func, "id", ""))
                            if isinstance(inner, ast.Call)
                            else ""
                        )
                        assert not (name[:1].isupper() and name not in {"Output"}), f"{path}: {name} inside apply"
