"""Strings a module names without writing them: the value of a member of one of its
``enum`` classes (``JiraTools.GET_ISSUE.value`` for ``class JiraTools(str, Enum):
GET_ISSUE = "get_issue"``), as dispatch code compares tool names against."""

from __future__ import annotations

import ast
from collections.abc import Callable

from agentguard.facts.module_facts import ClassDef

# Marks a branch string that names an enum member of another module
# (``ENUM_MEMBER + "pkg.names.Tools.GET_ISSUE"``): the project model looks its value up.
ENUM_MEMBER = "enum-member:"


def is_enum_class(cls: ClassDef) -> bool:
    """A class deriving from the standard library's ``enum`` classes (``Enum``,
    ``StrEnum``, ``IntEnum``...), its bases resolved through the module's imports."""
    return any(base.split(".", 1)[0] == "enum" for base in cls.bases)


def enum_member_value(
    node: ast.expr,
    classes: dict[str, ClassDef],
    module: str,
    resolve: Callable[[ast.expr], str | None],
) -> str | None:
    """``Members.NAME.value``: the string assigned to ``NAME`` in this module's enum class
    ``Members``; for a class imported or defined further down, ``ENUM_MEMBER`` and the member's
    qualified name; None for any other expression."""
    if not (
        isinstance(node, ast.Attribute)
        and node.attr == "value"
        and isinstance(node.value, ast.Attribute)
        and isinstance(node.value.value, ast.Name)
    ):
        return None
    cls = classes.get(f"{module}.{node.value.value.id}")
    if cls is None:
        # imported, or defined further down this module
        owner = resolve(node.value.value)
        known = owner is not None and "." in owner
        return f"{ENUM_MEMBER}{owner}.{node.value.attr}" if known else None
    if not is_enum_class(cls):
        return None
    member = cls.attributes.get(node.value.attr)
    return member.string() if member is not None else None
