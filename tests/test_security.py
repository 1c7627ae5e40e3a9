"""Memories stay private: file modes, secrets kept out of brain.db and the embedding
API, nothing sensitive in logs."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HashEmbedder

from maxmem import Brain, Config

SECRET = "sk-proj-Zq8Xv2Lm4Nw7Rt1Yb6Hc3Kd9Pf5Gs0Ju"  # the shape of an OpenAI key
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PRIVATE = "my grandmother's maiden name is Kowalczyk-Brzęczyszczykiewicz"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def loose_umask():
    """The usual umask: files 0644 and folders 0755 unless the code asks for less."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def all_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


def test_brain_db_wal_shm_and_folder_are_private(tmp_path, loose_umask):
    db = tmp_path / "new" / "deeper" / "brain.db"
    with Brain.open(db, embedder=HashEmbedder()) as brain:
        brain.remember("a private memory")
        wal, shm = Path(f"{db}-wal"), Path(f"{db}-shm")
        assert wal.exists() and shm.exists()
        assert (mode(db), mode(wal), mode(shm)) == (0o600, 0o600, 0o600)
    assert mode(db.parent) == 0o700


def test_exports_archives_backups_logs_and_config_are_private(tmp_path, loose_umask, monkeypatch, capsys):
    from maxmem.backup import create_backup
    from maxmem.cli import main
    from maxmem.retention.policy import load_policy
    from maxmem.retention.run import apply
    from maxmem.settings import RetentionSettings

    home = tmp_path / "home"
    monkeypatch.setenv("MAXMEM_HOME", str(home))
    db = home / "brain.db"
    with Brain.open(db, embedder=HashEmbedder()) as brain:
        brain.remember_many([{"content": f"old daily {i}", "category": "daily",
                              "created_at": "2020-01-01T00:00:00Z"} for i in range(3)])
        brain.remember("a core fact", category="core")
        apply(brain, load_policy(RetentionSettings(archive_dir=tmp_path / "archives")))
    create_backup(db, config=Config())

    def cli(*args: str) -> None:
        try:
            main(["--db", str(db), "--embedder", "none", *args])
        except SystemExit as exc:
            assert not exc.code, capsys.readouterr()

    cli("init")
    existing = tmp_path / "exports" / "existing.jsonl"
    existing.parent.mkdir()
    existing.write_text("")
    os.chmod(existing, 0o644)
    cli("export", str(existing))
    cli("export", str(tmp_path / "exports" / "all.jsonl"))  # a new file (export makes no folder)
    cli("export", "--format", "markdown", str(tmp_path / "md"))
    cli("--log-file", str(tmp_path / "logs" / "maxmem.log"), "stats")
    capsys.readouterr()

    private_files = [
        home / "config.toml", existing, tmp_path / "exports" / "all.jsonl",
        *(tmp_path / "archives").glob("*.jsonl.gz"), *(home / "backups").glob("*.db"),
        *(p for p in (tmp_path / "md").rglob("*") if p.is_file()), tmp_path / "logs" / "maxmem.log",
    ]
    private_dirs = [home, tmp_path / "archives", home / "backups",
                    *(p for p in (tmp_path / "md").rglob("*") if p.is_dir()), tmp_path / "md",
                    tmp_path / "logs"]
    assert len(list((tmp_path / "archives").glob("*.jsonl.gz"))) == 1
    assert {str(p): oct(mode(p)) for p in private_files if mode(p) != 0o600} == {}
    assert {str(p): oct(mode(p)) for p in private_dirs if mode(p) != 0o700} == {}


def test_secrets_in_remember_never_reach_brain_db_or_the_embedding_api(tmp_path, openai_config,
                                                                       embedding_server):
    db = tmp_path / "brain.db"
    sent_before = len(embedding_server.texts_sent())
    with Brain.open(db, config=openai_config) as brain:
        m = brain.remember(f"deploy with OPENAI_API_KEY={SECRET} on friday", title=f"key {GITHUB}",
                           tags=["deploy"], metadata={"note": f"token {GITHUB}"})
        brain.update(m.id, content=f"rotated: the new key is {SECRET}")
        brain.import_records([{"content": f"imported line with {GITHUB}", "category": "project"}])
        assert sum("redacted" in w for w in brain.warnings) >= 1
        stored = brain.get(m.id)
        assert "[REDACTED:openai]" in stored.content
        brain.search(f"what was {SECRET}")  # a query is sent, but never stored
        brain.db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        on_disk = all_bytes(tmp_path)  # brain.db, -wal, -shm, while still open
    sent = "\n".join(embedding_server.texts_sent()[sent_before:-1])  # all but the search query
    for secret in (SECRET, GITHUB):
        assert secret not in sent
        assert secret.encode() not in on_disk
        assert secret.encode() not in all_bytes(tmp_path)


