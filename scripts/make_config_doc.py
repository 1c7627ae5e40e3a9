#!/usr/bin/env python3
"""Regenerate docs/config.md, every setting of the configuration file, from the code.

    python scripts/make_config_doc.py          # write docs/config.md
    python scripts/make_config_doc.py --check  # exit 1 if it differs from the code (a test runs this)

The top-level settings come from `maxmem.config.Config` (its fields, defaults and the
environment variables `load_config` reads); the defaults of the [sections] come from the
constants and settings classes of the modules that read them. Only the descriptions are
written here, and a setting without one stops the script.
"""

from __future__ import annotations

import sys
from dataclasses import MISSING, Field, dataclass, fields
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "docs" / "config.md"

from maxmem import backup, brain, brief, config, curation, doctor
from maxmem.capture.roots import CaptureSettings
from maxmem.hooks import events as hook
from maxmem.hooks import recall
from maxmem.jobs import daemon
from maxmem.retention import policy as retention_policy
from maxmem.sync import folder, pgconnect
from maxmem.triggers import rules as trigger_rules

TOP = {
    "db_path": "Where brain.db lives (`--db` overrides it).",
    "agent": "This agent's name, recorded on the memories it writes; sync's agent name unless [sync.postgres] agent is set.",
    "embedder": "`auto`, `openai`, `local` or `none`: `auto` takes the provider brain.db was built with, else "
                "`openai` when a key or base URL is set, else `local` when installed, else `none` (keyword only).",
    "openai_model": "The embedding model asked of an OpenAI-compatible endpoint.",
    "openai_base_url": "An OpenAI-compatible endpoint (Ollama, LM Studio, llama.cpp, …); none: OpenAI's.",
    "openai_api_key": "The endpoint's key (never written by `maxmem init`).",
    "openai_dimensions": "Ask the endpoint for vectors of this many dimensions (models that allow it).",
    "embed_batch_size": "Texts per request to the embedding endpoint.",
    "embed_timeout": "Seconds one HTTP request to the embedding endpoint may wait.",
    "embed_max_retries": "Retries of a failed embedding request.",
    "embed_deadline": "Seconds one interactive embedding call (add, search, MCP) may take, retries and "
                      "`Retry-After` waits included; then the text is stored and embedded later, or the search "
                      "answers by keyword.",
    "embed_batch_deadline": "The same for batch jobs (embed, reindex, import).",
    "embed_pause": "After a failed call, seconds this process stops calling the endpoint for interactive "
                   "calls (a longer `Retry-After` extends it).",
    "vector_weight": "Weight of the vector side in the hybrid score.",
    "keyword_weight": "Weight of the keyword (BM25) side in the hybrid score.",
    "min_relevance": "A search whose best hit's relevance is below this answers \"nothing relevant\"; 0 turns it off.",
    "redact_on_remember": "Redact secrets from everything stored, embedded and synced (see [redact]).",
    "busy_timeout_ms": "How long a write waits for another process's write lock, in milliseconds.",
    "key_file": "The key file of an encrypted brain.db (mode 0600); none: `brain.key` beside config.toml. "
                "`MAXMEM_KEY` comes before it, the OS keyring after it ([security.md](security.md)).",
}
SKIPPED_FIELDS = {"config_path", "sections", "key"}

