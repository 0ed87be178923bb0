"""AG401 wherever a timeout is handled: a deadline set on a call, a client, a socket or a block
reaches the handler that reports it as a plain failure, however many helpers apart, in every
tool whose non-idempotent write goes through that handler."""

from __future__ import annotations

import textwrap

from .conftest import ScanFiles


def _ag401(scan_files: ScanFiles, source: str) -> dict[str, str]:
    result = scan_files({"server.py": textwrap.dedent(source)}, select=("AG401",))
    return {f.tool or "": f.message for f in result.findings}


TIMED_OUT_POST = '''
    import requests
    from langchain_core.tools import tool


    @tool
    def create_order(cart_id: str) -> dict:
        """Create an order."""
        try:
            return requests.post(
                "https://shop.example/orders", json={"cart": cart_id}, timeout=30
            ).json()
        except requests.Timeout:
            return {"ok": False, "error": "the shop timed out", "retryable": RETRYABLE}
'''


def test_timed_out_post_answered_retryable_is_reported(scan_files: ScanFiles) -> None:
    """``"retryable": True`` invites the model to place the order again."""
    found = _ag401(scan_files, TIMED_OUT_POST.replace("RETRYABLE", "True"))
    assert set(found) == {"create_order"}


def test_timed_out_post_answered_not_retryable_is_not_reported(scan_files: ScanFiles) -> None:
    """``"retryable": False`` alone (no other word of uncertainty) tells the model not to
    send it again: that is the answer AG401 asks for."""
    assert _ag401(scan_files, TIMED_OUT_POST.replace("RETRYABLE", "False")) == {}


def test_client_timeout_reaches_a_shared_handler_helpers_apart(scan_files: ScanFiles) -> None:
    """A module's client built with ``timeout=``, a catch-all three calls up from the POST:
    each tool that goes through the handler gets its own finding."""
    found = _ag401(
        scan_files,
        '''
        import httpx
        from mcp.server.fastmcp import FastMCP

        mcp = FastMCP("desk")
        HTTP = httpx.Client(base_url="https://desk.example/api", timeout=20)


        class DeskApi:
            def create(self, path: str, body: dict) -> dict:
                return HTTP.post(path, json=body).json()


        API = DeskApi()


        def _call(path: str, body: dict) -> dict:
            return API.create(path, body)


        def _safely(path: str, body: dict) -> dict:
            try:
                return {"ok": True, "result": _call(path, body)}
            except Exception:
                return {"ok": False, "error": "The desk did not answer. Try again."}


        @mcp.tool()
        def open_ticket(title: str) -> dict:
            """Open a ticket."""
            return _safely("/tickets", {"title": title})


        @mcp.tool()
        def add_comment(ticket_id: str, text: str) -> dict:
            """Comment on a ticket."""
            return _safely(f"/tickets/{ticket_id}/comments", {"text": text})
        ''',
    )
    assert set(found) == {"open_ticket", "add_comment"}
    assert "timeout=20" in found["open_ticket"]


def test_socket_timeout_set_on_a_shared_client(scan_files: ScanFiles) -> None:
    """``self.smtp.sock.settimeout(20)`` in the client's constructor: a catch-all in the
    helper that sends is catching that timeout."""
    found = _ag401(
        scan_files,
        '''
        import smtplib

        from mcp.server.fastmcp import FastMCP

        mcp = FastMCP("mail")


        class Mailer:
            def __init__(self, host: str) -> None:
                self.smtp = smtplib.SMTP(host, 587)
                self.smtp.sock.settimeout(20)

            def deliver(self, to: str, body: str) -> None:
                self.smtp.sendmail("desk@shop.example", [to], body)


        MAILER = Mailer("mail.shop.example")


        def _send(to: str, body: str) -> str:
            try:
                MAILER.deliver(to, body)
                return "sent"
            except Exception:
                return "Sending failed. Please try again."


        @mcp.tool()
        def send_receipt(to: str, order_id: str) -> str:
            """Mail a receipt."""
            return _send(to, f"Receipt for {order_id}")
        ''',
    )
    assert set(found) == {"send_receipt"}
    assert "settimeout(20)" in found["send_receipt"]


