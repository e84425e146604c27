"""Services the rules consult: what is published (catalog, registry and its HTTP client)
and the split files' data (split_data). Imports only core.
"""
