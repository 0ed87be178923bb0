"""The runtime's vocabulary: risk, idempotency, replay, lookup verdicts, tool specs, defaults."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from agentguard.runtime.context import (
    CallContext,
)
from agentguard.runtime.retry import RetryPolicy


class Risk(str, Enum):
    READ = "read"
    WRITE = "write"
    NETWORK = "network"
    DESTRUCTIVE = "destructive"


class Idempotency(str, Enum):
    IDEMPOTENT = "idempotent"
    CONDITIONAL = "conditional"
    NON_IDEMPOTENT = "non_idempotent"


class Replay(str, Enum):
    AUTO = "auto"
    ASK = "ask"
    NEVER = "never"


@dataclass(frozen=True)
class Found:
    """The lookup found the effect: the call took effect; ``value`` becomes its result."""

    value: Any = None


@dataclass(frozen=True)
class NotFound:
    """The lookup is sure the effect did not happen."""


@dataclass(frozen=True)
class Unknown:
    """The lookup cannot tell (yet)."""

    reason: str = ""


Verdict = Found | NotFound | Unknown
KeyFunction = Callable[[CallContext], str]


class SimulatedCrash(BaseException):
    """Raised by fault injection to stop a call as a dead process would: nothing more recorded."""


class CancelledBeforeStart(Exception):
    """The call was cancelled after its claim was written and before its body started."""


# How a claim released by a cancellation or an interruption is recorded (its error_detail).
NOTHING_ATTEMPTED = "cancelled before the body ran: nothing was attempted"


class AttemptStillRunning(TimeoutError):
    """The runtime's own ``timeout_s`` gave up waiting, but the body may still send.

    A sync body cannot be interrupted (it runs on in its thread), and an async body that was
    cancelled may have handed its request to a thread. Until the attempt is known to be over,
    no lookup can settle the call and no second attempt starts.
    """


@dataclass
class ToolSpec:
    name: str
    function: Callable[..., Any]
    is_async: bool
    risk: Risk
    idempotency: Idempotency
    replay: Replay
    key: KeyFunction | Sequence[str] | None
    reconcile: Callable[[CallContext], Any] | None
    retry: RetryPolicy
    timeout_s: float | None
    approve: Callable[[CallContext], Any] | None
    redact_fields: frozenset[str]
    settle_s: float
    lease_s: float | None
    signature: inspect.Signature
    drop_first: bool
    max_output_bytes: int | None = None
    lookup_timeout_s: float | None = None
    side_effects: tuple[str, ...] = ()
    simple_parameters: tuple[tuple[str, ...], frozenset[str], dict[str, Any]] | None = None
    # every parameter's name in order, when none is variadic or positional-only
    parameter_names: tuple[str, ...] | None = None
    # parameters a framework fills with its context object (MCP's ctx: Context, Pydantic AI's
    # RunContext): they name the run and are no argument of the request
    context_parameters: frozenset[str] = frozenset()
    # the fields every ledger entry of this tool starts with, built at its first call
    entry_template: dict[str, Any] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def lookup_name(self) -> str | None:
        if self.reconcile is None:
            return None
        return getattr(self.reconcile, "__name__", "the lookup")

    @property
    def lookup_tool(self) -> str | None:
        """The lookup's tool name, when the lookup is itself a guarded tool the model can call."""
        lookup_spec = getattr(self.reconcile, "__agentguard__", None)
        return lookup_spec.name if isinstance(lookup_spec, ToolSpec) else None


@dataclass(frozen=True)
class RecoveryReport:
    expired: int = 0
    succeeded: int = 0
    failed: int = 0
    uncertain: int = 0
    call_ids: list[str] = field(default_factory=list)
    replayed: int = 0  # of the settled calls, how many recovery re-ran (replay="auto")


# Effects the decision generator asks its driver to perform.


# What the model is shown of a result at most; the ledger keeps the whole result. A tool that
# returns more (a 20 MB export) gives OUTPUT_TOO_LARGE with a preview; None shows everything.
DEFAULT_MAX_OUTPUT_BYTES = 100_000
# How long a reconcile lookup is waited for (when the tool has no shorter timeout_s).
DEFAULT_LOOKUP_TIMEOUT_S = 10.0

# DESIGN 1's effect kinds; a tool declares its own (side_effects=), else its risk's.
EFFECT_KINDS = frozenset(
    {"read", "write", "network_write", "destructive", "exec", "payment", "message", "unknown"}
)
_EFFECTS_BY_RISK = {
    Risk.READ: ("read",),
    Risk.WRITE: ("write",),
    Risk.NETWORK: ("network_write",),
    Risk.DESTRUCTIVE: ("destructive",),
}

_DEFAULTS_BY_RISK = {
    Risk.READ: (Idempotency.IDEMPOTENT, Replay.AUTO),
    Risk.WRITE: (Idempotency.NON_IDEMPOTENT, Replay.NEVER),
    Risk.NETWORK: (Idempotency.NON_IDEMPOTENT, Replay.NEVER),
    # a destructive tool runs only once approved, unless configured otherwise (replay=...)
    Risk.DESTRUCTIVE: (Idempotency.NON_IDEMPOTENT, Replay.ASK),
}
