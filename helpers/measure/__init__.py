"""Layer 4: measuring summaries: drift of a rule over cycles, claims no user made."""
