"""Modes of a run: diff mode against a base branch, --fix, and baselines of accepted findings.
Imports formats, engine and everything below.
"""