def test_no_deadline_set_leaves_a_catch_all_alone(scan_files: ScanFiles) -> None:
    """The same catch-all with no deadline anywhere is not evidence of a timeout."""
    found = _ag401(
        scan_files,
        '''
        import smtplib

        from mcp.server.fastmcp import FastMCP

        mcp = FastMCP("mail")
        SMTP = smtplib.SMTP("mail.shop.example", 587)


        def _send(to: str, body: str) -> str:
            try:
                SMTP.sendmail("desk@shop.example", [to], body)
                return "sent"
            except Exception:
                return "Sending failed. Please try again."


        @mcp.tool()
        def send_receipt(to: str, order_id: str) -> str:
            """Mail a receipt."""
            return _send(to, f"Receipt for {order_id}")
        ''',
    )
    assert found == {}


def test_asyncio_timeout_block_in_a_helper(scan_files: ScanFiles) -> None:
    found = _ag401(
        scan_files,
        '''
        import asyncio

        import httpx
        from mcp.server.fastmcp import FastMCP

        mcp = FastMCP("billing")
        CLIENT = httpx.AsyncClient(base_url="https://billing.example")


        async def _post(path: str, body: dict) -> dict:
            try:
                async with asyncio.timeout(10):
                    response = await CLIENT.post(path, json=body)
                return response.json()
            except Exception:
                return {"ok": False, "error": "billing failed"}


        @mcp.tool()
        async def send_invoice(invoice_id: str) -> dict:
            """Send an invoice to the customer."""
            return await _post(f"/invoices/{invoice_id}/send", {})
        ''',
    )
    assert set(found) == {"send_invoice"}


# A client's request helper that maps status errors to richer ones and re-raises everything
# else unchanged: a timeout passes through it to whatever the tool does.
ENRICHING_CLIENT = '''
    import httpx
    from httpx import HTTPStatusError, RequestError
    from mcp.server.fastmcp import FastMCP
    from mcp.types import ToolAnnotations

    mcp = FastMCP("notes")


    class NotesError(HTTPStatusError):
        pass


    def enrich(error: HTTPStatusError) -> HTTPStatusError:
        return error


    class NotesClient:
        def __init__(self) -> None:
            self._client = httpx.AsyncClient(base_url="https://notes.example", timeout=30)

        async def _request(self, method: str, url: str, **kwargs) -> httpx.Response:
            try:
                response = await self._client.request(method, url, **kwargs)
                response.raise_for_status()
                return response
            except (HTTPStatusError, RequestError) as e:
                if isinstance(e, HTTPStatusError):
                    enriched = enrich(e)
                    raise enriched from e
                raise

        async def add_comment(self, note_id: int, text: str) -> dict:
            response = await self._request("POST", f"/notes/{note_id}/comments", json={"text": text})
            return response.json()

        async def append(self, note_id: int, text: str) -> dict:
            note = (await self._request("GET", f"/notes/{note_id}")).json()
            note["content"] += text
            response = await self._request("PUT", f"/notes/{note_id}", json=note)
            return response.json()


    CLIENT = NotesClient()


    @mcp.tool(annotations=ToolAnnotations(idempotentHint=False, openWorldHint=True))
    async def comment_on_note(note_id: int, text: str) -> dict:
        """Comment on a note."""
        return await CLIENT.add_comment(note_id, text)


    @mcp.tool(annotations=ToolAnnotations(idempotentHint=False, openWorldHint=True))
    async def append_to_note(note_id: int, text: str) -> dict:
        """Append text to a note."""
        try:
            return await CLIENT.append(note_id, text)
        except RequestError as e:
            raise RuntimeError(f"Network error appending to note {note_id}") from e
'''


def test_helper_that_passes_the_timeout_on_is_not_the_handler(scan_files: ScanFiles) -> None:
    """``raise enriched from e`` for status errors and a bare ``raise`` otherwise: the helper
    answers nothing itself; a tool with no handler of its own gets no AG401."""
    found = _ag401(scan_files, ENRICHING_CLIENT)
    assert "comment_on_note" not in found


def test_declared_non_idempotent_write_judged_repeatable_is_followed(
    scan_files: ScanFiles,
) -> None:
    """An append written back with PUT looks repeatable by its verb; the tool says in so many
    words that it is not (``idempotentHint=False``), so its network error is a plain
    failure of a write that may have happened."""
    found = _ag401(scan_files, ENRICHING_CLIENT)
    assert set(found) == {"append_to_note"}
    assert "RequestError" in found["append_to_note"]


