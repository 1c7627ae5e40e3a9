"""Health checks for `maxmem doctor`: each check says ok or what needs attention.

Checks: integrity (the full PRAGMA integrity_check, every page and every index
against its table, once a day within a time budget, recorded as the `integrity` run;
the quick check in between), schema version, embedder identity vs configuration, pending
embeddings, file permissions, disk and WAL size, the last run of each job
(capture, retention, sync per target, backup) and its age, the newest backup on
disk, and the checks passed in `extra` (the core budget). The report also carries sizes and growth per category.
Given the environment (`env`), it also checks the loop around brain.db: the
wiring `maxmem setup` wrote still points at a maxmem that exists and is active
(Codex hooks trusted, the hooks feature on; Claude Code hooks not disabled), the scheduled
jobs' logs (an `exit 127` when maxmem could not even start), and whether capture
has ever run on a machine that has transcripts.

Each check is ok, WARN (worth a look, not an alert) or FAIL. `maxmem doctor` exits 1
when any check fails, so an hourly cron line can alert: a job that failed once is a
WARN, [doctor] fail_after (3) failures in a row a FAIL.
"""

from __future__ import annotations

import re
import shutil
import stat
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import apsw

from .backup import backup_dir, list_backups, managed_backups
from .brain import Brain
from .capture import agents_folders, discover
from .capture.openclaw_store import store_problems
from .clock import Clock, iso
from .config import Config, state_dir
from .errors import ConfigError, InvalidInput, MaxmemError
from .files import open_regular
from .jobs import due
from .jobs import table as job_table
from .jobs.runs import age_hours, format_age, last_runs, one_line, record_run
from .keys import is_encrypted
from .retention.archives import check_archives
from .store.conflicts import conflicts, quarantined, synced
from .store.db import DAMAGE, Database
from .tune import recall_check
from .wiring import Install, agent_checks, commands, problems
from .wiring.schedulers import SCHEDULERS, working_scheduler

Check = dict[str, Any]

# A job that has run before and has not succeeded for longer than this needs
# attention (hours). Capture runs every 2 h, retention and backups daily.
# Both from the one job table (maxmem.jobs.table).
DEFAULT_MAX_AGE_HOURS = job_table.max_age_hours()
# The command that runs each job (the hint for a required job that never ran); a job
# that "never ran" is one of DEFAULT_MAX_AGE_HOURS, any other has a run on record.
JOB_COMMANDS = job_table.commands()
INTEGRITY_JOB = "integrity"  # the full integrity check's runs, as a job's (jobs.runs)
FULL_CHECK_HOURS = 24  # how often doctor runs the full integrity check (the quick one in between)
FULL_CHECK_SECONDS = 120.0  # its time budget: a larger brain.db gets the quick check, and a warning
# The WAL should be folded back into brain.db by checkpoints; a WAL that keeps growing
# means a reader holds a snapshot open for hours.
WAL_WARN_BYTES = 256 * 1024 * 1024
MIN_FREE_BYTES = 200 * 1024 * 1024
# The cron scripts' logs: "<time> <job>: exit <code>" after each run.
LOGS = {"capture.log": "capture", "retain.log": "retention", "backup.log": "backup", "sync.log": "sync",
        "embed.log": "embed", "triggers.log": "triggers", "jobs.log": "jobs"}
EXIT_LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) ([a-z]+): exit (\d+)$")

CATEGORY_SIZES_SQL = """
SELECT category, count(*) AS memories,
       coalesce(sum(length(CAST(content AS BLOB)) + length(CAST(coalesce(title, '') AS BLOB))), 0) AS text_bytes,
       sum(embedded_at IS NULL) AS unembedded
FROM memories GROUP BY category
"""
# Growth comes from the change log (the time a memory was written, not the time it
# says it happened): new uids and deletions since a point in time, per category.
ADDED_SINCE_SQL = """
SELECT json_extract(c.data, '$.category') AS category, count(*) AS n
FROM changes c
WHERE c.at >= ? AND c.op = 'upsert'
  AND c.seq = (SELECT min(c2.seq) FROM changes c2 WHERE c2.uid = c.uid)
GROUP BY 1
"""
DELETED_SINCE_SQL = """
SELECT json_extract(data, '$.category') AS category, count(*) AS n
FROM changes WHERE at >= ? AND op = 'delete' GROUP BY 1
"""


