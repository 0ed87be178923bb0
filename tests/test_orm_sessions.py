"""SQLAlchemy sessions reached the way applications reach them: a ``sessionmaker`` called
for each request, a generator that yields the session (``next(get_db())``) or a
``@contextmanager`` that does (``with session_scope() as db``), and the ORM's bulk
``Query.delete()``/``Query.update()``. A tool that deletes rows through any of them is
never judged read."""

from __future__ import annotations

from .conftest import ScanFiles, tool_verdicts

_MODELS = """
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class Task(Base):
    __tablename__ = "tasks"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str]
    done: Mapped[bool] = mapped_column(default=False)
"""

_DATABASE = """
from contextlib import contextmanager

from sqlalchemy import create_engine
from sqlalchemy.orm import sessionmaker

engine = create_engine("postgresql://localhost/tasks")
SessionLocal = sessionmaker(bind=engine, autoflush=False)
session_factory = sessionmaker(bind=engine)


def get_db():
    db = SessionLocal()
    try:
        yield db
    finally:
        db.close()


@contextmanager
def session_scope():
    session = session_factory()
    try:
        yield session
        session.commit()
    except Exception:
        session.rollback()
        raise
    finally:
        session.close()
"""

_SERVER = '''
from mcp.server.fastmcp import FastMCP

from database import SessionLocal, get_db, session_scope
from models import Task

mcp = FastMCP("tasks")


@mcp.tool()
def delete_task(task_id: int) -> str:
    """Delete one task for good."""
    db = next(get_db())
    db.query(Task).filter(Task.id == task_id).delete()
    db.commit()
    return "deleted"


@mcp.tool()
def finish_tasks(title: str) -> str:
    """Mark every task with this title done."""
    with session_scope() as db:
        db.query(Task).filter_by(title=title).update({"done": True})
    return "done"


@mcp.tool()
def rename_task(task_id: int, title: str) -> str:
    """Rename a task."""
    db = next(get_db())
    task = db.get(Task, task_id)
    task.title = title
    db.commit()
    return "renamed"


@mcp.tool()
def import_tasks(titles: list[str]) -> str:
    """Add many tasks at once."""
    db = SessionLocal()
    db.bulk_insert_mappings(Task, [{"title": t} for t in titles])
    db.commit()
    return "imported"


@mcp.tool()
def list_tasks() -> list[str]:
    """Every task's title."""
    db = next(get_db())
    return [task.title for task in db.query(Task).all()]


@mcp.tool()
def open_tasks() -> int:
    """How many tasks are open."""
    with session_scope() as db:
        return db.query(Task).filter_by(done=False).count()
'''


def test_a_session_from_a_generator_a_context_manager_or_a_sessionmaker_is_judged_as_a_session(
    scan_files: ScanFiles,
) -> None:
    verdicts = tool_verdicts(
        scan_files, {"models.py": _MODELS, "database.py": _DATABASE, "server.py": _SERVER}
    )
    assert verdicts["delete_task"][0] == "destructive"
    assert verdicts["finish_tasks"][0] == "write"
    assert verdicts["rename_task"][0] == "write"
    assert verdicts["import_tasks"][0] == "write"
    assert verdicts["list_tasks"] == ("read", set())
    assert verdicts["open_tasks"] == ("read", set())
