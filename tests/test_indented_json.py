"""The JSON and SARIF writers' encoder writes what ``json.dumps(value, indent=2)`` writes."""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any

import pytest

from agentguard.config import load_config
from agentguard.engine.pipeline import scan
from agentguard.output import json_format, sarif
from agentguard.output.indented_json import dumps_indented

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


class Level(str, enum.Enum):
    HIGH = "h\u00e9gh"


class Rank(enum.IntEnum):
    FIRST = 1


VALUES: list[Any] = [
    0,
    -0.0,
    1.5,
    1e300,
    float("nan"),
    float("inf"),
    -float("inf"),
    2**80,
    True,
    False,
    None,
    'quote " backslash \\ newline \n control \x00\x1f\x7f snowman \u2603 face \U0001f600',
    [],
    {},
    [[]],
    [{}],
    (1, (2, [3, ()])),
    {"a": [], "b": {}, "c": {"d": [None, True, "s", 1.25]}},
    {2: "int", 1.5: "float", True: "true", False: "false", None: "null"},
    [Level.HIGH, Rank.FIRST, {Level.HIGH: Rank.FIRST}],
]


@pytest.mark.parametrize("value", VALUES, ids=[repr(v)[:30] for v in VALUES])
def test_each_kind_of_value_is_written_as_the_standard_encoder_writes_it(value: Any) -> None:
    assert dumps_indented(value) == json.dumps(value, indent=2)


def test_an_object_json_cannot_write_is_refused() -> None:
    with pytest.raises(TypeError):
        dumps_indented({"a": {1, 2}})
    with pytest.raises(TypeError):
        dumps_indented({(1, 2): "tuple key"})


def test_the_reports_of_a_fixture_are_written_as_before() -> None:
    root = FIXTURES / "dispatch-desk"
    result = scan([root], load_config([root]), with_fixes=True)
    assert result.findings
    for output in (json_format, sarif):
        document = output.document(result)
        assert dumps_indented(document) == json.dumps(document, indent=2)
