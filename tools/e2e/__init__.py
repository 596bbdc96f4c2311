"""The end-to-end test's tools: the pinned Go toolchain (:mod:`tpu_serving_tools.e2e.toolchain`)."""
