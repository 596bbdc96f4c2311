"""The message list (tests/messages.py): it holds the library's messages, and a reworded one is not in it."""

from __future__ import annotations

import pytest

from tests import messages
from tpu_serving.common.validation import ArgumentsError
from tpu_serving.config import ConfigError


def test_messages_list_holds_the_suites_messages():
    listed = messages.known()
    assert len(listed) >= 400, len(listed)  # an empty list would hold nothing to account
    assert any(t.startswith("invalid configuration of stack 'bad': ") for t in listed)
    assert any(t.startswith("invalid arguments of ") for t in listed)
    assert all(t == messages.normalise(t) for t in listed)


def test_messages_a_reworded_message_is_unknown():
    listed = messages.known()
    (text,) = [t for t in listed if "only FREQ and BYDAY are read here" in t]
    assert messages.unknown_messages([text], listed) == []
    for reworded in (
        text.replace("got COUNT", "got COUNT, FREQ"),
        text.upper(),
        text.replace("1 problem", "1 problems"),
    ):
        assert messages.unknown_messages([reworded], listed) == [reworded]


def test_messages_are_recorded_from_the_librarys_errors_only():
    before = len(messages._seen)
    ConfigError(["tpu-serving:zone: a problem of this test"])
    ArgumentsError("C", ["C.x: a problem of this test"])
    RuntimeError("not the library's")
    recorded = messages._seen[before:]
    del messages._seen[before:]  # this test's own texts are not the library's wording
    assert recorded == [
        "invalid stack configuration: 1 problem\n  - tpu-serving:zone: a problem of this test",
        "invalid arguments of C: 1 problem\n  - C.x: a problem of this test",
    ]


@pytest.mark.parametrize(
    "text, normal",
    [
        ("see /tmp/pytest-of-u/pytest-3/x0/Pulumi.s.yaml: bad", "see <tmp>: bad"),
        (f"at {messages._ROOT}/stacks/Pulumi.s.yaml", "at <root>/stacks/Pulumi.s.yaml"),
        (f"at {messages._PARENT}/shared/reference", "at <root>/../shared/reference"),
        ("<object at 0x7f55ccd6a090>", "<object at 0x...>"),
        ("topology '0x4' is not of the form AxB", "topology '0x4' is not of the form AxB"),
    ],
)
def test_messages_normalise_what_differs_between_checkouts(text, normal):
    assert messages.normalise(text) == normal


def test_messages_normalise_a_checkout_directly_under_tmp(monkeypatch):
    """New-user review round 39, m1: in /tmp/ur-fresh the parent is /tmp, which held pytest's temporary paths too."""
    monkeypatch.setattr(messages, "_ROOT", "/tmp/ur-fresh")
    monkeypatch.setattr(messages, "_PARENT", "/tmp")
    assert messages.normalise("see /tmp/pytest-of-u/pytest-3/x0/Pulumi.s.yaml: bad") == "see <tmp>: bad"
    assert messages.normalise("at /tmp/shared/reference") == "at <root>/../shared/reference"
    assert messages.normalise("at /tmp/ur-fresh/stacks/Pulumi.s.yaml") == "at <root>/stacks/Pulumi.s.yaml"


def test_messages_argument_problems_are_recorded():
    import dataclasses

    from tests.components.backends.test_disagg import pair, role
    from tpu_serving.backends.vllm.kv import KvRole
    from tpu_serving.common.validation import argument_problems

    before = len(messages._seen)
    found = argument_problems(pair(decode=dataclasses.replace(role(KvRole.DECODE), namespace="elsewhere")))
    assert found and messages._seen[before:] == found