CAPTURE = {
    "openclaw_dirs": "OpenClaw state folders to read (default: `$OPENCLAW_STATE_DIR`, else ~/.openclaw).",
    "claude_dirs": "Claude Code folders to read (default: each of `$CLAUDE_CONFIG_DIR`, else ~/.claude and ~/.config/claude).",
    "codex_dirs": "Codex folders to read (default: `$CODEX_HOME`, else ~/.codex).",
    "tool_result_chars": "Characters of a tool call's result kept.",
    "tool_argument_chars": "Characters of a tool call's arguments kept.",
    "redact_patterns": "Extra regular expressions to redact (older spelling of [redact] patterns).",
    "chunk_tokens": "Tokens of transcript per conversation memory.",
    "overlap_tokens": "Tokens a conversation memory repeats of the one before.",
    "settle_seconds": "A transcript untouched this long is idle: what was held back is flushed.",
    "window_bytes": "A big transcript is read and committed in windows of this many bytes.",
    "importance": "Importance of conversation memories.",
    "interval_hours": "Hours between capture runs of the scheduled tick and `maxmem daemon`.",
}
CURATION = {
    "dedup": "A near-identical new memory updates the stored one instead of adding a duplicate.",
    "dedup_threshold": "Cosine at which two texts with the same numbers are the same fact.",
    "dedup_superset_threshold": "Cosine at which a new text that keeps every word of the old one restates it.",
    "review_threshold": "Cosine from which `maxmem core review` lists a pair for you to judge.",
    "core_max_count": "`core review` warns above this many core memories.",
    "core_max_tokens": "`core review` warns above about this many tokens of core.",
    "never_recalled_days": "`core review` lists core memories never recalled in this many days.",
}


@dataclass
class Key:
    name: str
    default: str
    about: str


