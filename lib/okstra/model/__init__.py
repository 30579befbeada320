"""Typed records parsed once at the edge; inner code never pokes at raw dicts."""