def _check(name: str, ok: bool, detail: str, warn: bool = False) -> Check:
    """ok: passes (a WARN passes too, with warn=True); not ok: FAIL."""
    level = "fail" if not ok else "warn" if warn else "ok"
    return {"name": name, "ok": ok, "level": level, "detail": detail}


# Capture stores first and the next tick embeds: memories wait for a vector for
# minutes as a matter of course. Hours mean the embed step is not keeping up.
PENDING_SQL = "SELECT count(*), min(updated_at) FROM memories WHERE embedded_at IS NULL"
PENDING_WARN_HOURS = 1.0
PENDING_FAIL_HOURS = 24.0


def check_pending(brain: Brain, now: datetime) -> Check:
    """Memories waiting for a vector: ok while the wait is short, WARN after
    PENDING_WARN_HOURS, FAIL after PENDING_FAIL_HOURS (searches rank them by keyword)."""
    row = brain.db.execute(PENDING_SQL).fetchone()
    count, since = (int(row[0]), row[1]) if row else (0, None)
    if not count:
        return _check("pending embeddings", True, "0 memories waiting for a vector")
    if brain.embedder is None:
        return _check("pending embeddings", True, f"{count} memories without a vector (no embedder "
                      "configured: they are found by keyword only)")
    hours = age_hours(since, now) or 0.0
    detail = f"{count} memories waiting for a vector, the oldest stored {format_age(hours)}"
    if hours >= PENDING_FAIL_HOURS:
        return _check("pending embeddings", False, f"{detail}: embedding is failing or not running "
                      "(see the embed job above); run  maxmem embed")
    if hours >= PENDING_WARN_HOURS:
        return _check("pending embeddings", True, f"{detail}: run  maxmem embed , or check the embed job",
                      warn=True)
    return _check("pending embeddings", True, f"{detail} (the next tick embeds them, or  maxmem embed )")


def check_permissions(path: Path) -> Check:
    """brain.db and its WAL/SHM files 0600, its folder 0700: memories are private."""
    loose = []
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        if p.exists() and stat.S_IMODE(p.stat().st_mode) & 0o077:
            loose.append(f"{p.name} {oct(stat.S_IMODE(p.stat().st_mode))}")
    if path.parent.exists() and stat.S_IMODE(path.parent.stat().st_mode) & 0o077:
        loose.append(f"{path.parent} {oct(stat.S_IMODE(path.parent.stat().st_mode))}")
    if loose:
        return _check("permissions", False, "readable by others: " + ", ".join(loose)
                      + f" (chmod 600 {path}*; chmod 700 {path.parent})")
    return _check("permissions", True, "files 0600, folder 0700")


def check_backup_permissions(directory: Path) -> Check | None:
    """The backups folder 0700 and every backup in it 0600."""
    if not directory.is_dir():
        return None
    loose = [f"{directory} {oct(stat.S_IMODE(directory.stat().st_mode))}"] if (
        stat.S_IMODE(directory.stat().st_mode) & 0o077) else []
    for p in directory.iterdir():
        if p.is_file() and stat.S_IMODE(p.stat().st_mode) & 0o077:
            loose.append(f"{p.name} {oct(stat.S_IMODE(p.stat().st_mode))}")
    if loose:
        return _check("backup permissions", False, "readable by others: " + ", ".join(loose[:5])
                      + f" (chmod 700 {directory}; chmod 600 {directory}/*)")
    return _check("backup permissions", True, "files 0600, folder 0700")


