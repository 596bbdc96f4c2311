"""``tpu-serving scan``: the field's own scanner (Checkov) over every stack, with a reviewed baseline."""
