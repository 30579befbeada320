"""okstra: run a team of AI coding CLI workers from one lead agent."""

__version__ = "0.1.0"
