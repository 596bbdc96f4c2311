"""What a runtime check reports: per category, how many subjects pass, and why the others fail."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Finding:
    """One subject of a check (a pod, a flow, an identity, a prerequisite) and its verdict."""

    subject: str
    """What was checked, e.g. ``pod llama405b/jetstream-pathways-0`` or ``flow sax-model-server -> sax-admin-server:10000``."""
    ok: bool
    """Whether it would work."""
    reason: str = ""
    """Why not (or, when ok, how: e.g. the node pool or the policy that allows it)."""


@dataclass
class CategoryResult:
    """The findings of one category of the runtime model for one stack."""

    category: str
    """``scheduling``, ``identity``, ``network`` or ``prerequisites``."""
    findings: list[Finding] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(f.ok for f in self.findings)

    @property
    def total(self) -> int:
        return len(self.findings)

    @property
    def ok(self) -> bool:
        return self.passed == self.total

    def failures(self) -> list[Finding]:
        return [f for f in self.findings if not f.ok]
