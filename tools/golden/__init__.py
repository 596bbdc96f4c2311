"""The golden plans (make golden) and the review of their changes (make golden-review)."""
