"""components/platform.py: the aliases a platform stack moved from a self-contained stack gives its components."""

from __future__ import annotations

import pulumi

from tpu_serving.platform import DEPLOYMENT_TYPE, moved_aliases


def test_moved_aliases_name_the_self_contained_deployment_as_the_old_parent() -> None:
    assert moved_aliases(None) == []
    (alias,) = moved_aliases("vllm70bv6e")
    assert isinstance(alias, pulumi.Alias)
    assert isinstance(alias.parent, str)
    assert alias.parent.startswith("urn:pulumi:")
    assert alias.parent.endswith(f"::{DEPLOYMENT_TYPE}::vllm70bv6e")
    assert alias.name is ... and alias.type_ is ...  # the component keeps its own name and type
