"""The tpu-serving component provider (see PulumiPlugin.yaml)."""

from tpu_serving.provider import main

if __name__ == "__main__":
    main()
