"""The documentation's generated parts (make readme): the settings and components reference, the cost table, make check's output, the README's stacks."""
