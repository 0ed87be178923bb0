"""The order workflow the Temporal tests run: one activity, by name, with a short timeout."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy


@workflow.defn
class OrderWorkflow:
    @workflow.run
    async def run(self, cart_id: str, start_to_close_s: float, guarded: bool) -> Any:
        if guarded:
            from agentguard.engines.temporal import in_flight_retry_policy

            policy = in_flight_retry_policy(maximum_attempts=60)
        else:
            policy = RetryPolicy(
                initial_interval=timedelta(milliseconds=500), maximum_interval=timedelta(seconds=1)
            )
        return await workflow.execute_activity(
            "create_order",
            cart_id,
            start_to_close_timeout=timedelta(seconds=start_to_close_s),
            retry_policy=policy,
        )
