"""Error taxonomy: what went wrong, and whether the request may have reached the other side.

Exceptions of HTTP and socket libraries are recognised by module and class name, walking the
class hierarchy and the cause chain, so that the runtime never imports those libraries.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any


class ErrorCode(str, Enum):
    INVALID_ARGUMENTS = "INVALID_ARGUMENTS"
    NOT_FOUND = "NOT_FOUND"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    TIMEOUT = "TIMEOUT"
    TOOL_CRASH = "TOOL_CRASH"
    OUTPUT_TOO_LARGE = "OUTPUT_TOO_LARGE"
    SIDE_EFFECT_UNCERTAIN = "SIDE_EFFECT_UNCERTAIN"
    RATE_LIMIT = "RATE_LIMIT"
    TRANSIENT_NETWORK = "TRANSIENT_NETWORK"
    SERVER_ERROR = "SERVER_ERROR"
    DUPLICATE_IN_PROGRESS = "DUPLICATE_IN_PROGRESS"
    IDEMPOTENCY_MISMATCH = "IDEMPOTENCY_MISMATCH"
    APPROVAL_REQUIRED = "APPROVAL_REQUIRED"

    def __str__(self) -> str:
        return self.value


class Sent(str, Enum):
    """Whether the request may have reached the downstream service."""

    NO = "no"
    YES = "yes"
    UNKNOWN = "unknown"

    @classmethod
    def parse(cls, value: Sent | str | bool | None) -> Sent:
        if isinstance(value, Sent):
            return value
        if value is None:
            return cls.UNKNOWN
        if isinstance(value, bool):
            return cls.YES if value else cls.NO
        normalised = value.strip().lower()
        if normalised == "maybe":
            return cls.UNKNOWN
        return cls(normalised)


# Codes after which a request that was (or may have been) sent may also have taken effect.
# The others are definite refusals: the service answered and did nothing.
AMBIGUOUS_CODES = frozenset(
    {
        ErrorCode.TIMEOUT,
        ErrorCode.TOOL_CRASH,
        ErrorCode.SIDE_EFFECT_UNCERTAIN,
        ErrorCode.SERVER_ERROR,
        ErrorCode.TRANSIENT_NETWORK,
    }
)

# Codes for which calling the tool again can help once the cause has passed.
TRANSIENT_CODES = frozenset(
    {
        ErrorCode.TIMEOUT,
        ErrorCode.RATE_LIMIT,
        ErrorCode.TRANSIENT_NETWORK,
        ErrorCode.SERVER_ERROR,
    }
)


class ToolError(Exception):
    """Raised by tool authors to classify a failure precisely.

    ``sent`` says whether the request may have reached the service: ``"no"`` (nothing left this
    process), ``"yes"`` or ``"unknown"``. A definite refusal such as ``INVALID_ARGUMENTS`` with
    ``sent="yes"`` means the service answered and did nothing.
    """

    def __init__(
        self,
        code: ErrorCode | str,
        message: str = "",
        *,
        sent: Sent | str | bool | None = Sent.UNKNOWN,
        retry_after_s: float | None = None,
    ) -> None:
        self.code = ErrorCode(code)
        self.message = message or self.code.value
        self.sent = Sent.parse(sent)
        self.retry_after_s = retry_after_s
        super().__init__(self.message)


@dataclass(frozen=True)
class Failure:
    """A classified failure of one attempt."""

    code: ErrorCode
    sent: Sent
    message: str
    exception_type: str
    retry_after_s: float | None = None

    @property
    def may_have_applied(self) -> bool:
        return self.sent is not Sent.NO and self.code in AMBIGUOUS_CODES


def _qualified_names(exc: BaseException) -> Iterator[str]:
    for cls in type(exc).__mro__:
        yield f"{cls.__module__.split('.')[0]}.{cls.__name__}"


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """The exception and what it explicitly wraps: __cause__, urllib3's ``reason``, ``args``.

    ``__context__`` is not followed: an error raised while handling an earlier one (urllib3's
    internal retries) must not inherit the earlier one's "not sent".
    """
    seen: set[int] = set()
    stack = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        wrapped: list[Any] = [current.__cause__, getattr(current, "reason", None)]
        wrapped.extend(getattr(current, "args", ()))
        for candidate in wrapped:
            if isinstance(candidate, BaseException):
                stack.append(candidate)


# Exact (root module, class name) → (code, sent). Looked up along the class hierarchy, so the
# most specific class decides: requests' ConnectTimeout is both a ConnectionError and a Timeout.
_KNOWN: dict[str, tuple[ErrorCode, Sent]] = {
    # requests
    "requests.ConnectTimeout": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "requests.ReadTimeout": (ErrorCode.TIMEOUT, Sent.UNKNOWN),
    "requests.Timeout": (ErrorCode.TIMEOUT, Sent.UNKNOWN),
    "requests.SSLError": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "requests.ProxyError": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "requests.ChunkedEncodingError": (ErrorCode.TRANSIENT_NETWORK, Sent.YES),
    "requests.ContentDecodingError": (ErrorCode.TRANSIENT_NETWORK, Sent.YES),
    "requests.TooManyRedirects": (ErrorCode.SERVER_ERROR, Sent.YES),
    "requests.InvalidURL": (ErrorCode.INVALID_ARGUMENTS, Sent.NO),
    "requests.MissingSchema": (ErrorCode.INVALID_ARGUMENTS, Sent.NO),
    "requests.InvalidSchema": (ErrorCode.INVALID_ARGUMENTS, Sent.NO),
    "requests.URLRequired": (ErrorCode.INVALID_ARGUMENTS, Sent.NO),
    "requests.InvalidHeader": (ErrorCode.INVALID_ARGUMENTS, Sent.NO),
    # httpx
    "httpx.ConnectTimeout": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "httpx.ConnectError": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "httpx.PoolTimeout": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "httpx.ProxyError": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "httpx.ReadTimeout": (ErrorCode.TIMEOUT, Sent.UNKNOWN),
    "httpx.WriteTimeout": (ErrorCode.TIMEOUT, Sent.UNKNOWN),
    "httpx.TimeoutException": (ErrorCode.TIMEOUT, Sent.UNKNOWN),
    "httpx.ReadError": (ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
    "httpx.WriteError": (ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
    "httpx.RemoteProtocolError": (ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
    "httpx.CloseError": (ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
    "httpx.NetworkError": (ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
    "httpx.LocalProtocolError": (ErrorCode.INVALID_ARGUMENTS, Sent.NO),
    "httpx.UnsupportedProtocol": (ErrorCode.INVALID_ARGUMENTS, Sent.NO),
    "httpx.InvalidURL": (ErrorCode.INVALID_ARGUMENTS, Sent.NO),
    "httpx.TooManyRedirects": (ErrorCode.SERVER_ERROR, Sent.YES),
    "httpx.DecodingError": (ErrorCode.TRANSIENT_NETWORK, Sent.YES),
    # aiohttp
    "aiohttp.ConnectionTimeoutError": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "aiohttp.ClientConnectorError": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "aiohttp.ClientProxyConnectionError": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "aiohttp.ClientSSLError": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "aiohttp.SocketTimeoutError": (ErrorCode.TIMEOUT, Sent.UNKNOWN),
    "aiohttp.ServerTimeoutError": (ErrorCode.TIMEOUT, Sent.UNKNOWN),
    "aiohttp.ServerDisconnectedError": (ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
    "aiohttp.ClientPayloadError": (ErrorCode.TRANSIENT_NETWORK, Sent.YES),
    "aiohttp.ClientOSError": (ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
    "aiohttp.ClientConnectionError": (ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
    "aiohttp.InvalidURL": (ErrorCode.INVALID_ARGUMENTS, Sent.NO),
    "aiohttp.TooManyRedirects": (ErrorCode.SERVER_ERROR, Sent.YES),
    # urllib3
    "urllib3.NewConnectionError": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "urllib3.NameResolutionError": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "urllib3.ConnectTimeoutError": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "urllib3.SSLError": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "urllib3.ProxyError": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "urllib3.ReadTimeoutError": (ErrorCode.TIMEOUT, Sent.UNKNOWN),
    "urllib3.TimeoutError": (ErrorCode.TIMEOUT, Sent.UNKNOWN),
    "urllib3.ProtocolError": (ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
    "urllib3.LocationParseError": (ErrorCode.INVALID_ARGUMENTS, Sent.NO),
    # standard library (asyncio.TimeoutError is builtins.TimeoutError from 3.11 on)
    "socket.gaierror": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "builtins.ConnectionRefusedError": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "ssl.SSLCertVerificationError": (ErrorCode.TRANSIENT_NETWORK, Sent.NO),
    "ssl.SSLError": (ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
    "builtins.ConnectionResetError": (ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
    "builtins.ConnectionAbortedError": (ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
    "builtins.BrokenPipeError": (ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
    "builtins.ConnectionError": (ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
    "builtins.TimeoutError": (ErrorCode.TIMEOUT, Sent.UNKNOWN),
    "socket.timeout": (ErrorCode.TIMEOUT, Sent.UNKNOWN),
    "asyncio.TimeoutError": (ErrorCode.TIMEOUT, Sent.UNKNOWN),
    "concurrent.TimeoutError": (ErrorCode.TIMEOUT, Sent.UNKNOWN),
    "http.RemoteDisconnected": (ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
    "http.IncompleteRead": (ErrorCode.TRANSIENT_NETWORK, Sent.YES),
    "http.HTTPException": (ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN),
    "builtins.PermissionError": (ErrorCode.PERMISSION_DENIED, Sent.NO),
    "builtins.FileNotFoundError": (ErrorCode.NOT_FOUND, Sent.NO),
}

# Classes whose meaning depends on what they wrap: requests' ConnectionError is raised both for
# "connection refused" (nothing sent) and "connection aborted" (after the request was written).
_WRAPPERS = frozenset(
    {
        "requests.ConnectionError",
        "requests.RequestException",
        "urllib3.MaxRetryError",
        "urllib.URLError",
        "aiohttp.ClientError",
    }
)

# Exceptions carrying an HTTP response, and where each keeps its status code.
_STATUS_CARRIERS = {
    "requests.HTTPError": "response.status_code",
    "httpx.HTTPStatusError": "response.status_code",
    "aiohttp.ClientResponseError": "status",
    "urllib.HTTPError": "code",
}


def classify_status(status: int, headers: Any = None) -> tuple[ErrorCode, Sent, float | None]:
    """Map an HTTP status to a code and whether the service may have applied the request."""
    retry_after = _retry_after(headers)
    if status == 429:
        return ErrorCode.RATE_LIMIT, Sent.NO, retry_after
    if status == 408:
        return ErrorCode.TIMEOUT, Sent.NO, retry_after
    if status in (401, 403):
        return ErrorCode.PERMISSION_DENIED, Sent.YES, None
    if status in (404, 410):
        return ErrorCode.NOT_FOUND, Sent.YES, None
    if 400 <= status < 500:
        return ErrorCode.INVALID_ARGUMENTS, Sent.YES, None
    if status == 503 and retry_after is not None:
        # An explicit "come back later" is the one 5xx that says nothing was done.
        return ErrorCode.SERVER_ERROR, Sent.NO, retry_after
    return ErrorCode.SERVER_ERROR, Sent.UNKNOWN, retry_after


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    try:
        value = headers.get("Retry-After") or headers.get("retry-after")
    except Exception:
        return None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(str(value))
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _attribute_path(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _lookup(exc: BaseException) -> tuple[str, tuple[ErrorCode, Sent]] | None:
    for name in _qualified_names(exc):
        if name in _KNOWN:
            return name, _KNOWN[name]
        if name in _WRAPPERS or name in _STATUS_CARRIERS:
            return None
    return None


def classify_exception(exc: BaseException) -> Failure:
    """Classify any exception into an error code and whether the request may have been sent."""
    exception_type = type(exc).__name__
    if isinstance(exc, ToolError):
        return Failure(exc.code, exc.sent, exc.message, exception_type, exc.retry_after_s)
    for name in _qualified_names(exc):
        carrier = _STATUS_CARRIERS.get(name)
        if carrier is None:
            continue
        status = _attribute_path(exc, carrier)
        if isinstance(status, int):
            response = getattr(exc, "response", None)
            headers = getattr(response, "headers", None) or getattr(exc, "headers", None)
            code, sent, retry_after = classify_status(status, headers)
            return Failure(code, sent, f"HTTP {status}", exception_type, retry_after)
    direct = _lookup(exc)
    if direct is not None:
        code, sent = direct[1]
        return Failure(code, sent, exception_type, exception_type)
    names = set(_qualified_names(exc))
    if names & _WRAPPERS:
        # A wrapper means "not sent" only if everything it wraps says so; any doubt wins.
        found = [hit[1] for cause in _causes(exc) if (hit := _lookup(cause)) is not None]
        doubtful = [(code, sent) for code, sent in found if sent is not Sent.NO]
        if found and not doubtful:
            code, sent = found[0]
        elif doubtful:
            code, sent = doubtful[0]
        else:
            code, sent = ErrorCode.TRANSIENT_NETWORK, Sent.UNKNOWN
        return Failure(code, sent, exception_type, exception_type)
    if isinstance(exc, TimeoutError):
        return Failure(ErrorCode.TIMEOUT, Sent.UNKNOWN, exception_type, exception_type)
    return Failure(ErrorCode.TOOL_CRASH, Sent.UNKNOWN, exception_type, exception_type)
