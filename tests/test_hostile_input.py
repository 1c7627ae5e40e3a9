"""Hostile arguments to every command and every MCP tool: each works, or says what is
wrong in one line; none raises a traceback or hangs.

Hypothesis drives the `maxmem` command in-process through its entry point (`main`,
which turns errors into one line and an exit code) with huge, negative and non-finite
numbers, deep nesting, control characters, empty strings and paths to devices and
folders, also on standard input; and the MCP server's tools through the server's own
call path (`call_tool`, as a client's request reaches it). Each example has a time
bound (SIGALRM): a command that reads a device forever fails the test.

Left out: what serves or runs until stopped (browse, daemon, mcp), what touches the
machine beyond the test's home (setup writes crontab and agents' settings; encrypt and
decrypt use the OS keyring) and what needs a PostgreSQL server (sync postgres, sync
search; sync status without --dsn stays in).
"""

from __future__ import annotations

import asyncio
import io
import json
import math
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxmem import Brain
from maxmem.cli import cli, main

EXAMPLE_SECONDS = 20  # per example: far beyond any honest command on a small brain.db
SETTINGS = settings(max_examples=int(os.environ.get("MAXMEM_FUZZ_EXAMPLES", "60")), deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
SKIPPED = {"browse", "daemon", "mcp", "setup", "encrypt", "decrypt", "sync postgres", "sync search"}
SKIPPED_OPTIONS = {"dsn", "in_keyring", "encrypted", "open_browser"}
GLOBAL_OPTIONS = ("--config", "--db", "--log-file")  # each given one time in six

NUMBERS = ["1e20", "-1", "0", "99999999999999999999", "-99999999999999999999", "nan", "-nan", "inf", "-inf",
           "1e308", "1e-320", "0x10", " 5", "", "1_000", "9" * 400]
TEXTS = ["", " ", "\x00", "a\x00b", "\x1b]52;c;aGk=\x07", "\x1b[2J", "line\nbreak", "\r", "\u202e", "\udcff",
         "x" * 20_000, "[" * 3000, "{" * 3000, "last 999999999999 days", "since 99999 years ago",
         "99999 weeks ago", "on 9999-12-31", "in 0000", "1e20", "nan", "-1", "%s%n", "💥", "ﬁ", "İ", "*",
         '"', "NEAR(", "-", "--", ".." + "/" + ".." + "/etc/passwd", "/dev/zero", "2026-02-30",
         "0001-01-01T00:00:00+05:00"]
STDIN = [b"", b"\xff\xfe\x00", b"[" * 200_000 + b"]" * 200_000, b'{"a":' * 5000, b"\x00" * 1000, b"{}",
         b'{"exchanges": [' + b"[" * 3000 + b"]" * 3000 + b"]}", json.dumps({"session_id": "\x1b[2J"}).encode()]


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    root = tmp_path_factory.mktemp("hostile")
    home, db = root / "home", root / "brain.db"
    home.mkdir()
    with Brain.open(db, embedder="none") as brain:
        for text in ("the router's admin page is on port 8443", "backups go to the NAS at 02:00"):
            brain.remember(text, category="core", tags=["home"])
    deep = root / "deep.json"
    deep.write_text("[" * 5000 + "]" * 5000 + "\n")
    flipped = root / "flipped.jsonl"
    flipped.write_bytes(b'{"content": "caf\xe9 \xff\xfe"}\n')
    nested = root / "nested.jsonl"
    nested.write_text(json.dumps({"content": "x", "metadata": {}}).replace("{}", '{"a":' * 900 + "1" + "}" * 900))
    folder = root / "a folder"
    folder.mkdir()
    fifo = root / "fifo"  # a named pipe no one writes to: opening it to read waits for a writer
    os.mkfifo(fifo)
    yield {"root": root, "home": home, "db": db, "deep": deep, "flipped": flipped, "nested": nested,
           "folder": folder, "fifo": fifo}


def commands() -> list[tuple[str, click.Command]]:
    ctx = click.Context(cli)
    found: list[tuple[str, click.Command]] = []

    def walk(group: click.Group, prefix: str) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            path = f"{prefix} {name}".strip()
            if isinstance(command, click.Group):
                walk(command, path)
            elif path not in SKIPPED:
                found.append((path, command))

    walk(cli, "")
    return found


COMMANDS = commands()


def paths(place: dict[str, Path]) -> list[str]:
    return ["/dev/zero", "/dev/null", "/", "", str(place["folder"]), str(place["deep"]), str(place["flipped"]),
            str(place["nested"]), str(place["root"] / "missing" / "file"), "-", "/proc/self/mem", str(place["fifo"])]


@st.composite
def invocation(draw: st.DrawFn, place: dict[str, Path]) -> tuple[list[str], bytes]:
    """An argv for one command: each of its parameters given or not, hostile when given."""
    path, command = draw(st.sampled_from(COMMANDS))
    argv = []
    for option in GLOBAL_OPTIONS:  # maxmem's own options, before the command
        if draw(st.integers(0, 5)) == 0:
            argv += [option, draw(st.sampled_from(paths(place)))]
    argv += path.split()
    for param in command.params:
        if param.name in SKIPPED_OPTIONS:
            continue
        if isinstance(param, click.Option) and param.is_flag:
            if draw(st.booleans()):
                argv.append(param.opts[-1])
            continue
        if isinstance(param, click.Option) and not draw(st.booleans()):
            continue
        if isinstance(param.type, (click.types.IntParamType, click.types.FloatParamType)):
            value = draw(st.sampled_from(NUMBERS))
        elif isinstance(param.type, click.Path):
            value = draw(st.sampled_from(paths(place)))
        elif isinstance(param.type, click.Choice):
            value = draw(st.sampled_from([*map(str, param.type.choices), "", "\x00"]))
        else:
            value = draw(st.one_of(st.sampled_from(TEXTS), st.integers().map(str), st.text(max_size=30)))
        if isinstance(param, click.Option):
            argv += [param.opts[-1], value]
        else:
            argv += ["--", value] if value.startswith("-") and value != "-" else [value]
    return argv, draw(st.sampled_from(STDIN))


class Hang(BaseException):
    """An example ran past EXAMPLE_SECONDS (a BaseException: no handler of maxmem's takes it)."""


def on_alarm(signum: int, frame: Any) -> None:
    raise Hang()


def invoke(place: dict[str, Path], monkeypatch: pytest.MonkeyPatch, argv: list[str], stdin: bytes = b"",
           db: Path | None = None) -> int:
    """`maxmem ARGV` run in this process on `place`'s brain (or `db`), as cron would run it
    there, stopped by Hang past EXAMPLE_SECONDS; its exit code."""
    for name, value in (("MAXMEM_HOME", place["home"]), ("MAXMEM_DB", db or place["db"]), ("HOME", place["home"])):
        monkeypatch.setenv(name, str(value))
    monkeypatch.setenv("MAXMEM_EMBEDDER", "none")
    monkeypatch.chdir(place["root"])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(EXAMPLE_SECONDS)
    try:
        main(argv)
        return 0
    except SystemExit as exc:
        return 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@given(data=st.data())
@SETTINGS
def test_every_command_says_one_line_or_works(place, monkeypatch, capsysbinary, data):
    argv, stdin = data.draw(invocation(place))
    try:
        code = invoke(place, monkeypatch, argv, stdin)
    except Hang:
        pytest.fail(f"maxmem {argv!r} ran past {EXAMPLE_SECONDS} s")
    out, err = capsysbinary.readouterr()
    text = err.decode("utf-8", "replace")
    assert "Traceback" not in text, (argv, text[-2000:])
    errors = [line for line in text.splitlines() if line.startswith("maxmem: error:")]
    assert len(errors) <= 1, (argv, errors)
    if code not in (0, 1):
        assert code == 2 and len(errors) == 1, (argv, code, text[-500:])


# -- the MCP tools ------------------------------------------------------------------------

HOSTILE_VALUES = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, 10**20, -(10**20), 2**63, -1, 0, 1e308, True, None, "",
                     "\x00", "\x1b[2J", "last 999999999999 days", "since 99999 years ago", "x" * 20_000, [], {},
                     [[[[[[[[[[[]]]]]]]]]]], "/dev/zero", "1e20", "nan"]),
    st.integers(), st.floats(), st.text(max_size=20),
    st.recursive(st.one_of(st.none(), st.integers(), st.floats(), st.text(max_size=5)),
                 lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner,
                                                                                      max_size=3)), max_leaves=10),
)


