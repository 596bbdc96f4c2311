"""tools/complexity.py, the complexity gate of ``make lint``: it reads the project's modules and finds a block above
radon's grade C, and the project has none."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT
from tpu_serving_tools import complexity


def test_complexity_reads_every_folder_of_the_project():
    read = complexity.modules(ROOT)
    assert len(read) > 200, "the walk found the project's modules"
    assert {p.relative_to(ROOT).parts[0] for p in read} == set(complexity.FOLDERS)
    assert not any(".venv" in p.parts for p in read)


def test_complexity_finds_a_function_above_grade_c(tmp_path: Path):
    branches = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(21))
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "tangled.py").write_text(f"def tangled(x):\n{branches}\n    return -1\n")
    (tmp_path / "tools" / "plain.py").write_text("def plain(x):\n    return x\n")
    read, over = complexity.above(tmp_path)
    assert read == 2
    assert [(b.path, b.name, b.grade, b.complexity) for b in over] == [("tools/tangled.py", "tangled", "D", 22)]
    assert complexity.main([str(tmp_path)]) == 1


def test_complexity_fails_on_an_empty_walk(tmp_path: Path):
    assert complexity.main([str(tmp_path)]) == 2


def test_complexity_project_has_no_function_above_grade_c():
    read, over = complexity.above(ROOT)
    assert read > 200
    assert not over, "\n".join(map(str, over))
