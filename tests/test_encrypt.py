"""Encryption at rest: an encrypted brain.db, its WAL, backups and archives hold no
memory text; without the key (or with a wrong one, or a key file others can read) every
command fails in one line and hooks exit 0; encrypt and decrypt in place keep every
memory, vector and keyword hit, leave a backup, and lose nothing when killed; the tick
and a hook find the key under `env -i`; the key sources are asked in their order, the
OS keyring through a real (file) keyring backend.

Real components throughout: apsw-sqlite3mc with sqlite-vec and FTS5, the installed
`maxmem` script in subprocesses, keyrings.alt's file backend for the keyring.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import stat
import subprocess
import sys
import time
import zlib
from pathlib import Path

import apsw
import pytest
from test_read_only import read_only_mount

from maxmem import Brain, Config, FixedClock
from maxmem.archive import check as check_archive
from maxmem.archive import read as read_archive
from maxmem.backup import create_backup, restore
from maxmem.config import load_config
from maxmem.doctor import run_checks
from maxmem.encryption import decrypt, encrypt
from maxmem.errors import DatabaseError, EncryptionKeyError, InvalidInput
from maxmem.hooks.warm import stop_servers
from maxmem.keys import KEY_FILE_NAME, Key, is_encrypted, new_secret
from maxmem.retention.run import apply as retain
from maxmem.sealed import Sealer, Unsealer, is_sealed, seal, unseal
from maxmem.store import migrations as migrations_module
from maxmem.store.db import Database
from maxmem.store.migrations import migrate

MAXMEM = Path(sys.executable).parent / "maxmem"
CANARY = "quokka-periwinkle-canary"  # a word no SQLite structure holds: its bytes mean memory text
HOOK_INPUT = json.dumps({"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"})


def canary_text(i: int) -> str:
    return f"{CANARY} {i}: the staging deploy for project {i} runs blue green behind the load balancer"


def holds_text(path: Path) -> bool:
    """Whether the memory text is in the file's bytes (a gzip file's: uncompressed)."""
    data = path.read_bytes()
    return CANARY.encode() in (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)


def keyed(secret: str | None = None) -> Config:
    return Config(key=Key(secret or new_secret(), "the test"))


def run_maxmem(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MAXMEM), *args], env=env, input=stdin, capture_output=True, text=True, timeout=180)


def test_the_installed_apsw_is_the_cipher_build():
    assert "Multiple Ciphers" in apsw.mc_version


def test_an_encrypted_brain_its_wal_backups_and_archives_hold_no_memory_text(tmp_path, hash_embedder):
    config = keyed()
    path = tmp_path / "brain.db"
    clock = FixedClock("2026-11-30T08:00:00Z")
    with Brain.open(path, embedder=hash_embedder, config=config, clock=clock) as brain:
        brain.db.execute("PRAGMA wal_autocheckpoint=0")  # the writes stay in the WAL, to be looked at
        for i in range(50):
            brain.remember(canary_text(i), category="core")
        brain.remember(f"{CANARY} an old daily note about tomatoes", category="daily",
                       created_at="2026-06-01T12:00:00Z")
        assert is_encrypted(path)
        assert Path(f"{path}-wal").stat().st_size > 100_000
        for part in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            assert not holds_text(part), part
        assert brain.db.scalar("PRAGMA secure_delete") == 1
        assert brain.db.scalar("PRAGMA temp_store") == 2  # memory: temporary files are not encrypted
        assert [h.memory.content for h in brain.search(f"{CANARY} 7 staging", limit=1)] == [canary_text(7)]
        report = retain(brain)
    archive = Path(report["archive"])
    assert report["archived"] == 1 and not holds_text(archive) and is_sealed(archive.read_bytes())
    assert [r["content"] for r in read_archive(archive, key=config.key).records] == [
        f"{CANARY} an old daily note about tomatoes"]
    with pytest.raises(EncryptionKeyError, match="encrypted archive and no key was given"):
        read_archive(archive)
    with pytest.raises(EncryptionKeyError, match="does not open with the key given"):
        read_archive(archive, key=keyed().key)
    made = create_backup(path, tmp_path / "backup.db", config=config)
    assert made.memories == 50 and is_encrypted(Path(made.path)) and not holds_text(Path(made.path))
    database = Database(made.path, key=config.key)
    try:
        assert database.scalar("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (f'"{CANARY}"',)) == 50
    finally:
        database.close()


def test_a_sealed_file_detects_a_changed_byte_and_another_purpose():
    secret = new_secret()
    blob = seal(secret, b"memories", "archive")
    assert unseal(secret, blob, "archive", "x") == b"memories"
    damaged = blob[:-1] + bytes([blob[-1] ^ 1])
    with pytest.raises(EncryptionKeyError):
        unseal(secret, damaged, "archive", "x")
    with pytest.raises(EncryptionKeyError):
        unseal(secret, blob, "sync", "x")
    with pytest.raises(InvalidInput, match="not a whole sealed file"):
        unseal(secret, blob[:20], "archive", "x")
    passphrase_blob = seal("correct horse battery staple", b"memories", "archive")
    assert unseal("correct horse battery staple", passphrase_blob, "archive", "x") == b"memories"


def test_a_streamed_seal_is_the_format_sealed_whole_and_back(tmp_path):
    """Archives are sealed and opened as streams: what Sealer writes opens with unseal, and
    what seal made whole (an archive written before) opens with Unsealer."""
    secret = new_secret()
    sealer = Sealer(secret, "archive")
    streamed = sealer.header + sealer.update(b"memo") + sealer.update(b"ries") + sealer.finish()
    assert unseal(secret, streamed, "archive", "x") == b"memories"
    whole = tmp_path / "whole"
    whole.write_bytes(seal(secret, b"memories", "archive"))
    with open(whole, "rb") as handle:
        opened = Unsealer(secret, handle, "archive", "x")
        data = b"".join(opened.chunks())
        opened.finish()
    assert data == b"memories"


def _big_sealed_archive(path: Path, key: Key, megabytes: int) -> int:
    """A sealed archive of about `megabytes` MiB of hard-to-compress lines; its line count."""
    sealer = Sealer(key.secret, "archive")
    compressor = zlib.compressobj(1, zlib.DEFLATED, 31)
    lines = 0
    with open(path, "wb") as out:
        out.write(sealer.header)
        while out.tell() < megabytes << 20:
            batch = "".join(json.dumps({"uid": f"u{lines + i}", "text": os.urandom(600).hex()}) + "\n"
                            for i in range(500))
            lines += 500
            out.write(sealer.update(compressor.compress(batch.encode())))
        out.write(sealer.update(compressor.flush()) + sealer.finish())
    return lines


def test_a_big_sealed_archive_is_checked_in_bounded_memory(tmp_path):
    """`maxmem doctor` reads every archive: a sealed one is decrypted as a stream, not read
    whole (it took three times the file's size: the file, its ciphertext and its text)."""
    import tracemalloc

    key = keyed().key
    path = tmp_path / "brain.retention-20260101T000000Z.jsonl.gz"
    lines = _big_sealed_archive(path, key, 48)
    tracemalloc.start()
    try:
        reading = check_archive(path, key)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not isinstance(reading, str) and reading.complete and reading.lines == lines
    assert peak < 16 << 20, f"{peak >> 20} MiB to check a 48 MiB sealed archive"
    damaged = bytearray(path.read_bytes())
    damaged[len(damaged) // 2] ^= 1  # a changed byte: the tag check says so, not a line's parse
    path.write_bytes(bytes(damaged))
    assert "does not open with the key given" in check_archive(path, key)
    with pytest.raises(EncryptionKeyError):
        read_archive(path, key=keyed(new_secret()).key)


def _encrypted_home(home: Path, *, content: str = "the deploy key rotates every 90 days") -> str:
    """An encrypted brain.db in MAXMEM_HOME made by the CLI; returns its key."""
    env = {**os.environ, "MAXMEM_HOME": str(home)}
    done = run_maxmem(env, "--embedder", "none", "init", "--encrypt")
    assert done.returncode == 0, done.stderr
    done = run_maxmem(env, "--embedder", "none", "remember", f"{CANARY} {content}", "--category", "core")
    assert done.returncode == 0, done.stderr
    return (home / KEY_FILE_NAME).read_text().strip()


@pytest.mark.slow
def test_without_the_key_or_with_a_wrong_one_commands_fail_in_one_line_and_hooks_exit_0(tmp_path, maxmem_home):
    secret = _encrypted_home(maxmem_home)
    key_file = maxmem_home / KEY_FILE_NAME
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600 and len(secret) == 64
    env = {**os.environ, "MAXMEM_HOME": str(maxmem_home)}
    assert CANARY in run_maxmem(env, "--embedder", "none", "search", CANARY).stdout
    key_file.rename(tmp_path / "kept.key")
    wrong = {**env, "MAXMEM_KEY": new_secret()}
    for case, environment, expected in (("no key", env, "is encrypted and no key was given"),
                                        ("wrong key", wrong, "does not open with the key from MAXMEM_KEY")):
        for args in (["search", CANARY], ["remember", "one more thing"], ["doctor"], ["stats"], ["backup"]):
            done = run_maxmem(environment, "--embedder", "none", *args)
            assert done.returncode == 1, (case, args, done.stdout, done.stderr)
            said = done.stderr + done.stdout
            assert expected in said and "MAXMEM_KEY" in said, (case, args, said)
            assert "Traceback" not in said and "file is not a database" not in said, (case, args, said)
            if args[0] != "doctor":  # doctor reports it as its database check, among its other lines
                assert len(done.stderr.strip().splitlines()) == 1, (case, args, done.stderr)
        done = run_maxmem(environment, "--embedder", "none", "hook", "session-start", "--harness", "claude-code",
                          stdin=HOOK_INPUT)
        assert done.returncode == 0 and done.stdout == "", (case, done.stdout, done.stderr)
        log = (maxmem_home / "logs" / "hook.log").read_text()
        assert expected in log.splitlines()[-1], log
    (tmp_path / "kept.key").rename(key_file)
    os.chmod(key_file, 0o644)
    done = run_maxmem(env, "--embedder", "none", "search", CANARY)
    assert done.returncode == 1
    assert done.stderr.strip() == (f"maxmem: error: the key file {key_file} can be read by others (mode 0644): "
                                   f"it is not used; run chmod 600 {key_file}")
    done = run_maxmem(env, "--embedder", "none", "hook", "session-start", "--harness", "claude-code", stdin=HOOK_INPUT)
    assert done.returncode == 0 and "can be read by others" in (maxmem_home / "logs" / "hook.log").read_text()
    os.chmod(key_file, 0o600)
    assert CANARY in run_maxmem(env, "--embedder", "none", "search", CANARY).stdout


def _fingerprint(path: Path, config: Config, embedder) -> dict:
    """Every memory, its vector, and the keyword and hybrid hits of a few queries."""
    with Brain.open(path, embedder=embedder, config=config) as brain:
        rows = brain.db.rows("SELECT id, uid, content, category, updated_at FROM memories ORDER BY id")
        vectors = brain.db.rows("SELECT rowid, embedding FROM memories_vec ORDER BY rowid")
        keyword = {q: [r["rowid"] for r in brain.db.rows(
            "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank", (q,))]
            for q in ("staging", "balancer", '"project 17"')}
        hybrid = {q: [h.memory.id for h in brain.search(q, limit=5)] for q in ("deploy of project 3", "load balancer")}
        changes = brain.db.scalar("SELECT count(*) FROM changes")
    return {"rows": rows, "vectors": vectors, "keyword": keyword, "hybrid": hybrid, "changes": changes}


def test_encrypt_in_place_keeps_every_memory_vector_and_hit_and_leaves_a_backup(tmp_path, hash_embedder):
    path = tmp_path / "brain.db"
    with Brain.open(path, embedder=hash_embedder) as brain:
        for i in range(300):
            brain.remember(canary_text(i), category="project" if i % 3 else "core")
    plain = load_config(env={"MAXMEM_HOME": str(tmp_path)})
    before = _fingerprint(path, plain, hash_embedder)
    assert holds_text(path)
    done = encrypt(path, plain)
    key_file = tmp_path / KEY_FILE_NAME
    assert done.memories == 300 and done.key_source == f"the key file {key_file}"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert is_encrypted(path) and not holds_text(path)
    assert done.plain_backups == [done.backup] and Path(done.backup).name.startswith("before-encrypt-")
    with Brain.open(done.backup, embedder=hash_embedder) as kept:  # the backup: brain.db as it was
        assert kept.stats()["memories"] == 300
    config = load_config(env={"MAXMEM_HOME": str(tmp_path)})
    assert config.key is not None and config.key.secret == key_file.read_text().strip()
    assert _fingerprint(path, config, hash_embedder) == before
    found = {c["name"]: c for c in run_checks(config.with_(db_path=path), embedder="none")["checks"]}
    assert found["encryption"]["level"] == "warn" and done.backup in found["encryption"]["detail"]
    with pytest.raises(InvalidInput, match="encrypted already"):
        encrypt(path, config)
    back = decrypt(path, config)
    assert back.memories == 300 and not is_encrypted(path) and holds_text(path)
    assert is_encrypted(Path(back.backup)) and not holds_text(Path(back.backup))
    assert _fingerprint(path, config, hash_embedder) == before
    assert key_file.exists()  # the encrypted backups still need it


def test_encrypting_seals_the_archives_and_restore_follows_the_live_brain(tmp_path, hash_embedder):
    path = tmp_path / "brain.db"
    clock = FixedClock("2026-11-30T08:00:00Z")
    with Brain.open(path, embedder=hash_embedder, clock=clock) as brain:
        brain.remember(f"{CANARY} old daily about tomatoes", category="daily", created_at="2026-06-01T12:00:00Z")
        brain.remember(f"{CANARY} kept forever", category="core")
        archive = Path(retain(brain)["archive"])
    assert holds_text(archive)
    done = encrypt(path, load_config(env={"MAXMEM_HOME": str(tmp_path)}), clock=clock)
    assert done.archives == [str(archive)] and not holds_text(archive)
    config = load_config(env={"MAXMEM_HOME": str(tmp_path)})
    assert [r["content"] for r in read_archive(archive, key=config.key).records] == [
        f"{CANARY} old daily about tomatoes"]
    # the plain backup made before encrypting, restored into the encrypted brain, comes back encrypted
    with Brain.open(path, embedder=hash_embedder, config=config) as brain:
        brain.remember(f"{CANARY} written after the backup", category="core")
    restored = restore(done.backup, path, config=config, embedder=hash_embedder, clock=clock)
    assert restored.memories == 1 and is_encrypted(path) and not holds_text(path)
    assert is_encrypted(Path(restored.kept_aside)) and not holds_text(Path(restored.kept_aside))
    with Brain.open(path, embedder=hash_embedder, config=config) as brain:
        assert [m.content for m in brain.list(limit=10)] == [f"{CANARY} kept forever"]
    # and an encrypted backup of the encrypted brain restores as it is
    with Brain.open(path, embedder=hash_embedder, config=config) as brain:
        brain.remember(f"{CANARY} second", category="core")
    made = create_backup(path, tmp_path / "b.db", config=config)
    with pytest.raises(EncryptionKeyError, match="is encrypted and no key was given"):
        restore(made.path, tmp_path / "other.db", config=Config(), embedder=hash_embedder)
    again = restore(made.path, tmp_path / "other.db", config=config, embedder=hash_embedder)
    assert again.memories == 2 and is_encrypted(tmp_path / "other.db")


def test_the_read_only_second_connection_and_an_older_schema_read_in_memory(tmp_path, hash_embedder, monkeypatch):
    config = keyed()
    folder = tmp_path / "brain"
    folder.mkdir()
    path = folder / "brain.db"
    with Brain.open(path, embedder=hash_embedder, config=config) as brain:
        for i in range(40):
            brain.remember(canary_text(i), category="core")
        reader = brain.db.reader()
        assert reader is not None and reader.key == config.key and reader.read_only
        try:
            assert reader.scalar("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'balancer'") == 40
        finally:
            reader.close()
    old = tmp_path / "old" / "brain.db"
    old.parent.mkdir()
    everything = list(migrations_module.MIGRATIONS)
    monkeypatch.setattr(migrations_module, "MIGRATIONS", everything[:len(everything) - 1])
    db = Database(old, key=config.key)
    migrate(db)
    db.execute("INSERT INTO memories (uid, category, content, content_hash, created_at, updated_at) "
               "VALUES ('u1', 'core', ?, 'h', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
               (f"{CANARY} from an older maxmem",))
    db.close()
    monkeypatch.setattr(migrations_module, "MIGRATIONS", everything)
    copy = Database(old, readonly=True, key=config.key).copy_in_memory(migrate)
    try:
        assert copy.key is None and copy.scalar("SELECT content FROM memories") == f"{CANARY} from an older maxmem"
        assert copy.scalar("SELECT count(*) FROM schema_migrations") == len(everything)
    finally:
        copy.close()
    assert is_encrypted(old) and not holds_text(old)
    with read_only_mount(old.parent) as mounted:  # immutable=1, and the upgraded copy in memory, through Brain
        with Brain.open(mounted / "brain.db", embedder="none", config=config) as brain:
            assert "older schema" in (brain.db.read_only or "")
            assert [h.memory.content for h in brain.search(CANARY, limit=1)] == [f"{CANARY} from an older maxmem"]


def test_browse_refuses_an_encrypted_brain_in_one_line(tmp_path, hash_embedder):
    pytest.importorskip("datasette")
    from maxmem.browse.server import BrowseError, build

    config = keyed().with_(db_path=tmp_path / "brain.db")
    Brain.open(config.db_path, embedder=hash_embedder, config=config).close()
    with pytest.raises(BrowseError, match="cannot show an encrypted brain.db") as caught:
        build(config)
    assert "\n" not in str(caught.value)


@pytest.mark.slow
def test_the_tick_and_a_hook_find_the_key_under_env_i(tmp_path):
    home = tmp_path / "home"
    env = {"HOME": str(home)}
    done = run_maxmem(env, "--embedder", "none", "init", "--encrypt")
    assert done.returncode == 0, done.stderr
    key_file = home / ".config" / "maxmem" / KEY_FILE_NAME
    assert key_file.exists() and f"the key is in the key file {key_file}" in done.stdout
    done = run_maxmem(env, "remember", f"{CANARY} always run the linter before committing", "--category", "core")
    assert done.returncode == 0, done.stderr
    done = run_maxmem(env, "hook", "session-start", "--harness", "claude-code", stdin=HOOK_INPUT)
    assert done.returncode == 0 and CANARY in done.stdout, (done.stdout, done.stderr)
    state = home / ".local" / "state" / "maxmem"
    prompt = json.dumps({"session_id": "p1", "prompt": "what do we run before committing code?"})

    def answered_warm() -> bool:  # the first prompt starts the recall server, which must find the key
        assert run_maxmem(env, "hook", "user-prompt", "--harness", "claude-code", stdin=prompt).returncode == 0
        return "(warm," in (state / "hook.log").read_text().splitlines()[-1]

    try:
        assert any(answered_warm() or time.sleep(0.3) for _ in range(100)), (state / "hook.log").read_text()
    finally:
        stop_servers(state)
    done = run_maxmem(env, "daemon", "--once", "--if-due")
    assert done.returncode == 0, (done.stdout, done.stderr)
    backups = sorted((home / ".openclaw" / "workspace" / "memory" / "backups").glob("brain-*.db"))
    assert len(backups) == 1 and is_encrypted(backups[0]) and not holds_text(backups[0])
    state = home / ".local" / "state" / "maxmem"
    for written in [p for p in state.rglob("*") if p.is_file()]:  # logs, shown lists: no memory text
        assert not holds_text(written), written
    database = Database(backups[0], key=Key(key_file.read_text().strip(), "test"))
    try:
        assert database.scalar("SELECT count(*) FROM memories") == 1
    finally:
        database.close()


@pytest.mark.slow
def test_the_key_sources_are_asked_in_order_with_a_real_keyring_backend(tmp_path):
    pytest.importorskip("keyrings.alt")
    home, data = tmp_path / "home", tmp_path / "data"
    env = {"HOME": str(tmp_path), "MAXMEM_HOME": str(home), "XDG_DATA_HOME": str(data),
           "PYTHON_KEYRING_BACKEND": "keyrings.alt.file.PlaintextKeyring"}
    done = run_maxmem(env, "--embedder", "none", "init", "--encrypt", "--keyring")
    assert done.returncode == 0, done.stderr
    assert "the key is in the OS keyring" in done.stdout and not (home / KEY_FILE_NAME).exists()
    stored = list(data.rglob("keyring_pass.cfg"))
    assert stored, "the file keyring holds the key"
    assert run_maxmem(env, "--embedder", "none", "remember", f"{CANARY} from the keyring", "--category",
                      "core").returncode == 0
    search = ("--embedder", "none", "search", CANARY)
    assert CANARY in run_maxmem(env, *search).stdout  # 3. the keyring
    (home / KEY_FILE_NAME).write_text("not the key\n")
    os.chmod(home / KEY_FILE_NAME, 0o600)
    done = run_maxmem(env, *search)  # 2. the key file comes before the keyring
    assert done.returncode == 1 and f"the key from the key file {home / KEY_FILE_NAME}" in done.stderr
    import keyrings.alt.file  # the same backend, read in-process from the same file

    backend = keyrings.alt.file.PlaintextKeyring()
    backend.file_path = str(stored[0])
    secret = backend.get_password("maxmem", "brain.key")
    assert secret and len(secret) == 64
    done = run_maxmem({**env, "MAXMEM_KEY": secret}, *search)  # 1. MAXMEM_KEY comes first
    assert done.returncode == 0 and CANARY in done.stdout, done.stderr
    done = run_maxmem({**env, "MAXMEM_KEY": new_secret()}, *search)
    assert done.returncode == 1 and "the key from MAXMEM_KEY" in done.stderr
    (home / KEY_FILE_NAME).unlink()
    assert CANARY in run_maxmem(env, *search).stdout
    # a plain brain never asks the keyring: a broken backend changes nothing
    plain = {**env, "MAXMEM_HOME": str(tmp_path / "plain"), "PYTHON_KEYRING_BACKEND": "no.such.Backend"}
    assert run_maxmem(plain, "--embedder", "none", "remember", "plain note").returncode == 0
    assert load_config(env={"MAXMEM_HOME": str(tmp_path / "plain")}).key is None


def _big_plain_brain(path: Path) -> int:
    with Brain.open(path, embedder="none") as brain:
        brain.remember_many([{"content": canary_text(i) + " " + "padding words " * 60, "category": "project"}
                             for i in range(12000)], embed=False)
        return brain.stats()["memories"]


@pytest.mark.slow
def test_killed_mid_encrypt_loses_nothing(tmp_path):
    """kill -9 at points spread over a real `maxmem encrypt` of a 45 MB brain.db: each time
    brain.db opens whole (plain or encrypted) with every memory and keyword hit, and the
    next run finishes the job."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    path = home / "brain.db"
    count = _big_plain_brain(path)
    env = {**os.environ, "MAXMEM_HOME": str(home)}
    pristine = tmp_path / "pristine.db"
    assert create_backup(path, pristine).memories == count
    started = time.monotonic()
    assert run_maxmem(env, "--embedder", "none", "stats").returncode == 0
    startup = time.monotonic() - started  # the imports and the first open, before any work
    started = time.monotonic()
    done = run_maxmem(env, "--embedder", "none", "encrypt")
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    states = []
    for fraction in (0.1, 0.25, 0.4, 0.55, 0.7, 0.8, 0.9, 0.97):
        for leftover in (*home.iterdir(), *(home / "backups").iterdir()):
            if leftover.is_file():
                leftover.unlink()
        create_backup(pristine, path)  # a fresh plain brain.db for each kill
        process = subprocess.Popen([str(MAXMEM), "--embedder", "none", "encrypt"], env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(startup + (took - startup) * fraction)
        process.send_signal(signal.SIGKILL)
        process.wait()
        begun = any((home / "backups").iterdir()) or any(".encrypt-" in p.name for p in home.iterdir())
        states.append("encrypted" if is_encrypted(path) else "mid-way" if begun else "not begun")
        config = load_config(env={"MAXMEM_HOME": str(home)})
        with Brain.open(path, embedder="none", config=config, check_embedder=False) as brain:
            assert brain.stats()["memories"] == count, (fraction, states)
            assert brain.db.scalar("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'balancer'") == count
        again = run_maxmem(env, "--embedder", "none", "encrypt")
        if states[-1] == "encrypted":
            assert again.returncode == 2 and "encrypted already" in again.stderr
        else:
            assert again.returncode == 0, (fraction, again.stderr)
        assert is_encrypted(path) and not [p for p in home.iterdir() if ".encrypt-" in p.name]
    assert "mid-way" in states, states


def test_scrub_reaches_into_the_sealed_archives_and_encrypted_backups(tmp_path, hash_embedder):
    from test_scrub import corpus_secrets

    from maxmem.archive import write as write_archive
    from maxmem.scrub import scrub

    (_, text, values), = corpus_secrets()[:1]
    config = keyed().with_(redact_on_remember=False)  # as an older maxmem stored it
    path = tmp_path / "brain.db"
    clock = FixedClock("2026-11-30T08:00:00Z")
    with Brain.open(path, embedder=hash_embedder, config=config, clock=clock) as brain:
        brain.remember(f"{CANARY} old daily", category="daily", created_at="2026-06-01T12:00:00Z")
        brain.remember(f"{CANARY} setting up: {text}", category="core")
        archive = Path(retain(brain)["archive"])
        records = read_archive(archive, key=config.key).records
        write_archive(archive, [{**records[0], "content": f"old daily: {text}"}], replace=True, key=config.key)
        create_backup(path, config=config, clock=clock)
    with Brain.open(path, embedder=hash_embedder, config=config.with_(redact_on_remember=True), clock=clock) as brain:
        report = scrub(brain)
    assert [(f.action, f.total > 0) for f in report.archives] == [("rewritten", True)]
    assert [(f.action, f.total > 0) for f in report.backups] == [("rewritten", True)]
    assert is_sealed(archive.read_bytes()) and is_encrypted(Path(report.backups[0].path))
    reread = read_archive(archive, key=config.key).records[0]["content"]
    assert reread.startswith("old daily:") and not any(v in reread for v in values)


def test_bad_keys_and_wrong_states_are_one_line(tmp_path, maxmem_home):
    path = maxmem_home / "brain.db"
    Brain.open(path, embedder="none", config=keyed()).close()  # encrypted, its key kept nowhere
    (maxmem_home / KEY_FILE_NAME).write_text("")
    os.chmod(maxmem_home / KEY_FILE_NAME, 0o600)
    with pytest.raises(EncryptionKeyError, match="must hold the key on one line"):
        load_config()
    (maxmem_home / KEY_FILE_NAME).write_bytes(b"\xff\xfe")
    with pytest.raises(EncryptionKeyError, match="is not text"):
        load_config()
    (maxmem_home / KEY_FILE_NAME).unlink()
    missing = tmp_path / "elsewhere.key"
    with pytest.raises(EncryptionKeyError, match="elsewhere.key \\(key_file in the config\\) does not exist"):
        load_config(env={"MAXMEM_HOME": str(maxmem_home), "MAXMEM_KEY_FILE": str(missing)})
    assert load_config(env={"MAXMEM_HOME": str(tmp_path / "new"), "MAXMEM_KEY_FILE": str(missing)}).key is None
    with pytest.raises(EncryptionKeyError, match="is encrypted and no key was given"):
        Database(path)
    plain = tmp_path / "plain.db"
    Brain.open(plain, embedder="none").close()
    config = load_config(env={"MAXMEM_HOME": str(tmp_path)}, db_path=plain)
    with pytest.raises(InvalidInput, match="is not encrypted"):
        decrypt(plain, config)
    with pytest.raises(InvalidInput, match="no brain.db at"):
        encrypt(tmp_path / "none.db", config)
    assert not (tmp_path / KEY_FILE_NAME).exists()  # nothing was saved for a refused run
    with Brain.open(plain, embedder="none") as holder:  # another connection keeps brain.db open
        with pytest.raises(DatabaseError, match="is open in another process .* nothing was changed"):
            encrypt(plain, config.with_(busy_timeout_ms=300))
        assert holder.stats()["memories"] == 0
    assert not is_encrypted(plain) and not [p for p in tmp_path.iterdir() if ".encrypt-" in p.name]
    env = {**os.environ, "MAXMEM_HOME": str(tmp_path / "cli")}
    assert run_maxmem(env, "--embedder", "none", "remember", "a plain memory").returncode == 0
    done = run_maxmem(env, "--embedder", "none", "init", "--encrypt")
    assert done.returncode == 2 and "exists and is not encrypted: run maxmem encrypt" in done.stderr
    done = run_maxmem(env, "--embedder", "none", "init", "--keyring")
    assert done.returncode == 2 and "--keyring goes with --encrypt" in done.stderr
