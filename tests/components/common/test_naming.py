"""tpu_serving.common.naming: the names, labels, regions and zones that GCP, GKE and Kubernetes accept, checked where a
stack file or a component's arguments give them."""

from __future__ import annotations

import pytest


def test_edges_dns_name_honours_its_limit():
    """naming.dns_name passes ``limit`` on (a GKE cluster name is at most 40 characters, a label 63)."""
    from tpu_serving.common.naming import NameError_, NameLimit, dns_name

    assert dns_name("a" * 41) == "a" * 41
    with pytest.raises(NameError_):
        dns_name("a" * 41, limit=NameLimit.GKE_CLUSTER)
