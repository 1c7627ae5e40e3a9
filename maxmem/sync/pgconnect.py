"""Reaching the PostgreSQL database `maxmem sync postgres` pushes to: the DSN (from --dsn,
MAXMEM_PG_DSN or [sync.postgres]), its password-free name and masked errors, the other
[sync.postgres] settings, and the connection itself.

psycopg (and pgvector's adapter) are imported lazily: `pip install 'maxmem[postgres]'`.
"""

from __future__ import annotations

import re
import socket
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from ..config import Config
from ..errors import ConfigError, MaxmemError, MissingDependency
from ..settings import PostgresSettings

if TYPE_CHECKING:  # pragma: no cover
    import psycopg

DEFAULT_INDEX_MEMORY = PostgresSettings.index_memory  # maintenance_work_mem while the HNSW index is built
# Connection defaults unless the DSN says otherwise: fail fast when the server is
# down, and notice a dead peer (network cut) within about a minute.
CONNECT_DEFAULTS = {
    "connect_timeout": "10",
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
    "tcp_user_timeout": "60000",
    "application_name": "maxmem-sync",
}


class SyncError(MaxmemError):
    """PostgreSQL could not be reached or refused the push; nothing is lost locally."""



# -- DSN handling -------------------------------------------------------------

_URL_PASSWORD = re.compile(r"(postgres(?:ql)?://[^:/@\s]*:)([^@\s]*)(@)", re.IGNORECASE)
_KV_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)", re.IGNORECASE)
_KV_PAIR = re.compile(r"(\w+)\s*=\s*('(?:[^'\\]|\\.)*'|\S*)")


def mask_dsn(text: str) -> str:
    """`text` with every password in a libpq URL or key=value DSN replaced by ***."""
    return _KV_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***\3", text))


def _dsn_fields(dsn: str) -> dict[str, str]:
    if re.match(r"^postgres(ql)?://", dsn, re.IGNORECASE):
        parts = urlsplit(dsn)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        netloc = parts.netloc.rpartition("@")
        user = unquote(netloc[0].partition(":")[0]) if netloc[1] else ""
        fields = {"user": user, "host": unquote(netloc[2]), "dbname": unquote(parts.path.lstrip("/"))}
        return {**fields, **{k: v for k, v in query.items() if k in fields and v}}
    return {k: v.strip("'") for k, v in _KV_PAIR.findall(dsn)}


def target_name(dsn: str) -> str:
    """The password-free name of a DSN's database: user@host[:port]/dbname (the cursor's key)."""
    fields = _dsn_fields(dsn)
    host = fields.get("host", "")
    if fields.get("port") and ":" not in host:
        host = f"{host}:{fields['port']}"
    return f"{fields.get('user', '')}@{host}/{fields.get('dbname', '')}"


def resolve_dsn(dsn: str | None, config: Config) -> str:
    """--dsn, else the config's: MAXMEM_PG_DSN, else `dsn` under [sync.postgres] (load_config
    reads both)."""
    chosen = dsn or config.sync_postgres.dsn
    if not chosen:
        where = config.config_path or "the config file"
        raise ConfigError(
            f"no PostgreSQL DSN: pass --dsn, set MAXMEM_PG_DSN, or set dsn under [sync.postgres] in {where}"
        )
    return chosen


def index_memory_from(config: Config) -> str:
    """[sync.postgres] index_memory: maintenance_work_mem for building the HNSW index."""
    return config.sync_postgres.index_memory


def agent_label(config: Config, agent: str | None = None) -> str:
    """This brain's agent name in the shared database: --agent, [sync.postgres] agent,
    the configured agent, else the host name."""
    return agent or config.sync_postgres.agent or config.agent or socket.gethostname()


def batch_size_from(config: Config, batch_size: int | None = None) -> int:
    """--batch-size, else [sync.postgres] batch_size."""
    value = batch_size or config.sync_postgres.batch_size
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100_000:
        raise ConfigError(f"batch_size must be a whole number from 1 to 100000, not {value!r}")
    return value



# -- connections --------------------------------------------------------------

def psycopg_module() -> Any:
    try:
        import psycopg
    except ImportError:
        raise MissingDependency("psycopg (PostgreSQL sync)", "postgres") from None
    return psycopg


def register_pgvector(conn: Any) -> None:
    """Let psycopg send and read numpy vectors as pgvector's `vector`."""
    try:
        from pgvector.psycopg import register_vector
    except ImportError:
        raise MissingDependency("pgvector (PostgreSQL sync)", "postgres") from None
    register_vector(conn)


def describe_error(exc: BaseException, dsn: str) -> str:
    """The first line of a driver error, with the DSN's password masked."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
    password = _dsn_fields(dsn).get("password")
    if password:
        text = text.replace(password, "***")
    return mask_dsn(text)


def connect(dsn: str) -> psycopg.Connection[Any]:
    """An autocommit connection (transactions are explicit) or a one-line SyncError."""
    psycopg = psycopg_module()
    try:
        given = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.Error as exc:
        raise SyncError(f"the PostgreSQL DSN is not valid: {describe_error(exc, dsn)}") from None
    extra = {k: v for k, v in CONNECT_DEFAULTS.items() if k not in given}
    try:
        return psycopg.connect(dsn, autocommit=True, **extra)
    except psycopg.Error as exc:
        raise SyncError(f"cannot connect to PostgreSQL {target_name(dsn)}: {describe_error(exc, dsn)}") from None
