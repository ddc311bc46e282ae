"""Layer 4: measuring what a memory sends: drift, claims no user made, attacks, bills and ledgers."""

# The kinds the lessons show, in order: what notebooks 06 and 07 measure, so a kind added to the registry changes none.
LESSON_KINDS = ("summary memory", "summary buffer memory", "sliding window")
