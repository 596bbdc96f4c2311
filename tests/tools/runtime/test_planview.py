"""The plan view's pure helpers: the one walker of a plan's free-form values, and an object's qualified name."""

from __future__ import annotations

from tpu_serving_tools.runtime.planview import entries, qualified_name


def test_planview_entries_walks_every_depth_with_keys_and_list_items():
    value = {"a": [{"b": "x"}, "y"], "c": {"d": 1}}
    assert list(entries(value)) == [
        ("a", [{"b": "x"}, "y"]),
        (None, {"b": "x"}),
        ("b", "x"),
        (None, "y"),
        ("c", {"d": 1}),
        ("d", 1),
    ]
    assert list(entries("leaf")) == [] and list(entries([])) == []


def test_planview_qualified_name_defaults_the_namespace():
    assert qualified_name({"metadata": {"namespace": "ns", "name": "n"}}) == "ns/n"
    assert qualified_name({"metadata": {"name": "n"}}) == "default/n"
