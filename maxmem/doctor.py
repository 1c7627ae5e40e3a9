"""Health checks for `maxmem doctor`: each check says ok or what needs attention."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any, Callable

from .config import Config
from .errors import MaxmemError

Check = dict[str, Any]


def _check(name: str, ok: bool, detail: str) -> Check:
    return {"name": name, "ok": ok, "detail": detail}


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


def run_checks(config: Config, embedder: str | None = None,
               extra: list[Callable[[Any], Check]] | None = None) -> dict[str, Any]:
    """Every check, never raising: a failure to open is itself the result."""
    from .brain import Brain

    path = Path(config.db_path).expanduser()
    checks: list[Check] = []
    if not path.exists():
        checks.append(_check("database", False, f"{path} does not exist: run  maxmem init"))
        return {"ok": False, "checks": checks}
    try:
        brain = Brain.open(path, embedder=embedder, config=config, check_embedder=False)
    except MaxmemError as exc:
        checks.append(_check("database", False, str(exc)))
        return {"ok": False, "checks": checks}
    try:
        result = brain.db.scalar("PRAGMA quick_check")
        checks.append(_check("integrity", result == "ok", "ok" if result == "ok" else
                             f"{result}: restore a backup (maxmem restore FILE)"))
        stats = brain.stats()
        checks.append(_check("schema", stats["schema_version"] == stats["schema_latest"],
                             f"version {stats['schema_version']} of {stats['schema_latest']}"))
        try:
            brain._check_embedder_identity()
            checks.append(_check("embedder", True, f"in use: {stats['embedder']}; "
                                 f"vectors from: {stats['vectors_from'] or 'none yet'}"))
        except MaxmemError as exc:
            checks.append(_check("embedder", False, str(exc)))
        pending = stats["unembedded"]
        checks.append(_check(
            "pending embeddings", pending == 0 or brain.embedder is None,
            f"{pending} memories without a vector" + (": run  maxmem embed --pending" if pending else ""),
        ))
        checks.append(check_permissions(path))
        for check in extra or ():
            checks.append(check(brain))
    finally:
        brain.close()
    return {"ok": all(c["ok"] for c in checks), "checks": checks}
