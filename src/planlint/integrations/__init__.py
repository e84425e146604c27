"""Integrations: the GitHub API client, the event of a workflow run, the sticky PR comment.
Imports modes and everything below.
"""
