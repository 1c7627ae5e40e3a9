"""Configuration, resolved once: defaults < TOML file < MAXMEM_* environment < flags.

Library code never reads the environment: the CLI calls `load_config()` and passes
the frozen `Config` down. Python users get the defaults from `Config()` or the same
resolution from `load_config()`. Each table of the file is a typed section of Config
(`config.retention`, maxmem.settings), read and checked here, once.
"""

from __future__ import annotations

import os
import sys
import tomllib
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfoNotFoundError

import tzlocal

from .clock import zone
from .errors import ConfigError, InvalidInput
from .files import open_regular, read_at_most
from .keys import Key, resolve

if TYPE_CHECKING:  # pragma: no cover
    from .settings import (
        BackupSettings,
        BriefSettings,
        CaptureSettings,
        CurationSettings,
        DoctorSettings,
        EmbedSettings,
        HookSettings,
        PostgresSettings,
        RecallSettings,
        RedactSettings,
        RetentionSettings,
        SearchSettings,
        SyncFolderSettings,
        TriggerSettings,
    )

EMBEDDERS = ("auto", "openai", "local", "none")
DEFAULT_DB = Path("~/.openclaw/workspace/memory/brain.db")
# A search whose best hit's relevance (relevance.py) is below this returns nothing: the
# highest threshold, in steps of 0.005, at which LoCoMo R@10 on the calibration half of
# bench/relevance_eval.py drops by at most one point (its --fit prints it).
DEFAULT_MIN_RELEVANCE = 0.055
# The prompt hook's at most, unless --budget says otherwise, counted from its process's
# start: with the watchdog's half second, below half the 10 s timeout setup gives it, so
# that a machine slowed down twice over still sees it stop, and log why, in time.
PROMPT_HOOK_BUDGET_SECONDS = 4.0
MAX_HOOK_BUDGET_SECONDS = 600  # the most `maxmem hook --budget` takes
MAX_CONFIG_BYTES = 1 << 20  # the most of a config file read


def _settings() -> ModuleType:
    """maxmem.settings, imported when a config is first read or made: building its classes
    takes milliseconds the prompt hook's short path, which reads no table, does not spend."""
    from . import settings

    return settings


def _section(name: str) -> Any:
    """A field of Config holding the table `name` of config.toml (maxmem.settings)."""
    return field(default_factory=lambda: _settings().SECTIONS[name][1](), metadata={"table": name})


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(
        {k: _frozen(v) if isinstance(v, Mapping) else v for k, v in mapping.items()}
    )


@dataclass(frozen=True)
class Config:
    """Everything maxmem can be told: the top-level settings, then one typed section per
    table of config.toml (maxmem.settings), each checked when it was read."""

    db_path: Path = DEFAULT_DB
    agent: str | None = None
    embedder: str = "auto"
    openai_model: str = "text-embedding-3-small"
    openai_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    openai_dimensions: int | None = None
    embed_batch_size: int = 64
    embed_timeout: float = 30.0  # the longest one HTTP request to the embedding server may wait
    embed_max_retries: int = 4
    # All the time one embedding call may take, retries and Retry-After waits included:
    # interactive (add, search, MCP) and batch jobs (embed, reindex, import).
    embed_deadline: float = 5.0
    embed_batch_deadline: float = 300.0
    # After a failed call, this process stops calling the server for interactive calls
    # for this long (a circuit breaker; a longer Retry-After extends it).
    embed_pause: float = 60.0
    vector_weight: float = 0.7
    keyword_weight: float = 0.3
    min_relevance: float = DEFAULT_MIN_RELEVANCE  # 0 turns "nothing relevant" off
    redact_on_remember: bool = True
    busy_timeout_ms: int = 15000
    key_file: Path | None = None  # an encrypted brain's key file (keys.py), else brain.key in the config folder
    key: Key | None = field(default=None, repr=False)  # resolved by load_config (keys.resolve), never written
    config_path: Path | None = None
    capture: CaptureSettings = _section("capture")
    embed: EmbedSettings = _section("embed")
    retention: RetentionSettings = _section("retention")
    triggers: TriggerSettings = _section("triggers")
    curation: CurationSettings = _section("curation")
    redact: RedactSettings = _section("redact")
    brief: BriefSettings = _section("brief")
    recall: RecallSettings = _section("recall")
    search: SearchSettings = _section("search")
    hook: HookSettings = _section("hook")
    backup: BackupSettings = _section("backup")
    doctor: DoctorSettings = _section("doctor")
    sync_postgres: PostgresSettings = _section("sync.postgres")
    sync_folder: SyncFolderSettings = _section("sync.folder")
    # The config file's tables as written: what `maxmem init --force` writes back (the
    # sections above are what code reads).
    file_tables: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), repr=False)

    @classmethod
    def from_tables(cls, tables: Mapping[str, Any], **values: Any) -> Config:
        """A Config whose sections are read from TOML-shaped tables (`{"retention": {"daily":
        "30d"}, "sync": {"folder": {"dir": "…"}}}`), checked as `load_config` checks the
        file's; the other fields as given."""
        return cls(**{**_settings().parse_tables(tables), **values}, file_tables=_frozen(tables))

    def with_(self, **changes: Any) -> Config:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def to_toml_dict(self) -> dict[str, Any]:
        """The settable fields and the file's own tables, for `maxmem init` (the API key is
        never written)."""
        out: dict[str, Any] = {}
        for name in TOP_LEVEL:
            value = getattr(self, name)
            if value is None or name == "openai_api_key":
                continue
            out[name] = str(value) if isinstance(value, Path) else value
        for name, table in self.file_tables.items():
            out[name] = _thaw(table)
        return out


