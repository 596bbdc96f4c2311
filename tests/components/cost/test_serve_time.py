"""Tests of :mod:`tpu_serving.cost.serve_time`: published start and throughput figures, each with its source."""

from __future__ import annotations

import dataclasses

import pytest

from tpu_serving import catalog
from tpu_serving.cost import serve_time
from tpu_serving.cost.serve_time import (
    COMPILE,
    IMAGE_SIZE,
    THROUGHPUT,
    WEIGHT_READ,
    Engine,
    EngineProfile,
    Published,
)

V6E8 = catalog.resolve_slice_name("v6e-8")
LLAMA70 = "meta-llama/Llama-3.3-70B-Instruct"


def profile(loader: str = "runai-streamer", cache: bool = False, model: str = LLAMA70) -> EngineProfile:
    return EngineProfile(
        "LeaderWorkerSet vllm",
        Engine.VLLM_TPU,
        model,
        loader,
        cache,
        "docker.io/vllm/vllm-tpu:v0.29.0",
        "vllm-tpu:v0.29.0",
    )


def every_figure() -> list[Published]:
    return [
        *IMAGE_SIZE.values(),
        *WEIGHT_READ.values(),
        *COMPILE.values(),
        *(t.output_tokens_per_second_per_chip for t in THROUGHPUT),
    ]


def test_published_refuses_a_figure_without_its_source() -> None:
    with pytest.raises(ValueError, match="needs its source"):
        Published(1, 1, "s", "a start", "")
    with pytest.raises(ValueError, match="needs its source"):
        dataclasses.replace(IMAGE_SIZE[Engine.VLLM_TPU], source="tpu-inference PR 1245")


def test_published_refuses_a_range_that_runs_backwards() -> None:
    with pytest.raises(ValueError, match="from low to high"):
        Published(345, 209, "s", "a start", "https://example.com/x")


def test_every_figure_of_the_tables_cites_an_https_source() -> None:
    figures = every_figure()
    assert len(figures) >= 5  # an emptied table fails
    assert all(
        f.source.startswith("https://github.com/") or f.source.startswith("https://cloud.google.com/") for f in figures
    ), [f.source for f in figures]


def test_serve_time_sums_the_weight_read_and_the_compilation_and_cites_each_source() -> None:
    t = serve_time.group_start(profile(), 130.0, image_cache_disk=False, image_streaming=True)
    rate, comp = WEIGHT_READ["runai-streamer"], COMPILE[(Engine.VLLM_TPU, False)]
    assert t.low_seconds == pytest.approx(130 * 1024 / 727 + 209)
    assert t.high_seconds == pytest.approx(130 * 1024 / 53 + 345)
    line = t.line(3600)
    for source in (IMAGE_SIZE[Engine.VLLM_TPU].source, rate.source, comp.source):
        assert source in line
    assert "about 7-48 minutes" in line
    # the streamed pull has no published time, so the window is neither met nor missed for certain
    assert "whether it fits the 60-minute startup window (serving.probes.maxStartupSeconds) is not known" in line
    assert len(t.unpublished) == 1 and "streamed pull" in t.unpublished[0]


def test_serve_time_names_a_loader_without_a_published_rate_as_unpublished() -> None:
    t = serve_time.group_start(profile(loader="gcsfuse"), 130.0, image_cache_disk=True, image_streaming=True)
    assert t.unpublished == (f"the weight read of loader gcsfuse ({serve_time.FUSE_READ})",)
    assert t.low_seconds == 209 and t.high_seconds == 345
    assert "https://github.com/marin-community/marin/pull/1208" in t.line(3600)
    hub = serve_time.group_start(profile(loader="hugging-face"), 130.0, image_cache_disk=True, image_streaming=True)
    assert hub.unpublished == ("the weight read of loader hugging-face",)


def test_serve_time_of_several_vms_gives_no_weight_read_from_one_vms_rate() -> None:
    t = serve_time.group_start(profile(), 377.0, image_cache_disk=True, image_streaming=True, vms=4)
    assert t.low_seconds == 209 and t.high_seconds == 345
    assert t.unpublished[0].startswith("the weight read of 4 VMs (the one published rate is one VM's")


def test_serve_time_line_is_within_the_window_only_when_every_term_is_published() -> None:
    every = serve_time.group_start(profile(), 130.0, image_cache_disk=True, image_streaming=True)
    assert every.unpublished == ()
    assert "within the 60-minute startup window" in every.line(3600)
    assert "which may exceed the 30-minute startup window" in every.line(1800)
    assert "MORE than the 5-minute startup window" in every.line(300)


def test_serve_time_without_the_model_size_leaves_the_weight_read_unpublished() -> None:
    t = serve_time.group_start(profile(), None, image_cache_disk=False, image_streaming=True)
    assert "the weight read of loader runai-streamer" in t.unpublished


def test_serve_time_says_when_the_startup_window_is_shorter_than_the_published_terms() -> None:
    t = serve_time.group_start(profile(), 130.0, image_cache_disk=False, image_streaming=True)
    assert "MORE than the 5-minute startup window" in t.line(300)
    assert "within" not in t.line(300) and "not known" not in t.line(300)


