"""The report: schema + cross-file rules, render, last-valid, finalize, HTML views, user-response sidecar."""
