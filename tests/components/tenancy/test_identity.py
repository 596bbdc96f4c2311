"""tpu_serving.tenancy.identity: WorkloadIdentity, its arguments and what it refuses."""

from __future__ import annotations

import pytest


def test_edges_component_names_itself_and_the_expected_class():
    """identity.WorkloadIdentity (mutmut_9) and validation._fields_of (mutmut_11): a value that is neither the
    arguments' class nor a mapping is refused in the component's and the class's own names."""
    from tpu_serving.common.validation import ArgumentsError
    from tpu_serving.tenancy.identity import WorkloadIdentity

    with pytest.raises(ArgumentsError) as err:
        WorkloadIdentity("wi", 5)  # type: ignore[arg-type]
    text = str(err.value)
    assert text.startswith("invalid arguments of WorkloadIdentity 'wi': 1 problem")
    assert "must be a WorkloadIdentityArgs or a mapping of its fields" in text
