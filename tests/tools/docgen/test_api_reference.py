"""The components' API reference (docs/reference/components.md) is generated from the components and kept current."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import pulumi

from tests.conftest import ROOT
from tpu_serving.common.settings import described
from tpu_serving.platform.cluster import CpuPoolArgs, TpuClusterArgs
from tpu_serving.provider import COMPONENTS
from tpu_serving_tools.docgen import api_reference


def test_api_reference_page_is_current():
    page = (ROOT / api_reference.PAGE).read_text()
    assert page.count("<!-- generated: api -->") == 1
    assert api_reference.render(page) == page, f"{api_reference.PAGE} is stale: run `make readme`"


def test_api_reference_lists_every_public_component_with_its_arguments():
    text = api_reference.reference()
    for component in COMPONENTS:
        args = api_reference._arguments_class(component)
        assert f"## `{component.__name__}`\n" in text and f"### `{args.__name__}`\n" in text
        for f in dataclasses.fields(args):
            assert f"| `{f.name}` |" in text, (component.__name__, f.name)


def test_api_reference_a_changed_default_changes_the_page(monkeypatch):
    page = (ROOT / api_reference.PAGE).read_text()
    machine_type = next(f for f in dataclasses.fields(CpuPoolArgs) if f.name == "machine_type")
    monkeypatch.setattr(machine_type, "default", "n2-standard-16")
    changed = api_reference.render(page)
    assert "| `machine_type` | `str` | `'n2-standard-16'` |" in changed and changed != page


def test_api_reference_a_changed_description_changes_the_page(monkeypatch):
    page = (ROOT / api_reference.PAGE).read_text()
    protection = next(f for f in dataclasses.fields(TpuClusterArgs) if f.name == "deletion_protection")
    monkeypatch.setattr(protection, "metadata", {**protection.metadata, "description": "Changed."})
    assert "| `deletion_protection` | `bool` | `True` |  | Changed. |" in api_reference.render(page)


@dataclass(frozen=True)
class _Inner:
    """An inner type."""

    size: int = described("How many.", default=3, ge=1, le=9)


@dataclass(frozen=True)
class _Example:
    """Arguments of an example."""

    name: str
    """The name, documented as a docstring."""
    wired: pulumi.Input[str]
    """Wiring."""
    inner: _Inner = field(default_factory=_Inner)
    """Nested."""
    items: Sequence[str] = ()
    """Some items."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels."""
    mode: Literal["a", "b"] = "a"
    """Which mode."""
    note: str | None = described("A note.", default=None, pattern="^x")


def test_api_reference_rows_come_from_the_dataclass():
    rows = {r.key: r for r in api_reference.argument_rows(_Example)}
    assert list(rows) == ["name", "wired", "inner", "items", "labels", "mode", "note"]
    assert (rows["name"].type, rows["name"].default, rows["name"].description) == (
        "`str`",
        "required",
        "The name, documented as a docstring.",
    )
    assert rows["wired"].type == "`Input[str]`"
    assert (rows["inner"].type, rows["inner"].default) == ("`_Inner`", "`_Inner()`")
    assert (rows["items"].type, rows["items"].default) == ("`Sequence[str]`", "`()`")
    assert (rows["labels"].type, rows["labels"].default) == ("`Mapping[str, str]`", "`{}`")
    assert rows["mode"].type == "`'a' | 'b'`"
    assert (rows["note"].type, rows["note"].bounds, rows["note"].description) == (
        "`str | None`",
        "pattern `^x`",
        "A note.",
    )
    inner = next(api_reference.argument_rows(_Inner))
    assert (inner.default, inner.bounds) == ("`3`", ">= 1, <= 9")


def test_api_reference_docstrings_become_markdown():
    doc = """Made by :class:`~components.nodepool.TpuNodePool` with ``pool_names``;
    see :func:`tpu_serving.common.validation.check_arguments`."""
    assert api_reference.one_line(doc) == (
        "Made by `TpuNodePool` with `pool_names`; see `tpu_serving.common.validation.check_arguments`."
    )


def test_api_reference_names_provider_types_as_a_program_imports_them():
    from pulumi_gcp import container
    from pulumi_kubernetes import Provider
    from pulumi_kubernetes.core.v1 import Service

    assert api_reference.python_type(container.NodePool) == "gcp.container.NodePool"
    assert api_reference.python_type(Provider) == "k8s.Provider"
    assert api_reference.python_type(Service) == "k8s.core.v1.Service"
    assert api_reference.python_type(pulumi.Output[str]) == "Output[str]"
