"""tpu_serving.common.settings: settings declared once, as dataclasses, for the stack file's models and the
components' arguments alike."""

from __future__ import annotations

from dataclasses import dataclass

from tpu_serving.common.settings import described


@dataclass(frozen=True)
class _Item:
    size: int = described("Size.", default=1, ge=1)


@dataclass(frozen=True)
class _Holder:
    items: tuple[_Item, ...] = described("Items.", default=())


def test_edges_settings_tuple_items_become_their_dataclass():
    """settings.to_settings (mutmut_17): a tuple of settings dataclasses comes back as those dataclasses, not as the
    stack file's models."""
    from tpu_serving.common.settings import settings_model, to_settings

    model = settings_model(_Holder, "HolderConfig").model_validate({"items": [{"size": 2}, {}]})
    assert to_settings(model, _Holder) == _Holder(items=(_Item(2), _Item(1)))