def deep(levels: int) -> Any:
    value: Any = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.fixture(scope="module")
def server(place: dict[str, Path]) -> Iterator[tuple[Any, dict[str, set[str]], asyncio.AbstractEventLoop]]:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    from maxmem.mcp import build_server

    loop = asyncio.new_event_loop()
    brain = Brain.open(place["root"] / "mcp.db", embedder="none")
    brain.remember("the printer's toner is in the hall cupboard", category="core")
    built = build_server(brain)
    tools = {t.name: set(t.input_schema.get("properties", {})) for t in loop.run_until_complete(built.list_tools())}
    yield built, tools, loop
    brain.close()
    loop.close()


@given(data=st.data())
@SETTINGS
def test_every_mcp_tool_refuses_in_one_line_or_works(server, data):
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

    built, tools, loop = server
    name = data.draw(st.sampled_from(sorted(tools)))
    names = sorted(tools[name])
    chosen = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names))) if names else []
    arguments = {key: data.draw(st.one_of(HOSTILE_VALUES, st.just(deep(3000)))) for key in chosen}
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(EXAMPLE_SECONDS)
    try:
        loop.run_until_complete(built.call_tool(name, arguments))
    except UnexpectedToolError as exc:
        pytest.fail(f"{name} {str(arguments)[:300]}: {exc.__cause__!r}")
    except ToolError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 2000, (name, str(exc)[:500])
    except Hang:
        pytest.fail(f"{name} {str(arguments)[:300]} ran past {EXAMPLE_SECONDS} s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# -- what a hostile probe found, each once ------------------------------------------------

def run(place: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        argv: list[str], stdin: bytes = b"", db: Path | None = None) -> tuple[int, str, str]:
    code = invoke(place, monkeypatch, argv, stdin, db)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("argv", "stdin", "said"), [
    (["query", "last 999999999999 days"], b"", "falls outside the years 1 to 9999"),
    (["query", "since 99999 years ago"], b"", "falls outside the years 1 to 9999"),
    (["active", "-n", "1e20"], b"", "is not a valid integer"),
    (["active", "-n", "99999999999999999999"], b"", "too large"),
    (["brief", "--budget-tokens", "9" * 400], b"", "not in the range"),
    (["history", "99999999999999999999"], b"", "too large"),
    (["search", "router", "--min-importance", "nan"], b"", "must be a number from 0 to 1"),
    (["save-context"], b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
    (["redact-test", "/dev/zero"], b"", "/dev/zero is a character device, not a regular file"),
    (["--config", "/dev/zero", "list"], b"", "is a character device, not a regular file: give the path of a config"),
    (["export", "--format", "markdown", "not-made", "--keep", "0"], b"", "not in the range x>=1"),
    (["sync", "folder", ""], b"", "is empty: give a path"),
    (["pin", "\udcff"], b"", "not UTF-8"),
    (["--db", "/dev/zero/brain.db", "remember", "x"], b"", "/dev/zero is a character device, not a folder"),
    (["backup", "/dev/null/backups/b.db"], b"", "/dev/null is a character device, not a folder"),
])
def test_each_probe_gets_one_line(place, monkeypatch, capsys, argv, stdin, said):
    code, _, err = run(place, monkeypatch, capsys, argv, stdin)
    assert code in (1, 2) and err.count("\n") == 1 and err.startswith("maxmem: error: ") and said in err, err
    assert not (place["root"] / "config.toml").exists()  # sync folder "" recorded nothing


def _small_memory() -> None:  # a 4 GB address space: an endless read fails in it
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


@pytest.mark.parametrize("argv", [["remember"], ["save-context"], ["triggers", "detect"]])
def test_an_endless_stdin_is_one_line(place, argv):
    import subprocess

    env = {**os.environ, "MAXMEM_HOME": str(place["home"]), "MAXMEM_DB": str(place["db"]), "MAXMEM_EMBEDDER": "none"}
    with open("/dev/zero", "rb") as zeros:
        done = subprocess.run([sys.executable, "-m", "maxmem", *argv], stdin=zeros, env=env, capture_output=True,
                              timeout=120, preexec_fn=_small_memory)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2 and err.count("\n") == 1 and "holds more than 256 MiB" in err, err[-500:]


def test_a_file_argument_on_dev_zero_is_refused_unread(place, monkeypatch, capsys):
    code, _, err = run(place, monkeypatch, capsys, ["save-context", "--file", "/dev/zero"])
    assert code == 2 and err.count("\n") == 1 and "/dev/zero is a character device, not a regular file" in err, err


def _fifo_places(place: dict[str, Path]) -> dict[str, str]:
    """Paths that hold a FIFO where maxmem expects a file (made once per module)."""
    root = place["root"]
    workspace, notes = root / "fifo-workspace", root / "fifo-notes"
    if not workspace.exists():
        (workspace / "memory").mkdir(parents=True)
        os.mkfifo(workspace / "MEMORY.md")
        notes.mkdir()
        (notes / "MEMORY.md").write_text("- a note\n")
        (notes / "memory").mkdir()
        os.mkfifo(notes / "memory" / "2026-01-01.md")
        (root / "fifo-key.toml").write_text(f'key_file = "{place["fifo"]}"\n')
        (root / "sync-folder").mkdir()
    return {"fifo": str(place["fifo"]), "workspace": str(workspace), "notes": str(notes),
            "key_config": str(root / "fifo-key.toml"), "sync": str(root / "sync-folder")}


@pytest.mark.parametrize(("argv", "said"), [
    (["--config", "{fifo}", "list"], "{fifo} is a FIFO (named pipe), not a regular file: give the path of a config"),
    (["--db", "{fifo}", "list"], "{fifo} is a FIFO (named pipe), not a regular file: give the path of brain.db"),
    (["--log-file", "{fifo}", "list"], "{fifo} is a FIFO (named pipe), not a regular file: give the path of a log"),
    (["save-context", "--file", "{fifo}"], "{fifo} is a FIFO (named pipe), not a regular file"),
    (["redact-test", "{fifo}"], "{fifo} is a FIFO (named pipe), not a regular file"),
    (["import", "{fifo}"], "not a regular file"),
    (["restore", "--yes", "{fifo}"], "is not a file"),
    (["--config", "{key_config}", "list"], "the key file {fifo} is a FIFO (named pipe), not a regular file"),
    (["sync", "folder", "--key-file", "{fifo}", "{sync}"], "{fifo} is a FIFO (named pipe), not a regular file"),
    (["export", "--format", "markdown", "{workspace}"], "MEMORY.md is a FIFO (named pipe), not a regular file"),
])
def test_a_fifo_where_a_file_belongs_is_one_line_never_waited_on(place, monkeypatch, capsys, argv, said):
    """A named pipe no one writes to, given where maxmem reads or writes a file: refused in
    one line at once (opening it would wait for a writer for ever; the alarm fails the test)."""
    where = _fifo_places(place)
    argv = [part.format(**where) for part in argv]
    if argv[0] == "sync":  # the key given must be 0600 to be read at all
        os.chmod(place["fifo"], 0o600)
    try:
        code, _, err = run(place, monkeypatch, capsys, argv)
    except Hang:
        pytest.fail(f"maxmem {argv!r} waited on the FIFO")
    assert code in (1, 2) and err.count("\n") == 1 and said.format(**where) in err, err


def test_a_markdown_import_passes_over_a_fifo_in_the_daily_folder(place, monkeypatch, capsys):
    where = _fifo_places(place)
    try:
        code, out, err = run(place, monkeypatch, capsys, ["import", "--format", "markdown", where["notes"]])
    except Hang:
        pytest.fail("the import waited on the FIFO")
    assert code == 0 and "imported 1 file(s): 1 memories added" in out, (out, err)


@pytest.mark.parametrize("key_file", ["/dev/zero", "huge"])
def test_a_key_file_that_is_no_key_is_refused_unread(place, monkeypatch, capsys, tmp_path, key_file):
    """key_file naming a device or a huge file: one line, read no further than a key can be."""
    if key_file == "huge":
        huge = tmp_path / "huge.key"
        with open(huge, "wb") as handle:
            handle.truncate(8 << 30)  # sparse: 8 GB of zeros on no disk
        huge.chmod(0o600)
        key_file = str(huge)
    config = tmp_path / "config.toml"
    config.write_text(f'key_file = "{key_file}"\n')
    code, _, err = run(place, monkeypatch, capsys, ["--config", str(config), "list"])
    said = "is a character device, not a regular file" if key_file == "/dev/zero" else "holds more than 4096 bytes"
    assert code == 1 and err.count("\n") == 1 and f"the key file {key_file}" in err and said in err, err


def test_a_file_name_with_a_line_break_stays_on_its_one_line(place, monkeypatch, capsys, tmp_path):
    """A transcript (anyone's file, in a folder capture reads) whose name holds a line
    break and what reads like maxmem's own line: each diagnostic and log line stays one
    line, the break shown as \\x0a, so no line of stderr is forged."""
    name = "rollout-a\nmaxmem: error: forged\x1b[2J.jsonl.zst"
    (tmp_path / name).write_bytes(b"\x28\xb5\x2f\xfd not really zstd")
    code, _, err = run(place, monkeypatch, capsys, ["-v", "capture", "--path", str(tmp_path / name),
                                                    "--format", "codex"])
    assert code == 1, err
    lines = err.splitlines()
    assert all(line.startswith("maxmem: ") for line in lines), lines
    assert not [line for line in lines if line.startswith("maxmem: error: forged")], lines
    assert sum("a\\x0amaxmem: error: forged\\x1b[2J" in line for line in lines) >= 2, lines  # the log's and the error's
    assert all(line.count("forged") <= 1 for line in lines), lines  # the file named once a line, not twice


@pytest.mark.parametrize("argv", [["scrub"], ["doctor"], ["retain", "--repair-archives"], ["retain"]])
def test_a_fifo_named_as_an_archive_or_a_job_log_is_passed_over(place, monkeypatch, capsys, tmp_path, argv):
    """A named pipe beside brain.db with an archive's name, or in the log folder with a
    job log's: no command that reads the archives or the logs waits on it."""
    db = tmp_path / "brain.db"
    with Brain.open(db, embedder="none") as brain:
        brain.remember("the garage code changed in May", category="core")
    os.mkfifo(tmp_path / "brain.retention-20260101T000000Z.jsonl.gz")
    (tmp_path / "logs").mkdir()
    os.mkfifo(tmp_path / "logs" / "capture.log")
    monkeypatch.setenv("MAXMEM_LOG_DIR", str(tmp_path / "logs"))
    try:
        code, _, err = run(place, monkeypatch, capsys, argv, db=db)
    except Hang:
        pytest.fail(f"maxmem {argv!r} waited on the FIFO")
    assert "Traceback" not in err and err.count("maxmem: error:") <= 1, err


@pytest.mark.parametrize("packed", [False, True])
def test_an_import_of_one_endless_line_is_one_line_read_no_further(place, tmp_path, packed):
    """A JSONL file (or a gzipped one) of one line of zeros that never ends: refused in one
    line once the line is longer than any record, in little memory and time (it was
    gathered whole, copied again for every MiB read)."""
    import gzip
    import subprocess

    path = tmp_path / ("endless.jsonl.gz" if packed else "endless.jsonl")
    if packed:
        with gzip.open(path, "wb", compresslevel=1) as handle:
            for _ in range(96):
                handle.write(bytes(1 << 20))
    else:
        with open(path, "wb") as handle:
            handle.truncate(1 << 30)  # sparse: a GiB of zeros on no disk
    env = {**os.environ, "MAXMEM_HOME": str(place["home"]), "MAXMEM_DB": str(place["db"]), "MAXMEM_EMBEDDER": "none"}
    done = subprocess.run([sys.executable, "-m", "maxmem", "import", str(path)], env=env, capture_output=True,
                          text=True, timeout=120, preexec_fn=_small_memory)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-500:]
    assert "a line of more than 64 MiB: not a maxmem export or archive" in done.stderr, done.stderr


