"""The startup window against a group's published start (tpu_serving.config.startup_window)."""

from __future__ import annotations

import pytest

from tests.fixtures.configs import VLLM, load, with_serving
from tpu_serving.config import ConfigError
from tpu_serving.config.startup_window import startup_window_problems

KEY = "tpu-serving:serving.probes.maxStartupSeconds"


def test_startup_window_problems_accepts_a_window_that_covers_the_published_least() -> None:
    # VLLM's v5litepod-16 slice is 4 VMs: no weight read is published for more than one VM, so the least is vLLM
    # TPU's compilation alone, 209 s (tpu-inference PR 2517).
    assert startup_window_problems(load(with_serving(VLLM, probes={"maxStartupSeconds": 209}))) == []


def test_startup_window_problems_refuses_a_window_below_the_published_least_at_its_key() -> None:
    with pytest.raises(ConfigError) as refused:
        load(with_serving(VLLM, probes={"maxStartupSeconds": 208}))
    (line,) = [p for p in str(refused.value).splitlines() if KEY in p]
    assert f"{KEY} = 208" in line and "at least 209 s" in line and "tpu-inference/pull/2517" in line, line
    assert "set it to 209 or more" in line, line


def test_startup_window_problems_counts_the_weight_read_of_a_single_vm_slice() -> None:
    # One v6e-8 VM and the Run:ai streamer: 70B in BF16 (about 131 GiB) at 727 MiB/s at best (marin issue 3768) is
    # about 184 s on top of the 209 s of compilation.
    cfg = with_serving(VLLM, probes={"maxStartupSeconds": 300}, loader="runai-streamer")
    cfg["tpu-serving:tpuSlices"] = [{"name": "v5e16", "slice": "v6e-8", "diskSizeGb": 300}]
    with pytest.raises(ConfigError) as refused:
        load(cfg)
    (line,) = [p for p in str(refused.value).splitlines() if KEY in p]
    assert "on 1 VM(s)" in line and "marin-community/marin/issues/3768" in line, line
    least = int(line.split("at least ")[1].split(" s")[0])
    assert 380 <= least <= 400, line
