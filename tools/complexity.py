"""The complexity gate of ``make lint``: no function of the library, the tools, the policy rules or the provider
above radon's cyclomatic complexity grade C (a complexity of at most 20, ``cc_rank``). It reads every module with
radon's API (``cc_visit``: the blocks ``radon cc`` lists, functions, classes and methods; ``add_inner_blocks``: the
closures inside them too), prints each block above C with its file, line, grade and complexity, and exits 1 when
there is one, or when the walk finds no module at all."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from radon.complexity import add_inner_blocks, cc_rank, cc_visit

FOLDERS = ("components", "tools", "policy", "provider")
"""The project's own code, below the project root (virtual environments left out)."""
HIGHEST = "C"
"""The worst grade the house style allows."""


@dataclass(frozen=True, order=True)
class Block:
    """One function, method, class or closure that radon grades."""

    path: str
    line: int
    name: str
    grade: str
    complexity: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.name} - {self.grade} ({self.complexity})"


def modules(root: Path) -> list[Path]:
    """Every Python module of :data:`FOLDERS` below ``root``, in path order."""
    return sorted(
        p for folder in FOLDERS for p in (root / folder).rglob("*.py") if not any(".venv" in part for part in p.parts)
    )


def blocks(root: Path, path: Path) -> list[Block]:
    """Every graded block of one module, closures included."""
    rel = path.relative_to(root).as_posix()
    return [
        Block(rel, b.lineno, b.fullname, cc_rank(b.complexity), b.complexity)
        for b in add_inner_blocks(cc_visit(path.read_text()))
    ]


def above(root: Path) -> tuple[int, list[Block]]:
    """How many modules were read, and the blocks above :data:`HIGHEST` among them."""
    found = modules(root)
    return len(found), sorted(b for p in found for b in blocks(root, p) if b.grade > HIGHEST)


def main(argv: list[str] | None = None) -> int:
    root = Path(argv[0] if argv else ".").resolve()
    read, over = above(root)
    if not read:
        print(f"complexity: no module found below {root} (run from the project root)", file=sys.stderr)
        return 2
    for block in over:
        print(f"{block}: above grade {HIGHEST}; split it into small, named, typed helpers", file=sys.stderr)
    print(f"complexity: {read} modules, {len(over)} function(s) above radon grade {HIGHEST}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
