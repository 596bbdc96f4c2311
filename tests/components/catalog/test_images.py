"""images: the image references the library accepts."""

from __future__ import annotations


def test_images_an_image_without_tag_or_digest_is_refused():
    """images.image_problem (mutmut_19): an image with neither tag nor digest is refused, in these words."""
    from tpu_serving.catalog.images import image_problem

    assert image_problem("us-docker.pkg.dev/p/r/vllm-tpu", pinned=True) == (
        "has no tag or digest; pin a release tag or a sha256 digest"
    )
    assert image_problem("us-docker.pkg.dev/p/r/vllm-tpu") == ""
