"""tpu_serving_tools.text: the tools' wording helpers; a count's noun agrees with it ("1 VM", never "1 VMs"), as in the
catalog's own slice descriptions (issue "A platform team adopts it", item 10)."""

from __future__ import annotations

from tpu_serving import catalog
from tpu_serving_tools.text import counted


def test_text_a_slice_description_and_the_helper():
    assert "1 VM x 1 chip, 32 GiB HBM" in catalog.slice_shape("ct6e-standard-1t", "1x1").describe()
    assert "4 VMs x 4 chips" in catalog.slice_shape("ct6e-standard-4t", "4x4").describe()
    assert (counted(1, "VM"), counted(2, "VM"), counted(0, "VM")) == ("1 VM", "2 VMs", "0 VMs")
