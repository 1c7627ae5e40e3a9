"""Plain-English questions → filters, read against a fixed clock (Monday 2026-11-30 15:00 UTC)."""

from __future__ import annotations

from datetime import timedelta, timezone

import pytest

from maxmem.clock import FixedClock
from maxmem.errors import InvalidInput
from maxmem.search.nlquery import Interpretation, interpret

NOW = "2026-11-30T15:00:00Z"


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(NOW)


def ask(question: str, clock: FixedClock, **kw) -> Interpretation:
    return interpret(question, clock, **kw)


# (question, expected interpretation line, expected filters, expected text)
READINGS = [
    (
        "show me high-importance unresolved projects from last week",
        "from 2026-11-23 to 2026-11-30; status ongoing, active; importance ≥ 0.7; category project",
        {"category": "project", "since": "2026-11-23T00:00:00.000Z", "min_importance": 0.7,
         "status": ["ongoing", "active"]},
        None,
    ),
    ("today", "on 2026-11-30",
     {"since": "2026-11-30T00:00:00.000Z", "until": "2026-12-01T00:00:00.000Z"}, None),
    ("what happened yesterday", "on 2026-11-29",
     {"since": "2026-11-29T00:00:00.000Z", "until": "2026-11-30T00:00:00.000Z"}, None),
    ("decisions in the last 7 days", "from 2026-11-23 to 2026-11-30; kind decision",
     {"kind": "decision", "since": "2026-11-23T00:00:00.000Z"}, None),
    ("this month", "from 2026-11-01 to 2026-11-30", {"since": "2026-11-01T00:00:00.000Z"}, None),
    ("this week", "from 2026-11-30 to 2026-11-30", {"since": "2026-11-30T00:00:00.000Z"}, None),
    ("the previous week", "from 2026-11-23 to 2026-11-29",
     {"since": "2026-11-23T00:00:00.000Z", "until": "2026-11-30T00:00:00.000Z"}, None),
    ("previous month", "from 2026-10-01 to 2026-10-31",
     {"since": "2026-10-01T00:00:00.000Z", "until": "2026-11-01T00:00:00.000Z"}, None),
    ("decisions about the API since March 3", 'since 2026-03-03; kind decision; text "API"',
     {"kind": "decision", "since": "2026-03-03T00:00:00.000Z"}, "API"),
    # a month-day later in the year than today means last year's
    ("since December 5", "since 2025-12-05", {"since": "2025-12-05T00:00:00.000Z"}, None),
    ("errors tagged with docker in October",
     "from 2026-10-01 to 2026-10-31; kind failure; tag docker",
     {"kind": "failure", "tags": ["docker"], "since": "2026-10-01T00:00:00.000Z",
      "until": "2026-11-01T00:00:00.000Z"}, None),
    ("in December", "from 2025-12-01 to 2025-12-31",
     {"since": "2025-12-01T00:00:00.000Z", "until": "2026-01-01T00:00:00.000Z"}, None),
    ("in 2025", "from 2025-01-01 to 2025-12-31",
     {"since": "2025-01-01T00:00:00.000Z", "until": "2026-01-01T00:00:00.000Z"}, None),
    ("between March 3 and March 10", "from 2026-03-03 to 2026-03-10",
     {"since": "2026-03-03T00:00:00.000Z", "until": "2026-03-11T00:00:00.000Z"}, None),
    ("on friday", "on 2026-11-27",
     {"since": "2026-11-27T00:00:00.000Z", "until": "2026-11-28T00:00:00.000Z"}, None),
    ("notes from 2 days ago", "on 2026-11-28",
     {"since": "2026-11-28T00:00:00.000Z", "until": "2026-11-29T00:00:00.000Z"}, None),
    ("before 2026-11-01", "before 2026-11-01", {"until": "2026-11-01T00:00:00.000Z"}, None),
    ("since 3/14", "since 2026-03-14", {"since": "2026-03-14T00:00:00.000Z"}, None),
    ("past 24 hours", "since 2026-11-29 15:00", {"since": "2026-11-29T15:00:00.000Z"}, None),
    ("#error today", "on 2026-11-30; tag error",
     {"tags": ["error"], "since": "2026-11-30T00:00:00.000Z",
      "until": "2026-12-01T00:00:00.000Z"}, None),
    ("active tasks", "status active; kind task", {"kind": "task", "status": "active"}, None),
    ("ongoing work", 'status ongoing; text "work"', {"status": "ongoing"}, "work"),
    ("things in progress", "status ongoing", {"status": "ongoing"}, None),
    ("resolved bugs", "status resolved; kind failure",
     {"kind": "failure", "status": "resolved"}, None),
    ("critical milestones", "importance ≥ 0.9; kind milestone",
     {"kind": "milestone", "min_importance": 0.9}, None),
    ("low importance preferences", "importance ≤ 0.3; kind preference",
     {"kind": "preference", "max_importance": 0.3}, None),
    ("facts with importance above 0.5", "importance ≥ 0.5; kind fact",
     {"kind": "fact", "min_importance": 0.5}, None),
    ("notes tagged with docker and k8s", "tags docker, k8s", {"tags": ["docker", "k8s"]}, None),
    ("anything mentioning database migrations", 'text "database migrations"', {},
     "database migrations"),
    ("top 10 most recent preferences", "kind preference; newest first; limit 10",
     {"kind": "preference", "limit": 10, "order": "recent"}, None),
    ("first 5 lessons", "kind lesson; limit 5", {"kind": "lesson", "limit": 5}, None),
    ("last 3 decisions", "kind decision; newest first; limit 3",
     {"kind": "decision", "limit": 3, "order": "recent"}, None),
    ("oldest projects", "category project; oldest first",
     {"category": "project", "order": "oldest"}, None),
    ("what did we decide about the database yesterday",
     'on 2026-11-29; kind decision; text "database"',
     {"kind": "decision", "since": "2026-11-29T00:00:00.000Z",
      "until": "2026-11-30T00:00:00.000Z"}, "database"),
    # unrecognised words are searched, and the line says so
    ("docker errors", 'kind failure; text "docker"', {"kind": "failure"}, "docker"),
    ('notes saying "last week" verbatim', 'text "last week verbatim"', {}, "last week verbatim"),
    ("everything", "everything (no filters)", {}, None),
]


