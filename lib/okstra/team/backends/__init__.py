"""Terminal backends behind one interface (base.Backend, base.for_run)."""
