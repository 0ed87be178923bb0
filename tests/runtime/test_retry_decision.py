"""RetryPolicy.should_retry: the runtime's retry decision, public for agent loops of their own."""

from __future__ import annotations

import pytest

from agentguard.runtime import ErrorCode, Idempotency, RetryPolicy, Sent

POLICY = RetryPolicy(max_attempts=3, retry_on={"RATE_LIMIT", "TIMEOUT", "SERVER_ERROR"})


@pytest.mark.parametrize(
    ("code", "attempt", "idempotency", "sent", "expected"),
    [
        ("RATE_LIMIT", 1, "non_idempotent", None, True),  # refused by the service: not applied
        ("TIMEOUT", 1, "non_idempotent", None, False),  # may have been sent: could do it twice
        ("TIMEOUT", 1, "non_idempotent", Sent.NO, True),  # never left: a connect timeout
        ("TIMEOUT", 1, "conditional", "yes", True),  # same key, honoured downstream
        ("TIMEOUT", 1, Idempotency.IDEMPOTENT, True, True),
        ("SERVER_ERROR", 2, "idempotent", None, True),
        ("SERVER_ERROR", 3, "idempotent", None, False),  # max_attempts counts the first
        ("PERMISSION_DENIED", 1, "idempotent", None, False),  # not listed
        (ErrorCode.TRANSIENT_NETWORK, 1, "idempotent", None, False),  # not listed here
    ],
)
def test_should_retry(
    code: str, attempt: int, idempotency: str, sent: object, expected: bool
) -> None:
    assert POLICY.should_retry(code, attempt, idempotency, sent=sent) is expected  # type: ignore[arg-type]


def test_an_unknown_code_is_refused_loudly() -> None:
    with pytest.raises(ValueError):
        POLICY.should_retry("SOMETHING_ELSE", 1, "idempotent")
