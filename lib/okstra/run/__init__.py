"""Preparing a run: layout, sequences, catalog, roles, render-bundle, prompts, config."""
