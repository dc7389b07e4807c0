"""A static check that no SQL statement on a personal table lacks the person's scope.

Every `select(...)`, `update(...)` and `delete(...)` in brain/, bot/, adapters/ and rules/ that names a model
of a table with a `user_id` column, and every `text("...")` whose SQL reads or writes such a table, must carry
a `user_id` condition somewhere in its call chain (`.where(Task.user_id == user_id)`, a join on `user_id`,
`filter_by(user_id=...)`), or in a later step that builds on the same statement variable in that function
(`stmt = stmt.where(...)`). Statements that are cross-user on purpose (batch jobs over everyone, lookups by a
secret token that are checked for the owner afterwards) are listed in ALLOWED with the reason.

Found by `ast`, so it reads the code as written: a statement that receives a table from a variable
(`delete(personal.table)`) is not seen, and such code needs its own test (brain/data_rights.py has one)."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from app.tables import target_metadata
from brain.store.base import Base

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("brain", "bot", "adapters", "rules")
STATEMENTS = {"select", "update", "delete"}
SCOPE = re.compile(r"\buser_id\b")

# "path::function" -> why the statements in that function may cross people (or are scoped another way).
ALLOWED: dict[str, str] = {
    # Lookups by a secret: the row found is checked for its owner before anything is done or shown.
    "brain/actions/service.py::redeem_action": "button token lookup; the owner is compared right after",
    "brain/people/linking.py::link_with_code": "link code lookup by its hash; joining two identities is its job",
    "bot/delivery/choices.py::choices_for": "the tokens of the outbox row being sent (one person's)",
    "bot/delivery/choices.py::close_settled": "sender job over all open Matrix messages and their tokens",
    # By the primary key of a row the same function (or its caller) loaded with the person's scope.
    "brain/companion/missions.py::change_mission": "deletes the mission just loaded with Mission.user_id",
    "brain/companion/missions.py::_earlier_runs": "iterations of a mission the caller loaded for the person",
    "brain/tools/policy.py::record_outcome": "the tool-call record the same call wrote a moment before",
    "brain/memory/promotion.py::_record_failure": "the short-term entry of the person being promoted",
    # Maintenance over every person's rows, reading and writing vectors only; nothing is shown to anyone.
    "bot/metrics.py::DatabaseGauges.refresh": "the outbox's rows counted by status for /metrics; no row is read",
    "brain/memory/reembed.py::<module>": "re-embedding after a change of embedder, by primary key, in batches",
    "brain/memory/promotion.py::recompute_edges": "bulk update by primary key of edges of the person's nodes",
    "brain/outbox/service.py::mark_sent": "the outbox row the sender claimed",
    "bot/rooms.py::close_room": "the room the homeserver said was left (a room is one person's)",
    # Batch jobs over all people (scheduler, senders, retention); each row keeps its own user_id.
    "brain/companion/missions.py::claim_due": "scheduler: missions due now, of everyone",
    "brain/tools/proposals.py::expire_proposals": "scheduler: expiry of everyone's stale proposals",
    "brain/events/store.py::prune_events": "retention: 90 days / 50,000 events per person, for everyone",
    "brain/pipeline_log.py::prune_pipeline_log": "retention: 365 days, for everyone",
    "brain/rituals/pushes.py::active_rituals": "scheduler: rituals of due pushes; matched to their user after",
    "brain/rituals/runner.py::RitualRunner.abandon_stale": "scheduler: stale ritual runs of everyone",
    "brain/modules/calendar/series.py::extend_series": "scheduler: every series whose occurrences run short",
    "bot/delivery/sender.py::OutboxSender._head_of_chat": "sender: one chat's pending replies, by chat",
    "bot/updates.py::forget_old_updates": "retention of handled update ids, for everyone",
}


def personal_tables() -> set[str]:
    return {t.name for t in target_metadata.tables.values() if "user_id" in t.c}


def personal_models() -> dict[str, str]:
    """Model class name -> table name, for the tables with a user_id column."""
    tables = personal_tables()
    return {m.class_.__name__: getattr(m.local_table, "name", "") for m in Base.registry.mappers
            if getattr(m.local_table, "name", None) in tables}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    function: str
    table: str
    code: str

    @property
    def key(self) -> str:
        return f"{self.path}::{self.function}"

    def __str__(self) -> str:
        return f"{self.path}:{self.line} in {self.function}() on {self.table}: {self.code[:140]}"


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _chain_top(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST:
    """The outermost call of a method chain that starts at `node` (`select(X).where(...).limit(1)`)."""
    while True:
        parent = parents.get(node)
        if isinstance(parent, ast.Attribute) and isinstance(parents.get(parent), ast.Call) \
                and parents[parent].func is parent:  # type: ignore[attr-defined]
            node = parents[parent]
            continue
        return node


def _function_of(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST | None:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return node
    return None


def _qualname(function: ast.AST | None, parents: dict[ast.AST, ast.AST]) -> str:
    names: list[str] = []
    node = function
    while node is not None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        node = parents.get(node)
    return ".".join(reversed(names)) or "<module>"


def _assigned_name(top: ast.AST, parents: dict[ast.AST, ast.AST]) -> str | None:
    parent = parents.get(top)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        return parent.targets[0].id
    if isinstance(parent, ast.AnnAssign | ast.AugAssign) and isinstance(parent.target, ast.Name):
        return parent.target.id
    return None


def _later_uses(function: ast.AST | None, variable: str) -> str:
    """The source of every expression in the function that builds on `variable` (`stmt.where(...)`)."""
    if function is None:
        return ""
    pieces = []
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == variable:
            pieces.append(ast.unparse(node))
    return "\n".join(pieces)


_SQL_TABLE = re.compile(r"\b(?:from|join|update|into)\s+([a-z_][a-z0-9_]*)", re.IGNORECASE)


def unscoped(source: str, path: str, models: dict[str, str] | None = None,
             tables: set[str] | None = None) -> list[Finding]:
    """Statements on personal tables in `source` without a user_id condition."""
    models = personal_models() if models is None else models
    tables = personal_tables() if tables is None else tables
    tree = ast.parse(source)
    parents = _parents(tree)
    findings: list[Finding] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = _name(node.func)
        table: str | None = None
        if called in STATEMENTS and node.args:
            named = {n.id for arg in node.args for n in ast.walk(arg) if isinstance(n, ast.Name)}
            hits = sorted(models[n] for n in named if n in models)
            table = hits[0] if hits else None
        elif called == "text" and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            sql = node.args[0].value
            hits = sorted(t for t in _SQL_TABLE.findall(sql) if t.lower() in tables)
            if hits and not SCOPE.search(sql):
                table = hits[0]
        if table is None:
            continue
        top = _chain_top(node, parents)
        code = ast.unparse(top)
        function = _function_of(node, parents)
        variable = _assigned_name(top, parents)
        context = code + "\n" + (_later_uses(function, variable) if variable else "")
        if called != "text" and SCOPE.search(context):
            continue
        findings.append(Finding(path, node.lineno, _qualname(function, parents), table, code))
    return findings


@functools.cache
def scan() -> tuple[Finding, ...]:
    findings: list[Finding] = []
    for package in PACKAGES:
        for file in sorted((ROOT / package).rglob("*.py")):
            path = file.relative_to(ROOT).as_posix()
            findings.extend(unscoped(file.read_text(encoding="utf-8"), path))
    return tuple(findings)


# ---- tests -------------------------------------------------------------------------------------------------

def test_every_statement_on_a_personal_table_is_scoped_to_one_person() -> None:
    missing = [f for f in scan() if f.key not in ALLOWED]
    assert not missing, "statements on personal tables without a user_id scope (add the scope, or an entry " \
                        "with its reason to ALLOWED):\n" + "\n".join(str(f) for f in missing)


def test_every_allowed_entry_still_exists() -> None:
    """An allow-list entry whose function no longer has an unscoped statement goes, so the list stays short."""
    keys = {f.key for f in scan()}
    assert not (set(ALLOWED) - keys), f"stale entries in ALLOWED: {sorted(set(ALLOWED) - keys)}"


PLANTED = '''
from sqlalchemy import delete, select, text, update

async def open_tasks(session, user_id):
    return await session.scalars(select(Task).where(Task.user_id == user_id, Task.completed_at.is_(None)))

async def leaky_tasks(session):
    return await session.scalars(select(Task.title).where(Task.completed_at.is_(None)).limit(5))

async def built_in_steps(session, user_id):
    stmt = select(Task).order_by(Task.id)
    stmt = stmt.where(Task.user_id == user_id)
    return await session.scalars(stmt)

async def wipe(session):
    await session.execute(delete(Task))

async def rename(session, task_id, title):
    await session.execute(update(Task).where(Task.id == task_id).values(title=title))

async def raw(session):
    await session.execute(text("SELECT title FROM tasks WHERE completed_at IS NULL"))

async def raw_scoped(session, user_id):
    await session.execute(text("SELECT title FROM tasks WHERE user_id = :u"), {"u": user_id})

async def not_personal(session):
    await session.execute(select(Setting).where(Setting.key == "x"))
'''


def test_the_check_catches_a_planted_unscoped_query() -> None:
    found = unscoped(PLANTED, "planted.py", models={"Task": "tasks"}, tables={"tasks"})
    assert sorted((f.function, f.table) for f in found) == [
        ("leaky_tasks", "tasks"), ("raw", "tasks"), ("rename", "tasks"), ("wipe", "tasks")]
    (leak,) = [f for f in found if f.function == "leaky_tasks"]
    assert leak.line == 8 and "select(Task.title)" in leak.code


def test_the_check_knows_the_personal_models() -> None:
    models = personal_models()
    assert models["Task"] == "tasks" and models["MemoryNode"] == "memory_nodes" and models["Identity"] == "identities"
    assert "User" not in models
