"""The `maxmem` command: the group, its options and logging, and the entry point.

Each command family lives in its own module (FAMILIES), loaded when one of its commands
runs or help lists them, so that `maxmem --version` imports nothing heavy; a command
parses, calls one Brain method (or job), and prints. Errors reach people here and only
here: a MaxmemError becomes one line on stderr and exit code 1 (runtime) or 2 (usage).
"""

from __future__ import annotations

import importlib
import logging
import sys
from pathlib import Path
from typing import Any

import click

from .. import __version__
from ..config import EMBEDDERS, Config, load_config
from ..errors import MaxmemError
from ..files import open_append, same_file
from ..inert import inert
from ..redact import redact

log = logging.getLogger("maxmem")

# Each module of this package and the commands it defines (its COMMANDS).
FAMILIES = {
    "memories": ("remember", "search", "get", "list", "update", "forget", "pin"),
    "transfer": ("import", "export"),
    "upkeep": ("init", "stats", "doctor", "embed", "reindex"),
    "agent": ("observe", "resolve", "active", "timeline", "ensure-observation", "save-context", "brief",
              "query", "mcp"),
    "curating": ("commit", "triggers", "retain", "supersede", "core", "history"),
    "jobs": ("capture", "daemon", "jobs"),
    "backups": ("backup", "restore"),
    "sync": ("sync",),
    "wiring": ("setup",),
    "hooks": ("hook",),
    "browsing": ("browse",),
    "redacting": ("redact-test", "scrub"),
    "encrypting": ("encrypt", "decrypt"),
    "tuning": ("tune",),
}

# Older spellings of commands, still run as the command they name, never listed (the
# CHANGELOG names them once): scripts and wiring of an older maxmem call them.
OLDER_NAMES = {"add": "remember", "context": "brief"}


class Commands(click.Group):
    """The group of maxmem's commands, each loaded from its family's module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for names in FAMILIES.values() for name in names)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        cmd_name = OLDER_NAMES.get(cmd_name, cmd_name)
        for family, names in FAMILIES.items():
            if cmd_name in names:
                module = importlib.import_module(f"{__name__}.{family}")
                return next(c for c in module.COMMANDS if c.name == cmd_name)
        return None


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="maxmem")
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path),
              help="brain.db to use (default: MAXMEM_DB, the config file, or "
                   "~/.openclaw/workspace/memory/brain.db).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Config file (default: MAXMEM_HOME/config.toml, else ~/.config/maxmem/config.toml "
                   "on Linux, ~/Library/Application Support/maxmem/config.toml on macOS).")
@click.option("--embedder", type=click.Choice(EMBEDDERS),
              help="Embedding provider: auto (default), openai, local, none (keyword-only).")
@click.option("-v", "--verbose", count=True, help="More log output on stderr (-vv for debug).")
@click.option("--log-file", type=click.Path(dir_okay=False, path_type=Path),
              help="Append log lines to this file (for cron).")
@click.pass_context
def cli(ctx: click.Context, db_path: Path | None, config_path: Path | None, embedder: str | None,
        verbose: int, log_file: Path | None) -> None:
    """maxmem: your agent's long-term memory in one SQLite file (brain.db).

    Remember with `maxmem remember`, recall with `maxmem search`. Memories live in four
    categories: core and project (kept forever), daily (90 days), conversation (30 days).
    """
    from .common import State  # here, not at the top: brain.db's modules are heavy to load

    try:
        _configure_logging(verbose, log_file)
        config = load_config(path=config_path, db_path=db_path, embedder=embedder)
        error = None
    except MaxmemError as exc:
        if ctx.invoked_subcommand != "hook":
            raise
        config, error = Config(), str(exc)  # the hook logs it and exits 0
    state = State(config=config, embedder=embedder, config_error=error)
    ctx.obj = state
    ctx.call_on_close(state.close)


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg,unused-ignore]
    """Logs to sys.stderr as it is when a record comes, not as it was at set-up: the
    handler outlives main(), and library calls later in the same process (tests, an
    embedding program) may run with another stderr, the first one closed."""

    @property  # type: ignore[override,unused-ignore]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


HANDLER_NAME = "maxmem-cli"  # the handlers this module added, to replace on the next call


class _InertFormatter(logging.Formatter):
    """A log line as text for a person: a message quoting stored text moves no cursor,
    and one holding a line break (a path's) stays one line (\x0a; a traceback below it,
    with -vv, keeps its lines)."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        return super().formatMessage(record).replace("\n", "\\x0a")

    def format(self, record: logging.LogRecord) -> str:
        return inert(super().format(record))


def _configure_logging(verbose: int, log_file: Path | None) -> None:
    # Opened first (0600 in a 0700 folder when new: it may name memories), so that a
    # refused path (a FIFO, a device: InvalidInput) leaves the handlers as they were.
    log_stream = open_append(log_file, "a log file (--log-file)") if log_file else None
    logger = logging.getLogger("maxmem")
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logger.setLevel(min(level, logging.INFO) if log_file else level)
    # Start afresh each time: an earlier call in this process (tests, an embedding
    # program) left its handlers and may have had another log file.
    for old in [h for h in logger.handlers if h.get_name() == HANDLER_NAME]:
        logger.removeHandler(old)
        if isinstance(old, logging.FileHandler):
            old.close()
    if log_file is None or not same_file(sys.stderr, log_file):  # else each line would be there twice
        handler = _StderrHandler()
        handler.setLevel(level)
        handler.setFormatter(_InertFormatter("maxmem: %(levelname)s: %(message)s"))
        handler.set_name(HANDLER_NAME)
        logger.addHandler(handler)
    logger.propagate = False
    if log_file:
        file_handler = logging.FileHandler(log_file, encoding="utf-8", delay=True)
        file_handler.stream = log_stream  # the file checked above, not the path opened again
        file_handler.setLevel(logging.INFO)
        file_handler.setFormatter(_InertFormatter("%(asctime)s %(levelname)s %(message)s"))  # read in a terminal too
        file_handler.set_name(HANDLER_NAME)
        logger.addHandler(file_handler)


_SHOW_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click 8.2 and later


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning expected errors into one line and an exit code."""
    try:
        cli.main(args=argv, prog_name="maxmem", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("maxmem: aborted", err=True)
        sys.exit(1)
    except _SHOW_HELP as exc:  # a group called with nothing: its help, as click prints it
        exc.show()
        sys.exit(exc.exit_code)
    except click.UsageError as exc:
        hint = f" (see {exc.ctx.command_path} --help)" if exc.ctx else ""
        _error(exc.format_message() + hint, exc.exit_code)
    except click.ClickException as exc:
        _error(exc.format_message(), exc.exit_code)
    except MaxmemError as exc:
        _error(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        click.echo("maxmem: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except OSError as exc:  # a file the user named: unwritable folder, disk full, …
        _error(f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else ""), 1)


ERROR_CHARS = 500


def _error(message: str, code: int) -> None:
    """The one error line, then exit. An error may quote what was given, so secrets are
    redacted (a key passed as --kind by mistake must not reach stderr or a cron log) and a
    huge value is cut."""
    line = redact(" ".join(message.split()))[0]
    line = line.encode("utf-8", "backslashreplace").decode("utf-8")  # an undecodable byte quoted, shown as \udcff
    if len(line) > ERROR_CHARS:
        line = line[:ERROR_CHARS] + "…"
    click.echo(f"maxmem: error: {inert(line)}", err=True)  # it may quote stored text
    sys.exit(code)
