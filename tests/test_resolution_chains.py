"""Builder chains: ``api.payments().create(...).execute()`` is one call whose request is
built by the chain and sent by its terminal call; a key passed to the request counts."""

from __future__ import annotations

import textwrap

from .conftest import ScanFiles

AGENT = textwrap.dedent(
    '''
    from googleapiclient.discovery import build
    from langchain_core.tools import tool

    service = build("payments", "v1")


    @tool
    def charge_card(customer_id: str, amount: int, request_key: str) -> dict:
        """Charge the customer's card."""
        body = {"customer": customer_id, "amount": amount}
        return service.payments().charges().create({extra}body=body).execute()
    '''
)


def findings(scan_files: ScanFiles, extra: str) -> list[str]:
    files = {"shop/__init__.py": "", "shop/agent.py": AGENT.replace("{extra}", extra)}
    return [f.code for f in scan_files(files).findings]


def test_a_chain_sending_a_create_without_a_key_is_reported(scan_files: ScanFiles) -> None:
    assert "AG201" in findings(scan_files, "")


def test_a_key_passed_to_the_request_a_chain_sends_counts(scan_files: ScanFiles) -> None:
    # The key is seen on the request: no missing key, but one the model supplies (AG202).
    codes = findings(scan_files, "idempotency_key=request_key, ")
    assert "AG201" not in codes and "AG202" in codes
