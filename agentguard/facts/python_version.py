"""Which newer Python a file that fails to parse probably needs.

agentguard parses with the interpreter it runs on, so a file in newer syntax (a PEP 701
f-string under 3.11) fails with a generic syntax error. These are the syntax forms a release
added, matched on the failing line, so the error can say which version the file needs."""

from __future__ import annotations

import re
import sys

# (first version with the form, what it is, a pattern on the failing line, or None when the
# interpreter's own message identifies it)
_NEWER_FORMS: tuple[tuple[tuple[int, int], str, re.Pattern[str] | None, str | None], ...] = (
    ((3, 11), "`except*` (PEP 654)", re.compile(r"^\s*except\s*\*"), None),
    (
        (3, 12),
        "a type parameter list (PEP 695)",
        re.compile(r"^\s*(async\s+)?(def|class)\s+\w+\s*\["),
        None,
    ),
    (
        (3, 12),
        "a `type` alias statement (PEP 695)",
        re.compile(r"^\s*type\s+\w+\s*(\[[^\]]*\])?\s*="),
        None,
    ),
    ((3, 12), "an f-string nesting quotes or comments (PEP 701)", None, "f-string"),
    ((3, 14), "a template string (PEP 750)", re.compile(r"""(^|[^\w])[tT][rR]?['"]"""), None),
    (
        (3, 14),
        "`except` without parentheses (PEP 758)",
        re.compile(r"^\s*except\s+\w[\w.]*\s*,\s*\w"),
        None,
    ),
)


def running_version() -> str:
    return ".".join(str(part) for part in sys.version_info[:3])


def newer_syntax(message: str, line_text: str) -> str | None:
    """A note naming the Python version the failing line needs, when it is newer than ours."""
    for version, form, pattern, message_start in _NEWER_FORMS:
        if sys.version_info[:2] >= version:
            continue
        if (message_start is not None and message.startswith(message_start)) or (
            pattern is not None and pattern.search(line_text)
        ):
            needed = ".".join(map(str, version))
            return (
                f"this line uses {form}, which needs Python {needed} or newer; agentguard runs "
                f"on Python {running_version()}: run it on Python {needed}+ to check this file"
            )
    return None