def sizes(brain: Brain, now: datetime) -> dict[str, Any]:
    """Size of brain.db and, per category, memories, text bytes and growth (1 day, 7 days)."""
    path = brain.path
    wal = Path(f"{path}-wal")
    per: dict[str, dict[str, Any]] = {}
    for row in brain.db.rows(CATEGORY_SIZES_SQL):
        per[row["category"]] = {
            "memories": row["memories"], "text_bytes": row["text_bytes"],
            "unembedded": row["unembedded"], "added_1d": 0, "added_7d": 0, "deleted_7d": 0,
        }
    blank = {"memories": 0, "text_bytes": 0, "unembedded": 0, "added_1d": 0, "added_7d": 0, "deleted_7d": 0}
    # A forgotten memory's snapshots are erased (its delete entry keeps the category):
    # its first write, without a category now, is not a category of its own.
    for days, key in ((1, "added_1d"), (7, "added_7d")):
        for row in brain.db.rows(ADDED_SINCE_SQL, (iso(now - timedelta(days=days)),)):
            if row["category"] is not None:
                per.setdefault(row["category"], dict(blank))[key] = row["n"]
    for row in brain.db.rows(DELETED_SINCE_SQL, (iso(now - timedelta(days=7)),)):
        if row["category"] is not None:
            per.setdefault(row["category"], dict(blank))["deleted_7d"] = row["n"]
    page_size = int(brain.db.scalar("PRAGMA page_size"))
    return {
        "db_bytes": path.stat().st_size if path.exists() else 0,
        "wal_bytes": wal.stat().st_size if wal.exists() else 0,
        "free_pages_bytes": int(brain.db.scalar("PRAGMA freelist_count")) * page_size,
        "categories": dict(sorted(per.items())),
    }


def check_space(path: Path, size: Mapping[str, Any]) -> Check:
    free = shutil.disk_usage(path.parent).free
    detail = (f"brain.db {size['db_bytes'] / 1e6:.1f} MB, WAL {size['wal_bytes'] / 1e6:.1f} MB, "
              f"{free / 1e9:.1f} GB free on its disk")
    if free < max(MIN_FREE_BYTES, size["db_bytes"]):
        return _check("disk", False, detail + ": free space before writes start failing")
    if size["wal_bytes"] > max(WAL_WARN_BYTES, size["db_bytes"]):
        return _check("disk", False, detail + ": the WAL is not being checkpointed; "
                      "a process may hold an old read open (fuser brain.db)")
    return _check("disk", True, detail)


def max_ages(config: Config) -> dict[str, float]:
    """job -> hours: each job's own limit, unless [doctor] max_age_hours names it."""
    return {**DEFAULT_MAX_AGE_HOURS, **config.doctor.max_age_hours}


def job_checks(runs: Mapping[str, Mapping[str, Any]], config: Config, now: datetime,
               newest_backup: Path | None, schedules: Mapping[str, Any] | None = None) -> list[Check]:
    """One check per job: its last run worked, and it last worked recently enough.

    A job that never ran is not a failure (sync is optional, and a new brain.db has
    run nothing yet) but is reported; list jobs under `[doctor] required` to make
    "never" a failure. A last run that failed is a WARN until [doctor] fail_after (3)
    runs in a row have failed. `schedules` (job -> maxmem.jobs.due schedule) adds
    "overdue": due for longer than [doctor] overdue_grace_hours (2).
    """
    limits = max_ages(config)
    required = set(config.doctor.required)
    fail_after = config.doctor.fail_after
    grace = timedelta(hours=config.doctor.overdue_grace_hours)
    schedules = schedules or {}
    checks = []
    jobs = list(DEFAULT_MAX_AGE_HOURS) + sorted(j for j in runs if j not in DEFAULT_MAX_AGE_HOURS)
    for job in jobs:
        run = runs.get(job)
        base = job.split(":")[0]
        limit = limits.get(job, limits.get(base))
        name = f"last {job}"
        last_ok = run.get("last_ok") if run else None
        if job == "backup" and newest_backup is not None:
            on_disk = iso(datetime.fromtimestamp(newest_backup.stat().st_mtime, now.tzinfo))
            last_ok = max(filter(None, [last_ok, on_disk]))
        ok_age = age_hours(last_ok, now)
        if run is None and last_ok is None:
            if any(other.startswith(f"{job}:") for other in runs):
                continue  # it runs per target: those have their own lines
            checks.append(_check(name, job not in required, "never run"
                                 + (f": schedule  {JOB_COMMANDS[job]}" if job in required else "")))
            continue
        failure = (run or {}).get("last_fail") or {}
        streak = int(failure.get("streak") or 0)
        if run is not None and not run.get("ok"):
            times = f"{streak} times in a row" if streak > 1 else "once"
            detail = (f"failed {times}, last {format_age(age_hours(run.get('at'), now))}: "
                      f"{run.get('detail') or 'no detail'}"
                      + (f" (last worked {format_age(ok_age)})" if last_ok else " (never worked)"))
            if streak < fail_after:
                checks.append(_check(name, True, detail + f"; FAIL after {fail_after} in a row", warn=True))
            else:
                checks.append(_check(name, False, detail))
            continue
        detail = f"ok {format_age(ok_age)}" + (f": {run['detail']}" if run and run.get("detail") else "")
        if failure.get("at"):
            detail += f"; last failed {format_age(age_hours(failure['at'], now))}: {failure.get('detail') or '?'}"
        schedule = schedules.get(job)
        if limit is not None and ok_age is not None and ok_age > limit:
            checks.append(_check(name, False, f"{detail}; older than {limit:g} h: is its cron job running?"))
        elif schedule is not None and last_ok and due.overdue(schedule, last_ok, now, grace):
            since = due.check(schedule, last_ok, now).at
            checks.append(_check(name, False, f"{detail}; overdue since {format_age(age_hours(iso(since), now))} "
                                 f"({schedule.describe()}): is the scheduler ticking? "
                                 "(maxmem setup systemd|cron|launchd)"))
        else:
            checks.append(_check(name, True, detail))
    return checks


