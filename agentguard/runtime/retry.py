"""Retry policy: only for named error codes, full-jitter backoff, a total deadline."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from agentguard.runtime.errors import AMBIGUOUS_CODES, ErrorCode, Sent

DEFAULT_RETRY_ON = frozenset(
    {ErrorCode.RATE_LIMIT, ErrorCode.TRANSIENT_NETWORK, ErrorCode.SERVER_ERROR}
)


def _codes(values: Iterable[ErrorCode | str]) -> frozenset[ErrorCode]:
    return frozenset(ErrorCode(value) for value in values)


@dataclass(frozen=True)
class RetryPolicy:
    """How the runtime itself retries one call.

    ``max_attempts`` counts the first attempt. A retry happens only for a code in ``retry_on``,
    only while ``deadline_s`` (measured from the first attempt) leaves room for the delay, and
    never for a tool that is not idempotent once its request may have been applied: that case
    goes to reconciliation instead.
    """

    max_attempts: int = 1
    backoff_ms: float = 200.0
    max_backoff_ms: float = 5_000.0
    deadline_s: float | None = 30.0
    retry_on: frozenset[ErrorCode] = field(default=DEFAULT_RETRY_ON)
    max_retry_after_s: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts counts the first attempt and must be at least 1")
        if self.backoff_ms < 0 or self.max_backoff_ms < 0:
            raise ValueError("backoff must not be negative")
        object.__setattr__(self, "retry_on", _codes(self.retry_on))

    def should_retry(
        self,
        error_code: ErrorCode | str,
        attempt: int,
        idempotency: str = "non_idempotent",
        *,
        sent: Sent | str | bool | None = None,
    ) -> bool:
        """Whether attempt ``attempt`` (1 = the first), failed with ``error_code``, may be retried.

        Only codes in ``retry_on``, only below ``max_attempts``, and never for a
        ``non_idempotent`` tool once its request may have been sent (``sent`` is not "no" and
        the code leaves the outcome open: a timeout, a dropped connection, a server error):
        a second attempt could do it twice, so the call goes to reconciliation instead. A
        ``conditional`` tool may retry: it passes the same key, which the service honours.
        """
        code = ErrorCode(error_code)
        if code not in self.retry_on or attempt >= self.max_attempts:
            return False
        may_have_applied = code in AMBIGUOUS_CODES and Sent.parse(sent) is not Sent.NO
        return not (
            may_have_applied and str(getattr(idempotency, "value", idempotency)) == "non_idempotent"
        )

    def delay_s(
        self, attempt: int, rng: random.Random, retry_after_s: float | None = None
    ) -> float:
        """Full jitter: uniform in [0, min(cap, base * 2**(attempt-1))], at least Retry-After."""
        ceiling_ms = min(self.max_backoff_ms, self.backoff_ms * (2 ** max(0, attempt - 1)))
        delay = rng.uniform(0.0, ceiling_ms) / 1000.0
        if retry_after_s is not None:
            delay = max(delay, min(retry_after_s, self.max_retry_after_s))
        return delay


NO_RETRY = RetryPolicy()
