#!/usr/bin/env python3
"""Regenerate docs/config.md, every setting of the configuration file, from the code.

    python scripts/make_config_doc.py          # write docs/config.md
    python scripts/make_config_doc.py --check  # exit 1 if it differs from the code (a test runs this)

The top-level settings come from `maxmem.config.Config` (its fields, defaults and the
environment variables `load_config` reads), described here; the [sections] come whole
from `maxmem.settings`: each table's class (its docstring is the section's introduction)
and its fields (default, and the description in their metadata).
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import MISSING, Field, dataclass, fields
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "docs" / "config.md"

from maxmem import config, doctor, settings

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


# Defaults declared with what they belong to, not in the section: each job's own limit.
DECLARED_ELSEWHERE = {("doctor", "max_age_hours"): doctor.DEFAULT_MAX_AGE_HOURS}


def shown_default(section: str, f: Field[Any]) -> str:
    if (section, f.name) in DECLARED_ELSEWHERE:
        return toml(DECLARED_ELSEWHERE[section, f.name])
    if f.metadata["shown"] is not None:
        return str(f.metadata["shown"])
    default = default_of(f)
    if f.metadata["check"] is settings.days:
        return toml("forever" if default is None else f"{default:g}d")
    return toml(default)


def keys_of(section: str, cls: type[settings.Section]) -> list[Key]:
    return [Key(f.name, shown_default(section, f), f.metadata["doc"]) for f in cls.keys().values()]


def introduction(cls: type) -> str:
    return " ".join((inspect.getdoc(cls) or "").split())


def sections() -> list[tuple[str, str, list[Key]]]:
    """Each table of config.toml, in the order of maxmem.settings.SECTIONS (a trigger's own
    table after [triggers])."""
    out = []
    for name, (_, cls) in settings.SECTIONS.items():
        out.append((name, introduction(cls), keys_of(name, cls)))
        if cls is settings.TriggerSettings:
            out.append(("triggers.NAME", introduction(settings.TriggerTable), keys_of(name, settings.TriggerTable)))
    return out


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
        if f.name not in config.TOP_LEVEL:
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
