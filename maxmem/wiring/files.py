"""Changing other programs' files safely: plans, diffs, backups, and a byte-exact undo.

A target (claude_code, codex, …) never writes. It returns a `Plan`: the whole new
content of each file it would change, the manual steps left to the user, and notes.
`apply` then, for each changed file: copies the current file to a timestamped
backup, writes the new content atomically (a temporary file beside it, renamed over
it, the old mode kept), and records in the manifest (`<state>/setup/manifest.json`)
the SHA-256 of what it wrote and where the pre-maxmem original is kept.

`--uninstall` asks the target for the file with maxmem's parts taken out. When the
file is still exactly what setup wrote (its hash matches), the original is put back
byte for byte instead (or the file removed, if setup created it); when something
else changed it since, the structural removal keeps those changes.

The user crontab is not a file we may write: a `Change` with `crontab=True` is
read with `crontab -l` and installed with `crontab -`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, MaxmemError
from ..files import kind_at, read_regular

CRONTAB = Path("crontab")  # the path a crontab Change carries (a label, never opened)


class WiringError(MaxmemError):
    """A file setup must change cannot be read or written."""


@dataclass(frozen=True)
class Change:
    path: Path
    before: bytes | None  # None: the file does not exist
    after: bytes | None  # None: remove it
    mode: int | None = None  # for new files (scripts 0o755); an existing file keeps its mode
    crontab: bool = False

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass
class Plan:
    target: str
    changes: list[Change] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)  # what the user must do by hand
    notes: list[str] = field(default_factory=list)  # what setup found and decided
    # Commands setup runs itself when it can (systemctl --user, launchctl), before and
    # after writing; one that cannot run (no user bus, not macOS) becomes a step.
    before_commands: list[list[str]] = field(default_factory=list)
    after_commands: list[list[str]] = field(default_factory=list)

    def add(self, change: Change) -> None:
        if change.changed:
            self.changes.append(change)

    def diff(self) -> str:
        return "".join(render_diff(c) for c in self.changes)

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "files": [str(c.path) for c in self.changes],
                "diff": self.diff(), "steps": self.steps, "notes": self.notes}


def package_data(*parts: str) -> bytes:
    """A file shipped in the wheel under maxmem/data/ (the job scripts, SKILL.md, …)."""
    from importlib.resources import files

    return files("maxmem").joinpath("data", *parts).read_bytes()


MAX_SETTINGS_BYTES = 256 << 20  # an agent's settings (~/.claude.json grows with its history), at most


def read_bytes(path: Path) -> bytes | None:
    """A file setup reads or changes (None: there is none). A FIFO or a device there is
    refused in one line, never waited on or read on."""
    try:
        return read_regular(path, MAX_SETTINGS_BYTES, "a settings file")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WiringError(f"cannot read {path}: {exc.strerror}") from None
    except InvalidInput:
        raise WiringError(f"{path} is {kind_at(path)}, not a regular file: setup reads and changes regular "
                          "files only; move it aside and run setup again") from None


def render_diff(change: Change) -> str:
    label = "crontab (crontab -l)" if change.crontab else str(change.path)
    old = _text(change.before).splitlines(keepends=True)
    new = _text(change.after).splitlines(keepends=True)
    sep = "" if label.startswith("/") else "/"
    lines = difflib.unified_diff(old, new, f"a{sep}{label}" if change.before is not None else "/dev/null",
                                 f"b{sep}{label}" if change.after is not None else "/dev/null")
    out = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                  for line in lines)
    return out


def _text(data: bytes | None) -> str:
    return data.decode("utf-8", "replace") if data is not None else ""


def sha256(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


# -- JSON files ---------------------------------------------------------------------------

def load_json(path: Path, data: bytes | None) -> dict[str, Any]:
    """A JSON object file's content ({} when absent or empty); WiringError when it is not one."""
    if data is None or not data.strip():
        return {}
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WiringError(f"{path} is not valid JSON ({exc}): fix it first; nothing was changed") from None
    if not isinstance(value, dict):
        raise WiringError(f"{path} does not hold a JSON object: fix it first; nothing was changed")
    return value


def dump_json(value: Mapping[str, Any], like: bytes | None) -> bytes:
    """JSON text in the indentation the file had (2 spaces by default), ending in a newline."""
    indent = 2
    if like:
        for line in like.decode("utf-8", "replace").splitlines()[1:]:
            stripped = line.lstrip(" ")
            if stripped and len(line) > len(stripped):
                indent = len(line) - len(stripped)
                break
    return (json.dumps(value, indent=indent, ensure_ascii=False) + "\n").encode("utf-8")


def json_change(path: Path, before: bytes | None, old: Mapping[str, Any], new: Mapping[str, Any]) -> Change:
    """A Change that rewrites the file only if its data changed (same data: no rewrite,
    whatever the formatting)."""
    if old == new:
        return Change(path, before, before)
    return Change(path, before, dump_json(new, before))


# -- applying -------------------------------------------------------------------------------

@dataclass
class Manifest:
    """What setup wrote, per file: the hash of the written bytes, where the original is."""

    path: Path
    files: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Manifest:
        data = read_bytes(path)
        try:
            files = json.loads(data) if data else {}
        except json.JSONDecodeError:
            files = {}
        return cls(path, files if isinstance(files, dict) else {})

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(self.path, (json.dumps(self.files, indent=2, sort_keys=True) + "\n").encode(), 0o600)


