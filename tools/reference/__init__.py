"""The reference files the tests and tools read (make reference): their sources, fetched and checked by sha256, and the schemas read from them."""
