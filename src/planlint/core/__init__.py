"""Core: the model (findings, results, reports), config, the YAML loader and its value types,
positions, messages, suppressions, repository paths, the floating-reference test, atomic
writes, currencies and registry settings. Imports nothing else from planlint.
"""