HANDED_TO_A_RUNNER = '''
    import requests
    from mcp.server.fastmcp import FastMCP

    mcp = FastMCP("vault")


    class Vault:
        def __init__(self) -> None:
            self.timeout = (3, 6)

        def _safe_call(self, f):
            try:
                return f()
            except requests.exceptions.RequestException:
                ANSWER

        def append(self, path: str, content: str):
            def call_fn():
                response = requests.post(
                    f"https://vault.local/notes/{path}", data=content, timeout=self.timeout
                )
                response.raise_for_status()

            return self._safe_call(call_fn)


    VAULT = Vault()


    @mcp.tool()
    def append_note(path: str, content: str) -> str:
        """Append text to a note."""
        VAULT.append(path, content)
        return "ok"
'''


def test_helper_running_the_function_it_is_handed_is_the_handler(scan_files: ScanFiles) -> None:
    """``self._safe_call(call_fn)``: the helper's ``try`` around ``f()`` handles the errors of
    the POST the handed function makes."""
    plain = HANDED_TO_A_RUNNER.replace("ANSWER", 'raise Exception("Request failed, try again")')
    found = _ag401(scan_files, plain)
    assert set(found) == {"append_note"}
    assert "Vault._safe_call" in found["append_note"]


def test_helper_running_the_function_it_is_handed_may_say_unknown(scan_files: ScanFiles) -> None:
    uncertain = HANDED_TO_A_RUNNER.replace(
        "ANSWER", 'raise Exception("The note may have been changed; check it before retrying")'
    )
    assert _ag401(scan_files, uncertain) == {}


def test_client_built_with_a_timeout_in_a_base_class_of_another_module(
    scan_files: ScanFiles,
) -> None:
    """``self._http`` built with ``timeout=30`` in the base class's ``__init__`` (another
    file): the subclass's POST has that deadline, and the tool's catch-all catches it."""
    files = {
        "desk/__init__.py": "",
        "desk/base.py": textwrap.dedent(
            """
            import httpx


            class BaseClient:
                def __init__(self, url: str) -> None:
                    self._http = httpx.Client(base_url=url, timeout=30)
            """
        ),
        "desk/tickets.py": textwrap.dedent(
            """
            from desk.base import BaseClient


            class Tickets(BaseClient):
                def open(self, title: str) -> dict:
                    return self._http.post("/tickets", json={"title": title}).json()
            """
        ),
        "desk/server.py": textwrap.dedent(
            '''
            from mcp.server.fastmcp import FastMCP

            from desk.tickets import Tickets

            mcp = FastMCP("desk")
            TICKETS = Tickets("https://desk.example")


            @mcp.tool()
            def open_ticket(title: str) -> dict:
                """Open a ticket."""
                try:
                    return TICKETS.open(title)
                except Exception:
                    return {"ok": False, "error": "The desk failed, try again"}
            '''
        ),
    }
    result = scan_files(files, select=("AG401",))
    assert [(f.tool, "timeout=30" in f.message) for f in result.findings] == [("open_ticket", True)]


LIBRARY_DEFAULT = '''
    import httpx
    from mcp.server.fastmcp import FastMCP

    mcp = FastMCP("crm")


    @mcp.tool()
    async def add_contact(name: str, email: str) -> dict:
        """Add a contact to the CRM."""
        try:
            async with httpx.AsyncClient(CLIENT_ARGS) as client:
                response = await client.post("https://crm.example/contacts", json={"name": name})
                return response.json()
        except Exception:
            return {"ok": False, "error": "Could not add the contact. Please try again."}
'''


def test_library_default_deadline_is_a_timeout_set(scan_files: ScanFiles) -> None:
    """httpx puts a 5 s deadline on every request unless told otherwise: the catch-all
    around its POST catches that timeout."""
    found = _ag401(scan_files, LIBRARY_DEFAULT.replace("CLIENT_ARGS", ""))
    assert set(found) == {"add_contact"}
    assert "httpx's default timeout" in found["add_contact"]


def test_library_default_deadline_turned_off(scan_files: ScanFiles) -> None:
    """``timeout=None`` turns the default off: the catch-all is no evidence then."""
    assert _ag401(scan_files, LIBRARY_DEFAULT.replace("CLIENT_ARGS", "timeout=None")) == {}
