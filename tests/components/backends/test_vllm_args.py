"""tpu_serving.backends.vllm.args: the rules of VllmServingArgs' fields."""

from __future__ import annotations


def test_node_pools_problem_names_a_pool_gke_cannot_have():
    """Library review 10, m3: ``node_pools=('chat-v6e8-A',)`` passed the component, and the check spoke only of the
    pods it left unplaced."""
    from tpu_serving.backends.vllm.args import node_pools_problem

    assert node_pools_problem(("chat-v6e8-a", "chat-v6e8-b")) == ""
    assert node_pools_problem(("chat-v6e8-a", "chat-v6e8-A")).startswith("'chat-v6e8-A': must consist of lower-case")
