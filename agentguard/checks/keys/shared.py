"""What the key rules' fixes share: where a guarded tool takes its idempotency key from."""

from __future__ import annotations

# The key the runtime builds for the call being made (agentguard.runtime.current_call).
KEY_FROM_RUNTIME = "current_call().idempotency_key"
