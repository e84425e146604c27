"""Output formats beyond text and json (the table is `planlint.formats.reporters.REPORTERS`).

Each module renders a `Report` and imports nothing heavy: they run on every
CI lint.
"""
