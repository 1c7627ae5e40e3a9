"""Work tracking: observe, resolve, active, timeline, ensure_observation (API)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from maxmem import InvalidInput, NotFound
from maxmem.work import (
    active,
    duration_hours,
    ensure_observation,
    format_hours,
    observe,
    project_from_task,
    resolve,
    timeline,
)


def test_observe_ongoing_backdated_shows_in_active_with_hours_open(brain, clock):
    m = observe(brain, "project", "Build the memory system", title="maxmem", importance=0.8,
                tags=["memory"], ongoing=True, started=clock.now() - timedelta(days=2))
    assert (m.category, m.kind, m.status) == ("project", "project", "ongoing")
    assert m.started_at == "2026-11-28T12:00:00.000Z"
    clock.advance(hours=3)
    [work] = active(brain)
    assert work.memory.id == m.id
    assert work.hours_open == pytest.approx(51.0)


def test_plain_observation_is_not_open_work(brain):
    m = observe(brain, "decision", "We use SQLite")
    assert (m.category, m.status, m.started_at) == ("daily", "active", None)
    assert active(brain) == []


def test_active_orders_by_importance_and_filters(brain, clock):
    low = observe(brain, "task", "tidy the docs", importance=0.2, ongoing=True)
    high = observe(brain, "failure", "login is broken", importance=0.9, ongoing=True)
    started = observe(brain, "task", "started but active", importance=0.5,
                      started=clock.now() - timedelta(hours=1))
    assert [w.memory.id for w in active(brain)] == [high.id, started.id, low.id]
    assert [w.memory.id for w in active(brain, min_importance=0.5)] == [high.id, started.id]
    with pytest.raises(InvalidInput):
        active(brain, min_importance=1.5)


def test_resolve_keeps_the_duration_and_appends_the_resolution(brain, clock):
    m = observe(brain, "failure", "login is broken", ongoing=True,
                started=clock.now() - timedelta(hours=5))
    clock.advance(hours=2)
    done = resolve(brain, m.id, title="Login fixed", content="the session cookie was too big")
    assert done.status == "resolved"
    assert done.resolved_at == "2026-11-30T14:00:00.000Z"
    assert duration_hours(done) == pytest.approx(7.0)
    assert done.title == "Login fixed"
    assert done.content == "login is broken\n\nResolution: the session cookie was too big"
    assert active(brain) == []
    with pytest.raises(InvalidInput, match="already resolved"):
        resolve(brain, m.id)


def test_resolve_without_start_uses_creation_time(brain, clock):
    m = observe(brain, "task", "write the docs")
    clock.advance(minutes=30)
    done = resolve(brain, m.uid)
    assert done.started_at == m.created_at
    assert format_hours(duration_hours(done)) == "30 min"


def test_resolve_bad_inputs(brain):
    with pytest.raises(NotFound):
        resolve(brain, 999)
    m = observe(brain, "task", "x y z")
    with pytest.raises(InvalidInput, match="empty"):
        resolve(brain, m.id, content="   ")
    assert brain.get(m.id).status == "active", "nothing changed"


def test_observe_rejects_bad_type_and_future_start(brain, clock):
    with pytest.raises(InvalidInput, match="kind"):
        observe(brain, "Not A Kind!", "text")
    with pytest.raises(InvalidInput, match="future"):
        observe(brain, "task", "text", started=clock.now() + timedelta(days=1))
    with pytest.raises(InvalidInput, match="importance"):
        observe(brain, "task", "text", importance=7)
    assert brain.stats()["memories"] == 0


def test_timeline_lists_starts_records_and_resolutions_in_order(brain, clock):
    a = observe(brain, "project", "alpha", ongoing=True, started=clock.now() - timedelta(days=3))
    clock.advance(hours=1)
    b = observe(brain, "decision", "use uv")
    brain.remember("a chat line", category="conversation")
    clock.advance(hours=1)
    resolve(brain, a.id)
    events = [(e.event, e.memory.id) for e in timeline(brain, days=30)]
    assert events == [("started", a.id), ("recorded", a.id), ("recorded", b.id),
                      ("resolved", a.id)]
    assert timeline(brain, days=30)[-1].to_dict()["hours_open"] == pytest.approx(74.0)
    assert [e.event for e in timeline(brain, days=1)] == ["recorded", "recorded", "resolved"]
    with pytest.raises(InvalidInput):
        timeline(brain, days=0)


def test_ensure_observation_creates_once_then_finds(brain):
    first = ensure_observation(brain, "Acme Web", location="~/code/acme-web",
                               assigned_by="Dana", next_steps="fix login")
    assert first.created
    m = first.memory
    assert (m.category, m.kind, m.status, m.title) == ("project", "project", "ongoing", "Acme Web")
    assert m.metadata == {"project": "acme-web", "location": "~/code/acme-web", "assigned_by": "Dana"}
    assert "Location: ~/code/acme-web" in m.content and "Key details: (not recorded yet)" in m.content
    assert m.started_at is not None
    again = ensure_observation(brain, "acme web")
    assert not again.created and again.memory.id == m.id
    assert again.describe() == f"already exists: observation #{m.id} for project 'acme-web'"
    assert brain.stats()["memories"] == 1
    with pytest.raises(InvalidInput):
        ensure_observation(brain, "  ")


def test_ensure_observation_after_the_old_one_was_superseded(brain, clock):
    first = ensure_observation(brain, "apollo")
    brain.update(first.memory.id, status="superseded")
    clock.advance(days=1)
    second = ensure_observation(brain, "apollo")
    assert second.created and second.memory.id != first.memory.id


@pytest.mark.parametrize("task,project", [
    ("Fix the login bug in the acme-web repo", "acme-web"),
    ("work on project Apollo: the launch checklist", "apollo"),
    ('Refactor "Billing Service" retries', "billing-service"),
    ("update ~/code/maxmem/README.md", "readme.md"),
    ("continue in ~/code/maxmem/", "maxmem"),
    ("Write the quarterly report", "quarterly-report"),
])
def test_project_from_task(task, project):
    assert project_from_task(task) == project


def test_project_from_task_refuses_nothing():
    with pytest.raises(InvalidInput):
        project_from_task("")
    with pytest.raises(InvalidInput, match="cannot tell the project"):
        project_from_task("please fix it")