def log_checks(log_dir: Path, runs: Mapping[str, Mapping[str, Any]], now: datetime) -> list[Check]:
    """Failures the scheduled jobs' logs show and brain.db does not: maxmem could not start
    (exit 127: not found; 126: not executable) or died before recording its run."""
    checks = []
    for name, job in LOGS.items():
        path = log_dir / name
        last = _last_exit(path)
        if last is None:
            continue
        at, code, reason = last
        if code == 0:
            continue
        recorded = [r.get("at") for j, r in runs.items() if j == job or j.startswith(job + ":")]
        if job != "jobs" and any(r and r >= at for r in recorded):
            continue  # the job itself recorded this run, with its own reason
        if job == "jobs" and code == 1:
            continue  # a job failed: its own line above says which and why
        hint = {127: " (the command was not found: run  maxmem setup cron  again)",
                126: " (not executable)"}.get(code, "")
        checks.append(_check(f"log {name}", False, f"exit {code} {format_age(age_hours(at, now))}: "
                             f"{reason or 'no output'}{hint} ({path})"))
    return checks


def _last_exit(path: Path, tail_bytes: int = 64 * 1024) -> tuple[str, int, str] | None:
    """(time, exit code, the line before it) of the last `<time> <job>: exit N` line."""
    try:
        with open_regular(path) as handle:  # a FIFO of that name: never waited on
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - tail_bytes))
            lines = handle.read().decode("utf-8", "replace").splitlines()
    except (OSError, InvalidInput):
        return None
    for index in range(len(lines) - 1, -1, -1):
        found = EXIT_LINE.match(lines[index].strip())
        if found:
            before = [line.strip() for line in lines[max(0, index - 5):index]
                      if line.strip() and not re.search(r": start \(pid \d+\)$", line)]
            at = found.group(1)[:-1] + ".000Z"
            return at, int(found.group(3)), one_line(before[-1]) if before else ""
    return None


def loop_checks(config: Config, env: Mapping[str, str], runs: Mapping[str, Mapping[str, Any]],
                now: datetime) -> list[Check]:
    """The wiring setup wrote, the jobs' logs, and capture never having run beside transcripts."""
    checks: list[Check] = []
    ctx = Install.from_config(config, env, ())
    for level, message in [*problems(ctx), *agent_checks(ctx)]:
        checks.append(_check("wiring", level != "fail", message, warn=level == "warn"))
    checks.extend(log_checks(state_dir(env), runs, now))
    for level, message in store_problems(agents_folders(config.capture, env).openclaw_dirs or ()):
        checks.append(_check("capture", level != "fail", message, warn=level == "warn"))
    if not any(j == "capture" or j.startswith("hook:") for j in runs):
        try:
            found = discover(agents_folders(config.capture, env))
        except MaxmemError:
            found = []
        if found:
            folders = sorted({str(s.path.parent) for s in found})
            checks.append(_check("capture", True, f"never run, and {len(found)} transcripts wait in "
                                 f"{', '.join(folders[:3])}{' …' if len(folders) > 3 else ''}: schedule it "
                                 "(maxmem setup systemd|cron|launchd) or wire an agent (maxmem setup claude-code)",
                                 warn=True))
    return checks


