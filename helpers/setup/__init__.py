"""Layer 8, the top: the set-up check (notebook 00) and where a notebook runs."""
