"""The engine: a run (engine.run: discover, prefetch, lint, finish), one file (engine.lint),
discovery, the process pool (engine.parallel) and the result cache. Imports rules, services, core.
"""