def toml(value: Any) -> str:
    """A default as it would be written in config.toml."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, Path):
        return f'`"{value}"`'
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, (tuple, list)):
        return "`[" + ", ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in value) + "]`"
    if isinstance(value, dict):
        return "`{" + ", ".join(f"{k} = {v}" for k, v in value.items()) + "}`"
    return f"`{value}`"


def default_of(f: Field[Any]) -> Any:
    factory: Any = f.default_factory
    return f.default if f.default is not MISSING else factory()


def described(name: str, about: dict[str, str], where: str) -> str:
    if name not in about:
        raise SystemExit(f"{where} {name} has no description in scripts/make_config_doc.py")
    return about[name]


def from_dataclass(cls: Any, about: dict[str, str], where: str) -> list[Key]:
    keys = []
    for f in fields(cls):
        default = default_of(f)
        shown = "the agent's own" if f.name.endswith("_dirs") and not default else toml(default)
        keys.append(Key(f.name, shown, described(f.name, about, where)))
    return keys


def sections() -> list[tuple[str, str, list[Key]]]:
    days = {c: ("forever" if d is None else f"{d}d") for c, d in retention_policy.DEFAULT_DAYS.items()}
    return [
        ("capture", "What `maxmem capture`, the hooks and the tick read from agents' transcripts "
                    "([capture.md](capture.md)).", from_dataclass(CaptureSettings, CAPTURE, "[capture]")),
        ("embed", "The embed step that gives captured memories their vectors.", [
            Key("max_seconds", toml(daemon.EMBED_SECONDS), "Seconds one scheduled run may embed; the next resumes."),
            Key("batch_size", toml(brain.EMBED_BATCH), "Memories embedded and committed per batch."),
        ]),
        ("retention", "What expires when, and when retention runs ([retention.md](retention.md)). "
                      "Ages are days (`90`), a duration (`90d`, `12w`, `2y`, `36h`) or `\"forever\"`.", [
            *[Key(c, toml(days[c]), f"How long `{c}` memories are kept.") for c in ("core", "project", "daily",
                                                                                     "conversation")],
            Key("archive_days", toml(f"{retention_policy.ARCHIVE_DAYS}d"), "How long the archives of expired memories are kept."),
            Key("timezone", toml(retention_policy.TIMEZONE), "The zone whose calendar days retention counts, and its schedule's zone."),
            Key("schedule", toml("03:00"), "When the daily retention run is due."),
            Key("batch_size", toml(retention_policy.BATCH_SIZE), "Memories archived and deleted per batch."),
            Key("vacuum_share", toml(retention_policy.VACUUM_SHARE), "brain.db is vacuumed when its free pages reach this share of the file."),
            Key("archive_dir", "beside brain.db", "Where the `.jsonl.gz` archives go."),
        ]),
        ("triggers", "The six commit triggers found in captured turns ([retention.md](retention.md)).", [
            Key("enabled", toml(list(trigger_rules.TRIGGERS)), "Which triggers are looked for."),
            Key("capture", toml(True), "Look for triggers in what capture stores."),
            Key("importance", toml(trigger_rules.IMPORTANCE), "Importance of a memory a trigger commits."),
            Key("min_words", toml(trigger_rules.MIN_WORDS), "Shorter sentences are not looked at."),
            Key("max_words", toml(trigger_rules.MAX_WORDS), "Longer sentences are not looked at."),
            Key("guards", "`[]`", "Extra regular expressions for every trigger: a sentence matching one commits nothing."),
        ]),
        ("triggers.NAME", "One table per trigger (`[triggers.decision]`, `[triggers.lesson]`, …).", [
            Key("patterns", "`[]`", "Extra regular expressions that fire this trigger."),
            Key("exclude", "`[]`", "Extra regular expressions that stop it."),
            Key("replace", toml(False), "Use only these patterns and excludes, not the built-in ones."),
            Key("roles", "the trigger's own", "Whose sentences it reads: `\"user\"`, `\"assistant\"`."),
        ]),
        ("curation", "Near-duplicates and the core review.", from_dataclass(curation.Settings, CURATION, "[curation]")),
        ("redact", "Your own redaction rules, on top of the built-in ones ([redact.md](redact.md)).", [
            Key("patterns", "`[]`", "Regular expressions (or tables with a pattern and its kind) to redact."),
            Key("allow", "`[]`", "Regular expressions of values never redacted."),
            Key("secret_names", "`[]`", "More names whose assigned values are secrets (`name = value`)."),
            Key("ignore_names", "`[]`", "Names whose assigned values are never secrets."),
        ]),
        ("context", "The boot brief ([agents.md](agents.md)).", [
            Key("budget_tokens", toml(brief.DEFAULT_BUDGET_TOKENS), "Tokens a brief may take (the CLI, MCP and the hooks)."),
            Key("timezone", "the machine's", "The zone \"today\" is read in: briefs, plain-English dates, Markdown days."),
        ]),
        ("recall", "What `maxmem hook user-prompt` adds before the agent answers a prompt: the few "
                   "memories relevant to it, never one already shown in the session.", [
            Key("max_memories", toml(recall.DEFAULT_MAX_MEMORIES), "Most memories one prompt recalls (1–20)."),
            Key("budget_tokens", toml(recall.DEFAULT_BUDGET_TOKENS),
                f"Tokens the recalled text may take ({recall.MIN_BUDGET_TOKENS}–4000)."),
            Key("warm_minutes", toml(recall.DEFAULT_WARM_MINUTES),
                "Minutes the recall server, started by the first prompt's hook, stays without a request "
                "to answer the next ones fast (0: no server, each hook works alone; 0–1440)."),
        ]),
        ("hook", "The agents' hooks ([setup.md](setup.md)).", [
            Key("budget_seconds", toml(hook.DEFAULT_BUDGET_SECONDS), "Seconds a hook may take; it always exits 0."),
        ]),
        ("backup", "`maxmem backup` and the daily backup job ([backup.md](backup.md)).", [
            Key("dir", "backups/ beside brain.db", "Where backups go."),
            Key("keep", toml(backup.DEFAULT_KEEP), "How many backups are kept."),
            Key("schedule", toml("04:00"), "When the daily backup is due."),
            Key("timezone", "[retention] timezone", "The zone of `schedule`."),
        ]),
        ("doctor", "`maxmem doctor` and the hourly doctor job ([backup.md](backup.md)).", [
            Key("max_age_hours", toml(doctor.DEFAULT_MAX_AGE_HOURS), "Hours: a job whose last success is older fails its check."),
            Key("required", "`[]`", "Jobs for which \"never ran\" is a failure."),
            Key("fail_after", toml(doctor.FAIL_AFTER), "Failures in a row before a job's failure is a FAIL, not a WARN."),
            Key("overdue_grace_hours", toml(doctor.OVERDUE_GRACE_HOURS), "A job due for longer than this is overdue: the scheduler is not ticking."),
        ]),
        ("sync.postgres", "Sharing memory through PostgreSQL ([sync.md](sync.md)).", [
            Key("dsn", "—", "The libpq connection string (`MAXMEM_PG_DSN` and `--dsn` override it); "
                            "without one, sync does not run."),
            Key("interval_minutes", toml(15), "Minutes between scheduled sync runs."),
            Key("batch_size", toml(pgconnect.DEFAULT_BATCH_SIZE), "Memories per committed batch."),
            Key("index_memory", toml(pgconnect.DEFAULT_INDEX_MEMORY), "PostgreSQL's `maintenance_work_mem` while the HNSW index is built."),
            Key("agent", "`agent`, else the host name", "This brain's agent name in the shared database."),
        ]),
        ("sync.folder", "Sync between your own machines through a folder your sync tool shares "
                        "([sync.md](sync.md#between-your-own-machines)). The key is `sync.key` in the config "
                        "folder, this machine's id `sync.machine` beside it.", [
            Key("dir", "—", "The shared folder (`maxmem sync folder DIR` records it); without one, "
                            "folder sync does not run."),
            Key("vectors", toml(True), "Send each memory's vector with it; a machine with the same embedder "
                                       "stores it instead of embedding the text again."),
            Key("interval_minutes", toml(folder.DEFAULT_INTERVAL), "Minutes between scheduled folder syncs."),
        ]),
    ]


ENVIRONMENT = [
    ("MAXMEM_HOME", "One folder for the config file (config.toml), the default brain.db and the logs."),
    ("MAXMEM_LOG_DIR", "Where the jobs' logs and locks go (default: ~/.local/state/maxmem; macOS ~/Library/Logs/maxmem)."),
    ("MAXMEM_PG_DSN", "The PostgreSQL connection string for sync (over `[sync.postgres] dsn`)."),
    ("MAXMEM_BIN", "The cron scripts: the `maxmem` they run (setup writes its absolute path)."),
    ("MAXMEM_ENV_FILE", "The cron scripts: a file of VAR=value lines they load first (default ~/.config/maxmem/env, chmod 600)."),
]


def render() -> str:
    lines = ["# Configuration", "",
             "Generated from the code by `python scripts/make_config_doc.py`; do not edit by hand.", "",
             "maxmem resolves its settings once, in this order, each overriding the one before: the "
             "defaults below, the config file, the environment, the command line's options. The config "
             "file is TOML: `--config FILE`, else `$MAXMEM_HOME/config.toml`, else "
             "`$XDG_CONFIG_HOME/maxmem/config.toml` (~/.config/maxmem/config.toml; macOS "
             "~/Library/Application Support/maxmem/config.toml, Windows %APPDATA%\\maxmem\\config.toml). "
             "`maxmem init` writes one. A bad value stops the command with one line naming the setting.", "",
             "## Top-level settings", "",
             "| setting | default | environment | what it does |", "|---|---|---|---|"]
    env_of: dict[str, list[str]] = {}
    for var, name in config.ENV_VARS.items():
        env_of.setdefault(name, []).append(f"`{var}`")
    for var, name in config.CLIENT_ENV_VARS.items():
        env_of.setdefault(name, []).append(f"`{var}` (when the file sets none)")
    for f in fields(config.Config):
        if f.name in SKIPPED_FIELDS:
            continue
        default = default_of(f)
        lines.append(f"| `{f.name}` | {toml(default)} | {', '.join(env_of.get(f.name, [])) or '—'} | "
                     f"{described(f.name, TOP, 'setting')} |")
    lines += ["", "A `MAXMEM_HOME` also moves the default `db_path` to `$MAXMEM_HOME/brain.db`.", ""]
    for name, intro, keys in sections():
        lines += [f"## [{name}]", "", intro, "", "| key | default | what it does |", "|---|---|---|"]
        lines += [f"| `{k.name}` | {k.default} | {k.about} |" for k in keys]
        lines.append("")
    lines += ["## Other environment variables", "", "| variable | what it does |", "|---|---|"]
    lines += [f"| `{var}` | {about} |" for var, about in ENVIRONMENT]
    lines += ["", "Capture also reads the agents' own variables: `OPENCLAW_STATE_DIR`, `CLAUDE_CONFIG_DIR`, "
                  "`CODEX_HOME`.", ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT.relative_to(ROOT)} is stale: run  python scripts/make_config_doc.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
