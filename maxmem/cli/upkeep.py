"""Commands that set up and look after brain.db: init, stats, doctor, embed, reindex."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

import click
import tomli_w

from ..brain import EMBED_BATCH
from ..config import EMBEDDERS, default_config_path
from ..doctor import run_checks, size_lines
from ..encryption import create
from ..errors import InvalidInput
from ..files import write_private
from ..jobs.daemon import job_schedules
from ..review import budget_check, core_budget
from .common import Progress, State, emit, json_option, pass_state


@click.command()
@click.option("--embedder", "init_embedder", type=click.Choice(EMBEDDERS), default=None,
              help="Provider to record in the config file.")
@click.option("--agent", help="This agent's name (stored on its memories, used by sync).")
@click.option("--force", is_flag=True, help="Overwrite an existing config file.")
@click.option("--encrypt", "encrypted", is_flag=True,
              help="Create brain.db encrypted, with a new key saved to brain.key beside config.toml "
                   "(or the key MAXMEM_KEY, the key file or the keyring gives).")
@click.option("--keyring", "in_keyring", is_flag=True, help="With --encrypt: keep a new key in the OS keyring.")
@json_option
@pass_state
def init(state: State, init_embedder: str | None, agent: str | None, force: bool, encrypted: bool,
         in_keyring: bool, as_json: bool) -> None:
    """Write the config file and create brain.db (mode 0600, folder 0700); --encrypt
    makes it an encrypted one (docs/security.md)."""
    path = state.config.config_path or default_config_path(os.environ)
    if in_keyring and not encrypted:
        raise InvalidInput("--keyring goes with --encrypt")
    config = state.config.with_(embedder=init_embedder, agent=agent)
    if encrypted:
        config = create(config.db_path, config, in_keyring)
    wrote = False
    if not path.exists() or force:
        write_private(path, lambda handle: handle.write(tomli_w.dumps(config.to_toml_dict())))
        wrote = True
    state.config = config
    brain = state.brain()
    result = {"config": str(path), "config_written": wrote, "db": str(brain.path),
              "embedder": brain.stats()["embedder"], "encrypted": brain.db.key is not None,
              "key_source": brain.db.key.source if brain.db.key else None}
    emit(result, as_json, lambda r: [
        f"config: {r['config']}" + ("" if r["config_written"] else " (kept; --force to overwrite)"),
        f"brain.db: {r['db']}" + (f" (encrypted; the key is in {r['key_source']})" if r["encrypted"] else ""),
        f"embedder: {r['embedder']}",
    ])


@click.command()
@json_option
@pass_state
def stats(state: State, as_json: bool) -> None:
    """Counts per category, size, pending embeddings and the embedder in use."""
    brain = state.brain(create=False)
    data = {**brain.stats(), "core_budget": core_budget(brain)}

    def text(d: dict[str, Any]) -> Iterable[str]:
        yield f"brain.db: {d['path']} ({d['size_bytes'] / 1e6:.1f} MB)"
        yield f"memories: {d['memories']} (" + ", ".join(f"{k} {v}" for k, v in d["categories"].items()) + ")"
        yield f"embedder: {d['embedder']}"
        if d["vectors_from"] and d["vectors_from"] != d["embedder"]:
            yield f"vectors from: {d['vectors_from']}"
        yield f"pending embeddings: {d['unembedded']}"
        yield f"schema: {d['schema_version']}/{d['schema_latest']}"
        if d["core_budget"]["warning"]:
            yield f"warning: {d['core_budget']['warning']}"
    emit(data, as_json, text)


@click.command()
@click.option("--full", is_flag=True, help="Run the full integrity check now (every page, every index against "
              "its table); doctor runs it once a day on its own, the quick check in between.")
@json_option
@pass_state
def doctor(state: State, full: bool, as_json: bool) -> None:
    """Check brain.db: integrity, schema, embedder, pending work, permissions, disk,
    the last capture / retention / sync / backup and their age, the core budget.

    Exits 1 when something needs attention, so cron can alert on it.
    """
    report = run_checks(state.config, embedder=state.embedder, extra=[budget_check], env=os.environ,
                        schedules=job_schedules(state.config, os.environ), full=full)
    label = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}
    emit(report, as_json, lambda r: [
        *(f"{label[c.get('level', 'ok' if c['ok'] else 'fail')]} {c['name']}: {c['detail']}" for c in r["checks"]),
        *(size_lines(r["sizes"]) if "sizes" in r else []),
    ])
    if not report["ok"]:
        sys.exit(1)


@click.command()
@click.option("--max-seconds", type=click.FloatRange(min=0, min_open=True),
              help="Stop after about this many seconds (for cron); the next run goes on from there.")
@click.option("--batch-size", type=click.IntRange(1, 100_000), default=EMBED_BATCH, show_default=True,
              help="Memories embedded and committed together.")
@click.option("--pending", is_flag=True, hidden=True, help="Accepted for old scripts: embedding the pending "
              "memories is what `maxmem embed` does.")
@json_option
@pass_state
def embed(state: State, max_seconds: float | None, batch_size: int, pending: bool, as_json: bool) -> None:
    """Give vectors to the memories stored without one: what capture and the hooks
    stored (they never wait on the model), and what was stored while the embedding
    API was down. Oldest first, a batch at a time, each batch committed; a progress
    bar on a terminal. With --max-seconds it stops at that budget and the next run
    resumes where it stopped. Exits 1 if the embedder fails (what was done is kept).
    """
    brain = state.brain()
    with Progress("embedding", enabled=not as_json) as bar:
        run = brain.embed_pending(max_seconds=max_seconds, batch_size=batch_size, progress=bar)
    emit(run.to_dict(), as_json, lambda _: [run.summary()])


@click.command()
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@json_option
@pass_state
def reindex(state: State, yes: bool, as_json: bool) -> None:
    """Re-embed every memory with the configured embedder (after changing model)."""
    brain = state.brain(check_embedder=False)
    if brain.embedder is None:
        raise InvalidInput("no embedder to reindex with: pass --embedder local or openai")
    count = brain.stats()["memories"]
    if not yes and sys.stdin.isatty():
        click.confirm(f"re-embed {count} memories with {brain.stats()['embedder']}?", abort=True)
    with Progress("reindexing", enabled=not as_json) as bar:
        done = brain.reindex(progress=bar)
    emit({"reindexed": done, "embedder": brain.stats()["embedder"]}, as_json,
         lambda d: [f"reindexed {d['reindexed']} memories with {d['embedder']}"])


COMMANDS = [init, stats, doctor, embed, reindex]
