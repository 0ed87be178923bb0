"""The knowledge behind the checklist rules Q3-Q8, loaded from ``rules/checklist.yaml``.

Kept apart from ``catalog.py`` so the catalogue file can grow without touching the core
loader; a ``Catalog`` builds it (``catalog.checklist``), so there is one route to it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentguard.knowledge.catalog_keys import (
    NONEMPTY_TEXT,
    REGEX,
    STRINGS,
    TEXT,
    default_to,
    entry_list,
    key,
    listed,
    load_keys,
    matcher,
    mutable,
    ordered,
    pattern,
    text_or_empty,
)
from agentguard.knowledge.matcher import Matcher

WHEN = {"enum": ["present", "is_true", "true_or_exception", "absent_or_continue"]}


@dataclass(frozen=True)
class Setting:
    """A framework setting (a keyword on a call or a tool) with what it does."""

    match: tuple[str, ...] = key("match", STRINGS, ordered, required=True)
    kwarg: str = key("kwarg", TEXT, text_or_empty, required=True)
    text: str = key("text", TEXT, text_or_empty, required=True)
    when: str = key("when", WHEN, default_to("present"))
    framework: str = key("framework", TEXT, text_or_empty)
    unless: tuple[tuple[str, str], ...] = ()


def _settings(at: str) -> list[Setting]:
    return entry_list(at, Setting)


class Knowledge:
    """The checklist catalogue, one typed field per key (its place in the catalogue
    first)."""

    ledger_functions: Matcher[bool] = key("ledger.functions", STRINGS, matcher)
    ledger_receiver: re.Pattern[str] = key("ledger.receiver_pattern", REGEX, pattern)
    ledger_methods: set[str] = key("ledger.write_methods", STRINGS, mutable)
    ledger_sql: re.Pattern[str] = key("ledger.sql_table_pattern", REGEX, pattern)
    input_identity: re.Pattern[str] = key("ledger.input_identity_pattern", REGEX, pattern)
    ledger_sql_methods: set[str] = key("ledger.sql_methods", STRINGS, mutable)
    ledger_row_methods: set[str] = key("ledger.row_methods", STRINGS, mutable)
    ledger_row_class: re.Pattern[str] = key("ledger.row_class_pattern", REGEX, pattern)

    timeout_exceptions: set[str] = key("timeouts.exceptions", STRINGS, mutable)
    before_send: set[str] = key("timeouts.before_send", STRINGS, mutable)
    uncertain_words: re.Pattern[str] = key("timeouts.uncertain_pattern", REGEX, pattern)
    uncertain_exception: re.Pattern[str] = key(
        "timeouts.uncertain_exception_pattern", REGEX, pattern
    )
    reconcile_call: re.Pattern[str] = key("timeouts.reconcile_call_pattern", REGEX, pattern)
    log_receivers: set[str] = key("timeouts.log_receivers", STRINGS, mutable)
    transport_errors: dict[str, str] = key(
        "timeouts.transport_errors",
        {"type": "object", "additionalProperties": NONEMPTY_TEXT},
        lambda raw: {str(k): str(v) for k, v in (raw or {}).items()},
    )
    timeout_kwargs: set[str] = key("timeouts.timeout_kwargs", STRINGS, mutable)
    deadline_calls: set[str] = key("timeouts.deadline_calls", STRINGS, mutable)
    timeout_setters: set[str] = key("timeouts.timeout_setters", STRINGS, mutable)
    catch_markers: set[str] = key("timeouts.catch_markers", STRINGS, mutable)
    signal_fields: set[str] = key("timeouts.signal_fields", STRINGS, mutable)
    signal_deadlines: set[str] = key("timeouts.signal_deadlines", STRINGS, mutable)
    abort_timers: set[str] = key("timeouts.abort_timers", STRINGS, mutable)
    default_deadlines: dict[str, str] = key(
        "timeouts.default_deadlines",
        {"type": "object", "additionalProperties": NONEMPTY_TEXT},
        lambda raw: {str(k): str(v) for k, v in (raw or {}).items()},
    )
    context_managers: set[str] = key("timeouts.context_managers", STRINGS, mutable)
    sleep_calls: set[str] = key("timeouts.sleep_calls", STRINGS, mutable)
    failure_words: re.Pattern[str] = key("timeouts.failure_pattern", REGEX, pattern)
    deadline_words: re.Pattern[str] = key("timeouts.deadline_pattern", REGEX, pattern)

    tool_error_exceptions: Matcher[bool] = key(
        "observations.tool_error_exceptions", STRINGS, matcher
    )
    model_message_types: Matcher[bool] = key("observations.model_message_types", STRINGS, matcher)
    tool_message_keys: set[str] = key("observations.tool_message_keys", STRINGS, mutable)
    tool_message_roles: set[str] = key("observations.tool_message_roles", STRINGS, mutable)
    code_keys: set[str] = key("observations.code_keys", STRINGS, mutable)
    retry_keys: set[str] = key("observations.retry_keys", STRINGS, mutable)
    input_error: re.Pattern[str] = key("observations.input_error_pattern", REGEX, pattern)
    validation_results: dict[str, str] = key(
        "observations.validation_results",
        {"type": "object", "additionalProperties": NONEMPTY_TEXT},
        lambda raw: {str(k): str(v) for k, v in (raw or {}).items()},
    )
    broad_exceptions: set[str] = key("observations.broad_exceptions", STRINGS, mutable)
    message_sink_methods: set[str] = key("observations.message_sink_methods", STRINGS, mutable)

    # read as tables by the observation rules: framework -> what its tool errors do
    framework_errors: dict[str, dict[str, Any]] = key(
        "framework_errors",
        {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["text"],
                "additionalProperties": False,
                "properties": {
                    "text": TEXT,
                    "raw": {"type": "boolean"},
                    "retries": {"type": "boolean"},
                    "opt_out_kwargs": {"type": "object"},
                    "server_opt_out": {
                        "type": "object",
                        "properties": {"callee": STRINGS, "kwarg": TEXT},
                    },
                },
            },
        },
        lambda raw: dict(raw or {}),
    )
    error_settings: list[Setting] = _settings("error_settings")
    # read as tables by the timeout rules: a tool option that retries on a timeout
    timeout_settings: list[dict[str, Any]] = key(
        "timeout_settings",
        {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["framework", "tool_kwarg", "text"],
                "additionalProperties": False,
                "properties": {
                    "framework": TEXT,
                    "tool_kwarg": TEXT,
                    "text": TEXT,
                    "unless": {"type": "object", "additionalProperties": TEXT},
                },
            },
        },
        listed,
    )
    agent_timeout_settings: list[Setting] = _settings("agent_timeout_settings")
    mcp_client_retries: list[Setting] = _settings("mcp_client_retries")

    retry_policy: Matcher[bool] = key("langgraph_retry.policy", STRINGS, matcher)
    add_node: Matcher[bool] = key("langgraph_retry.add_node", STRINGS, matcher)
    task_decorators: Matcher[bool] = key("langgraph_retry.task_decorators", STRINGS, matcher)
    interrupt: Matcher[bool] = key("langgraph_retry.interrupt", STRINGS, matcher)

    dispatch_methods: set[str] = key("executors.methods", STRINGS, mutable)
    dispatch_direct: Matcher[bool] = key("executors.direct", STRINGS, matcher)
    executor_decorators: Matcher[bool] = key("executors.decorators", STRINGS, matcher)
    tool_words: re.Pattern[str] = key("executors.tool_words_pattern", REGEX, pattern)

    fault_injection: Matcher[bool] = key("evals.fault_injection", STRINGS, matcher)
    count_attrs: set[str] = key("evals.count_attrs", STRINGS, mutable)
    count_calls: Matcher[bool] = key("evals.count_calls", STRINGS, matcher)
    ledger_words: re.Pattern[str] = key("evals.ledger_words", REGEX, pattern)
    fault_methods: set[str] = key("evals.fault_methods", STRINGS, mutable)
    fault_fixtures: set[str] = key("evals.fault_fixtures", STRINGS, mutable)

    done_statuses: set[str] = key("resume.done_statuses", STRINGS, mutable)
    in_flight_statuses: set[str] = key("resume.in_flight_statuses", STRINGS, mutable)
    uncertain_statuses: set[str] = key("resume.uncertain_statuses", STRINGS, mutable)
    resume_name: re.Pattern[str] = key("resume.name_pattern", REGEX, pattern)

    def __init__(self, data: Mapping[str, Any]) -> None:
        load_keys(self, data)
        # Asked per value of every test and handler: the answers are kept, the bare names
        # found once.
        self._undotted_timeouts = frozenset(n for n in self.timeout_exceptions if "." not in n)
        self._is_timeout: dict[str, bool] = {}

    def is_timeout(self, name: str) -> bool:
        known = self._is_timeout.get(name)
        if known is None:
            known = self._is_timeout[name] = self._judge_timeout(name)
        return known

    def _judge_timeout(self, name: str) -> bool:
        name = name.replace("()", "")
        if name in self.before_send or name.rsplit(".", 1)[-1] in self.before_send:
            return False
        last = name.rsplit(".", 1)[-1]
        return name in self.timeout_exceptions or last in self._undotted_timeouts

    def includes_timeout(self, name: str) -> str | None:
        """The timeout a broader class a handler catches includes (``httpx.RequestError``
        includes ``httpx.ReadTimeout``), or None."""
        return self.transport_errors.get(name.replace("()", ""))

    def is_before_send(self, name: str) -> bool:
        return name in self.before_send or name.rsplit(".", 1)[-1] in self.before_send
