#!/usr/bin/env python3
"""Recall on LoCoMo-10 (Maharana et al., ACL 2024), through the code path users get.

The data is not part of maxmem (CC BY-NC 4.0): download data/locomo10.json from
https://github.com/snap-research/LoCoMo and pass its path.

The protocol:
- one brain.db per conversation, loaded with `Brain.remember_many`: one memory per
  turn, category `conversation`, content "<speaker>: <text>" (plus " [shares
  <caption>]" for a shared image), created_at = the session's date, metadata
  {"dia_id", "session"}, and the session as `session_id` (as capture sets it);
- query = the question text only, through `Brain.search(question, limit=10, mode=...)`;
- Recall@k = |gold ∩ dia_ids of the top k| / |gold| (a memory holding several turns,
  metadata "dia_ids", expands to them in place, deduplicated, cut at k ids), R@5, R@10
  and MRR per category and micro-averaged over categories 1-4; category 5
  (adversarial) evidence recall on its own line;
- conv-26 and conv-30 are the tuning pair, reported apart from the other eight.

Each mode is a row of the same run: hybrid (the default), keyword only, vector only;
those rank without the relevance gate (min_relevance 0). With hybrid, a fourth row,
"gated", is the hybrid search with the brain's own min_relevance, as users and the
prompt hook get it: a hit the gate cuts counts as not retrieved.
Embeddings are cached in a file the script keeps (bench/out/locomo-embeddings.sqlite),
so a second run takes minutes; query time is printed beside the figures, split into
search and (uncached) question embedding.

    python bench/locomo.py --data PATH/locomo10.json
    python bench/locomo.py --data PATH/locomo10.json --convs conv-26 conv-30 --json out.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from maxmem import Brain  # noqa: E402
from maxmem.config import Config  # noqa: E402
from maxmem.embeddings import Embedder, make_embedder  # noqa: E402
from maxmem.search.hybrid import vector_query  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
TUNING = ("conv-26", "conv-30")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
SCORED = (1, 2, 3, 4)
MODES = ("hybrid", "keyword", "vector")
GATED = "gated"  # the row of the hybrid search through the relevance gate
# DRAGON dense retriever, LoCoMo paper Table 3 (R@10; overall over categories 1-5).
DRAGON_R10 = {"overall": 66.2, 1: 46.6, 2: 77.3, 3: 40.8, 4: 77.7}
DRAGON_BY_K = {5: 56.7, 10: 66.2, 25: 76.7, 50: 82.7}


# -- data -----------------------------------------------------------------------

@dataclass
class Question:
    text: str
    category: int
    gold: list[str]


@dataclass
class Conversation:
    sample_id: str
    items: list[dict[str, Any]]  # for Brain.remember_many
    questions: list[Question] = field(default_factory=list)


def session_time(text: str) -> str:
    """'1:56 pm on 8 May, 2023' -> '2023-05-08T13:56:00.000Z' (the only timestamp LoCoMo has)."""
    parsed = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    return parsed.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def evidence(raw: Iterable[str], valid: set[str]) -> list[str]:
    """Normalised gold ids: 'D8:6; D9:17' split, 'D30:05' -> 'D30:5', 'D:11:26' -> 'D11:26';
    ids that name no turn dropped."""
    out: list[str] = []
    for item in raw:
        for token in re.split(r"[;,\s]+", str(item)):
            match = re.fullmatch(r"D:?(\d+):0*(\d+)", token.strip())
            if match:
                dia_id = f"D{int(match.group(1))}:{int(match.group(2))}"
                if dia_id in valid and dia_id not in out:
                    out.append(dia_id)
    return out


def load(path: Path, only: Sequence[str] | None = None) -> list[Conversation]:
    if not Path(path).is_file():
        raise SystemExit(f"--data {path}: no such file (LoCoMo-10's data/locomo10.json, "
                         "from https://github.com/snap-research/LoCoMo)")
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    conversations = []
    for sample in data:
        if only and sample["sample_id"] not in only:
            continue
        conv = sample["conversation"]
        items: list[dict[str, Any]] = []
        number = 1
        while f"session_{number}" in conv or f"session_{number}_date_time" in conv:
            turns = conv.get(f"session_{number}") or []
            if turns:
                created = session_time(conv[f"session_{number}_date_time"])
                for turn in turns:
                    content = f"{turn['speaker']}: {turn['text']}"
                    if turn.get("blip_caption"):
                        content += f" [shares {turn['blip_caption']}]"
                    items.append({
                        "content": content,
                        "category": "conversation",
                        "created_at": created,
                        "session_id": f"{sample['sample_id']}/session_{number}",
                        "metadata": {"dia_id": turn["dia_id"], "session": number},
                    })
            number += 1
        valid = {item["metadata"]["dia_id"] for item in items}
        found = Conversation(sample["sample_id"], items)
        for qa in sample["qa"]:
            gold = evidence(qa.get("evidence", []), valid)
            if gold:
                found.questions.append(Question(qa["question"], int(qa["category"]), gold))
        conversations.append(found)
    if only:
        missing = set(only) - {c.sample_id for c in conversations}
        if missing:
            raise SystemExit(f"no conversation {', '.join(sorted(missing))} in {path}")
    return conversations


# -- embeddings cache -------------------------------------------------------------

class CachedEmbedder:
    """The local embedder behind a file of vectors kept between runs.

    Same provider, model and dimension as the embedder it wraps, so brain.db cannot
    tell the difference; a text is embedded once, ever, for this benchmark.
    """

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner = inner
        self.provider, self.model = inner.provider, inner.model
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path)
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        self.embedded = 0  # texts sent to the model in this run

    @property
    def dim(self) -> int:
        return self.inner.dim

    def _key(self, kind: str, text: str) -> str:
        return hashlib.sha256(f"{self.provider}:{self.model}:{kind}:{text}".encode()).hexdigest()

    def _lookup(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            chunk = list(keys[start:start + 500])
            rows = self._db.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(chunk))})", chunk)
            found.update((k, np.frombuffer(v, dtype=np.float32)) for k, v in rows)
        return found

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._key("doc", t) for t in texts]
        found = self._lookup(keys)
        todo = {k: t for k, t in zip(keys, texts) if k not in found}
        if todo:
            vectors = np.asarray(self.inner.embed_documents(list(todo.values())), dtype=np.float32)
            fresh = dict(zip(todo, vectors))
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                                     [(k, v.tobytes()) for k, v in fresh.items()])
            found.update(fresh)
            self.embedded += len(todo)
        return np.vstack([found[k] for k in keys]) if keys else np.zeros((0, self.dim), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        key = self._key("query", text)
        found = self._lookup([key])
        if key not in found:
            found[key] = np.asarray(self.inner.embed_query(text), dtype=np.float32)
            with self._db:
                self._db.execute("INSERT OR REPLACE INTO vectors VALUES (?, ?)", (key, found[key].tobytes()))
            self.embedded += 1
        return found[key]

    def close(self) -> None:
        self._db.close()


# -- scoring --------------------------------------------------------------------

def hit_ids(hits: Sequence[Any], k: int) -> list[str]:
    """dia_ids of the ranked memories, each memory expanded in place, deduplicated, cut at k."""
    out: list[str] = []
    for hit in hits:
        meta = hit.memory.metadata
        for dia_id in meta.get("dia_ids") or [meta.get("dia_id")]:
            if dia_id and dia_id not in out:
                out.append(dia_id)
                if len(out) == k:
                    return out
    return out


def recall_row(ids: Sequence[str], gold: Sequence[str]) -> tuple[float, float, float]:
    wanted = set(gold)
    rr = next((1.0 / rank for rank, i in enumerate(ids, start=1) if i in wanted), 0.0)
    return (len(wanted & set(ids[:5])) / len(wanted), len(wanted & set(ids[:10])) / len(wanted), rr)


def summarise(rows: Sequence[tuple[str, int, float, float, float]], convs: Sequence[str] | None) -> dict[str, Any]:
    """Per category and micro-averaged over categories 1-4, as percentages."""
    def agg(picked: list[tuple[float, float, float]]) -> dict[str, Any]:
        if not picked:
            return {"n": 0, "r5": None, "r10": None, "mrr": None}
        a = np.array(picked) * 100
        return {"n": len(picked), "r5": round(float(a[:, 0].mean()), 2),
                "r10": round(float(a[:, 1].mean()), 2), "mrr": round(float(a[:, 2].mean()), 2)}

    chosen = [r for r in rows if convs is None or r[0] in convs]
    out = {"overall": agg([r[2:] for r in chosen if r[1] in SCORED])}
    for cat in CATEGORIES:
        out[CATEGORIES[cat]] = agg([r[2:] for r in chosen if r[1] == cat])
    return out


# -- the run ----------------------------------------------------------------------

def searches(modes: Sequence[str]) -> list[str]:
    """The rows a run measures: its modes, and with hybrid the gated hybrid search."""
    return [*modes, GATED] if "hybrid" in modes else list(modes)


def run(conversations: Sequence[Conversation], modes: Sequence[str], embedder: Embedder,
        workdir: Path, limit: int = 10) -> dict[str, Any]:
    modes = searches(modes)
    rows: dict[str, list[tuple[str, int, float, float, float]]] = {m: [] for m in modes}
    search_seconds = {m: 0.0 for m in modes}
    build_seconds = 0.0
    questions = 0
    if any(m != "keyword" for m in modes):
        # Every question's vector into the cache first (as Brain.search embeds it), so the
        # timed searches measure search; embedding time is measured on its own.
        for conv in conversations:
            for q in conv.questions:
                embedder.embed_query(vector_query(q.text))
    for conv in conversations:
        path = workdir / f"{conv.sample_id}.db"
        started = time.perf_counter()
        with Brain.open(path, embedder=embedder) as brain:
            brain.remember_many(conv.items, near=False)
            build_seconds += time.perf_counter() - started
            for mode in modes:
                started = time.perf_counter()
                for q in conv.questions:
                    # Recall of the ranking itself: no "nothing relevant" cut-off, but for the
                    # gated row (the brain's min_relevance, as a user's search).
                    gate = None if mode == GATED else 0.0
                    hits = brain.search(q.text, limit=limit, mode="hybrid" if mode == GATED else mode,
                                        track=False, min_relevance=gate)
                    rows[mode].append((conv.sample_id, q.category, *recall_row(hit_ids(hits, limit), q.gold)))
                search_seconds[mode] += time.perf_counter() - started
        questions += len(conv.questions)
        path.unlink(missing_ok=True)
    others = [c.sample_id for c in conversations if c.sample_id not in TUNING]
    groups = {"tuning": list(TUNING), "other": others, "all": None}
    results = {
        mode: {name: summarise(rows[mode], convs) for name, convs in groups.items()} for mode in modes
    }
    return {
        "conversations": [c.sample_id for c in conversations],
        "memories": sum(len(c.items) for c in conversations),
        "questions": questions,
        "build_seconds": round(build_seconds, 2),
        "search_ms_per_question": {m: round(1000 * search_seconds[m] / max(questions, 1), 2) for m in modes},
        "results": results,
        "rows": {m: rows[m] for m in modes},
    }


def query_embedding_ms(embedder: Embedder, conversations: Sequence[Conversation], sample: int = 20) -> float:
    """Median time to embed one question, uncached (the part of a search the cache hides)."""
    texts = [q.text for c in conversations for q in c.questions][:sample]
    times = []
    for text in texts:
        started = time.perf_counter()
        embedder.embed_query(text + " ")  # a text the cache has not seen
        times.append(time.perf_counter() - started)
    return round(1000 * statistics.median(times), 1) if times else 0.0


# -- printing ---------------------------------------------------------------------

def fmt(value: float | None) -> str:
    return "  -  " if value is None else f"{value:5.1f}"


def report(result: dict[str, Any], out: Any = None) -> None:
    def line(text: str = "") -> None:
        print(text, file=out or sys.stdout)

    convs = result["conversations"]
    embedded = result.get("embedded_this_run")
    line(f"LoCoMo: {len(convs)} conversations, {result['memories']} memories, "
         f"{result['questions']} questions; build {result['build_seconds']:.1f} s"
         + (f" ({embedded} texts embedded this run, the rest from the cache)" if embedded is not None else ""))
    cats = [CATEGORIES[c] for c in SCORED]
    for group, title in (("all", "all conversations"), ("tuning", "tuning pair (conv-26, conv-30)"),
                         ("other", "the other eight")):
        present = {"tuning": set(TUNING) & set(convs), "other": set(convs) - set(TUNING), "all": convs}[group]
        if not present:
            continue
        line()
        line(f"{title}: R@10 per category, then R@5 / R@10 / MRR over categories 1-4")
        line(f"{'mode':9s} " + " ".join(f"{c:>11s}" for c in cats) + "    R@5  R@10   MRR   adversarial R@10")
        for mode, by_group in result["results"].items():
            r = by_group[group]
            per_cat = " ".join(f"{fmt(r[c]['r10']):>11s}" for c in cats)
            o = r["overall"]
            line(f"{mode:9s} {per_cat}  {fmt(o['r5'])} {fmt(o['r10'])} {fmt(o['mrr'])}   "
                 f"{fmt(r['adversarial']['r10'])}")
        if group == "all":
            d = DRAGON_R10
            line(f"{'DRAGON':9s} " + " ".join(f"{d[c]:11.1f}" for c in SCORED)
                 + f"  {DRAGON_BY_K[5]:5.1f} {DRAGON_BY_K[10]:5.1f}    -    (paper, R@k over cats 1-5)")
    if GATED in result["results"]:
        line()
        line(f"{GATED}: the hybrid search through the brain's relevance gate (its min_relevance), "
             "a hit the gate cuts counting as not retrieved; the other rows rank without the gate")
    line()
    embed_ms = result.get("query_embedding_ms", 0.0)
    for mode, ms in result["search_ms_per_question"].items():
        extra = f" + {embed_ms:.0f} ms to embed the question" if mode != "keyword" and embed_ms else ""
        line(f"query time, {mode}: {ms:.1f} ms search{extra}")
    line("(search: Brain.search with the question's vector cached; embedding: median of 20 "
         "uncached questions, local model)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, type=Path, help="path to locomo10.json")
    parser.add_argument("--convs", nargs="*", help="sample ids to run (default: all ten)")
    parser.add_argument("--modes", nargs="*", default=list(MODES), choices=MODES)
    parser.add_argument("--json", type=Path, help="write the full result here")
    parser.add_argument("--cache", type=Path, default=OUT / "locomo-embeddings.sqlite",
                        help="embedding cache kept between runs")
    args = parser.parse_args(argv)
    conversations = load(args.data, args.convs)
    inner = make_embedder("local", Config())
    assert inner is not None
    embedder = CachedEmbedder(inner, args.cache)
    try:
        with tempfile.TemporaryDirectory(prefix="maxmem-locomo-") as workdir:
            result = run(conversations, args.modes, embedder, Path(workdir))
        result["embedded_this_run"] = embedder.embedded
        result["query_embedding_ms"] = query_embedding_ms(inner, conversations)
    finally:
        embedder.close()
    report(result)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
