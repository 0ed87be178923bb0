"""The error taxonomy of agentguard's runtime (agentguard/runtime/errors.py), mirrored for
the code AG601's fix writes into a user's file: the analyser imports nothing from the
runtime, and the user's module needs no agentguard import. tests/test_fix_error_taxonomy.py
checks that the two classify alike."""

from __future__ import annotations

from collections.abc import Callable

# The exception classes of agentguard's error taxonomy (agentguard/runtime/errors.py, which
# the analyser does not import), mirrored into the helper the fix adds: "module.Class" as
# ``type(error).__mro__`` names it -> (error code, whether the service certainly did
# nothing). tests/test_fix_error_taxonomy.py checks the two agree.
EXCEPTION_CODES: tuple[tuple[str, str, bool], ...] = (
    ("requests.ConnectTimeout", "TRANSIENT_NETWORK", True),
    ("requests.ReadTimeout", "TIMEOUT", False),
    ("requests.Timeout", "TIMEOUT", False),
    ("requests.SSLError", "TRANSIENT_NETWORK", True),
    ("requests.ProxyError", "TRANSIENT_NETWORK", True),
    ("requests.InvalidURL", "INVALID_ARGUMENTS", True),
    ("requests.MissingSchema", "INVALID_ARGUMENTS", True),
    ("requests.ConnectionError", "TRANSIENT_NETWORK", False),
    # Wrappers: the runtime reads what they wrap; the helper takes the doubtful reading.
    ("requests.RequestException", "TRANSIENT_NETWORK", False),
    ("urllib3.MaxRetryError", "TRANSIENT_NETWORK", False),
    ("urllib.URLError", "TRANSIENT_NETWORK", False),
    ("aiohttp.ClientError", "TRANSIENT_NETWORK", False),
    ("httpx.ConnectTimeout", "TRANSIENT_NETWORK", True),
    ("httpx.ConnectError", "TRANSIENT_NETWORK", True),
    ("httpx.PoolTimeout", "TRANSIENT_NETWORK", True),
    ("httpx.TimeoutException", "TIMEOUT", False),
    ("httpx.NetworkError", "TRANSIENT_NETWORK", False),
    ("httpx.RemoteProtocolError", "TRANSIENT_NETWORK", False),
    ("httpx.InvalidURL", "INVALID_ARGUMENTS", True),
    ("aiohttp.ClientConnectorError", "TRANSIENT_NETWORK", True),
    ("aiohttp.ServerTimeoutError", "TIMEOUT", False),
    ("aiohttp.ClientConnectionError", "TRANSIENT_NETWORK", False),
    ("socket.gaierror", "TRANSIENT_NETWORK", True),
    ("builtins.ConnectionRefusedError", "TRANSIENT_NETWORK", True),
    ("builtins.ConnectionError", "TRANSIENT_NETWORK", False),
    ("builtins.TimeoutError", "TIMEOUT", False),
    ("builtins.PermissionError", "PERMISSION_DENIED", True),
    ("builtins.FileNotFoundError", "NOT_FOUND", True),
)
# An HTTP status the exception carries (``error.response.status_code``) -> (code, whether the
# service certainly did nothing); other 4xx are INVALID_ARGUMENTS, 5xx SERVER_ERROR.
HTTP_STATUS_CODES: tuple[tuple[int, str, bool], ...] = (
    (408, "TIMEOUT", True),
    (429, "RATE_LIMIT", True),
    (401, "PERMISSION_DENIED", True),
    (403, "PERMISSION_DENIED", True),
    (404, "NOT_FOUND", True),
    (410, "NOT_FOUND", True),
)
# Codes after which calling again can help once the cause has passed.
TRANSIENT_CODES = ("TIMEOUT", "RATE_LIMIT", "TRANSIENT_NETWORK", "SERVER_ERROR")
# What the model is told to do next, by code.
ERROR_ADVICE: tuple[tuple[str, str], ...] = (
    (
        "SIDE_EFFECT_UNCERTAIN",
        "It may or may not have taken effect: do not call it again for this request; "
        "tell the user it is not known yet whether it happened.",
    ),
    ("TIMEOUT", "Nothing was changed by it, so calling it again in a moment is safe."),
    ("RATE_LIMIT", "Wait a moment before calling it again."),
    ("TRANSIENT_NETWORK", "Nothing was changed by it, so calling it again in a moment is safe."),
    ("SERVER_ERROR", "Nothing was changed by it, so calling it again in a moment is safe."),
    ("INVALID_ARGUMENTS", "Check the arguments before calling it again."),
    ("NOT_FOUND", "What it was asked for does not exist; do not call it again as is."),
    ("PERMISSION_DENIED", "It is not allowed; do not call it again, tell the user."),
    ("TOOL_CRASH", "Do not call it again for this request; tell the user what failed."),
)
# The summary keeps the exception's type and at most this much of its message.
SUMMARY_CHARS = 200
HELPER_NAME = "tool_error"
# The helper is laid out for 79 columns (PEP 8), which fits every common setting.
HELPER_WIDTH = 79


