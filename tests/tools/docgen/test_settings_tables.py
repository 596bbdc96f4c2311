"""The settings reference (docs/reference/settings.md) is generated from the settings models and kept current."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tests.conftest import ROOT
from tpu_serving.common.settings import Model
from tpu_serving_tools.docgen import settings_tables


def test_settings_tables_page_is_current():
    page = (ROOT / settings_tables.PAGE).read_text()
    assert page.count("<!-- generated: settings ") == 5
    assert settings_tables.render(page) == page, f"{settings_tables.PAGE} settings tables are stale: run `make readme`"


class _Inner(Model):
    """A nested model."""

    size: int = Field(3, ge=1, le=9, description="How many.")


class _Example(Model):
    """A model for the generator."""

    mode: Literal["a", "b"] = Field("a", description="Which mode.")
    names: list[str] = Field(min_length=1, description="Some names.")
    note: str | None = Field(None, description="A note.")
    inner: _Inner = Field(default_factory=_Inner, description="Nested.")
    items: list[_Inner] = Field(default_factory=list, description="Nested list.")


def test_settings_tables_rows_come_from_the_model():
    rows = {r.key: r for r in settings_tables.rows(_Example, "x.")}
    assert list(rows) == ["x.mode", "x.names", "x.note", "x.inner.size", "x.items[].size"]
    assert (rows["x.mode"].type, rows["x.mode"].default, rows["x.mode"].description) == (
        "`a` / `b`",
        "`a`",
        "Which mode.",
    )
    assert (rows["x.names"].default, rows["x.names"].bounds) == ("required", "at least 1")
    assert rows["x.note"].default == "unset"
    assert (rows["x.inner.size"].default, rows["x.inner.size"].bounds) == ("`3`", ">= 1, <= 9")


def test_settings_tables_a_changed_default_changes_the_page(monkeypatch):
    from tpu_serving.config.models import CpuPoolConfig

    page = (ROOT / settings_tables.PAGE).read_text()
    field = CpuPoolConfig.model_fields["machine_type"]
    monkeypatch.setattr(field, "default", "n2-standard-16")
    changed = settings_tables.render(page)
    assert "| `cluster.cpuPool.machineType` | string | `n2-standard-16` |" in changed
    assert changed != page


def test_settings_tables_a_pipe_in_code_is_html_and_elsewhere_escaped():
    row = settings_tables.table_row(["`a|b`", "x | y", "`<t>`"])
    assert row == "| <code>a&#124;b</code> | x \\| y | `<t>` |"
