"""Classification of real library exceptions, including ones raised by real sockets."""

from __future__ import annotations

import asyncio
import random
import socket
import threading
import urllib.error
from collections.abc import Iterator

import pytest

from agentguard.runtime import ErrorCode, RetryPolicy, Sent, ToolError, classify_exception

httpx = pytest.importorskip("httpx")
requests = pytest.importorskip("requests")
aiohttp = pytest.importorskip("aiohttp")
urllib3 = pytest.importorskip("urllib3")


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def silent_server() -> Iterator[int]:
    """Accepts connections, reads the request, never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            held.append(connection)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    server.close()


@pytest.fixture
def resetting_server() -> Iterator[int]:
    """Reads the request, then resets the connection without answering."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve() -> None:
        connection, _ = server.accept()
        connection.recv(65536)
        connection.setsockopt(
            socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
        )
        connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    thread.join(2)
    server.close()


def test_requests_refused_connection_was_not_sent(closed_port: int) -> None:
    with pytest.raises(requests.ConnectionError) as caught:
        requests.post(f"http://127.0.0.1:{closed_port}/orders", timeout=1)
    failure = classify_exception(caught.value)
    assert (failure.code, failure.sent) == (ErrorCode.TRANSIENT_NETWORK, Sent.NO)
    assert not failure.may_have_applied


def test_requests_read_timeout_may_have_been_sent(silent_server: int) -> None:
    with pytest.raises(requests.ReadTimeout) as caught:
        requests.post(f"http://127.0.0.1:{silent_server}/orders", json={}, timeout=(1, 0.1))
    failure = classify_exception(caught.value)
    assert (failure.code, failure.sent) == (ErrorCode.TIMEOUT, Sent.UNKNOWN)
    assert failure.may_have_applied


def test_requests_reset_after_send_may_have_been_sent(resetting_server: int) -> None:
    with pytest.raises(requests.ConnectionError) as caught:
        requests.post(f"http://127.0.0.1:{resetting_server}/orders", json={}, timeout=2)
    failure = classify_exception(caught.value)
    assert failure.sent is Sent.UNKNOWN and failure.may_have_applied


def test_httpx_connect_error_and_read_timeout(closed_port: int, silent_server: int) -> None:
    with pytest.raises(httpx.ConnectError) as refused:
        httpx.post(f"http://127.0.0.1:{closed_port}/orders", timeout=1)
    assert classify_exception(refused.value).sent is Sent.NO
    with pytest.raises(httpx.ReadTimeout) as timed_out:
        httpx.post(f"http://127.0.0.1:{silent_server}/orders", json={}, timeout=0.1)
    failure = classify_exception(timed_out.value)
    assert (failure.code, failure.sent) == (ErrorCode.TIMEOUT, Sent.UNKNOWN)


def test_aiohttp_connector_error_and_server_timeout(closed_port: int, silent_server: int) -> None:
    async def call(port: int, timeout: float) -> None:
        client_timeout = aiohttp.ClientTimeout(sock_read=timeout, sock_connect=1)
        async with (
            aiohttp.ClientSession(timeout=client_timeout) as session,
            session.post(f"http://127.0.0.1:{port}/orders", json={}),
        ):
            pass

    with pytest.raises(aiohttp.ClientConnectorError) as refused:
        asyncio.run(call(closed_port, 1))
    assert classify_exception(refused.value).sent is Sent.NO
    with pytest.raises(asyncio.TimeoutError) as timed_out:
        asyncio.run(call(silent_server, 0.1))
    failure = classify_exception(timed_out.value)
    assert (failure.code, failure.sent) == (ErrorCode.TIMEOUT, Sent.UNKNOWN)


