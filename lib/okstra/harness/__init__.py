"""Claude Code side: the write-guard decision, the compact reminder, the settings merge."""
