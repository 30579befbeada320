"""Core: errors, the command skeleton, file I/O, paths, processes, settings, schemas."""
