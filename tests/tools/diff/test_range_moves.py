"""tpu_serving_tools.diff.range_moves: a subnet range moved is a replace the diff warns of (SRE review 33, M1: a changed
``gateway.proxyOnlyCidr`` was previewed as an in-place update, while the proxies and the policies part ways)."""

from __future__ import annotations

import copy

from tests.conftest import plan_of
from tpu_serving_tools.diff import range_moves
from tpu_serving_tools.diff.review import diff_plans, render_markdown

STACK = "vllm-llama33-70b-v6e8"


def test_range_moves_expands_is_the_providers_in_place_rule():
    assert range_moves.expands("192.168.2.0/23", "192.168.0.0/22")  # contains the old: updated in place
    assert not range_moves.expands("192.168.2.0/23", "192.168.4.0/23")  # moved
    assert not range_moves.expands("192.168.0.0/22", "192.168.2.0/23")  # shrunk
    assert range_moves.expands("not a range", "192.168.4.0/23")  # not judged


def with_proxy_range(cidr: str) -> dict:
    plan = copy.deepcopy(plan_of(STACK).as_json())
    (subnet,) = [r for r in plan["resources"] if (r["inputs"] or {}).get("purpose") == range_moves.PROXY_ONLY]
    subnet["inputs"]["ipCidrRange"] = cidr
    return plan


def test_range_moves_a_moved_proxy_only_range_is_warned_in_the_diff():
    base = plan_of(STACK).as_json()
    diff = diff_plans(STACK, base, with_proxy_range("10.99.0.0/23"))
    (warning,) = [w for w in diff.warnings if w.startswith("Recreates subnet")]
    assert "is no expansion of the old range" in warning and "it is the proxy-only subnet" in warning
    assert "> [!WARNING]" in render_markdown(diff, "HEAD")
    assert not [w for w in diff_plans(STACK, base, with_proxy_range("192.168.0.0/16")).warnings if "subnet" in w]