def helper_source(quote: str) -> str:
    """The module-level ``tool_error(tool, error, writes=...)`` the fix adds once per file,
    in the file's quotes. It runs in the user's process, so it imports only ``re``."""

    def q(text: str) -> str:
        return f"{quote}{text}{quote}"

    codes = "".join(f"\n    {q(n)}: ({q(c)}, {r})," for n, c, r in EXCEPTION_CODES)
    statuses = "".join(f"\n    {s}: ({q(c)}, {r})," for s, c, r in HTTP_STATUS_CODES)
    advice = "".join(f"\n    {q(code)}: {_laid_out(code, text, q)}," for code, text in ERROR_ADVICE)
    transient = "".join(f"\n    {q(c)}," for c in TRANSIENT_CODES)
    tables = (
        "# The error taxonomy of agentguard.runtime.errors, mirrored so that this module"
        "\n# needs no agentguard import: exception class -> (code, nothing was done)."
        f"\nTOOL_ERROR_CODES = {{{codes}\n}}"
        f"\nTOOL_ERROR_STATUSES = {{{statuses}\n}}"
        f"\nTOOL_ERROR_RETRYABLE = ({transient}\n)"
        f"\nTOOL_ERROR_ADVICE = {{{advice}\n}}\n"
    )
    # The function holds no apostrophe or double quote in its strings: swapping the quote
    # character gives the same code in the other style.
    function = HELPER_FUNCTION.replace("SUMMARY_CHARS", str(SUMMARY_CHARS))
    return tables + (function if quote == "'" else function.replace("'", quote))


HELPER_FUNCTION = r'''

def tool_error(tool: str, error: BaseException, *, writes: bool) -> dict:
    """A structured error for the model: the error code, whether calling again
    can help, and the exception type with a short message (URLs and secrets
    removed)."""
    code, nothing_done = 'TOOL_CRASH', False
    status = getattr(getattr(error, 'response', None), 'status_code', None)
    if isinstance(status, int) and status >= 400:
        code, nothing_done = 'INVALID_ARGUMENTS', True
        if status >= 500:
            code, nothing_done = 'SERVER_ERROR', False
        known = TOOL_ERROR_STATUSES.get(status)
        if known:
            code, nothing_done = known
    else:
        for cls in type(error).__mro__:
            name = cls.__module__.split('.')[0] + '.' + cls.__name__
            if name in TOOL_ERROR_CODES:
                code, nothing_done = TOOL_ERROR_CODES[name]
                break
    if writes and not nothing_done:
        code = 'SIDE_EFFECT_UNCERTAIN'
    message = re.sub(r'https?://\S+', '<url>', ' '.join(str(error).split()))
    message = re.sub(
        r'(?i)(token|secret|password|api[_-]?key|authorization|bearer)'
        r'\S*[=: ]+\S+',
        r'\1=<redacted>',
        message,
    )
    summary = type(error).__name__
    if message:
        summary += ': ' + message[:SUMMARY_CHARS]
    return {
        'ok': False,
        'code': code,
        'content': f'{tool} failed ({summary}). {TOOL_ERROR_ADVICE[code]}',
        'retryable': code in TOOL_ERROR_RETRYABLE,
    }
'''


def _laid_out(code: str, text: str, q: Callable[[str], str]) -> str:
    """A string literal, or adjacent ones in parentheses when it is too long for a line."""
    if len(f"    {q(code)}: {q(text)},") <= HELPER_WIDTH:
        return q(text)
    pieces = _pieces(text)
    return "(" + "".join(f"\n        {q(piece)}" for piece in pieces) + "\n    )"


def _pieces(text: str, width: int = HELPER_WIDTH - 12) -> list[str]:
    words, lines = text.split(" "), [""]
    for word in words:
        if lines[-1] and len(lines[-1]) + len(word) + 1 > width:
            lines[-1] += " "
            lines.append(word)
        else:
            lines[-1] = f"{lines[-1]} {word}" if lines[-1] else word
    return lines


def with_helper(quote: str = '"') -> str:
    """The helper as the fix inserts it after a file's imports, with its blank lines: for
    the rule's examples."""
    return f"\n\n{helper_source(quote)}\n\n"
