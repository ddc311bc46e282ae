"""The labels every stand-in text carries, so its output is never taken for a model's words."""

MODEL_NAME = "offline-stand-in"
MARKER = "[offline stand-in]"
SUMMARY_MARKER = "[offline stand-in summary]"
FINGERPRINT = "offline-stand-in-v2"