# Every scheduler runs the tick every TICK_MINUTES, and each tick records its embed run:
# a last tick older than this means none is running (one missed tick and a slow one allowed).
TICK_LATE_MINUTES = 2 * job_table.TICK_MINUTES + 15
TICK_JOB = "embed"  # the job every tick runs, and records


def tick_check(brain: Brain, config: Config, env: Mapping[str, str], runs: Mapping[str, Mapping[str, Any]],
               now: datetime) -> Check:
    """Whether the scheduled tick runs: the last one no older than TICK_LATE_MINUTES. A
    tick that never ran is a FAIL once a scheduler is wired or memories wait for a vector
    longer than PENDING_WARN_HOURS, else a WARN (a new brain.db); each says how to start
    one on this machine."""
    ctx = Install.from_config(config, env, ())
    last = (runs.get(TICK_JOB) or {}).get("at")
    minutes = None if last is None else (age_hours(last, now) or 0.0) * 60
    if minutes is not None and minutes <= TICK_LATE_MINUTES:
        return _check("scheduler", True, f"last tick {format_age(minutes / 60)} "
                      f"(every {job_table.TICK_MINUTES} min)")
    start = working_scheduler(ctx)
    if minutes is not None:
        return _check("scheduler", False, f"no tick for {format_age(minutes / 60).removesuffix(' ago')} "
                      f"(one every {job_table.TICK_MINUTES} min): the scheduler is not running; start one:  {start}")
    wired = sorted(set(commands(ctx)) & set(SCHEDULERS))
    row = brain.db.execute(PENDING_SQL).fetchone()
    waiting = age_hours(row[1], now) if row and row[0] and brain.embedder is not None else None
    detail = "no tick has run yet" + (f" although  maxmem setup {wired[0]}  was run" if wired else "")
    if wired or (waiting is not None and waiting >= PENDING_WARN_HOURS):
        return _check("scheduler", False, f"{detail}: capture, vectors and backups wait; start one:  {start}")
    return _check("scheduler", True, f"{detail}: start one:  {start}", warn=True)


def conflict_check(db: Database) -> Check:
    """Folder sync's concurrent edits: a warning naming the latest few, once there are any."""
    count, latest = conflicts(db, 3)
    if not count:
        return _check("sync conflicts", True, "no concurrent edits of one memory on two machines")
    shown = "; ".join(f"{c['uid']} {c['field']}: kept {c['kept']['machine']}'s ({c['kept']['written'][:19]}), "
                      f"dropped {c['lost']['machine']}'s ({c['lost']['written'][:19]})" for c in latest)
    return _check("sync conflicts", True, f"{count} concurrent edit(s) resolved, the later write kept; latest: "
                  f"{shown} (maxmem history UID shows both versions)", warn=True)


def quarantine_check(db: Database) -> Check:
    """Folder sync's quarantine: files of the folder, or records in them, refused for good."""
    held = quarantined(db)
    if not held:
        return _check("sync quarantine", True, "every file of the sync folder applied")
    shown = "; ".join(f"{rel}: {why['reason']}" for rel, why in sorted(held.items())[:3])
    return _check("sync quarantine", True, f"{len(held)} file(s) of the sync folder not applied in whole or in "
                  f"part: {shown} (maxmem sync status lists them; the machine that wrote one can repack: "
                  "maxmem sync folder --repack)", warn=True)


def archive_checks(brain: Brain) -> list[Check]:
    """Retention's archives (retention.check_archives): an interrupted run, a leftover
    temporary, an archive that is not whole."""
    try:
        found = check_archives(brain)
    except ConfigError as exc:  # a bad [retention] section: the retention job reports it too
        return [_check("retention archives", False, str(exc))]
    return [{**c, "level": "ok" if c["ok"] else "fail"} for c in found]