def test_serve_time_of_an_image_cache_disk_reads_no_image_and_without_streaming_the_pull_is_unpublished() -> None:
    disk = serve_time.group_start(profile(), 130.0, image_cache_disk=True, image_streaming=True)
    assert "secondary boot disk" in disk.line(3600)
    assert not any("pull" in u for u in disk.unpublished)
    pulled = serve_time.group_start(profile(), 130.0, image_cache_disk=False, image_streaming=False)
    assert pulled.unpublished[0].startswith("the pull rate of 19.5 GB")


def test_serve_time_with_the_cache_in_cloud_storage_keeps_the_cold_figure_and_says_why() -> None:
    cached = serve_time.group_start(profile(cache=True), 130.0, image_cache_disk=False, image_streaming=True)
    cold = serve_time.group_start(profile(), 130.0, image_cache_disk=False, image_streaming=True)
    assert (cached.low_seconds, cached.high_seconds) == (cold.low_seconds, cold.high_seconds)
    assert "no measure of an XLA cache on a FUSE volume" in cached.line(3600)
    assert "marin-community/marin issue 2318" in cached.line(3600)


def test_token_cost_line_divides_the_chip_hour_price_by_each_published_throughput() -> None:
    line = serve_time.token_cost_line(profile(), V6E8, 2.70, "a note of the price")
    for total, concurrency in ((2494.80, 64), (3544.46, 128)):
        assert f"${2.70 / (total / 8 * 3600) * 1e6:,.2f} at concurrency {concurrency}" in line
    assert "$2.41 at concurrency 64" in line and "$1.69 at concurrency 128" in line
    assert "P99 TTFT 8250.26 ms" in line and "(1000 in / 1000 out)" in line
    assert "(a note of the price)" in line
    assert "measured with vllm-tpu v0.12.0" in line and "this stack runs vllm-tpu:v0.29.0" in line
    for row in THROUGHPUT:
        assert row.output_tokens_per_second_per_chip.source in line


def test_token_cost_line_gives_no_figure_for_another_model_shape_or_a_missing_price() -> None:
    other_model = serve_time.token_cost_line(profile(model="meta-llama/Llama-3.1-8B-Instruct"), V6E8, 2.70)
    assert "no throughput is published for meta-llama/Llama-3.1-8B-Instruct on v6e-8" in other_model
    other_shape = serve_time.token_cost_line(profile(), catalog.resolve_slice_name("v6e-16"), 2.70)
    assert "no throughput is published" in other_shape and "$" not in other_shape
    assert "no chip-hour price" in serve_time.token_cost_line(profile(), V6E8, None)


def test_published_throughput_matches_the_model_exactly_never_by_substring() -> None:
    assert serve_time.published_throughput(LLAMA70, V6E8, Engine.VLLM_TPU) == list(THROUGHPUT)
    assert serve_time.published_throughput(LLAMA70 + "-FP8", V6E8, Engine.VLLM_TPU) == []
    assert serve_time.published_throughput(LLAMA70.lower(), V6E8, Engine.VLLM_TPU) == []


def test_published_throughput_of_the_same_topology_on_two_vms_is_not_the_one_vm_figure() -> None:
    two_vms = catalog.slice_shape("ct6e-standard-4t", "2x4")
    assert serve_time.published_throughput(LLAMA70, two_vms, Engine.VLLM_TPU) == []


def test_token_cost_line_of_disaggregated_roles_gives_no_figure_from_a_one_group_throughput() -> None:
    disagg = dataclasses.replace(profile(), disaggregated=True)
    line = serve_time.token_cost_line(disagg, V6E8, 2.70)
    assert "with prefill and decode disaggregated, so no cost per token is given" in line
    assert "$1.69" not in line


def test_group_start_refuses_weights_of_no_size() -> None:
    with pytest.raises(ValueError, match="must be above 0"):
        serve_time.group_start(profile(), -5.0, image_cache_disk=False, image_streaming=True)


def test_stack_cost_line_spreads_the_stacks_tpu_cost_over_its_fewest_and_most_groups() -> None:
    stack = dataclasses.replace(profile(), groups=(2, 3))
    line = serve_time.stack_cost_line(stack, V6E8, (86.40, 86.40))
    assert line is not None
    # 86.40 / (2 x 3544.46 x 3600) x 1e6 = 3.39; with 2494.80: 4.81; three groups: 2.26 and 3.21
    assert "2 group(s) at $86.40/hour: $3.39-$4.81; 3 group(s) at $86.40/hour: $2.26-$3.21" in line
    fixed = serve_time.stack_cost_line(profile(), V6E8, (21.60, 21.60))
    assert fixed is not None and fixed.count("group(s)") == 1 and "1 group(s) at $21.60/hour: $1.69-$2.41" in fixed


def test_stack_cost_line_gives_none_without_a_published_throughput_or_a_price() -> None:
    assert serve_time.stack_cost_line(profile(model="meta-llama/Llama-3.1-8B-Instruct"), V6E8, (1.0, 1.0)) is None
    assert serve_time.stack_cost_line(profile(), V6E8, (0.0, 0.0)) is None
