"""Layer 5: what a notebook shows: every printed line format (``lines``), charts, slider panels."""