def local_timezone(config: Config) -> tzinfo:
    """The zone "today" is read in (briefs, plain-English dates, Markdown days):
    `[brief] timezone` in the config, else the machine's own (machine_timezone)."""
    name = config.brief.timezone
    return zone(name, "[brief] timezone") if name else machine_timezone()


def machine_timezone() -> tzinfo:
    """The machine's zone: TZ, else the system's setting (/etc/localtime, macOS's and
    Windows' own), as tzlocal reads them; a TZ that names no zone (a POSIX rule such as
    JST-9) gives the C library's current offset, and nothing at all gives UTC."""
    with warnings.catch_warnings():  # tzlocal warns when TZ and the system's setting disagree
        warnings.simplefilter("ignore")
        try:
            return tzlocal.get_localzone()
        except (ZoneInfoNotFoundError, ValueError, OSError):
            return datetime.now().astimezone().tzinfo or UTC


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    return value


def home_dir(env: Mapping[str, str]) -> Path | None:
    """MAXMEM_HOME puts the config and the default brain.db in one folder (tests use it)."""
    home = env.get("MAXMEM_HOME")
    return Path(home).expanduser() if home else None


def config_dir(env: Mapping[str, str]) -> Path:
    """The platform's config folder for maxmem."""
    home = home_dir(env)
    if home:
        return home
    if sys.platform == "darwin":
        return Path("~/Library/Application Support/maxmem").expanduser()
    if sys.platform == "win32":
        return Path(env.get("APPDATA", "~")).expanduser() / "maxmem"
    return Path(env.get("XDG_CONFIG_HOME") or "~/.config").expanduser() / "maxmem"


def default_config_path(env: Mapping[str, str]) -> Path:
    return config_dir(env) / "config.toml"


def state_dir(env: Mapping[str, str]) -> Path:
    """Where maxmem keeps what is not configuration: job logs, locks, what `setup` wrote.

    MAXMEM_LOG_DIR (the cron scripts' variable), else MAXMEM_HOME/logs, else
    $XDG_STATE_HOME/maxmem or
    ~/.local/state/maxmem on Linux (what the scripts default to), ~/Library/Logs/maxmem
    on macOS: platformdirs' user_state_dir on Linux and user_log_dir on macOS
    (tests/test_setup.py compares them). Not platformdirs itself: it reads os.environ,
    and this function resolves from the mapping it is given.
    """
    if env.get("MAXMEM_LOG_DIR"):
        return Path(env["MAXMEM_LOG_DIR"]).expanduser()
    home_folder = home_dir(env)
    if home_folder:
        return home_folder / "logs"
    home = Path(env["HOME"]) if env.get("HOME") else Path("~").expanduser()
    if sys.platform == "darwin":
        return home / "Library" / "Logs" / "maxmem"
    if sys.platform == "win32":
        return Path(env.get("LOCALAPPDATA", str(home))).expanduser() / "maxmem" / "Logs"
    return Path(env.get("XDG_STATE_HOME") or home / ".local" / "state") / "maxmem"


# The top-level settings of config.toml, with their types.
TOP_LEVEL = {f.name: f.type for f in fields(Config)
             if "table" not in f.metadata and f.name not in ("config_path", "file_tables", "key")}
# The usual variables of OpenAI-compatible clients fill what the file left unset...
CLIENT_ENV_VARS = {"OPENAI_API_KEY": "openai_api_key", "OPENAI_BASE_URL": "openai_base_url"}
# ...and maxmem's own variables override the file.
ENV_VARS = {
    "MAXMEM_DB": "db_path",
    "MAXMEM_AGENT": "agent",
    "MAXMEM_EMBEDDER": "embedder",
    "MAXMEM_OPENAI_MODEL": "openai_model",
    "MAXMEM_OPENAI_BASE_URL": "openai_base_url",
    "MAXMEM_OPENAI_API_KEY": "openai_api_key",
    "MAXMEM_VECTOR_WEIGHT": "vector_weight",
    "MAXMEM_KEYWORD_WEIGHT": "keyword_weight",
    "MAXMEM_MIN_RELEVANCE": "min_relevance",
    "MAXMEM_KEY_FILE": "key_file",
}


