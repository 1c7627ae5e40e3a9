"""Plain-English questions turned into search filters, without a language model.

`interpret("high-importance unresolved projects from last week", clock=clock)` reads
the question clause by clause — time, status, importance, tags, content, type, limit,
order — and returns an `Interpretation`: the filters `Brain.search` / `Brain.list`
take, plus one line saying how the question was understood. Words that match no
clause are kept as search text, so nothing the user typed is silently dropped; the
interpretation line shows them.

What it will not guess at, it refuses with `InvalidInput`: ambiguous numeric dates
("3/4"), vague times ("a while ago"), the future ("next week"), contradictions
("resolved and unresolved"), two time ranges at once.

The clock is injected: "today" is the clock's today in the given time zone (UTC by
default), never the system's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from dateutil.relativedelta import relativedelta

from ..clock import Clock, iso, parse_time
from ..errors import InvalidInput
from ..memory import ORDERS, Filters
from . import hybrid as search_mod

if TYPE_CHECKING:  # pragma: no cover
    from ..brain import Brain

MAX_LIMIT = 1000

# --- vocabulary ---------------------------------------------------------------------

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
WEEKDAYS = {
    name: number
    for number, names in enumerate(
        [("monday", "mon"), ("tuesday", "tue", "tues"), ("wednesday", "wed"),
         ("thursday", "thu", "thurs"), ("friday", "fri"), ("saturday", "sat"),
         ("sunday", "sun")]
    )
    for name in names
}
NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "fifteen": 15, "twenty": 20, "thirty": 30, "fifty": 50, "hundred": 100,
}

_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
_WEEKDAY_NAMES = "|".join(sorted(WEEKDAYS, key=len, reverse=True))
_NUMBER = r"\d+|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
_COUNT = r"\d+|" + "|".join(sorted(set(NUMBER_WORDS) - {"a", "an"}, key=len, reverse=True))
_UNIT = r"(?P<unit>hour|day|week|month|year)s?"

# One date, as it may follow "since", "on", "before", "between", ...
_DATE = (
    r"(?:\d{4}-\d{1,2}-\d{1,2}"
    r"|\d{1,2}/\d{1,2}(?:/\d{2,4})?"
    rf"|(?:{_MONTH_NAMES})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH_NAMES})\.?(?:,?\s+\d{{4}})?"
    rf"|(?:{_MONTH_NAMES})(?:\s+\d{{4}})?"
    rf"|(?:last\s+)?(?:{_WEEKDAY_NAMES})"
    r"|today|yesterday"
    rf"|(?:{_NUMBER})\s+(?:day|week|month|year)s?\s+ago"
    r"|\d{4})"
)

# (pattern, statuses) — "unresolved" before "resolved" so each word is read once.
STATUS_WORDS: list[tuple[str, tuple[str, ...]]] = [
    (r"\bunresolved\b|\bnot\s+(?:yet\s+)?resolved\b|\bunfinished\b|\bopen\s+items?\b",
     ("ongoing", "active")),
    (r"\bin[- ]progress\b|\bongoing\b|\bstill\s+open\b", ("ongoing",)),
    (r"\bactive\b", ("active",)),
    (r"\bresolved\b|\bfinished\b|\bcompleted\b|\bfixed\b", ("resolved",)),
    (r"\bsuperseded\b|\bobsolete\b|\boutdated\b", ("superseded",)),
]

# (pattern, min_importance, max_importance)
IMPORTANCE_WORDS: list[tuple[str, float | None, float | None]] = [
    (r"\bcritical\b|\bcrucial\b", 0.9, None),
    (r"\b(?:not\s+important|unimportant|low[- ](?:importance|priority)|trivial)\b",
     None, 0.3),
    (r"\bmedium[- ](?:importance|priority)\b", 0.4, 0.7),
    (r"\b(?:high[- ](?:importance|priority)|highly\s+important|important)\b", 0.7, None),
]

# (pattern, field, value): the kinds and categories of the schema.
TYPE_WORDS: list[tuple[str, str, str]] = [
    (r"\bprojects?\b", "category", "project"),
    (r"\bconversations?\b|\bexchanges?\b|\bchats?\b", "category", "conversation"),
    (r"\bdaily\s+(?:notes?|logs?)\b", "category", "daily"),
    (r"\bcore\s+memor(?:y|ies)\b|\blong[- ]term\s+memor(?:y|ies)\b", "category", "core"),
    (r"\bdecisions?\b|\bdecided\b|\bdecide\b", "kind", "decision"),
    (r"\berrors?\b|\bfailures?\b|\bbugs?\b|\bmistakes?\b", "kind", "failure"),
    (r"\bpreferences?\b|\bprefer(?:s|red)?\b", "kind", "preference"),
    (r"\blessons?(?:\s+learned)?\b", "kind", "lesson"),
    (r"\bfacts?\b", "kind", "fact"),
    (r"\btasks?\b|\btodos?\b|\bto-dos?\b", "kind", "task"),
    (r"\bmilestones?\b", "kind", "milestone"),
    (r"\bsummar(?:y|ies)\b", "kind", "summary"),
]

_VAGUE = (
    r"\b(?:the\s+other\s+day|a\s+while\s+(?:ago|back)|some\s+time\s+ago|ages\s+ago"
    r"|long\s+ago|a\s+(?:few|couple(?:\s+of)?)\s+(?:days|weeks|months|years)\s+ago"
    r"|several\s+(?:days|weeks|months|years)\s+ago|earlier\s+this\s+\w+)\b"
)
_FUTURE = (
    rf"\b(?:tomorrow|next\s+(?:week|month|year|{_WEEKDAY_NAMES})|in\s+the\s+future"
    r"|upcoming|from\s+now)\b"
)

# Words that carry no filter: dropped from the leftover text.
STOPWORDS = frozenset(
    """a about all an and any are as at be been by can could did do does everything
    for from give had has have i in is it its list made me memories memory my of on
    only or our please recall remember retrieve search show so some that the them
    there these things this those to us was we were what whatever when where which
    who whose with you your find get tell look up notes note items item stuff
    entries entry sorted ordered order first say said tell told talk talked discuss
    discussed happen happened know knew think thought i've we've did anything
    something saying says""".split()
)

_SEP = " ; "  # what a consumed clause is replaced by: also ends an "about ..." phrase


@dataclass(frozen=True)
class Interpretation:
    """A question read as filters. `filters()` are keyword arguments for Brain.list /
    Brain.search; `text` (when set) is the hybrid-search query."""

    question: str
    text: str | None = None
    category: str | None = None
    kind: str | None = None
    tags: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    min_importance: float | None = None
    max_importance: float | None = None
    status: tuple[str, ...] = ()
    limit: int | None = None
    order: str | None = None  # "recent" | "oldest" | "importance"
    time_label: str | None = None
    notes: tuple[str, ...] = field(default=())  # how leftover words were used

    def filters(self) -> dict[str, Any]:
        """The set filters as Brain keyword arguments (times as stored ISO strings)."""
        out: dict[str, Any] = {}
        if self.category:
            out["category"] = self.category
        if self.kind:
            out["kind"] = self.kind
        if self.tags:
            out["tags"] = list(self.tags)
        if self.since:
            out["since"] = iso(self.since)
        if self.until:
            out["until"] = iso(self.until)
        if self.min_importance is not None:
            out["min_importance"] = self.min_importance
        if self.max_importance is not None:
            out["max_importance"] = self.max_importance
        if self.status:
            out["status"] = self.status[0] if len(self.status) == 1 else list(self.status)
        if self.limit is not None:
            out["limit"] = self.limit
        if self.order:
            out["order"] = self.order
        return out

    def describe(self) -> str:
        """One line saying how the question was read, e.g.
        'from 2026-11-23 to 2026-11-30; status ongoing, active; importance ≥ 0.7; category project'."""
        parts: list[str] = []
        if self.time_label:
            parts.append(self.time_label)
        if self.status:
            parts.append("status " + ", ".join(self.status))
        lo, hi = self.min_importance, self.max_importance
        if lo is not None and hi is not None:
            parts.append(f"importance {lo:g}–{hi:g}")
        elif lo is not None:
            parts.append(f"importance ≥ {lo:g}")
        elif hi is not None:
            parts.append(f"importance ≤ {hi:g}")
        if self.category:
            parts.append(f"category {self.category}")
        if self.kind:
            parts.append(f"kind {self.kind}")
        if self.tags:
            parts.append(("tag " if len(self.tags) == 1 else "tags ") + ", ".join(self.tags))
        if self.text:
            parts.append(f'text "{self.text}"')
        if self.order:
            parts.append(
                {"recent": "newest first", "oldest": "oldest first",
                 "importance": "most important first"}[self.order]
            )
        if self.limit is not None:
            parts.append(f"limit {self.limit}")
        return "; ".join(parts) if parts else "everything (no filters)"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"question": self.question, "interpretation": self.describe()}
        if self.text:
            out["text"] = self.text
        out["filters"] = self.filters()
        return out


def interpret(question: str, clock: Clock, tz: tzinfo = UTC) -> Interpretation:
    """Read a plain-English question; raise InvalidInput for what must not be guessed."""
    if not isinstance(question, str) or not question.strip():
        raise InvalidInput("empty question: ask e.g. 'decisions about the API from last week'")
    if len(question) > 1000:
        raise InvalidInput("question too long (over 1000 characters): shorten it")
    return _Reader(question, clock.now().astimezone(tz)).read()


def parse_when(text: str, clock: Clock, tz: tzinfo = UTC) -> datetime:
    """One moment in the past: "now", "2 days ago", "3 hours ago", "yesterday",
    "March 3", "last friday", or an ISO-8601 time. Relative phrases keep the time of
    day ("2 days ago" is exactly 48 hours back); named days start at midnight in `tz`."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("empty time: say e.g. '2 days ago', 'yesterday' or 2026-11-28T09:00")
    now = clock.now().astimezone(tz)
    phrase = " ".join(text.lower().split())
    if phrase == "now":
        return now.astimezone(UTC)
    if m := re.fullmatch(rf"(?P<n>{_NUMBER})\s+(?P<unit>minute|hour|day|week|month|year)s?\s+ago",
                         phrase):
        n = _number(m.group("n"))
        then = now - relativedelta(**{m.group("unit") + "s": n})
        return then.astimezone(UTC)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}[t ]\d{1,2}:\d{2}.*", phrase):
        moment = parse_time(text.strip())
    else:
        if re.search(_VAGUE, phrase) or re.search(_FUTURE, phrase):
            _Reader(phrase, now)._refuse_unguessable()
        reader = _Reader(phrase, now)
        day = reader._date(phrase)
        moment = reader._midnight(day).astimezone(UTC)
    if moment > clock.now():
        raise InvalidInput(f"{text.strip()!r} is in the future: give a time in the past")
    return moment.astimezone(UTC)


