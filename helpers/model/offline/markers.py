"""The labels every stand-in text carries, so its output is never taken for a model's words."""
from __future__ import annotations

MODEL_NAME = "offline-stand-in"
MARKER = "[offline stand-in]"
SUMMARY_MARKER = "[offline stand-in summary]"
FINGERPRINT = "offline-stand-in-v2"


def strip_marker(text: str) -> str:
    """Text without the stand-in's leading marker, so markers never pile up in a summary."""
    text = (text or "").strip()
    return next((text[len(marker):].strip() for marker in (SUMMARY_MARKER, MARKER) if text.startswith(marker)), text)


def is_stand_in_text(text: str) -> bool:
    """True for a reply or summary the stand-in wrote (it starts with a marker)."""
    return (text or "").lstrip().startswith((MARKER, SUMMARY_MARKER))
