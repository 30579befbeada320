"""Command bodies: one module per `bin/` door, same name in snake case.

Each module parses its arguments with `core.cli.parser` and calls one entry of
a domain (run, team, report, harness); the work lives in the domains.
"""