class _Reader:
    """One pass over a question; each clause it recognises is cut out of `rest`."""

    def __init__(self, question: str, now: datetime) -> None:
        self.question = question.strip()
        self.rest = " " + " ".join(self.question.split()) + " "
        self.now = now
        self.today = now.date()
        self.tz = now.tzinfo or UTC
        self.fields: dict[str, Any] = {}
        self.texts: list[str] = []
        self.tags: list[str] = []
        self.status: list[str] = []

    # -- driver --
    def read(self) -> Interpretation:
        self._refuse_unguessable()
        self._take_quotes()
        try:
            self._take_time()
        except (OverflowError, ValueError):  # a day beyond the calendar: "last 999999999999 days"
            raise InvalidInput(f"a date in {self.question[:80]!r} falls outside the years 1 to 9999: "
                               "give a nearer one") from None
        self._take_content()
        self._take_tags()
        self._take_limit_and_order()
        self._take_status()
        self._take_importance()
        self._take_types()
        leftover = self._leftover()
        notes: tuple[str, ...] = ()
        if leftover:
            self.texts.append(leftover)
            notes = (f'unrecognised words searched as text: "{leftover}"',)
        text = " ".join(self.texts).strip() or None
        return Interpretation(
            question=self.question,
            text=text,
            tags=tuple(dict.fromkeys(self.tags)),
            status=tuple(dict.fromkeys(self.status)),
            notes=notes,
            **self.fields,
        )

    def _cut(self, pattern: str, handle: Callable[[re.Match[str]], None]) -> None:
        """Apply `handle` to every match of `pattern` in what is left, then remove it."""
        regex = re.compile(pattern, re.IGNORECASE)
        while (m := regex.search(self.rest)) is not None:
            handle(m)
            self.rest = self.rest[: m.start()] + _SEP + self.rest[m.end():]

    def _set(self, name: str, value: Any, what: str) -> None:
        if name in self.fields and self.fields[name] != value:
            raise InvalidInput(
                f"two different {what} in one question ({self.fields[name]!r} and {value!r}):"
                " ask for one"
            )
        self.fields[name] = value

    # -- refusals --
    def _refuse_unguessable(self) -> None:
        if m := re.search(_VAGUE, self.rest, re.IGNORECASE):
            raise InvalidInput(
                f"{m.group(0)!r} is too vague to turn into dates: say e.g. 'last 7 days',"
                " 'since March 3' or 'in October'"
            )
        if m := re.search(_FUTURE, self.rest, re.IGNORECASE):
            raise InvalidInput(
                f"{m.group(0)!r} is in the future and memories are about the past:"
                " ask e.g. 'today' or 'last week'"
            )

    # -- quoted phrases: searched verbatim, never read as filters --
    def _take_quotes(self) -> None:
        def handle(m: re.Match[str]) -> None:
            phrase = (m.group(1) or m.group(2) or "").strip()
            if phrase:
                self.texts.append(phrase)

        self._cut(r'"([^"]*)"|“([^”]*)”', handle)

    # -- time --
    def _range(self, since: datetime | None, until: datetime | None, label: str) -> None:
        if "time_label" in self.fields:
            raise InvalidInput(
                f"two time ranges in one question ({self.fields['time_label']} and {label}):"
                " ask for one"
            )
        if since is not None and since > self.now:
            raise InvalidInput(f"{label} is in the future: memories are about the past")
        if since is not None and until is not None and until <= since:
            raise InvalidInput(f"{label} is an empty range: the end comes before the start")
        self.fields.update(since=since, until=until, time_label=label)

    def _midnight(self, day: date) -> datetime:
        return datetime.combine(day, time(0), tzinfo=self.tz)

    def _day(self, day: date, label: str | None = None) -> None:
        self._range(self._midnight(day), self._midnight(day + timedelta(days=1)),
                    label or f"on {day.isoformat()}")

    def _span(self, first: date, last: date) -> None:
        """Whole days first..last inclusive."""
        self._range(self._midnight(first), self._midnight(last + timedelta(days=1)),
                    f"from {first.isoformat()} to {last.isoformat()}")

    def _open_since(self, first: date) -> None:
        self._range(self._midnight(first), None,
                    f"from {first.isoformat()} to {self.today.isoformat()}")

    def _take_time(self) -> None:
        today = self.today
        monday = today - timedelta(days=today.weekday())
        month1 = today.replace(day=1)
        year1 = today.replace(month=1, day=1)

        # "since last week" means the same as "last week" (which is open-ended)
        self._cut(r"\bsince\s+(?=(?:last|past|this)\s+(?:week|month|year)\b)", lambda m: None)
        # a date and the word before it
        self._cut(rf"\bbetween\s+(?P<a>{_DATE})\s+and\s+(?P<b>{_DATE})\b", self._between)
        self._cut(rf"\bfrom\s+(?P<a>{_DATE})\s+(?:to|until|till|through)\s+(?P<b>{_DATE})\b",
                  self._between)
        self._cut(rf"\bsince\s+(?P<d>{_DATE})\b",
                  lambda m: self._since(self._date(m.group("d")), m.group(0)))
        self._cut(rf"\bafter\s+(?P<d>{_DATE})\b",
                  lambda m: self._after(self._date(m.group("d"))))
        self._cut(rf"\bbefore\s+(?P<d>{_DATE})\b",
                  lambda m: self._before(self._date(m.group("d"))))
        self._cut(rf"\b(?:until|till|up\s+to)\s+(?P<d>{_DATE})\b",
                  lambda m: self._before(self._date(m.group("d")) + timedelta(days=1)))
        self._cut(rf"\b(?:in|during)\s+(?P<d>(?:{_MONTH_NAMES})(?:\s+\d{{4}})?|\d{{4}})\b",
                  self._month_or_year)
        self._cut(rf"\b(?:on|from)\s+(?P<d>{_DATE})\b", lambda m: self._on(m.group("d")))
        # a period named relative to today
        self._cut(r"\btoday\b|\bthis\s+(?:morning|afternoon|evening)\b|\btonight\b",
                  lambda m: self._day(today))
        self._cut(r"\byesterday\b|\blast\s+night\b",
                  lambda m: self._day(today - timedelta(days=1)))
        self._cut(rf"\b(?P<d>(?:{_NUMBER})\s+(?:day|week|month|year)s?\s+ago)\b",
                  lambda m: self._day(self._date(m.group("d"))))
        self._cut(rf"\blast\s+(?P<d>{_WEEKDAY_NAMES})\b",
                  lambda m: self._day(self._date(m.group("d"))))
        self._cut(r"\bthis\s+week\b", lambda m: self._open_since(monday))
        self._cut(r"\bthis\s+month\b", lambda m: self._open_since(month1))
        self._cut(r"\bthis\s+year\b", lambda m: self._open_since(year1))
        # calendar periods: "the previous week" is Monday to Sunday
        self._cut(r"\b(?:the\s+)?previous\s+week\b|\bthe\s+week\s+before\b",
                  lambda m: self._span(monday - timedelta(days=7), monday - timedelta(days=1)))
        self._cut(r"\b(?:the\s+)?previous\s+month\b",
                  lambda m: self._span(month1 - relativedelta(months=1),
                                       month1 - timedelta(days=1)))
        self._cut(r"\b(?:the\s+)?previous\s+year\b",
                  lambda m: self._span(year1.replace(year=year1.year - 1),
                                       year1 - timedelta(days=1)))
        # rolling windows up to now: "last week", "last 7 days", "in the past 2 months"
        self._cut(
            rf"\b(?:(?:with)?in\s+|over\s+|during\s+|for\s+)?(?:the\s+)?(?:last|past)\s+"
            rf"(?:(?P<n>{_NUMBER})\s+)?{_UNIT}\b",
            self._rolling,
        )
        # a date word we could not read: refuse rather than search for it as text
        self._cut(
            r"\b(?:since|after|before|until|between|on)\s+(?:\d{1,4}[-/.]\d{1,2}(?:[-/.]\d{1,4})?"
            r"|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}"
            r"(?:st|nd|rd|th)?)\b",
            self._unreadable_date,
        )

    def _rolling(self, m: re.Match[str]) -> None:
        n = _number(m.group("n")) if m.group("n") else 1
        unit = m.group("unit").lower()
        if n <= 0:
            raise InvalidInput(f"{m.group(0).strip()!r}: give a positive number")
        if unit == "hour":
            start = self.now - timedelta(hours=n)
            self._range(start, None, f"since {start.strftime('%Y-%m-%d %H:%M')}")
            return
        step = {"day": relativedelta(days=n), "week": relativedelta(weeks=n),
                "month": relativedelta(months=n), "year": relativedelta(years=n)}[unit]
        self._open_since(self.today - step)

    def _between(self, m: re.Match[str]) -> None:
        first, last = self._date(m.group("a")), self._date(m.group("b"))
        if last < first:
            raise InvalidInput(
                f"{m.group(0).strip()!r}: the end comes before the start; swap them"
            )
        self._span(first, last)

    def _since(self, day: date, phrase: str) -> None:
        if day > self.today:
            raise InvalidInput(f"{phrase.strip()!r} is in the future: memories are about the past")
        self._range(self._midnight(day), None, f"since {day.isoformat()}")

    def _after(self, day: date) -> None:
        self._since(day + timedelta(days=1), f"after {day.isoformat()}")
        self.fields["time_label"] = f"after {day.isoformat()}"

    def _before(self, day: date) -> None:
        self._range(None, self._midnight(day), f"before {day.isoformat()}")

    def _on(self, phrase: str) -> None:
        words = phrase.strip().lower()
        if re.fullmatch(rf"(?:{_MONTH_NAMES})(?:\s+\d{{4}})?|\d{{4}}", words):
            return self._month_or_year_text(phrase)
        self._day(self._date(phrase))

    def _month_or_year(self, m: re.Match[str]) -> None:
        self._month_or_year_text(m.group("d"))

    def _month_or_year_text(self, phrase: str) -> None:
        words = phrase.lower().split()
        if words[0].isdigit():  # "in 2025"
            year = int(words[0])
            if year > self.today.year:
                raise InvalidInput(f"{year} is in the future: memories are about the past")
            self._span(date(year, 1, 1), min(date(year, 12, 31), self.today))
            return
        month = MONTHS[words[0].rstrip(".")]
        if len(words) > 1:
            year = int(words[1])
        else:  # the most recent such month, this one included
            year = self.today.year if month <= self.today.month else self.today.year - 1
        first = date(year, month, 1)
        if first > self.today:
            raise InvalidInput(f"{phrase} is in the future: memories are about the past")
        last = first + relativedelta(months=1) - timedelta(days=1)
        self._span(first, min(last, self.today))

    def _unreadable_date(self, m: re.Match[str]) -> None:
        raise InvalidInput(
            f"cannot read {m.group(0).strip()!r} as a date: write e.g. 'since March 3',"
            " 'since 2026-03-03' or 'before Friday'"
        )

    def _date(self, phrase: str) -> date:
        """One date phrase → a calendar day in the past (or today)."""
        text = phrase.strip().lower().rstrip(".")
        today = self.today
        if text == "today":
            return today
        if text == "yesterday":
            return today - timedelta(days=1)
        if m := re.fullmatch(rf"(?P<n>{_NUMBER})\s+(?P<unit>day|week|month|year)s?\s+ago", text):
            n = _number(m.group("n"))
            return today - relativedelta(**{m.group("unit") + "s": n})
        if m := re.fullmatch(rf"(?:last\s+)?(?P<w>{_WEEKDAY_NAMES})", text):
            back = (today.weekday() - WEEKDAYS[m.group("w")]) % 7 or 7
            return today - timedelta(days=back)
        if m := re.fullmatch(r"(\d{1,2})/(\d{1,2})(?:/(\d{2,4}))?", text):
            return self._slash_date(phrase, *m.groups())
        if re.fullmatch(r"\d{4}", text):
            return date(int(text), 1, 1)
        if m := re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", text):
            return self._checked(phrase, int(m[1]), int(m[2]), int(m[3]))
        month_name = rf"(?P<m>{_MONTH_NAMES})\.?"
        day = r"(?P<d>\d{1,2})(?:st|nd|rd|th)?"
        year = r"(?:,?\s+(?P<y>\d{4}))?"
        m = re.fullmatch(rf"{month_name}\s+{day}{year}", text) or re.fullmatch(
            rf"{day}\s+(?:of\s+)?{month_name}{year}", text
        ) or re.fullmatch(rf"{month_name}{year}", text)
        if m is None:
            raise InvalidInput(
                f"cannot read {phrase.strip()!r} as a date: write e.g. 'March 3' or 2026-03-03"
            )
        parts = m.groupdict()
        month, day_of_month = MONTHS[parts["m"]], int(parts.get("d") or 1)
        if parts["y"]:
            return self._checked(phrase, int(parts["y"]), month, day_of_month)
        result = self._checked(phrase, today.year, month, day_of_month)
        if result > today:  # "since December 5" asked in November: last December
            result = self._checked(phrase, today.year - 1, month, day_of_month)
        return result

    @staticmethod
    def _checked(phrase: str, year: int, month: int, day: int) -> date:
        try:
            return date(year, month, day)
        except ValueError:
            raise InvalidInput(f"{phrase.strip()!r} is not a date") from None

    def _slash_date(self, phrase: str, a: str, b: str, y: str | None) -> date:
        first, second = int(a), int(b)
        if first <= 12 and second <= 12 and first != second:
            raise InvalidInput(
                f"{phrase.strip()!r} could be month/day or day/month: write it as"
                " 2026-03-04 or 'March 4'"
            )
        month, day = (first, second) if first <= 12 else (second, first)
        year = int(y) if y else self.today.year
        if y and len(y) == 2:
            year += 2000
        result = self._checked(phrase, year, month, day)
        if not y and result > self.today:
            result = result.replace(year=result.year - 1)
        return result

    # -- content: "about X", "mentioning X" --
    def _take_content(self) -> None:
        boundary = (
            r"(?=\s*(?:;|,|\.(?:\s|$)|!|\?|\bthat\b|\bwhich\b|\bwhere\b|\btagged\b"
            r"|\bwith\s+tags?\b|\bsorted\b|\bordered\b|\blimit\b"
            r"|\b(?:top|first|last)\s+\d|$))"
        )

        def handle(m: re.Match[str]) -> None:
            phrase = re.sub(r"^(?:the|a|an)\s+", "", m.group("t").strip(), flags=re.I)
            if not phrase and not self.texts:  # a quoted phrase may have been the topic
                raise InvalidInput(f"{m.group(0).strip()!r}: about what? add the topic")
            if phrase:
                self.texts.append(phrase)

        self._cut(
            r"\b(?:about|mentioning|mentions?|regarding|concerning|containing|related\s+to"
            r"|on\s+the\s+topic\s+of|to\s+do\s+with)\b(?P<t>.*?)" + boundary,
            handle,
        )

    # -- tags --
    def _take_tags(self) -> None:
        tag = r"#?[\w][\w.\-/]*"
        tag_list = rf"(?P<list>{tag}(?:\s*(?:,|\band\b|\bor\b)\s*{tag})*)"

        def handle(m: re.Match[str]) -> None:
            for name in re.split(r"\s*(?:,|\band\b|\bor\b)\s*", m.group("list")):
                if name.strip("#"):
                    self.tags.append(name.strip("#").lower())

        self._cut(rf"\btagged(?:\s+(?:with|as))?\s+{tag_list}", handle)
        self._cut(rf"\bwith\s+(?:the\s+)?tags?\s+{tag_list}", handle)
        self._cut(rf"\btags?\s*[:=]\s*{tag_list}", handle)
        self._cut(r"(?<![\w&])#(?P<list>[\w][\w.\-/]*)", handle)

    # -- limit and order --
    def _take_limit_and_order(self) -> None:
        def limit(m: re.Match[str]) -> None:
            n = _number(m.group("n"))
            if not 1 <= n <= MAX_LIMIT:
                raise InvalidInput(f"{m.group(0).strip()!r}: the limit must be 1 to {MAX_LIMIT}")
            self._set("limit", n, "limits")

        def limit_order(order: str) -> Callable[[re.Match[str]], None]:
            def handle(m: re.Match[str]) -> None:
                limit(m)
                self._set("order", order, "orders")
            return handle

        n = rf"(?P<n>{_COUNT})"
        self._cut(rf"\b(?:top|first|limit(?:ed)?(?:\s+to)?|at\s+most|up\s+to)\s+{n}\b", limit)
        self._cut(rf"\b(?:last|latest|newest|most\s+recent)\s+{n}\b", limit_order("recent"))
        self._cut(rf"\b{n}\s+(?:most\s+recent|latest|newest)\b", limit_order("recent"))
        self._cut(rf"\b(?:oldest|earliest)\s+{n}\b", limit_order("oldest"))
        self._cut(rf"\b{n}\s+(?:oldest|earliest)\b", limit_order("oldest"))
        self._cut(r"\b(?:most\s+recent|recent(?:ly)?|latest|newest)(?:\s+first)?\b",
                  lambda m: self._set("order", "recent", "orders"))
        self._cut(r"\b(?:oldest|earliest)(?:\s+first)?\b",
                  lambda m: self._set("order", "oldest", "orders"))
        self._cut(r"\bmost\s+important(?:\s+first)?\b|\bby\s+importance\b",
                  lambda m: self._set("order", "importance", "orders"))

    # -- status --
    def _take_status(self) -> None:
        found: list[tuple[str, tuple[str, ...]]] = []
        for pattern, statuses in STATUS_WORDS:
            def note(m: re.Match[str], s: tuple[str, ...] = statuses) -> None:
                found.append((m.group(0), s))

            self._cut(pattern, note)
        words = [w for w, s in found]
        if any(s == ("resolved",) for _, s in found) and any(
            "resolved" not in s and "superseded" not in s for _, s in found
        ):
            raise InvalidInput(
                f"contradictory status words ({', '.join(words)}): ask for resolved or"
                " unresolved, not both"
            )
        for _, statuses in found:
            self.status.extend(statuses)

    # -- importance --
    def _take_importance(self) -> None:
        def numeric(bound: str) -> Callable[[re.Match[str]], None]:
            def handle(m: re.Match[str]) -> None:
                value = float(m.group("v"))
                if not 0.0 <= value <= 1.0:
                    raise InvalidInput(f"{m.group(0).strip()!r}: importance is 0 to 1")
                self._set(bound, value, "importance bounds")
            return handle

        value = r"(?P<v>\d*\.?\d+)"
        self._cut(rf"\bimportance\s*(?:>=|≥|>|above|over|at\s+least)\s*{value}",
                  numeric("min_importance"))
        self._cut(rf"\bimportance\s*(?:<=|≤|<|below|under|at\s+most)\s*{value}",
                  numeric("max_importance"))
        for pattern, lo, hi in IMPORTANCE_WORDS:
            def handle(m: re.Match[str], lo: float | None = lo, hi: float | None = hi) -> None:
                if lo is not None:
                    self._set("min_importance", lo, "importance levels")
                if hi is not None:
                    self._set("max_importance", hi, "importance levels")
            self._cut(pattern, handle)
        lo, hi = self.fields.get("min_importance"), self.fields.get("max_importance")
        if lo is not None and hi is not None and lo > hi:
            raise InvalidInput(
                f"importance at least {lo:g} and at most {hi:g} cannot both hold: ask for one"
            )

    # -- type: kind or category --
    def _take_types(self) -> None:
        for pattern, name, value in TYPE_WORDS:
            def take(m: re.Match[str], n: str = name, v: str = value) -> None:
                self._set(n, v, f"{n}s")

            self._cut(pattern, take)

    def _leftover(self) -> str:
        words = re.findall(r"[\w][\w.\-/+]*", self.rest)
        kept = [w for w in words if w.lower() not in STOPWORDS]
        return " ".join(kept)


