"""What a Python file's text shows of its imports and top-level names, read line by line
without parsing: enough to guess the module names the project's imports give its files
before any file is parsed (``agentguard.engine.module_roots``). A guess only: a parse
decides, and a file guessed wrong is parsed again under its name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# One pass over the text, each match at a line start (after a newline: a file is read with
# one put before it): ``from a.b import c, d`` (or a parenthesised list), ``import a.b``, a
# top-level ``def``/``class`` name, a top-level assignment's name.
_LINE = re.compile(
    rb"\n(?:[ \t]*(?:from[ \t]+([A-Za-z_][\w.]*)[ \t]+import[ \t]*(\([^)]*\)|[^\n;#]*)"
    rb"|import[ \t]+([^\n;#]+))"
    rb"|(?:(?:async[ \t]+)?def|class)[ \t]+(\w+)"
    rb"|([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=))"
)
_SYS_PATH = re.compile(rb"sys\.path\.(append|insert)\((.*)\)")
_INSERT_AT = re.compile(r"^\s*-?\d+\s*,")


@dataclass(frozen=True)
class TextImports:
    """A file's absolute imports (``from a.b import c`` as ``a.b.c``, ``import a.b`` as
    ``a.b``), its top-level definitions and assignments, and the last argument of each
    ``sys.path.append``/``insert`` call, as its text shows them."""

    absolute_imports: tuple[str, ...]
    defined: frozenset[str]
    sys_path_args: tuple[str, ...]


def imports_in_text(data: bytes) -> TextImports:
    """The imports and names ``data`` (a Python file's bytes) shows, line by line."""
    imports: list[str] = []
    defined: set[str] = set()
    for base, listed, modules, definition, assigned in _LINE.findall(b"\n" + data):
        if base:
            head = base.decode("utf-8", "replace")
            for name in _names(listed):
                imports.append(head if name == "*" else f"{head}.{name}")
        elif modules:
            imports.extend(_names(modules))
        else:
            defined.add((definition or assigned).decode("utf-8", "replace"))
    args: list[str] = []
    if b"sys.path" in data:
        for match in _SYS_PATH.finditer(data):
            text = match.group(2).decode("utf-8", "replace")
            if match.group(1) == b"insert":
                text = _INSERT_AT.sub("", text)
            args.append(text)
    return TextImports(tuple(imports), frozenset(defined), tuple(args))


def _names(listed: bytes) -> list[str]:
    """The names of an import list (``a, b as c`` or ``(a,\\n b)``), aliases dropped."""
    text = listed.decode("utf-8", "replace").strip().strip("()\\")
    names = []
    for part in text.split(","):
        name = part.split(" as ", 1)[0].strip().strip("()\\ \t\r\n")
        if name and (name == "*" or name.replace(".", "_").isidentifier()):
            names.append(name)
    return names
