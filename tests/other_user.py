"""maxmem run as another user, for tests where file modes must count (root ignores them).

Tests running as root drop to `nobody` through setpriv. That user may read nothing of
the checkout, its venv or the interpreter the venv was made from: a checkout in a 0700
folder (what `mktemp -d` or /root give), a Python under /root/.pyenv. So the package and
the venv's site-packages are linked (or copied) into a world-readable folder once per
test run, and run with an interpreter of the same version that this user can read.
Tests not running as root run as themselves: their modes already count.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

NOBODY = 65534
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class OtherUser:
    """How to run `maxmem ARGS` as the user for whom file modes count."""

    uid: int | None  # None: the current user (not root)
    prefix: tuple[str, ...]  # the command that runs `maxmem` as that user
    pythonpath: str | None

    def command(self, args: Sequence[str]) -> list[str]:
        return [*self.prefix, *args]

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        env = dict(base)
        if self.pythonpath is not None:
            env["PYTHONPATH"] = self.pythonpath
            env.pop("VIRTUAL_ENV", None)
        return env

    def own(self, *paths: Path) -> None:
        """Give `paths` to the other user (nothing to do when it is the current one)."""
        if self.uid is not None:
            for path in paths:
                os.chown(path, self.uid, self.uid)

    def run(self, args: Sequence[str], env: Mapping[str, str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.command(args), env=self.env(env), capture_output=True, text=True,
                              check=False, **kwargs)  # type: ignore[call-overload]


def readable_by_all(path: Path) -> bool:
    """Whether any user may read (and run) `path`: it and every folder above it."""
    try:
        if not os.stat(path).st_mode & stat.S_IROTH:
            return False
        return all(os.stat(folder).st_mode & stat.S_IXOTH for folder in path.parents)
    except OSError:
        return False


def interpreter_for_all() -> Path | None:
    """An interpreter of this Python's version that any user may run (the venv's own
    first), so that the venv's compiled modules load in it."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [Path(os.path.realpath(sys.executable))]
    candidates += [Path(folder) / version for folder in ("/usr/local/bin", "/usr/bin", "/bin")]
    return next((c for c in candidates if c.is_file() and readable_by_all(c)), None)


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def runtime_copy(folder: Path) -> Path:
    """The venv's site-packages and the package, in `folder` (readable by all)."""
    lib = folder / "lib"
    site = Path(sysconfig.get_paths()["purelib"])
    shutil.copytree(site, lib, copy_function=_link_or_copy, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", "__editable__*", "*.pth", "maxmem"))
    shutil.copytree(ROOT / "maxmem", lib / "maxmem", copy_function=shutil.copy2,
                    ignore=shutil.ignore_patterns("__pycache__"))
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | (0o555 if path.is_dir() else 0o444))
    return lib


@pytest.fixture(scope="session")
def other_user() -> Iterator[OtherUser]:
    """maxmem as `nobody` (tests run as root) or as the current user."""
    if os.geteuid() != 0:
        yield OtherUser(None, (sys.executable, "-m", "maxmem"), None)
        return
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: file modes would not count")
    python = interpreter_for_all()
    if python is None:
        pytest.skip(f"no python{sys.version_info.major}.{sys.version_info.minor} that another user may run")
    folder = Path(tempfile.mkdtemp(prefix="maxmem-runtime-"))
    try:
        folder.chmod(0o755)
        lib = runtime_copy(folder)
        prefix = ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", str(python), "-s", "-m",
                  "maxmem")
        yield OtherUser(NOBODY, prefix, str(lib))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