def check_encryption(brain: Brain, backups: list[Path]) -> Check:
    """Whether brain.db is encrypted, where its key came from, and the backups that
    still hold its memories in clear (made before it was encrypted)."""
    key = brain.db.key
    if key is None:
        return _check("encryption", True, "off (maxmem encrypt turns it on: docs/security.md)")
    plain = [p for p in backups if not is_encrypted(p)]
    if plain:
        return _check("encryption", True, f"on (the key from {key.source}); {len(plain)} backup(s) made before "
                      f"hold memories in clear, the newest {plain[-1]}: delete them", warn=True)
    return _check("encryption", True, f"on (the key from {key.source})")


def run_checks(config: Config, embedder: str | None = None,
               extra: list[Callable[[Any], Check]] | None = None,
               clock: Clock | None = None, env: Mapping[str, str] | None = None,
               schedules: Mapping[str, due.Schedule] | None = None, full: bool = False) -> dict[str, Any]:
    """Every check, never raising: a failure to open or to read is itself the result.

    full: the full integrity check now (it also runs when the last one is older than
    FULL_CHECK_HOURS); else the quick one.

    env: the environment the jobs run with (os.environ from the CLI); given, the
    loop checks run too (wiring, job logs, capture never run). schedules (job name ->
    its maxmem.jobs.due schedule, as the daemon runs them: daemon.job_schedules) adds the
    overdue checks.
    """
    path = Path(config.db_path).expanduser()
    checks: list[Check] = []
    report: dict[str, Any] = {}
    if not path.exists():
        checks.append(_check("database", False, f"{path} does not exist: run  maxmem init"))
        return {"ok": False, "checks": checks}
    try:
        brain = Brain.open(path, embedder=embedder, config=config, clock=clock, check_embedder=False)
    except MaxmemError as exc:
        checks.append(_check("database", False, str(exc)))
    else:
        try:
            _inspect(brain, config, checks, report, extra or [], env, schedules, full)
        except (MaxmemError, *DAMAGE) as exc:  # damage the checks ran into past the quick check
            checks.append(_check("database", False, str(exc)))
        finally:
            brain.close()
    if not all(c["ok"] for c in checks) and "backups" not in report:
        backups = list_backups(backup_dir(config, path))
        if backups:
            checks.append(_check("backups", True, f"newest: {backups[-1]} "
                                 f"(restore with  maxmem restore {backups[-1]})"))
    for c in checks:  # the `extra` checks say only ok or not
        c.setdefault("level", "ok" if c["ok"] else "fail")
    return {"ok": all(c["ok"] for c in checks), "warnings": sum(c["level"] == "warn" for c in checks),
            "checks": checks, **report}


def _pragma_check(db: Database, pragma: str, deadline: float | None = None) -> list[str] | None:
    """The problems `pragma` finds (["ok"] when none); None when `deadline` (a
    time.monotonic()) passed before it finished."""
    if deadline is not None:
        db.conn.set_progress_handler(lambda: time.monotonic() > deadline, 1000)
    try:
        found = "\n".join(str(r[0]) for r in db.execute(pragma))
    except apsw.InterruptError:
        return None
    except DAMAGE as exc:  # damage bad enough that the check itself cannot read on
        found = str(exc)
    finally:
        if deadline is not None:
            db.conn.set_progress_handler(None)
    return [line.strip() for line in found.splitlines() if line.strip() and not line.startswith("***")]


def full_integrity(brain: Brain, budget: float | None = None) -> Check:
    """PRAGMA integrity_check (every page, and every index against its table) within
    `budget` (FULL_CHECK_SECONDS) seconds, its result recorded as the `integrity` run."""
    budget = FULL_CHECK_SECONDS if budget is None else budget
    started = time.monotonic()
    problems = _pragma_check(brain.db, "PRAGMA integrity_check(5)", started + budget)
    seconds = time.monotonic() - started
    if problems is None:
        quick = _pragma_check(brain.db, "PRAGMA quick_check(3)")
        if quick != ["ok"]:
            return _check("integrity", False, f"{'; '.join(quick or [])}: restore a backup (maxmem restore FILE)")
        detail = f"the full check did not finish within {budget:g} s (a large brain.db): the quick check ok"
        ok = False
    else:
        ok = problems == ["ok"]
        detail = (f"ok (full check, {seconds:.1f} s)" if ok else
                  f"the full check found: {'; '.join(problems)}: restore a backup (maxmem restore FILE)")
    if not brain.db.read_only:
        try:
            record_run(brain.db, INTEGRITY_JOB, ok, detail, brain.clock)
        except (MaxmemError, *DAMAGE):
            pass  # a brain.db too damaged to take the record: the check says so itself
    return _check("integrity", ok or problems is None, detail, warn=problems is None)