def test_import_of_json_nested_5000_deep_is_one_line(place, monkeypatch, capsys):
    code, _, err = run(place, monkeypatch, capsys, ["import", str(place["deep"])])
    assert code in (1, 2) and err.count("\n") == 1 and "nested too deeply" in err, err


def test_export_and_brief_of_flipped_text_bytes_are_one_line(place, monkeypatch, capsys, tmp_path):
    import apsw

    db = tmp_path / "flipped.db"
    with Brain.open(db, embedder="none") as brain:
        brain.remember("zebra crossing outside the office", category="core")
    conn = apsw.Connection(str(db))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = db.read_bytes()
    db.write_bytes(data.replace(b"zebra crossing", b"\xffebra crossing"))
    for argv in (["export"], ["brief"], ["list"], ["search", "crossing"]):
        code, _, err = run(place, monkeypatch, capsys, argv, db=db)
        assert code == 1 and err.count("\n") == 1 and "is not a usable brain.db" in err, (argv, err)


def test_backup_to_a_disk_that_fills_up_says_so_in_one_line(place, tmp_path):
    import resource
    import subprocess

    def small_files() -> None:  # a disk that takes 150 kB more, then no more
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (150_000, 150_000))

    db = tmp_path / "big.db"
    with Brain.open(db, embedder="none") as brain:
        brain.remember_many([{"content": f"note {i} " + os.urandom(400).hex(), "category": "daily"}
                             for i in range(300)])
    assert db.stat().st_size > 300_000
    env = {**os.environ, "MAXMEM_HOME": str(place["home"]), "MAXMEM_DB": str(db), "MAXMEM_EMBEDDER": "none"}
    done = subprocess.run([sys.executable, "-m", "maxmem", "backup", str(tmp_path / "copies")], env=env,
                          preexec_fn=small_files, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "free space and try again" in done.stderr and "not an error" not in done.stderr
    assert not any((tmp_path / "copies").glob("*")) if (tmp_path / "copies").exists() else True


@pytest.mark.parametrize(("tool", "arguments", "said"), [
    ("search", {"query": "toner", "min_importance": math.nan}, "min_importance: input should be a finite number"),
    ("search", {"query": "toner", "min_relevance": math.inf}, "min_relevance: input should be a finite number"),
    ("history", {"id": 10**20}, "too large"),
    ("query", {"question": "last 999999999999 days"}, "falls outside the years 1 to 9999"),
    ("query", {"question": "since 99999 years ago"}, "falls outside the years 1 to 9999"),
])
def test_each_probe_through_mcp_gets_one_line(server, tool, arguments, said):
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

    built, _, loop = server
    with pytest.raises(ToolError) as raised:
        loop.run_until_complete(built.call_tool(tool, arguments))
    assert not isinstance(raised.value, UnexpectedToolError) and said in str(raised.value)
    assert "\n" not in str(raised.value)


def test_an_unknown_argument_name_is_named_inert_on_one_line(server):
    """The name of an argument a tool does not have is the client's text: the error that
    names it holds no escape sequence and no line break (a client may print it)."""
    from mcp.server.mcpserver.exceptions import ToolError

    built, _, loop = server
    with pytest.raises(ToolError) as raised:
        loop.run_until_complete(built.call_tool("stats", {"x\x1b]52;c;aGk=\x07\nforged": 1}))
    said = str(raised.value)
    assert "\x1b" not in said and "\n" not in said and "unknown argument(s) x\\x1b]52;c;aGk=\\x07 forged" in said, said


def test_setup_shows_a_db_path_with_a_line_break_on_its_one_line(tmp_path):
    """`maxmem setup … --dry-run` names the command it would wire, --db included: a path
    holding a line break and what reads like maxmem's own line stays on its line, under
    cron's bare environment."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    db = tmp_path / "a\nmaxmem: forged" / "brain.db"
    done = subprocess.run([sys.executable, "-m", "maxmem", "--db", str(db), "setup", "claude-code", "--dry-run"],
                          env={"HOME": str(home), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert not [line for line in lines if line.startswith("maxmem: forged")], lines
    assert any("--db " in line and "a\\x0amaxmem: forged" in line for line in lines), lines


@pytest.mark.parametrize("setting", ["[capture]\ninterval_hours = inf", "[capture]\ninterval_hours = 1e308",
                                     "[doctor]\noverdue_grace_hours = inf",
                                     "[sync.folder]\ninterval_minutes = 9223372036854775807",
                                     "[sync.postgres]\ninterval_minutes = 9223372036854775807"])
@pytest.mark.parametrize("command", ["doctor", "jobs"])
def test_a_schedule_beyond_any_date_is_one_config_line(place, monkeypatch, capsys, tmp_path, setting, command):
    """An interval or grace of infinity (or 1e308 hours, or 2^63 minutes) could not be
    added to a time: doctor and jobs raised OverflowError."""
    config = tmp_path / "config.toml"
    config.write_text(setting + "\n", encoding="utf-8")
    code, _, err = run(place, monkeypatch, capsys, ["--config", str(config), command])
    assert code in (1, 2) and err.count("\n") == 1 and "a year" in err, err


@pytest.mark.parametrize(("fields", "said"), [
    ({"tags": [f"t{i}" for i in range(200_000)]}, "200000 tags are more than a memory holds (256)"),
    ({"metadata": {"notes": "x" * 2_000_000}}, "metadata is larger than 1 MB (as JSON)"),
])
def test_an_import_of_a_million_tags_or_huge_metadata_is_one_line_at_once(place, monkeypatch, capsys, tmp_path,
                                                                          fields, said):
    """Tags were made unique one by one against all before (200,000 of them: minutes);
    metadata had no bound at all."""
    given = tmp_path / "many.jsonl"
    given.write_text(json.dumps({"content": "a note with many tags", **fields}) + "\n", encoding="utf-8")
    try:
        code, _, err = run(place, monkeypatch, capsys, ["import", str(given)])
    except Hang:
        code, err = -1, "the import ran past its time bound"  # (failed below, outside the signal's traceback)
    assert code == 2 and err.count("\n") == 1 and said in err, err
