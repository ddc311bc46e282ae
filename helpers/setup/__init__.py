"""Layer 8, the top: the set-up check (notebook 00) and the notebook runner (tools, tests)."""
