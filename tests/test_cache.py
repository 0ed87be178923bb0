"""The per-file fact cache: hits after a fresh clone, misses after any input changes."""

from __future__ import annotations

import copy
import copyreg
import dataclasses
import io
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.config import load_config
from agentguard.diagnostics import Span
from agentguard.engine import fact_cache
from agentguard.engine.parallel import ExtractStats, source_facts
from agentguard.engine.pipeline import scan
from agentguard.engine.scan_result import ScanResult
from agentguard.engine.speed import FactOptions
from agentguard.facts.module_facts import ModuleFacts, Suppression
from agentguard.knowledge.catalog import Catalog, builtin_data

from .conftest import FIXTURES


def finding_lines(result: ScanResult) -> list[str]:
    return [f"{f.code} {f.path}:{f.span.line}:{f.span.column} {f.tool}" for f in result.findings]


@pytest.fixture
def project(shop_agent: Path) -> Path:
    return shop_agent


def cached_scan(
    project: Path, cache_dir: Path, catalog: Catalog | None = None
) -> tuple[ScanResult, ExtractStats]:
    options = FactOptions(jobs=1, cache_dir=cache_dir)
    result = scan([project], load_config([project]), facts=options, catalog=catalog)
    assert options.stats is not None
    return result, options.stats


def python_files(project: Path) -> list[Path]:
    return sorted(p for p in project.rglob("*.py") if ".agentguard_cache" not in p.parts)


