"""The local end-to-end run: a shipped stack turned into one a local cluster can take (:mod:`.overlay`)."""