def test_http_status_errors_carry_their_meaning() -> None:
    def status_error(status: int, headers: dict[str, str] | None = None) -> Exception:
        request = httpx.Request("POST", "http://service/orders")
        response = httpx.Response(status, headers=headers or {}, request=request)
        return httpx.HTTPStatusError("status", request=request, response=response)

    cases = {
        429: (ErrorCode.RATE_LIMIT, Sent.NO),
        400: (ErrorCode.INVALID_ARGUMENTS, Sent.YES),
        403: (ErrorCode.PERMISSION_DENIED, Sent.YES),
        404: (ErrorCode.NOT_FOUND, Sent.YES),
        500: (ErrorCode.SERVER_ERROR, Sent.UNKNOWN),
        502: (ErrorCode.SERVER_ERROR, Sent.UNKNOWN),
    }
    for status, expected in cases.items():
        failure = classify_exception(status_error(status))
        assert (failure.code, failure.sent) == expected, status
    unavailable = classify_exception(status_error(503, {"Retry-After": "2"}))
    assert (unavailable.code, unavailable.sent, unavailable.retry_after_s) == (
        ErrorCode.SERVER_ERROR,
        Sent.NO,
        2.0,
    )
    assert classify_exception(status_error(400)).may_have_applied is False
    assert classify_exception(status_error(500)).may_have_applied is True
    response = requests.Response()
    response.status_code = 429
    assert classify_exception(requests.HTTPError(response=response)).code is ErrorCode.RATE_LIMIT


def test_standard_library_and_urllib3_exceptions() -> None:
    cases: list[tuple[BaseException, ErrorCode, Sent]] = [
        (ConnectionRefusedError(), ErrorCode.TRANSIENT_NETWORK, Sent.NO),
        (socket.gaierror(), ErrorCode.TRANSIENT_NETWORK, Sent.NO),
        (ConnectionResetError(), ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
        (BrokenPipeError(), ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
        (TimeoutError(), ErrorCode.TIMEOUT, Sent.UNKNOWN),
        (asyncio.TimeoutError(), ErrorCode.TIMEOUT, Sent.UNKNOWN),
        (urllib.error.URLError(ConnectionRefusedError()), ErrorCode.TRANSIENT_NETWORK, Sent.NO),
        (urllib.error.URLError(TimeoutError()), ErrorCode.TIMEOUT, Sent.UNKNOWN),
        (urllib3.exceptions.ReadTimeoutError(None, "/", "slow"), ErrorCode.TIMEOUT, Sent.UNKNOWN),
        (urllib3.exceptions.ProtocolError("aborted"), ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
        (ValueError("bug"), ErrorCode.TOOL_CRASH, Sent.UNKNOWN),
        (KeyError("x"), ErrorCode.TOOL_CRASH, Sent.UNKNOWN),
    ]
    for exc, code, sent in cases:
        failure = classify_exception(exc)
        assert (failure.code, failure.sent) == (code, sent), repr(exc)


def test_an_error_during_handling_does_not_inherit_not_sent() -> None:
    try:
        try:
            raise ConnectionRefusedError("first attempt")
        except ConnectionRefusedError:
            raise ValueError("then the response could not be parsed") from None
    except ValueError as exc:
        assert classify_exception(exc).sent is Sent.UNKNOWN


def test_tool_error_is_taken_at_its_word() -> None:
    failure = classify_exception(ToolError("RATE_LIMIT", "slow down", sent=False, retry_after_s=3))
    assert (failure.code, failure.sent, failure.retry_after_s) == (ErrorCode.RATE_LIMIT, Sent.NO, 3)
    assert ToolError(ErrorCode.TIMEOUT, sent="maybe").sent is Sent.UNKNOWN


def test_retry_delays_are_full_jitter_within_the_cap() -> None:
    policy = RetryPolicy(max_attempts=6, backoff_ms=100, max_backoff_ms=1_000)
    rng = random.Random(1)
    for attempt in range(1, 7):
        ceiling = min(1.0, 0.1 * 2 ** (attempt - 1))
        delays = [policy.delay_s(attempt, rng) for _ in range(200)]
        assert all(0 <= delay <= ceiling for delay in delays)
        assert max(delays) > ceiling * 0.8  # jitter spans the range
    assert policy.delay_s(1, rng, retry_after_s=5) >= 5
    with pytest.raises(ValueError):
        RetryPolicy(retry_on={"NOT_A_CODE"})
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)
