"""A call site as call resolution answers it: what the call runs, for its caller. Its own
module: the symbol table's memo keeps these, and call resolution makes them."""

from __future__ import annotations

from agentguard.facts.module_facts import Call, Function, ModuleFacts


class CallSite:
    """One call site as resolved for its caller: the callee's qualified name and the project
    function the call runs (a class's ``__init__`` for a construction), if any; ``also``:
    the other project functions it may run (a dispatch dict's entries past the first)."""

    __slots__ = ("also", "call", "callee", "caller", "facts", "forwarded", "target")

    def __init__(
        self,
        call: Call,
        caller: Function | None,
        facts: ModuleFacts,
        callee: str,
        target: str | None,
    ) -> None:
        self.call = call
        self.caller = caller
        self.facts = facts
        self.callee = callee
        self.target = target
        self.also: tuple[str, ...] = ()
        # The call as the target receives it, when a runner forwards it
        # (``asyncio.to_thread(send, to, body)`` calls ``send(to, body)``).
        self.forwarded: Call | None = None

    @property
    def edge_call(self) -> Call:
        """The call whose arguments the target receives."""
        return self.forwarded or self.call

    @property
    def targets(self) -> tuple[str, ...]:
        """Every project function the call may run."""
        return (self.target, *self.also) if self.target else self.also
