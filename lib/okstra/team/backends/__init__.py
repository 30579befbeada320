"""Terminal backends behind one interface (base.Backend, registry.for_run)."""
