"""Engine conformance: every flag and environment variable the library writes into a container exists in
the pinned release of the program that reads it.

The tables (``tables/*.json``) are extracted from the upstream releases by committed scripts
(``extract_*.py``), with their provenance; ``make check`` reads them and never the network.
"""
