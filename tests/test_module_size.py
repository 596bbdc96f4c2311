"""No module of the library, the tools or the policy pack holds more than 500 lines (the house rule: big rooms
make each change cost more; components/gateway.py had grown to 539 before this test)."""

from __future__ import annotations

from tests.conftest import ROOT

LIMIT = 500
FOLDERS = ("components", "tools", "policy", "provider")


def test_no_module_over_500_lines():
    modules = [p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py") if ".venv" not in p.parts]
    assert len(modules) > 100, "the walk found the project's modules"
    over = {str(p.relative_to(ROOT)): n for p in modules if (n := len(p.read_text().splitlines())) > LIMIT}
    assert not over, f"modules over {LIMIT} lines: {over}"