def integrity_check(brain: Brain, runs: Mapping[str, Mapping[str, Any]], now: datetime, full: bool) -> Check:
    """The full check when asked, or when the last one is older than FULL_CHECK_HOURS
    (the hourly doctor job runs it daily); else the quick check, with the last full
    check's result and age."""
    last = runs.get(INTEGRITY_JOB)
    age = age_hours(last.get("at") if last else None, now)
    if full or age is None or age >= FULL_CHECK_HOURS:
        return full_integrity(brain)
    problems = _pragma_check(brain.db, "PRAGMA quick_check(3)")
    if problems != ["ok"]:
        return _check("integrity", False, f"{'; '.join(problems or [])}: restore a backup (maxmem restore FILE)")
    assert last is not None
    if not last.get("ok"):
        return _check("integrity", False, f"quick check ok; the full check {format_age(age)}: {last.get('detail')} "
                      "(maxmem doctor --full checks again)")
    return _check("integrity", True, f"ok (quick check; the full check {format_age(age)}: {last.get('detail')})")


def _inspect(brain: Brain, config: Config, checks: list[Check], report: dict[str, Any],
             extra: list[Callable[[Any], Check]], env: Mapping[str, str] | None = None,
             schedules: Mapping[str, due.Schedule] | None = None, full: bool = False) -> None:
    path = brain.path
    now = brain.clock.now()
    checks.append(integrity_check(brain, last_runs(brain.db), now, full))
    try:
        # First: it takes a remote model's dimension from brain.db instead of asking the API.
        brain.vectors.check_identity()
        embedder_check = None
    except MaxmemError as exc:
        embedder_check = _check("embedder", False, str(exc))
        brain.vectors.embedder = None  # the stats below must not call an API that may be down
    stats = brain.stats()
    checks.append(_check("schema", stats["schema_version"] == stats["schema_latest"],
                         f"version {stats['schema_version']} of {stats['schema_latest']}"))
    checks.append(embedder_check or _check("embedder", True, f"in use: {stats['embedder']}; "
                                           f"vectors from: {stats['vectors_from'] or 'none yet'}"))
    checks.append(check_pending(brain, now))
    checks.append(check_permissions(path))
    size = sizes(brain, now)
    report["sizes"] = size
    checks.append(check_space(path, size))
    directory = backup_dir(config, path)
    backups = list_backups(directory)
    runs = last_runs(brain.db)
    report["runs"] = runs
    report["backups"] = {"dir": str(directory), "count": len(backups),
                         "newest": str(backups[-1]) if backups else None}
    checks.extend(job_checks(runs, config, now, backups[-1] if backups else None, schedules))
    checks.extend(archive_checks(brain))
    if synced(brain.db):
        checks.append(conflict_check(brain.db))
        checks.append(quarantine_check(brain.db))
    checks.append(check_encryption(brain, managed_backups(directory)))
    if brain.db.read_only:
        checks.append(_check("access", True, f"read-only ({brain.db.read_only}): reads work, writes are refused",
                             warn=True))
    if env is not None:
        checks.extend(loop_checks(config, env, runs, now))
        checks.append(tick_check(brain, config, env, runs, now))
    backup_perms = check_backup_permissions(directory)
    if backup_perms:
        checks.append(backup_perms)
    checks.append(recall_check(brain))
    for check in extra:
        checks.append(check(brain))


def size_lines(size: Mapping[str, Any]) -> list[str]:
    """The sizes part of the report as text lines."""
    lines = [f"size: brain.db {size['db_bytes'] / 1e6:.1f} MB, WAL {size['wal_bytes'] / 1e6:.1f} MB, "
             f"free pages {size['free_pages_bytes'] / 1e6:.1f} MB"]
    for category, c in size["categories"].items():
        lines.append(f"  {category:<13} {c['memories']:>7} memories {c['text_bytes'] / 1e6:>8.2f} MB text  "
                     f"+{c['added_1d']} today, +{c['added_7d']} / -{c['deleted_7d']} in 7 days")
    return lines