def _number(token: str) -> int:
    token = token.lower()
    return int(token) if token.isdigit() else NUMBER_WORDS[token]


# --- running a question -----------------------------------------------------------------

DEFAULT_SEARCH_LIMIT = 10
DEFAULT_LIST_LIMIT = 20


@dataclass
class Answer:
    """The results of a question: hits when it had search text, else listed memories."""

    interpretation: Interpretation
    memories: list[Any]
    scores: list[float | None] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = self.interpretation.to_dict()
        out["results"] = [
            {**({"score": round(s, 6)} if s is not None else {}), "memory": m.to_dict()}
            for m, s in zip(self.memories, self.scores or [None] * len(self.memories))
        ]
        return out


def _brain_filters(interp: Interpretation) -> dict[str, Any]:
    filters = interp.filters()
    filters.pop("limit", None)
    filters.pop("order", None)
    return filters


def answer(brain: Brain, interp: Interpretation) -> Answer:
    """Run an interpretation: Brain.search when there is text (then ordered as asked),
    Brain.list when there are only filters."""
    filters = _brain_filters(interp)
    if interp.text:
        hits = brain.search(interp.text, limit=interp.limit or DEFAULT_SEARCH_LIMIT, **filters)
        if interp.order == "recent":
            hits.sort(key=lambda h: h.memory.created_at, reverse=True)
        elif interp.order == "oldest":
            hits.sort(key=lambda h: h.memory.created_at)
        elif interp.order == "importance":
            hits.sort(key=lambda h: -h.memory.importance)
        return Answer(interp, [h.memory for h in hits], [float(h.score) for h in hits])
    memories = brain.list(limit=interp.limit or DEFAULT_LIST_LIMIT,
                          order=interp.order or "recent", include_superseded=False, **filters)
    return Answer(interp, memories)


