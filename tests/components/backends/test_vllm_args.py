"""tpu_serving.backends.vllm.args: the rules of VllmServingArgs' fields."""

from __future__ import annotations

from tpu_serving import catalog


def test_node_pools_problem_names_a_pool_gke_cannot_have():
    """Library review 10, m3: ``node_pools=('chat-v6e8-A',)`` passed the component, and the check spoke only of the
    pods it left unplaced."""
    from tpu_serving.backends.vllm.args import node_pools_problem

    assert node_pools_problem(("chat-v6e8-a", "chat-v6e8-b")) == ""
    assert node_pools_problem(("chat-v6e8-a", "chat-v6e8-A")).startswith("'chat-v6e8-A': must consist of lower-case")


def test_edges_vllm_token_without_hugging_face_loader_is_refused_in_python():
    """vllm.args.VllmServingArgs.problems: a token secret with another loader, in Python's spelling."""
    from tpu_serving.backends.vllm.args import SecretKey

    args = _vllm_args(
        hf_token_secret=SecretKey(name="hf", key="token"),
    )
    assert "hf_token_secret: only the hugging-face loader reads a token" in args.problems()


def _vllm_args(**changes: object):
    """Valid vLLM serving arguments for a v5e-16 slice, with ``changes``."""
    from tpu_serving.backends.vllm.args import VllmServingArgs
    from tpu_serving.catalog.models import Attention, ModelSize, WeightPrecision

    base: dict[str, object] = dict(
        namespace="ns",
        service_account="sa",
        shape=catalog.resolve_slice_name("v5litepod-16"),
        model="m",
        served_model_name="x",
        model_size=ModelSize(8, WeightPrecision.BF16, Attention(layers=32, kv_heads=8, head_dim=128)),  # "x": unknown
        weights_bucket="b",
    )
    return VllmServingArgs(**{**base, **changes})  # type: ignore[arg-type]
