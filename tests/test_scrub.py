"""`maxmem scrub`: a secret stored before a rule existed leaves every place.

The old brain.db is made as an older maxmem would have left it: memories, an update
(history), a save-context (raw turns and tool calls) all written with
redact_on_remember off; then a backup and a retention archive that hold it too. The
installed `maxmem scrub` runs under `env -i HOME=…`."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from maxmem import Brain, Config
from maxmem.archive import write as write_archive
from maxmem.backup import backup
from maxmem.compaction import save_context
from maxmem.scrub import kinds, scrub

MAXMEM = Path(sys.executable).parent / "maxmem"
CORPUS = Path(__file__).resolve().parent / "data" / "secrets"
SHAPES = ("aws-pair", "github-classic", "openai-proj", "huggingface", "gitlab", "pypi", "sendgrid", "twilio-auth-token",
          "password", "jwt", "basic-auth", "pem-private-key")


def corpus_secrets(count_per_shape: int = 1) -> list[tuple[str, str, list[str]]]:
    """(shape, text, secret values) from the labelled corpus, a few of each listed shape."""
    taken: dict[str, int] = {}
    out = []
    for line in (CORPUS / "dev.jsonl").read_text().splitlines():
        item = json.loads(line)
        shape = item["shape"]
        if item["label"] != "secret" or taken.get(shape, 0) >= count_per_shape:
            continue
        if shape not in SHAPES:
            continue
        taken[shape] = taken.get(shape, 0) + 1
        out.append((shape, item["text"], [item["text"][s:e] for s, e, _ in item["spans"]]))
    return out


def old_brain(path: Path, items: list[tuple[str, str, list[str]]]) -> None:
    """brain.db as written with redaction off: memories, an update, a save-context."""
    config = Config(redact_on_remember=False)
    with Brain.open(path, embedder="local", config=config) as brain:
        first = None
        for shape, text, _ in items:
            memory = brain.remember(f"while setting up {shape}:\n{text}", category="project",
                                    tags=["setup"], metadata={"note": text[:200]})
            first = first or memory
        assert first is not None
        brain.update(first.id, title="setup notes")  # one more snapshot in the change log
        text = items[0][1]
        save_context(brain, {"session_id": "agent:main:main", "agent": "main", "exchanges": [{
            "user_message": f"why does this fail? {text}",
            "assistant_response": "Let me run it.",
            "tool_calls": [{"name": "bash", "params": {"command": f"curl -d '{json.dumps({'cfg': text})}' x"},
                            "result": text}],
            "timestamp": "2026-11-30T10:00:00Z",
        }]})
        backup(brain.db, config=config)


def raw_bytes(folder: Path) -> bytes:
    """Every byte of every file under `folder`, gzip archives uncompressed."""
    out = []
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            out.append(gzip.decompress(data) if p.name.endswith(".gz") else data)
    return b"\n".join(out)


def leaked(data: bytes, values: list[str]) -> list[str]:
    """The values (or their JSON-escaped form) found in `data`."""
    return [v for v in values if len(v) >= 6 and (v.encode() in data or json.dumps(v)[1:-1].encode() in data)]


def digests(folder: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def maxmem(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MAXMEM), *args], env={"HOME": str(home)}, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.slow
@pytest.mark.skipif(not MAXMEM.is_file(), reason="the maxmem entry point is not installed")
def test_scrub_removes_an_old_secret_from_every_place_and_dry_run_changes_nothing(tmp_path):
    items = corpus_secrets()
    assert len({shape for shape, _, _ in items}) >= 8
    values = [v for _, _, vs in items for v in vs]
    home, data = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    data.mkdir()
    db = data / "brain.db"
    old_brain(db, items)
    record = {"_table": "memories", "uid": "m-archived", "category": "daily", "content": items[1][1],
              "title": None, "tags": [], "metadata": {}}
    turn = {"_table": "turns", "id": 99, "session_id": "s", "text": items[2][1]}
    write_archive(data / "brain.retention-20261101T000000Z.jsonl.gz", [record, turn])
    assert set(leaked(raw_bytes(data), values)) == {v for v in values if len(v) >= 6}

    before = digests(data)
    dry = maxmem(home, "--db", str(db), "scrub", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    planned = json.loads(dry.stdout)
    assert digests(data) == before  # nothing written: brain.db, -wal, backups, archive
    assert planned["total"] >= len(values)
    assert {"memories", "change log", "turns", "tool calls"} <= set(planned["found"])
    assert [b["action"] for b in planned["backups"]] == ["would-rewrite"]
    assert [a["action"] for a in planned["archives"]] == ["would-rewrite"]
    assert not leaked(dry.stdout.encode() + dry.stderr.encode(), values)  # counts, never the text

    done = maxmem(home, "--db", str(db), "scrub", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["found"] == planned["found"]  # the dry run counted what the run removed
    assert report["total"] == planned["total"]
    changed = len(items) + 1  # and the save-context exchange
    assert report["memories_changed"] == planned["memories_changed"] == changed
    assert report["reembedded"] == changed and report["pending"] == 0
    assert [b["action"] for b in report["backups"]] == ["rewritten"]
    assert [a["action"] for a in report["archives"]] == ["rewritten"]
    assert leaked(raw_bytes(data), values) == []  # brain.db, its -wal, the backup, the archive
    assert not [p for p in data.rglob("*-wal") if p.parent.name == "backups"]  # backups self-contained

    with Brain.open(db, embedder="local") as brain:
        assert brain.pending_count() == 0
        memories = brain.list(limit=100)
        assert all("[REDACTED:" in m.content for m in memories if m.category == "project")
        assert not [t for t in secret_terms(values) if t in index_terms(brain)]
        for memory in memories:
            assert not leaked(json.dumps(brain.history(memory.id)).encode(), values)

    again = maxmem(home, "--db", str(db), "scrub", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["total"] == 0


def index_terms(brain: Brain) -> set[str]:
    """Every term of the keyword index (through a temp fts5vocab table: nothing written to brain.db)."""
    brain.db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.terms USING fts5vocab(main, memories_fts, row)")
    return {row[0] for row in brain.db.execute("SELECT term FROM temp.terms")}


def secret_terms(values: list[str]) -> set[str]:
    """The long letter-and-digit runs of the secrets: what the tokenizer would index."""
    return {t.lower() for v in values for t in re.findall(r"[A-Za-z0-9]{10,}", v) if not t.isalpha()}


def test_scrub_in_process_counts_kinds_and_leaves_a_clean_brain_alone(tmp_path, hash_embedder):
    with Brain.open(tmp_path / "b.db", embedder=hash_embedder, config=Config(redact_on_remember=False)) as brain:
        brain.remember("deploy with PGPASSWORD=Tr0ub4dor-and-3 psql -h db", category="project")
        brain.remember("nothing secret: sort_key: created_at, token_count: 1532", category="project")
        brain.remember("tagged", category="daily", tags=["staging box notes for the deploy of v2.3, password=Xy7kq2Mz"])
        dry = scrub(brain, dry_run=True)
        assert dry.found["memories"] == {"secret": 2}
        assert dry.memories_changed == 2
        done = scrub(brain)
        assert done.found == dry.found and done.memories_changed == 2 and not done.failed
        stored = json.dumps([m.to_dict() for m in brain.list()])
        assert "Tr0ub4dor" not in stored and "Xy7kq2Mz" not in stored
        assert all(len(t) <= 64 for m in brain.list() for t in m.tags)  # the marker is longer: cut
        assert scrub(brain).total == 0


def test_scrub_takes_a_secret_out_of_a_memorys_source_and_agent(tmp_path, hash_embedder):
    # an older maxmem stored source and agent as given (an import, an MCP client)
    with Brain.open(tmp_path / "b.db", embedder=hash_embedder, config=Config(redact_on_remember=False)) as brain:
        brain.remember("the deploy notes", category="project",
                       source="import token=ghp_R8fK2mQx7LpZ3vNw9TbY4cHs6JdE1gUa5WoQ", agent="bot password=Xy7kq2Mz")
        done = scrub(brain)
        stored = json.dumps([m.to_dict() for m in brain.list()])
    assert done.memories_changed == 1 and not done.failed
    assert "ghp_" not in stored and "Xy7kq2Mz" not in stored and "the deploy notes" in stored


def test_kinds_counts_markers_and_private_spans():
    assert kinds("a", "[REDACTED:openai] b", 1) == {"openai": 1}
    assert kinds("x <private>y</private>", "x ", 1) == {"private": 1}
    assert kinds("[REDACTED:aws] k", "[REDACTED:aws] [REDACTED:aws]", 1) == {"aws": 1}


# Shapes the older rules let through; each must leave once scrub runs the current ones.
NEWER_SHAPES = [
    "the DSN is postgres://app:q7/Zx9Lm2@db.internal:5432/app",
    "my password is Hunter2Zebra!",
    "log in to the NAS as admin with Qx7!vR2#pL9m",
    "Das Passwort für den Router lautet K8#mPq2vXz",
    "card 4539 1488 0343 6467 exp 09/27 cvv 731",
    "echo 'S3cr3tPa55!' | docker login -u bob --password-stdin registry.example.com",
    "Cookie: sessionid=k2j3h4g5f6d7s8a9q0w1e2r3t4y5u6i7; theme=dark",
]
NEWER_VALUES = ["q7/Zx9Lm2", "Hunter2Zebra", "Qx7!vR2#pL9m", "K8#mPq2vXz", "4539 1488 0343 6467",
                "S3cr3tPa55!", "k2j3h4g5f6d7s8a9q0w1e2r3t4y5u6i7"]


def test_a_memory_written_straight_into_brain_db_is_scrubbed_by_the_same_redactor(tmp_path, hash_embedder):
    """A row put in with SQL, past every redaction (as an older maxmem or another tool
    might have left it), is found and cleaned by scrub with the redactor remember uses."""
    with Brain.open(tmp_path / "b.db", embedder=hash_embedder) as brain:
        memory = brain.remember("placeholder to be overwritten", category="project")
        raw = "\n".join(NEWER_SHAPES)
        with brain.db.atomic():
            brain.db.execute("UPDATE memories SET content = ? WHERE id = ?", (raw, memory.id))
        assert brain.get(memory.id).content == raw  # stored raw, bypassing check_record
        assert brain.redactor.redact(raw)[1] == len(NEWER_SHAPES) + 1  # the CVV is one more
        report = scrub(brain)
        assert report.found["memories"] and report.memories_changed == 1 and not report.failed
        stored = brain.get(memory.id).content
        assert [v for v in NEWER_VALUES if v in stored] == []
        assert "[REDACTED:" in stored and "log in to the NAS as admin with" in stored  # the words stay
        assert scrub(brain).total == 0
