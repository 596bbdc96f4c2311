"""The cost phase: the estimate, a platform's share, the capacity report and the time to serve."""
