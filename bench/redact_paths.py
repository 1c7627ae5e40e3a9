#!/usr/bin/env python3
"""Which ways in let a secret through? Leaked values per path, one fresh brain.db each.

    python bench/redact_paths.py            # the table
    python bench/redact_paths.py --json     # the same as JSON

The labelled corpus (tests/data/secrets/: one secret item of every shape and of every
context) goes in through one way at a time; then the secret values (as they are or
JSON-escaped) are looked for in the raw bytes of brain.db and brain.db-wal, and in
every text given to the embedder (an in-process recorder standing in for an embedding
API: what it is given is what would be sent). tests/test_redaction_paths.py asserts 0
everywhere; this prints the counts, e.g. to compare with an older checkout
(PYTHONPATH=<checkout> python bench/redact_paths.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # after PYTHONPATH: another checkout given there comes first
CORPUS = ROOT / "tests" / "data" / "secrets"

sys.path.insert(0, str(ROOT / "bench"))
import secret_shapes  # noqa: E402

from maxmem import Brain  # noqa: E402
from maxmem.capture import run_capture  # noqa: E402
from maxmem.compaction import save_context  # noqa: E402
from maxmem.markdown.merge import import_markdown  # noqa: E402


class Recorder:
    """An embedder that keeps every text it is given (documents and queries)."""

    provider, model, dim = "bench", "recorder", 64

    def __init__(self) -> None:
        self.texts: list[str] = []

    def _vectors(self, texts: list[str]) -> np.ndarray:
        rng = [np.random.default_rng(abs(hash(t)) % 2**32).standard_normal(self.dim) for t in texts]
        out = np.vstack(rng).astype(np.float32) if texts else np.zeros((0, self.dim), np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True).clip(1e-9)

    def embed_documents(self, texts: Any) -> np.ndarray:
        self.texts += list(texts)
        return self._vectors(list(texts))

    def embed_query(self, text: str) -> np.ndarray:
        self.texts.append(text)
        return self._vectors([text])[0]


def sample() -> list[dict[str, Any]]:
    """One secret item of every shape and one of every context (dev and held-out), then
    every development shape of bench/secret_shapes.py, with its secret values
    (tests/test_redaction_paths.py feeds the same sample)."""
    shapes: set[str] = set()
    contexts: set[str] = set()
    out = []
    for name in ("dev.jsonl", "heldout.jsonl"):
        for line in (CORPUS / name).read_text().splitlines():
            item = json.loads(line)
            if item["label"] != "secret" or (item["shape"] in shapes and item["context"] in contexts):
                continue
            shapes.add(item["shape"])
            contexts.add(item["context"])
            item["values"] = [item["text"][s:e] for s, e, _ in item["spans"]]
            out.append(item)
    for item in secret_shapes.shape_items("dev"):
        item["values"] = [item["text"][s:e] for s, e, _ in item["spans"]]
        out.append(item)
    return out


def transcript(folder: Path, texts: list[str]) -> Path:
    session = "5f1e0c2a-8d3b-4e6f-9a7c-1b2d3e4f5a6b"
    lines = []
    for n, text in enumerate(texts):
        at = f"2026-11-28T10:{n // 60:02d}:{n % 60:02d}Z"
        base = {"sessionId": session, "cwd": "/home/user/proj", "timestamp": at}
        lines += [
            {**base, "type": "user", "uuid": f"u-{n}", "message": {"role": "user", "content": text}},
            {**base, "type": "assistant", "uuid": f"a-{n}", "message": {
                "role": "assistant", "id": f"m-{n}",
                "content": [{"type": "tool_use", "id": f"t-{n}", "name": "Bash", "input": {"command": text}}]}},
            {**base, "type": "user", "uuid": f"r-{n}", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"t-{n}", "content": text}]}},
        ]
    path = folder / "projects" / "p" / f"{session}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _update(brain: Brain, texts: list[str], _: Path) -> None:
    for n, text in enumerate(texts):
        memory = brain.remember(f"placeholder note number {n}", category="daily")
        brain.update(memory.id, content=text, metadata={"raw": text})


def _markdown(brain: Brain, texts: list[str], folder: Path) -> None:
    path = folder / "MEMORY.md"
    path.write_text("# Memory\n\n## Facts\n\n" + "".join(f"- {t}\n" for t in texts))
    import_markdown(brain, path)


def _save_context(brain: Brain, texts: list[str], _: Path) -> None:
    save_context(brain, {"session_id": "agent:main:bench", "exchanges": [
        {"user_message": t, "assistant_response": "ok", "timestamp": f"2026-11-29T10:{n // 60:02d}:{n % 60:02d}Z",
         "tool_calls": [{"name": "bash", "params": {"command": t}, "result": t}]} for n, t in enumerate(texts)]})


def _search(brain: Brain, texts: list[str], _: Path) -> None:
    brain.remember("one memory, so searches use vectors", category="core")
    for text in texts:
        brain.search(text, min_relevance=0)


PATHS: dict[str, Callable[[Brain, list[str], Path], Any]] = {
    "remember": lambda b, ts, _: [b.remember(t, category="project", metadata={"raw": t}) for t in ts],
    "update": _update,
    "import jsonl": lambda b, ts, _: b.import_records([{"content": t, "metadata": {"raw": t}} for t in ts]),
    "import markdown": _markdown,
    "save-context": _save_context,
    # capture stores first; the embed step after it (embed_pending) sends its texts to the embedder
    "capture": lambda b, ts, folder: (run_capture(b, paths=[transcript(folder, ts)], format="claude-code"),
                                      b.embed_pending()),
    "search query": _search,
}


def leaked(data: bytes, values: list[str]) -> int:
    def forms(v: str) -> list[bytes]:
        once = json.dumps(v)[1:-1]
        return [f.encode() for f in {v, once, json.dumps(once)[1:-1]}]
    return sum(1 for v in values if any(f in data for f in forms(v)))


def run_path(name: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    if name == "import markdown":  # a bullet is one line
        items = [i for i in items if "\n" not in i["text"]]
    texts = [i["text"] for i in items]
    values = sorted({v for i in items for v in i["values"] if len(v) >= 6})
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        recorder = Recorder()
        with Brain.open(folder / "brain.db", embedder=recorder) as brain:
            PATHS[name](brain, texts, folder)
            stored = b"".join(p.read_bytes() for p in (folder / "brain.db", folder / "brain.db-wal") if p.exists())
        sent = "\n".join(recorder.texts).encode()
        return {"path": name, "secrets": len(values), "in_brain_db": leaked(stored, values),
                "sent_to_embedder": leaked(sent, values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    items = sample()
    rows = [run_path(name, items) for name in PATHS]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{len(items)} corpus items, {len({i['shape'] for i in items})} shapes")
    print(f"{'way in':<16} {'secrets':>8} {'in brain.db':>12} {'to embedder':>12}")
    for r in rows:
        print(f"{r['path']:<16} {r['secrets']:>8} {r['in_brain_db']:>12} {r['sent_to_embedder']:>12}")


if __name__ == "__main__":
    main()
