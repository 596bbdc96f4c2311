"""tools/runtime/sourced.py: the runtime model's tables of sourced facts."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from tpu_serving_tools.runtime import sourced

FACT_MODULES = ("facts", "gcp_facts", "machine_facts", "ds_facts", "engine_facts")


def _write(folder: Path, facts: dict[str, object], about: str = "a table") -> None:
    (folder / "t.json").write_text(json.dumps({"about": about, "facts": facts}))


def test_every_table_is_read_whole() -> None:
    for module in FACT_MODULES:
        importlib.import_module(f"tpu_serving_tools.runtime.{module}")
    files = sorted(p.stem for p in sourced.DATA.glob("*.json"))
    assert files, "no table in tools/runtime/data"
    assert sorted(sourced.TABLES) == files, "a table that no fact module reads, or a module reading a missing table"
    for name, table in sourced.TABLES.items():
        assert table.facts, f"{name}: an empty table"
        assert table.unread() == [], f"{name}: facts that no module reads"


def test_table_reads_typed_values(tmp_path: Path) -> None:
    _write(tmp_path, {"A": {"value": ["x", "y"], "source": "here"}, "B": {"value": 3, "source": "there"}})
    table = sourced.Table("t", tmp_path)
    assert table.get("A", tuple[str, ...]) == ("x", "y")
    assert table.integer("B") == 3
    assert table.source("B") == "there"
    assert table.unread() == []


@pytest.mark.parametrize(
    "facts",
    [
        {"A": {"value": 1}},
        {"A": {"value": 1, "source": " "}},
        {"A": {"source": "here"}},
        {"A": 1},
    ],
)
def test_table_refuses_a_fact_without_value_or_source(tmp_path: Path, facts: dict[str, object]) -> None:
    _write(tmp_path, facts)
    with pytest.raises(sourced.FactError, match="A"):
        sourced.Table("t", tmp_path)


def test_table_refuses_no_about(tmp_path: Path) -> None:
    _write(tmp_path, {"A": {"value": 1, "source": "here"}}, about="")
    with pytest.raises(sourced.FactError, match="about"):
        sourced.Table("t", tmp_path)


def test_table_refuses_a_wrong_type_and_an_unknown_name(tmp_path: Path) -> None:
    _write(tmp_path, {"A": {"value": "x", "source": "here"}})
    table = sourced.Table("t", tmp_path)
    with pytest.raises(sourced.FactError, match="A is not"):
        table.integer("A")
    with pytest.raises(sourced.FactError, match="no fact B"):
        table.text("B")
    assert table.unread() == ["A"]