def _coerce(name: str, value: Any, where: str) -> Any:
    kind = str(TOP_LEVEL[name])
    try:
        if "Path" in kind:
            return Path(str(value)).expanduser()
        if kind.startswith("bool"):
            if isinstance(value, bool):
                return value
            lowered = str(value).strip().lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if kind.startswith("int"):
            return int(value)
        if kind.startswith("float"):
            return float(value)
        return str(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: {name} = {value!r} is not a valid {kind}") from None


def _validate(config: Config) -> Config:
    if config.embedder not in EMBEDDERS:
        raise ConfigError(
            f"embedder must be one of {', '.join(EMBEDDERS)}, not {config.embedder!r}"
        )
    for name in ("embed_timeout", "embed_deadline", "embed_batch_deadline"):
        if not 0 < getattr(config, name) <= 86_400:  # NaN too
            raise ConfigError(f"{name} must be more than 0 seconds (and at most a day)")
    if not 0 <= config.embed_pause <= 86_400:
        raise ConfigError("embed_pause must be from 0 to 86400 seconds")
    if config.vector_weight < 0 or config.keyword_weight < 0:
        raise ConfigError("vector_weight and keyword_weight must be ≥ 0")
    if config.vector_weight + config.keyword_weight <= 0:
        raise ConfigError("vector_weight + keyword_weight must be > 0")
    if not 0.0 <= config.min_relevance <= 1.0:
        raise ConfigError(f"min_relevance must be from 0 to 1, not {config.min_relevance!r}")
    return config


def load_config(
    env: Mapping[str, str] | None = None,
    path: Path | str | None = None,
    **overrides: Any,
) -> Config:
    """Resolve defaults < TOML file < environment < explicit overrides (None = not given),
    then the brain's key (keys.resolve: MAXMEM_KEY, the key file, the OS keyring)."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    home = home_dir(env)
    if home:
        values["db_path"] = home / "brain.db"
    config_path = Path(path).expanduser() if path else default_config_path(env)
    tables: dict[str, Any] = {}
    for key, value in _read(config_path, bool(path)).items():
        if key in TOP_LEVEL:
            values[key] = _coerce(key, value, str(config_path))
        elif isinstance(value, dict) or _settings().is_table(key):
            tables[key] = value
        else:
            raise ConfigError(f"{config_path}: unknown setting {key!r}")
    for var, name in CLIENT_ENV_VARS.items():
        if env.get(var) and values.get(name) is None:
            values[name] = _coerce(name, env[var], var)
    for var, name in ENV_VARS.items():
        if env.get(var):
            values[name] = _coerce(name, env[var], var)
    for name, value in overrides.items():
        if value is not None:
            values[name] = _coerce(name, value, "option") if name in TOP_LEVEL else value
    try:
        sections = _settings().parse_tables(tables, env)
    except ConfigError as exc:
        raise ConfigError(f"{config_path}: {exc}") from None
    if values.get("key") is None:
        values["key"] = resolve(env, values.get("key_file"), config_path.parent,
                                Path(values.get("db_path", DEFAULT_DB)).expanduser())
    values["config_path"] = config_path
    return _validate(Config(**{**sections, **values}, file_tables=_frozen(tables)))


def brain_path(env: Mapping[str, str], path: Path | str | None = None, db_path: Path | str | None = None) -> Path:
    """brain.db as `load_config` resolves it (the option, else MAXMEM_DB, else the file's
    db_path, else $MAXMEM_HOME/brain.db, else the default), reading nothing else of the
    file: the prompt hook's short path finds its warm server by it. A server answers only
    while the config file is the one it started with, so a bad setting is still reported,
    by the hook that then runs in full."""
    config_path = Path(path).expanduser() if path else default_config_path(env)
    data = _read(config_path, bool(path))
    home = home_dir(env)
    if db_path is not None:
        return Path(db_path).expanduser()
    if env.get("MAXMEM_DB"):
        return Path(env["MAXMEM_DB"]).expanduser()
    if "db_path" in data:
        return Path(str(data["db_path"])).expanduser()
    return home / "brain.db" if home else DEFAULT_DB.expanduser()


def _read(config_path: Path, given: bool) -> dict[str, Any]:
    """The config file's TOML ({} when there is none and none was named)."""
    if not config_path.exists():
        if given:
            raise ConfigError(f"config file {config_path} does not exist: run  maxmem init")
        return {}
    try:
        with open_regular(config_path, "a config.toml") as handle:  # a FIFO or a device is refused, never waited on
            data = read_at_most(handle, MAX_CONFIG_BYTES)
        if data is None:
            raise ConfigError(f"{config_path} holds more than {MAX_CONFIG_BYTES >> 20} MiB: "
                              "give the path of a config.toml")
        return tomllib.loads(data.decode("utf-8"))
    except InvalidInput as exc:
        raise ConfigError(str(exc)) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"cannot read {config_path}: {exc}") from None