@pytest.mark.parametrize("question,line,filters,text", READINGS, ids=[r[0] for r in READINGS])
def test_reading(clock, question, line, filters, text):
    got = ask(question, clock)
    assert got.describe() == line
    assert got.filters() == filters
    assert got.text == text


REFUSALS = [
    ("", "empty question"),
    ("   ", "empty question"),
    ("decisions since 3/4", "could be month/day or day/month"),
    ("since 4/3/2026", "could be month/day or day/month"),
    ("what did I do a while ago", "too vague"),
    ("errors from the other day", "too vague"),
    ("a few days ago", "too vague"),
    ("tasks for next week", "in the future"),
    ("tomorrow", "in the future"),
    ("since 2027-01-01", "in the future"),
    ("in 2030", "in the future"),
    ("resolved and unresolved tasks", "contradictory status"),
    ("yesterday and last week", "two time ranges"),
    ("since 2026-13-45", "is not a date"),
    ("since March 33", "is not a date"),
    ("before 31/02", "is not a date"),
    ("between March 10 and March 3", "end comes before the start"),
    ("high importance low importance", "cannot both hold"),
    ("top 0 errors", "limit must be 1 to 1000"),
    ("top 5000 errors", "limit must be 1 to 1000"),
    ("decisions and errors", "two different kinds"),
    ("newest oldest", "two different orders"),
    ("about", "about what"),
    ("importance above 3", "importance is 0 to 1"),
]


@pytest.mark.parametrize("question,message", REFUSALS, ids=[r[0] or "empty" for r in REFUSALS])
def test_refusal(clock, question, message):
    with pytest.raises(InvalidInput) as excinfo:
        ask(question, clock)
    text = str(excinfo.value)
    assert message in text
    assert "\n" not in text


def test_the_clock_decides_today_not_the_system():
    a = interpret("today", FixedClock("2020-02-29T12:00:00Z"))
    b = interpret("today", FixedClock("2031-07-04T12:00:00Z"))
    assert a.describe() == "on 2020-02-29"
    assert b.describe() == "on 2031-07-04"


def test_time_zone_moves_the_day_boundary():
    # 02:00 UTC on Dec 1 is still Nov 30 in New York (UTC-5)
    clock = FixedClock("2026-12-01T02:00:00Z")
    new_york = timezone(timedelta(hours=-5))
    got = interpret("today", clock, tz=new_york)
    assert got.describe() == "on 2026-11-30"
    assert got.filters()["since"] == "2026-11-30T05:00:00.000Z"
    assert interpret("today", clock).describe() == "on 2026-12-01"


def test_leftover_words_are_reported(clock):
    got = ask("kubernetes failures", clock)
    assert got.text == "kubernetes"
    assert got.notes == ('unrecognised words searched as text: "kubernetes"',)


def test_to_dict_is_json_ready(clock):
    import json

    data = ask("top 3 decisions about sqlite this month", clock).to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["text"] == "sqlite"
    assert data["filters"]["limit"] == 3


def test_words_inside_a_topic_are_not_read_as_filters(clock):
    got = ask("notes about resolved errors in production", clock)
    assert got.text == "resolved errors in production"
    assert got.filters() == {}


# --- parse_when: one moment, for `observe --started` ------------------------------------

from maxmem.search.nlquery import parse_when  # noqa: E402


@pytest.mark.parametrize("text,expected", [
    ("now", "2026-11-30T15:00:00+00:00"),
    ("2 days ago", "2026-11-28T15:00:00+00:00"),
    ("3 hours ago", "2026-11-30T12:00:00+00:00"),
    ("45 minutes ago", "2026-11-30T14:15:00+00:00"),
    ("yesterday", "2026-11-29T00:00:00+00:00"),
    ("March 3", "2026-03-03T00:00:00+00:00"),
    ("last friday", "2026-11-27T00:00:00+00:00"),
    ("2026-11-28T09:30:00Z", "2026-11-28T09:30:00+00:00"),
])
def test_parse_when(clock, text, expected):
    assert parse_when(text, clock).isoformat() == expected


@pytest.mark.parametrize("text,message", [
    ("", "empty time"),
    ("a few days ago", "too vague"),
    ("tomorrow", "in the future"),
    ("2026-12-25T09:00:00Z", "in the future"),
    ("whenever", "cannot read"),
    ("3/4", "could be month/day"),
])
def test_parse_when_refuses(clock, text, message):
    with pytest.raises(InvalidInput, match=message):
        parse_when(text, clock)
