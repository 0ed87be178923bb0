"""The knowledge behind the checklist rules Q3-Q8, loaded from ``rules/checklist.yaml``.

Kept apart from ``catalog.py`` so the catalogue file can grow without touching the core
loader; a ``Catalog`` builds it (``catalog.checklist``), so there is one route to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agentguard.knowledge.catalog import Matcher, _as_list


@dataclass(frozen=True)
class Setting:
    """A framework setting (a keyword on a call or a tool) with what it does."""

    match: tuple[str, ...]
    kwarg: str
    text: str
    when: str = "present"
    framework: str = ""
    unless: tuple[tuple[str, str], ...] = ()


class Knowledge:
    def __init__(self, data: dict[str, Any]) -> None:
        ledger = data.get("ledger") or {}
        self.ledger_functions: Matcher[bool] = Matcher()
        self.ledger_functions.add(_as_list(ledger.get("functions")), True)
        self.ledger_receiver = re.compile(ledger.get("receiver_pattern") or "$^")
        self.ledger_methods = set(_as_list(ledger.get("write_methods")))
        self.ledger_sql = re.compile(ledger.get("sql_table_pattern") or "$^")
        self.input_identity = re.compile(ledger.get("input_identity_pattern") or "$^")
        self.ledger_sql_methods = set(_as_list(ledger.get("sql_methods")))
        self.ledger_row_methods = set(_as_list(ledger.get("row_methods")))
        self.ledger_row_class = re.compile(ledger.get("row_class_pattern") or "$^")

        timeouts = data.get("timeouts") or {}
        self.timeout_exceptions = set(_as_list(timeouts.get("exceptions")))
        self.before_send = set(_as_list(timeouts.get("before_send")))
        self.uncertain_words = re.compile(timeouts.get("uncertain_pattern") or "$^")
        self.uncertain_exception = re.compile(timeouts.get("uncertain_exception_pattern") or "$^")
        self.reconcile_call = re.compile(timeouts.get("reconcile_call_pattern") or "$^")
        self.log_receivers = set(_as_list(timeouts.get("log_receivers")))
        self.transport_errors: dict[str, str] = {
            str(k): str(v) for k, v in (timeouts.get("transport_errors") or {}).items()
        }
        self.timeout_kwargs = set(_as_list(timeouts.get("timeout_kwargs")))
        self.deadline_calls = set(_as_list(timeouts.get("deadline_calls")))
        self.context_managers = set(_as_list(timeouts.get("context_managers")))
        self.sleep_calls = set(_as_list(timeouts.get("sleep_calls")))
        self.failure_words = re.compile(timeouts.get("failure_pattern") or "$^")
        self.deadline_words = re.compile(timeouts.get("deadline_pattern") or "$^")

        obs = data.get("observations") or {}
        self.tool_error_exceptions: Matcher[bool] = Matcher()
        self.tool_error_exceptions.add(_as_list(obs.get("tool_error_exceptions")), True)
        self.model_message_types: Matcher[bool] = Matcher()
        self.model_message_types.add(_as_list(obs.get("model_message_types")), True)
        self.tool_message_keys = set(_as_list(obs.get("tool_message_keys")))
        self.tool_message_roles = set(_as_list(obs.get("tool_message_roles")))
        self.code_keys = set(_as_list(obs.get("code_keys")))
        self.retry_keys = set(_as_list(obs.get("retry_keys")))
        self.input_error = re.compile(obs.get("input_error_pattern") or "$^")
        self.broad_exceptions = set(_as_list(obs.get("broad_exceptions")))
        self.message_sink_methods = set(_as_list(obs.get("message_sink_methods")))

        self.framework_errors: dict[str, dict[str, Any]] = dict(data.get("framework_errors") or {})
        self.error_settings = [self._setting(raw) for raw in data.get("error_settings") or []]
        self.timeout_settings = list(data.get("timeout_settings") or [])
        self.agent_timeout_settings = [
            self._setting(raw) for raw in data.get("agent_timeout_settings") or []
        ]
        self.mcp_client_retries = [
            self._setting(raw) for raw in data.get("mcp_client_retries") or []
        ]
        graph = data.get("langgraph_retry") or {}
        self.retry_policy: Matcher[bool] = Matcher()
        self.retry_policy.add(_as_list(graph.get("policy")), True)
        self.add_node: Matcher[bool] = Matcher()
        self.add_node.add(_as_list(graph.get("add_node")), True)
        self.task_decorators: Matcher[bool] = Matcher()
        self.task_decorators.add(_as_list(graph.get("task_decorators")), True)
        self.interrupt: Matcher[bool] = Matcher()
        self.interrupt.add(_as_list(graph.get("interrupt")), True)

        executors = data.get("executors") or {}
        self.dispatch_methods = set(_as_list(executors.get("methods")))
        self.dispatch_direct: Matcher[bool] = Matcher()
        self.dispatch_direct.add(_as_list(executors.get("direct")), True)
        self.executor_decorators: Matcher[bool] = Matcher()
        self.executor_decorators.add(_as_list(executors.get("decorators")), True)
        self.tool_words = re.compile(executors.get("tool_words_pattern") or "$^")

        evals = data.get("evals") or {}
        self.fault_injection: Matcher[bool] = Matcher()
        self.fault_injection.add(_as_list(evals.get("fault_injection")), True)
        self.count_attrs = set(_as_list(evals.get("count_attrs")))
        self.fault_methods = set(_as_list(evals.get("fault_methods")))
        self.fault_fixtures = set(_as_list(evals.get("fault_fixtures")))
        self.count_calls: Matcher[bool] = Matcher()
        self.count_calls.add(_as_list(evals.get("count_calls")), True)
        self.ledger_words = re.compile(evals.get("ledger_words") or "$^")

        resume = data.get("resume") or {}
        self.done_statuses = set(_as_list(resume.get("done_statuses")))
        self.in_flight_statuses = set(_as_list(resume.get("in_flight_statuses")))
        self.uncertain_statuses = set(_as_list(resume.get("uncertain_statuses")))
        self.resume_name = re.compile(resume.get("name_pattern") or "$^")

    @staticmethod
    def _setting(raw: dict[str, Any]) -> Setting:
        unless = raw.get("unless") or {}
        return Setting(
            match=tuple(_as_list(raw.get("match"))),
            kwarg=raw.get("kwarg") or raw.get("tool_kwarg") or "",
            text=raw.get("text", ""),
            when=raw.get("when", "present"),
            framework=raw.get("framework", ""),
            unless=tuple((str(k), str(v)) for k, v in unless.items()),
        )

    def is_timeout(self, name: str) -> bool:
        name = name.replace("()", "")
        if name in self.before_send or name.rsplit(".", 1)[-1] in self.before_send:
            return False
        return name in self.timeout_exceptions or name.rsplit(".", 1)[-1] in {
            n for n in self.timeout_exceptions if "." not in n
        }

    def includes_timeout(self, name: str) -> str | None:
        """The timeout a broader class a handler catches includes (``httpx.RequestError``
        includes ``httpx.ReadTimeout``), or None."""
        return self.transport_errors.get(name.replace("()", ""))

    def is_before_send(self, name: str) -> bool:
        return name in self.before_send or name.rsplit(".", 1)[-1] in self.before_send
