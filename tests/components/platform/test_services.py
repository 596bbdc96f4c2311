"""services: the Google Cloud APIs a stack enables."""

from __future__ import annotations


def test_services_image_streaming_api_only_when_streaming():
    """services.required_apis (mutmut_7): the Container File System API is needed only with image streaming."""
    from tpu_serving.platform.services import IMAGE_STREAMING_API, required_apis

    assert IMAGE_STREAMING_API in required_apis(image_streaming=True)
    assert IMAGE_STREAMING_API not in required_apis(image_streaming=False)
