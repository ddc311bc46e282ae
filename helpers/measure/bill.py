"""The full bill of a conversation (notebook 07): per turn, the request's tokens and each summariser call's
prompt and output tokens, summed to one cost per strategy. Counted figures are o200k_base counts; billed ones
(an endpoint's ``usage``, with a model) are kept beside them, never mixed in."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from helpers.base.tokens import count_tokens


@dataclass(frozen=True)
class CallBill:
    """One summariser call: tokens it sent and wrote, counted, and billed where the endpoint reported them."""
    prompt_tokens: int
    output_tokens: int
    billed_prompt: int | None = None
    billed_output: int | None = None

    @property
    def tokens(self) -> int:
        """Prompt and output tokens."""
        return self.prompt_tokens + self.output_tokens


def call_bill(call: Any) -> CallBill:
    """The bill of a recorded call (``request``, ``summary``, maybe billed tokens: a ``SummariserCall``)."""
    counted = sum(count_tokens(message["content"]) for message in call.request)
    return CallBill(counted, count_tokens(call.summary), getattr(call, "prompt_tokens", None),
                    getattr(call, "completion_tokens", None))


@dataclass(frozen=True)
class TurnBill:
    """One turn: the chat request's tokens and the summariser calls the memory made during the turn."""
    turn: int
    request_tokens: int
    calls: tuple[CallBill, ...] = ()
    billed_request: int | None = None  # prompt_tokens the endpoint billed for the chat request (with a model)

    @property
    def tokens(self) -> int:
        """What the turn cost in tokens: the request plus every summariser call's prompt and output."""
        return self.request_tokens + sum(call.tokens for call in self.calls)


@dataclass(frozen=True)
class Bill:
    """A strategy's whole bill: the turns, and the totals a table shows."""
    turns: tuple[TurnBill, ...]

    @property
    def request_tokens(self) -> int:
        """Tokens of every chat request."""
        return sum(turn.request_tokens for turn in self.turns)

    @property
    def summariser_calls(self) -> int:
        """How many summariser calls the memory made."""
        return sum(len(turn.calls) for turn in self.turns)

    @property
    def summariser_prompt_tokens(self) -> int:
        """Tokens the summariser calls sent."""
        return sum(call.prompt_tokens for turn in self.turns for call in turn.calls)

    @property
    def summariser_output_tokens(self) -> int:
        """Tokens the summariser calls wrote."""
        return sum(call.output_tokens for turn in self.turns for call in turn.calls)

    @property
    def total(self) -> int:
        """The one cost of the strategy: every request plus every summariser call, prompt and output."""
        return sum(turn.tokens for turn in self.turns)

    @property
    def billed_total(self) -> int | None:
        """The same total as the endpoint billed it, or None when any part has no billed figure (offline)."""
        parts = [turn.billed_request for turn in self.turns]
        parts += [part for turn in self.turns for call in turn.calls
                  for part in (call.billed_prompt, call.billed_output)]
        return None if not parts or any(part is None for part in parts) else sum(parts)  # type: ignore[misc]

    def per_turn(self) -> list[int]:
        """Tokens each turn cost, in order (the token curve)."""
        return [turn.tokens for turn in self.turns]


def ratio(bill: Bill, reference: Bill) -> float:
    """``bill``'s total as a multiple of ``reference``'s (the full buffer's): 0.25 is a quarter of its cost."""
    return bill.total / reference.total if reference.total else float("nan")