def test_redaction_can_be_turned_off(tmp_path):
    with Brain.open(tmp_path / "b.db", embedder=HashEmbedder(), config=Config(redact_on_remember=False)) as b:
        assert SECRET in b.remember(f"test fixture key {SECRET}").content
        assert b.warnings == []


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "maxmem", *args], env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.slow
def test_the_cli_shows_the_redaction_and_logs_nothing_sensitive(tmp_path, embedding_server):
    """Real processes at default verbosity (and -v): no API key, no DSN password, no
    memory content on stderr or in the --log-file, whatever fails."""
    password = "pg-Secret-Pw-4417"
    env = {**os.environ, "MAXMEM_HOME": str(tmp_path / "home"), "MAXMEM_EMBEDDER": "openai",
           "MAXMEM_OPENAI_MODEL": "e5-test", "MAXMEM_OPENAI_BASE_URL": embedding_server.base_url,
           "MAXMEM_OPENAI_API_KEY": embedding_server.api_key}
    log = tmp_path / "cron.log"
    added = run(["--log-file", str(log), "remember", f"{PRIVATE}; the key is {SECRET}"], env)
    assert added.returncode == 0
    assert added.stderr.splitlines() == ["maxmem: warning: redacted 1 secret(s) before storing"]
    bad_key = {**env, "MAXMEM_OPENAI_API_KEY": "sk-wrong-Abcdefghijklmnopqrstu0123"}
    outputs = [added]
    for args, environment in [
        (["search", "maiden name"], env),
        (["-v", "search", "maiden name"], env),
        (["remember", f"{PRIVATE} again"], bad_key),
        (["-v", "remember", f"{PRIVATE} once more"], bad_key),
        (["embed", "--pending"], bad_key),
        (["-v", "--log-file", str(log), "sync", "postgres", "--dsn",
          f"postgresql://maxmem:{password}@127.0.0.1:9/brain?connect_timeout=2"], env),
        (["sync", "postgres", "--dsn", f"postgresql://maxmem:{password}@127.0.0.1:9/brain"], env),
        (["doctor"], env),
        (["--log-file", str(log), "stats"], env),
    ]:
        result = run(args, environment)
        assert "Traceback" not in result.stderr, result.stderr
        outputs.append(result)
    stderr = "\n".join(r.stderr for r in outputs) + log.read_text()
    for sensitive in (embedding_server.api_key, "sk-wrong-Abcdefghijklmnopqrstu0123", password, SECRET,
                      "Kowalczyk", "maiden"):
        assert sensitive not in stderr, sensitive
    assert "failed" in stderr  # the failures were reported, without the secrets


def _files_holding(folder: Path, name: str, needles: list[bytes]) -> dict[str, int]:
    """How often any needle occurs in brain.db and its -wal / -shm, per file."""
    found = {}
    for f in sorted(folder.glob(name + "*")):
        data = f.read_bytes()
        found[f.name] = sum(data.count(n) for n in needles)
    return found


def test_a_forgotten_memory_leaves_no_bytes_in_brain_db(tmp_path):
    """forget of a secret remembered by mistake: not in the row's old page, the change
    log's old snapshot, the keyword index, the vectors, the embeddings cache or the WAL."""
    embedder = HashEmbedder()
    text = "the alarm code is xqzzyvax4417, tell nobody"  # a word no other text shares a prefix with
    vector = embedder._vector(text)
    needles = [b"xqzzyvax", vector.tobytes()[:64], vector.astype("float16").tobytes()[:32]]
    with Brain.open(tmp_path / "f.db", embedder=embedder) as brain:
        brain.remember_many([{"content": f"ordinary note {i} about tiles", "category": "daily"} for i in range(300)])
        secret = brain.remember(text, category="core")
        brain.remember_many([{"content": f"later note {i}", "category": "daily"} for i in range(50)])
        turn = brain.remember_many([{"content": f"user: {text}", "category": "conversation", "session_id": "s"},
                                    {"content": "assistant: noted", "category": "conversation", "session_id": "s"}])[0]
        assert sum(_files_holding(tmp_path, "f.db", needles[:1]).values()) > 0  # it was there
        brain.forget(secret.id)
        brain.forget(turn.id)
        assert brain.search("xqzzyvax4417", mode="keyword") == []
        assert brain.warnings == []  # no other process: the WAL was emptied too
        held = _files_holding(tmp_path, "f.db", needles)
        assert "f.db-wal" in held and set(held.values()) == {0}, held


def test_forget_says_when_a_reader_keeps_the_text_in_the_wal(tmp_path):
    import apsw

    with Brain.open(tmp_path / "r.db", embedder="none") as brain:
        secret = brain.remember("the safe combination is 31-7-22", category="core")
        reader = apsw.Connection(str(tmp_path / "r.db"))
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM memories").fetchall()  # holds a snapshot with the text
        brain.forget(secret.id)
        assert any("stays in brain.db-wal" in w for w in brain.warnings)
        reader.execute("COMMIT")
        reader.close()
        brain.remember("another note", category="daily")
        brain.forget(brain.search("another note", mode="keyword")[0].memory.id)  # the log is emptied now
        assert (tmp_path / "r.db-wal").stat().st_size == 0