def explain(interp: Interpretation) -> list[tuple[str, str, list[Any]]]:
    """The SQL a question would run, as (what, sql, parameters), without running it."""
    f = _brain_filters(interp)
    filters = Filters(
        category=f.get("category"), kind=f.get("kind"), tags=f.get("tags"),
        since=f.get("since"), until=f.get("until"), min_importance=f.get("min_importance"),
        status=f.get("status"), max_importance=f.get("max_importance"),
        include_superseded=False,
    )
    where, params = filters.sql
    if not interp.text:
        limit = interp.limit or DEFAULT_LIST_LIMIT
        sql = (f"SELECT m.* FROM memories m WHERE {where} "
               f"ORDER BY {ORDERS[interp.order or 'recent']} LIMIT ? OFFSET ?")
        return [("list", sql, [*params, limit, 0])]
    limit = interp.limit or DEFAULT_SEARCH_LIMIT
    pool = max(50, 5 * limit)  # hybrid_search's candidate pool for this limit
    steps = []
    for table, match, bm25_weights in search_mod.keyword_matches(interp.text):
        weights = ", ".join(str(w) for w in bm25_weights)
        keyword_sql = " ".join(search_mod.KEYWORD_SQL.format(table=table, w=weights, where=where).split())
        steps.append((f"keyword candidates (FTS5 bm25, {table})", keyword_sql, [match, *params, pool]))
    steps.append((
        "vector candidates: ids allowed by the filters, then the nearest by sign bits in RAM, "
        "rescored by exact cosine from memories_vec",
        f"SELECT m.id FROM memories m WHERE {where}", list(params),
    ))
    steps.append(("exact vectors of the candidates",
                  "SELECT embedding FROM memories_vec WHERE rowid = ?", ["<each candidate id>"]))
    return steps