def test_second_run_reads_every_file_from_the_cache_even_with_new_mtimes(
    project: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    cold, cold_stats = cached_scan(project, cache_dir)
    assert cold_stats.cache_hits == 0
    assert cold_stats.parsed == len(python_files(project)) > 0
    # A fresh clone: same bytes, every modification time new.
    for path in python_files(project):
        os.utime(path, (1_900_000_000, 1_900_000_000))
    warm, warm_stats = cached_scan(project, cache_dir)
    assert warm_stats.parsed == 0
    assert warm_stats.cache_hits == cold_stats.parsed
    assert finding_lines(warm) == finding_lines(cold)
    assert finding_lines(cold)  # the fixture has findings, so the comparison means something


def test_a_changed_file_is_parsed_again_and_its_new_content_is_used(
    project: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    cold, _ = cached_scan(project, cache_dir)
    changed = project / cold.findings[0].path
    changed.write_text("\n\n" + changed.read_text(encoding="utf-8"), encoding="utf-8")
    warm, stats = cached_scan(project, cache_dir)
    assert stats.parsed == 1
    assert stats.cache_hits == len(python_files(project)) - 1
    uncached = scan([project], load_config([project]))
    assert finding_lines(warm) == finding_lines(uncached)
    moved = [f.span.line for f in warm.findings if f.path == cold.findings[0].path]
    assert cold.findings[0].span.line + 2 in moved


def test_a_config_change_invalidates_every_entry(project: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    cached_scan(project, cache_dir)
    (project / "agentguard.toml").write_text('min-confidence = "low"\n', encoding="utf-8")
    _, stats = cached_scan(project, cache_dir)
    assert stats.cache_hits == 0
    assert stats.parsed == len(python_files(project))


def test_a_catalogue_change_invalidates_every_entry(project: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    cached_scan(project, cache_dir, Catalog(builtin_data()))
    data = copy.deepcopy(builtin_data())
    data["ledger_functions"].append("billing.ledger.record_attempt")
    changed = Catalog(data)
    assert changed.digest != Catalog(builtin_data()).digest
    _, stats = cached_scan(project, cache_dir, changed)
    assert stats.cache_hits == 0
    assert stats.parsed == len(python_files(project))


def entries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.rglob("*.pickle"))


@pytest.mark.parametrize(
    "garbage",
    [b"", b"not a pickle", pickle.dumps({"path": "x"}), pickle.dumps(Path("/etc/passwd"))],
    ids=["empty", "text", "wrong-type", "foreign-class"],
)
def test_a_corrupt_entry_is_ignored_and_rebuilt(
    project: Path, tmp_path: Path, garbage: bytes
) -> None:
    cache_dir = tmp_path / "cache"
    cold, _ = cached_scan(project, cache_dir)
    written = entries(cache_dir)
    assert len(written) == len(python_files(project))
    for entry in written:
        entry.write_bytes(garbage)
    rebuilt, stats = cached_scan(project, cache_dir)
    assert stats.cache_hits == 0
    assert finding_lines(rebuilt) == finding_lines(cold)
    _, again = cached_scan(project, cache_dir)
    assert again.cache_hits == len(written)


def field_named_pickle(facts: ModuleFacts) -> bytes:
    """An entry as FORMAT 2 wrote it: each object's fields by name, as a ``__dict__``."""

    class FieldNamedPickler(pickle.Pickler):
        def reducer_override(self, obj: Any) -> Any:
            if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
                state = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
                return copyreg.__newobj__, (type(obj),), state
            return NotImplemented

    out = io.BytesIO()
    FieldNamedPickler(out, protocol=fact_cache.PICKLE_PROTOCOL).dump(facts)
    return out.getvalue()


def test_an_entry_in_the_previous_format_is_ignored_and_rebuilt(
    project: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    cold, _ = cached_scan(project, cache_dir)
    written = entries(cache_dir)
    for entry in written:
        facts = fact_cache.decode(entry.read_bytes())
        assert isinstance(facts, ModuleFacts)
        entry.write_bytes(field_named_pickle(facts))
    rebuilt, stats = cached_scan(project, cache_dir)
    assert (stats.cache_hits, stats.parsed) == (0, len(written))
    assert finding_lines(rebuilt) == finding_lines(cold)
    _, again = cached_scan(project, cache_dir)
    assert again.cache_hits == len(written)


def test_a_cache_written_by_another_format_version_is_not_read(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache_dir = tmp_path / "cache"
    cached_scan(project, cache_dir)
    monkeypatch.setattr(fact_cache, "FORMAT", fact_cache.FORMAT + "-next")
    _, stats = cached_scan(project, cache_dir)
    assert (stats.cache_hits, stats.parsed) == (0, len(python_files(project)))


def fixture_facts() -> list[ModuleFacts]:
    found = []
    for path in sorted(FIXTURES.rglob("*.py")):
        rel = path.relative_to(FIXTURES).as_posix()
        facts = source_facts(path.read_bytes(), rel, Catalog(builtin_data()).context_carriers)
        if isinstance(facts, ModuleFacts):
            found.append(facts)
    return found


def test_facts_read_back_from_the_cache_equal_the_extracted_facts() -> None:
    every = fixture_facts()
    assert len(every) > 50
    for facts in every:
        assert fact_cache.decode(fact_cache.encode(facts)) == facts, facts.path


def test_spans_read_back_from_the_cache_are_spans_that_order_by_position() -> None:
    facts = next(f for f in fixture_facts() if f.calls)
    loaded = fact_cache.decode(fact_cache.encode(facts))
    assert isinstance(loaded, ModuleFacts)
    spans = [call.span for call in loaded.calls]
    assert all(type(span) is Span for span in spans)
    assert spans == [call.span for call in facts.calls]
    assert sorted(spans) == sorted(
        spans, key=lambda s: (s.line, s.column, s.end_line, s.end_column)
    )
    assert {spans[0]: "first"}[Span(*spans[0])] == "first"  # hashed by position


def test_loaded_facts_refuse_changes_to_their_shared_empty_containers() -> None:
    # Loaded facts share one empty list and one empty dict: a change to one would show
    # up in every other loaded file, so it must fail instead.
    first, second = (
        fact_cache.decode(fact_cache.encode(ModuleFacts(path=f"{name}.py", module=name)))
        for name in ("first", "second")
    )
    assert isinstance(first, ModuleFacts) and isinstance(second, ModuleFacts)
    with pytest.raises(TypeError):
        first.suppressions.append(Suppression(1, [], "", Span.point(1)))
    with pytest.raises(TypeError):
        first.imports["requests"] = "requests"
    assert second.suppressions == [] and second.imports == {}


def test_an_entry_naming_any_other_callable_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.mkdir, (str(marker),))

    assert fact_cache.decode(pickle.dumps(Payload())) is None
    assert not marker.exists()


def test_the_cache_folder_is_ignored_by_git_and_tagged(project: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    cached_scan(project, cache_dir)
    assert (cache_dir / ".gitignore").read_text(encoding="utf-8") == "*\n"
    assert (cache_dir / "CACHEDIR.TAG").read_text(encoding="utf-8").startswith("Signature: ")
    assert not list(cache_dir.rglob(".tmp-*"))  # every write was renamed into place


def test_cli_writes_the_default_cache_and_clean_removes_it(project: Path) -> None:
    runner = CliRunner()
    checked = runner.invoke(app, ["check", str(project), "--exit-zero", "--jobs", "1"])
    assert checked.exit_code == 0, checked.output
    cache_dir = fact_cache.default_cache_dir(project)
    assert entries(cache_dir)
    cleaned = runner.invoke(app, ["clean", str(project)])
    assert cleaned.exit_code == 0, cleaned.output
    assert not cache_dir.exists()
    again = runner.invoke(app, ["clean", str(project)])
    assert again.exit_code == 0 and "no cache" in again.output


def test_no_cache_writes_nothing(project: Path) -> None:
    result = CliRunner().invoke(app, ["check", str(project), "--exit-zero", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert not (fact_cache.default_cache_dir(project)).exists()


def test_clean_refuses_a_folder_that_is_not_a_cache(tmp_path: Path) -> None:
    precious = tmp_path / "src"
    precious.mkdir()
    result = CliRunner().invoke(app, ["clean", str(tmp_path), "--cache-dir", str(precious)])
    assert result.exit_code == 2
    assert precious.exists()


def test_a_cache_folder_that_cannot_be_made_is_named_and_the_check_still_runs(
    project: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("not a folder\n", encoding="utf-8")
    result = CliRunner().invoke(
        app, ["check", str(project), "--exit-zero", "--cache-dir", str(blocker)]
    )
    assert result.exit_code == 0, result.output
    assert "warning:" in result.output and "a file is in its place" in result.output
    assert "finding" in result.output  # the check ran and reported
    assert blocker.read_text(encoding="utf-8") == "not a folder\n"


def test_runs_started_together_on_one_cache_agree_and_leave_it_whole(
    project: Path, tmp_path: Path
) -> None:
    # Three checks write the same entries and run records at once (CI jobs sharing a
    # restored folder); then a fourth is answered by what they kept.
    cache_dir = tmp_path / "cache"
    command = [
        sys.executable, "-m", "agentguard", "check", str(project),
        "--format", "json", "--exit-zero", "--jobs", "1", "--cache-dir", str(cache_dir),
    ]  # fmt: skip
    runs = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0, 0], [err for _, err in outputs]
    assert outputs[0][0] == outputs[1][0] == outputs[2][0]
    assert '"findings": [' in outputs[0][0] and '"code": "AG' in outputs[0][0]
    assert not list(cache_dir.rglob(".tmp-*"))  # every write was renamed into place
    again = subprocess.run([*command, "--profile"], capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stderr
    assert again.stdout == outputs[0][0]
    assert "no input changed since a recorded run" in again.stderr


def test_clean_refuses_another_tools_tagged_cache(tmp_path: Path) -> None:
    # ruff and mypy tag their caches with a CACHEDIR.TAG too: the tag alone is not ours.
    other = tmp_path / ".ruff_cache"
    other.mkdir()
    (other / "CACHEDIR.TAG").write_text(
        "Signature: 8a477f597d28d172789f06886806bc55\n# created by ruff\n", encoding="utf-8"
    )
    (other / "0.17.6").mkdir()
    result = CliRunner().invoke(app, ["clean", str(tmp_path), "--cache-dir", str(other)])
    assert result.exit_code == 2
    assert "does not look like an agentguard cache" in result.output
    assert (other / "0.17.6").is_dir()


def test_clean_keeps_files_a_user_put_in_the_cache_folder(project: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    cached_scan(project, cache_dir)
    notes = cache_dir / "notes.txt"
    notes.write_text("mine\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["clean", str(project), "--cache-dir", str(cache_dir)])
    assert result.exit_code == 0, result.output
    assert "notes.txt" in result.output
    assert sorted(child.name for child in cache_dir.iterdir()) == ["notes.txt"]
    assert notes.read_text(encoding="utf-8") == "mine\n"


def test_clean_refuses_a_file(tmp_path: Path) -> None:
    precious = tmp_path / "notes.txt"
    precious.write_text("mine\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["clean", str(tmp_path), "--cache-dir", str(precious)])
    assert result.exit_code == 2
    assert "is a file" in result.output
    assert precious.read_text(encoding="utf-8") == "mine\n"


def test_a_parse_error_is_cached_and_still_reported(project: Path, tmp_path: Path) -> None:
    (project / "broken.py").write_text("@tool\ndef oops(:\n    pass\n", encoding="utf-8")
    cache_dir = tmp_path / "cache"
    cold, _ = cached_scan(project, cache_dir)
    warm, stats = cached_scan(project, cache_dir)
    assert stats.parsed == 0
    assert [p.path for p in warm.problems] == [p.path for p in cold.problems] == ["broken.py"]
    assert finding_lines(warm) == finding_lines(cold)


def test_files_with_every_kind_of_fact_are_read_back_from_the_cache(tmp_path: Path) -> None:
    # Raw error text returned from a handler and a status comparison: facts of their own
    # classes, which the cache must load like the others rather than parse again.
    target = tmp_path / "agent"
    target.mkdir()
    (target / "tools.py").write_text(
        "import requests\n"
        "from langchain_core.tools import tool\n\n"
        "@tool\n"
        "def create_order(cart_id: str, entry: dict) -> str:\n"
        '    """Create an order."""\n'
        '    if entry["status"] != "succeeded":\n'
        "        try:\n"
        '            return requests.post("https://shop.example/orders", json={}).text\n'
        "        except Exception as exc:\n"
        "            return str(exc)\n"
        '    return "done"\n',
        encoding="utf-8",
    )
    cache_dir = tmp_path / "cache"
    cold, _ = cached_scan(target, cache_dir)
    facts = cold.project.modules["tools.py"]
    assert facts.status_checks and any(
        h.raw_error_uses for h in facts.functions["tools.create_order"].handlers
    )
    warm, warm_stats = cached_scan(target, cache_dir)
    assert (warm_stats.parsed, warm_stats.cache_hits) == (0, 1)
    assert finding_lines(warm) == finding_lines(cold)


def recorded_scan(project: Path, cache_dir: Path) -> ScanResult:
    """A scan as ``check`` runs it: facts cached, the run recorded (and the cache pruned)."""
    options = FactOptions(jobs=1, cache_dir=cache_dir, record_runs=True)
    return scan([project], load_config([project]), facts=options)


def fact_entries(cache_dir: Path) -> set[Path]:
    return set(cache_dir.glob("*/??/*.pickle"))


def age(path: Path, seconds: float) -> None:
    moment = path.stat().st_mtime - seconds
    os.utime(path, (moment, moment))


def test_a_linked_run_prunes_old_entries_no_kept_record_names(
    project: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    first = recorded_scan(project, cache_dir)
    live = fact_entries(cache_dir)
    assert len(live) == len(python_files(project))
    (folder,) = {p.parent.parent for p in live}
    # Entries of contents no record names: one old, one written a minute ago (a run still
    # going may be about to record it), and an old temporary file a killed run left.
    stale = folder / "ab" / ("0" * 62 + ".pickle")
    recent = folder / "cd" / ("1" * 62 + ".pickle")
    left_over = folder / "ab" / ".tmp-killed"
    for path in (stale, recent, left_over):
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"facts of a file edited away")
    for path in (stale, left_over):
        age(path, fact_cache.PRUNE_GRACE_SECONDS + 60)
    age(recent, 60)
    for path in live:  # old, but named by the record
        age(path, 30 * 24 * 3600)
    helper = project / "shop_agent" / "orders_client.py"
    helper.write_text(helper.read_text(encoding="utf-8") + "\n\ndef added():\n    return 1\n")
    recorded_scan(project, cache_dir)  # a code edit: linked again, then pruned
    after = fact_entries(cache_dir)
    assert not stale.exists() and not left_over.exists()
    assert recent.exists()
    assert live <= after  # the first run's record is kept, and names them
    assert len(after - live) == 2  # the edited file's new facts, and the recent stray
    warm = recorded_scan(project, cache_dir)
    assert warm.from_memo and finding_lines(warm) == finding_lines(first) != []


def test_a_linked_run_removes_namespaces_unused_for_two_weeks(
    project: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    recorded_scan(project, cache_dir)
    forgotten = cache_dir / ("a" * 20)  # another version's or config's facts, long unused
    in_use = cache_dir / ("b" * 20)  # another config, used by a run an hour ago
    never_stamped = cache_dir / ("c" * 20)
    not_ours = cache_dir / "notes"
    for folder in (forgotten, in_use, never_stamped, not_ours):
        (folder / "ab").mkdir(parents=True)
        (folder / "ab" / "entry.pickle").write_bytes(b"facts")
        (folder / fact_cache.LAST_USED).touch()
    age(forgotten / fact_cache.LAST_USED, fact_cache.UNUSED_NAMESPACE_SECONDS + 3600)
    age(not_ours / fact_cache.LAST_USED, fact_cache.UNUSED_NAMESPACE_SECONDS + 3600)
    age(in_use / fact_cache.LAST_USED, 3600)
    (never_stamped / fact_cache.LAST_USED).unlink()
    age(never_stamped, fact_cache.UNUSED_NAMESPACE_SECONDS + 3600)
    helper = project / "shop_agent" / "orders_client.py"
    helper.write_text(helper.read_text(encoding="utf-8") + "\n\ndef added():\n    return 1\n")
    recorded_scan(project, cache_dir)
    assert not forgotten.exists() and not never_stamped.exists()
    assert in_use.exists() and not_ours.exists()


def test_a_run_answered_by_its_record_still_marks_its_namespace_used(
    project: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    recorded_scan(project, cache_dir)
    (stamp,) = cache_dir.glob(f"*/{fact_cache.LAST_USED}")
    age(stamp, fact_cache.UNUSED_NAMESPACE_SECONDS + 3600)
    assert recorded_scan(project, cache_dir).from_memo
    assert stamp.stat().st_mtime > fact_cache.time.time() - 3600


def test_pruning_leaves_a_folder_that_is_not_tagged_as_a_cache(tmp_path: Path) -> None:
    folder = tmp_path / "precious"
    cache = fact_cache.FactCache(folder, "config", "catalogue")
    kept = cache.folder / "ab" / "data.pickle"
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"not agentguard's")
    sibling = folder / ("a" * 20)
    sibling.mkdir()
    later = fact_cache.time.time() + 10 * fact_cache.UNUSED_NAMESPACE_SECONDS
    assert cache.prune(set(), now=later) == 0
    assert kept.exists() and sibling.exists()
    # Tagged, but by another tool: still not agentguard's to prune.
    (folder / "CACHEDIR.TAG").write_text(
        "Signature: 8a477f597d28d172789f06886806bc55\n# created by mypy\n", encoding="utf-8"
    )
    assert cache.prune(set(), now=later) == 0
    assert kept.exists() and sibling.exists()


def test_the_fact_cache_key_covers_the_code_the_facts_are_built_from(tmp_path: Path) -> None:
    """Editing any module of the split extractor (or one added later) invalidates cached
    facts, not only edits to facts/extract.py."""
    import shutil

    from agentguard.engine.fact_cache import code_digest

    package = Path(__file__).resolve().parent.parent / "agentguard"
    tree = tmp_path / "agentguard"
    shutil.copytree(package / "facts", tree / "facts", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(
        package / "knowledge", tree / "knowledge", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy2(package / "diagnostics.py", tree / "diagnostics.py")
    digests = [code_digest(tree)]
    # the extractor itself, a module added to it, and the knowledge code it builds facts with
    # (the Node built-in module names decide which TypeScript imports are packages)
    for edited in ("facts/extract_flow.py", "knowledge/node_builtins.py", "knowledge/catalog.py"):
        source = tree / edited
        source.write_text(source.read_text("utf-8") + "\n# changed\n", "utf-8")
        digests.append(code_digest(tree))
    (tree / "facts" / "extract_more.py").write_text("X = 1\n", "utf-8")
    digests.append(code_digest(tree))
    assert len(set(digests)) == len(digests)