def apply(plan: Plan, state: Path, now: datetime, crontab_cmd: str | None = None,
          uninstall: bool = False, home: Path | None = None) -> list[str]:
    """Write the plan's changes; returns the backups made (one per existing file changed)."""
    manifest = Manifest.load(state / "setup" / "manifest.json")
    stamp = now.strftime("%Y%m%dT%H%M%S")
    backups: list[str] = []
    for change in plan.changes:
        key = "crontab" if change.crontab else str(change.path)
        backup = _backup(state / "setup" / "backups" / stamp, change, key, home) if change.before is not None else None
        if backup is not None:
            backups.append(str(backup))
        if change.crontab:
            install_crontab(crontab_cmd, change.after or b"")
        elif change.after is None:
            change.path.unlink(missing_ok=True)
            _prune(change.path.parent)
        else:
            mode = _mode(change.path) if change.before is not None else change.mode
            write_atomic(change.path, change.after, mode)
        if uninstall:
            manifest.files.pop(key, None)
            continue
        entry = manifest.files.get(key)
        if entry is None or entry.get("written") != sha256(change.before):
            # The file as found is the original to put back: setup never wrote it, or
            # something changed it since (an older original would lose that change).
            entry = {"existed": change.before is not None, "original": str(backup) if backup else None}
        entry.update(written=sha256(change.after), target=plan.target)
        manifest.files[key] = entry
    manifest.save()
    return backups


def originals(plan_target: str, state: Path, current: Mapping[str, bytes | None]) -> dict[str, bytes | None]:
    """For an uninstall: path -> the original bytes (None: remove the file), for every file
    setup wrote for `plan_target` that is still byte for byte what it wrote."""
    manifest = Manifest.load(state / "setup" / "manifest.json")
    out: dict[str, bytes | None] = {}
    for key, entry in manifest.files.items():
        if entry.get("target") != plan_target or key not in current:
            continue
        if sha256(current[key]) != entry.get("written"):
            continue
        if not entry.get("existed"):
            out[key] = None
        elif entry.get("original") and Path(entry["original"]).is_file():
            out[key] = Path(entry["original"]).read_bytes()
    return out


def written_files(state: Path) -> dict[str, dict[str, Any]]:
    """Every file the manifest says setup wrote (for `maxmem doctor`)."""
    return Manifest.load(state / "setup" / "manifest.json").files


def _prune(folder: Path) -> None:
    """Remove the empty folders setup made for its own files (…/maxmem, …/maxmem/bin)."""
    for candidate in (folder, folder.parent):
        if "maxmem" not in candidate.name and "maxmem" not in candidate.parent.name:
            return
        try:
            candidate.rmdir()
        except OSError:
            return  # not empty, or not ours to remove


def _backup(folder: Path, change: Change, key: str, home: Path | None) -> Path:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder.parent, 0o700)
    prefix = f"{home}/" if home else None
    shown = key[len(prefix):] if prefix and key.startswith(prefix) else key
    name = shown.strip("/").replace("/", "%") or "file"  # one flat folder per run; % stands for /
    target = folder / name
    write_atomic(target, change.before or b"", 0o600)
    return target


def _mode(path: Path) -> int | None:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return None


def write_atomic(path: Path, data: bytes, mode: int | None) -> None:
    """Write `data` to a temporary file beside `path`, fsync, rename over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".maxmem-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(name, mode if mode is not None else 0o644)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


# -- the user crontab ---------------------------------------------------------------------

def read_crontab(crontab_cmd: str | None) -> bytes | None:
    """`crontab -l` output; b"" when the user has none; None when there is no crontab program."""
    if crontab_cmd is None:
        return None
    done = subprocess.run([crontab_cmd, "-l"], capture_output=True, timeout=30)
    if done.returncode == 0:
        return done.stdout
    if b"no crontab" in done.stderr.lower():
        return b""
    raise WiringError(f"crontab -l failed: {done.stderr.decode('utf-8', 'replace').strip()[:200]}")


def install_crontab(crontab_cmd: str | None, text: bytes) -> None:
    if crontab_cmd is None:
        raise WiringError("no crontab program: install cron (apt install cron), or add the lines "
                          "shown by  maxmem setup cron --dry-run  by hand")
    if text.strip():
        done = subprocess.run([crontab_cmd, "-"], input=text, capture_output=True, timeout=30)
    else:
        done = subprocess.run([crontab_cmd, "-r"], capture_output=True, timeout=30)
        if b"no crontab" in done.stderr.lower():
            return
    if done.returncode != 0:
        raise WiringError(f"crontab refused the new table: {done.stderr.decode('utf-8', 'replace').strip()[:200]}")


def which(name: str, env: Mapping[str, str]) -> str | None:
    """`name` on the PATH of `env` (not of this process)."""
    return shutil.which(name, path=env.get("PATH") or os.defpath)


def unwritable(paths: list[Path]) -> str | None:
    """Why one of `paths` cannot be written (its nearest existing folder is on a read-only
    disk or not writable by this user), checked before anything is written; None: all can."""
    for path in paths:
        folder = path.parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        target = path if path.exists() else folder
        if os.access(target, os.W_OK):
            continue
        try:
            read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
        except OSError:
            read_only = False
        why = "its disk is mounted read-only" if read_only else "permission denied"
        return f"cannot write {path} ({why})"
    return None
