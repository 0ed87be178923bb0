"""A fix's edits are the lines it changes: applied to the file they give the fixed file, and
they are the ranges difflib's line diff gives (what JSON and SARIF printed before the diff
was made linear), whatever repeats in the file."""

from __future__ import annotations

import difflib
import random

import pytest

from agentguard.fixes.text import apply_text_edits, changed_lines, line_edits, resolve

LINES = [
    "\n",
    "\n",
    "    pass\n",
    "    return result\n",
    "def handler(event):\n",
    "import json\n",
    "    )\n",
    "        }\n",
    "# section\n",
]


def variations(seed: int) -> list[tuple[list[str], list[str]]]:
    """Files full of repeated lines (blank lines, closing brackets, whole repeated blocks)
    and the same files after a few insertions, deletions, replacements and copies."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(300):
        vocabulary = LINES + [f"value_{n} = {n}\n" for n in range(rng.randint(0, 30))]
        old = [rng.choice(vocabulary) for _ in range(rng.randint(0, 80))]
        if rng.random() < 0.3:
            old += old[: rng.randint(0, len(old))]  # a block written twice
        new = list(old)
        for _ in range(rng.randint(0, 4)):
            at = rng.randint(0, len(new))
            roll = rng.random()
            if roll < 0.3:
                new[at:at] = [rng.choice(LINES) for _ in range(rng.randint(1, 6))]
            elif roll < 0.45:
                source = rng.randint(0, len(new))
                new[at:at] = new[source : source + rng.randint(1, 10)]
            elif roll < 0.7:
                del new[at : at + rng.randint(1, 4)]
            else:
                new[at : at + rng.randint(0, 3)] = [
                    rng.choice([*LINES, "added()\n"]) for _ in range(rng.randint(0, 3))
                ]
        pairs.append((old, new))
    return pairs


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_changed_lines_are_those_of_difflibs_line_diff(seed: int) -> None:
    for old, new in variations(seed):
        expected = [
            (i1, i2, j1, j2)
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
                None, old, new, autojunk=False
            ).get_opcodes()
            if tag != "equal"
        ]
        assert changed_lines(old, new) == expected, (old, new)


def test_applied_edits_give_the_fixed_file() -> None:
    for old, new in variations(4):
        before, after = "".join(old), "".join(new)
        edits = line_edits("tools.py", before, after)
        assert apply_text_edits(before, resolve(before, edits)) == after
