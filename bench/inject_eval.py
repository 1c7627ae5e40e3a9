#!/usr/bin/env python3
"""What the prompt hook injects, judged the way the agent sees it, on LoCoMo-10.

Every prompt goes through `maxmem.hooks.recall.recall(brain, prompt)`, the function behind
`maxmem hook user-prompt`, with its default settings (at most 3 memories, 400 tokens,
the brain's configured relevance gate); the block it returns is what the agent would
read before the prompt. Each prompt is asked on its own, as the first of a session
(nothing already shown).

Each conversation is loaded into its own brain as bench/locomo.py does (its code);
by default the conversations are LoCoMo's held-out eight (all but the tuning pair
conv-26 and conv-30, bench/locomo.py's TUNING). Of those, bench/relevance_eval.py's
calibration half, which the relevance gate was fitted on, holds three (conv-42, 44,
48): the table marks them. Four sets of prompts:
- answerable: LoCoMo's questions of categories 1-4 with evidence. Counted: the share
  whose block holds an evidence turn (any of them, and all of them), and the tokens
  injected per prompt (memory.estimate_tokens of the block; 0 when nothing is). Beside
  it, the ranking's R@10 as bench/locomo.py scores it, without the gate (Brain.search,
  min_relevance 0) and with it (the brain's min_relevance, as the hook searches: a hit
  the gate cuts counts as not retrieved).
- unanswerable: bench/data/unanswerable.jsonl, questions in LoCoMo's style about what
  the conversation never mentions. Counted: the share that inject nothing.
- adversarial: LoCoMo's category 5, a fact asked of the wrong speaker (the conversation
  does not say it of them). Counted: the share that inject nothing.
- coding: bench/data/coding_prompts.jsonl, everyday prompts to a coding agent ("add a
  test for the parser", "go on"), each asked in every conversation's brain, which
  holds nothing about them. Counted: the share that inject nothing, split by whether
  the prompt carries a question of substance (the file's `substance` label).

Printed: each conversation on a row and the micro-average over them, then the target
table of each group (held-out eight, tuning pair, all). Embeddings are cached in
bench/out/locomo-embeddings.sqlite (shared with bench/locomo.py and
bench/relevance_eval.py), so a rerun embeds only new prompts.

    python bench/inject_eval.py --data locomo10.json
    python bench/inject_eval.py --data locomo10.json --conversations conv-41,conv-43
    python bench/inject_eval.py --data locomo10.json --conversations all   # and the tuning pair
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import locomo  # noqa: E402
import relevance_eval  # noqa: E402

from maxmem import Brain  # noqa: E402
from maxmem.config import Config  # noqa: E402
from maxmem.embeddings import Embedder, make_embedder  # noqa: E402
from maxmem.hooks.recall import RecallSettings, recall  # noqa: E402
from maxmem.memory import Hit, Memory  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
CODING = DATA / "coding_prompts.jsonl"
SETS = ("answerable", "unanswerable", "adversarial", "coding")
# The targets the prompt hook is held to.
EVIDENCE_TARGET = 65.0  # % of answerable questions whose block holds evidence
TOKEN_TARGET = 400  # tokens injected per prompt, at most
SILENCE_TARGET = 80.0  # % of prompts with nothing to recall that inject nothing
GATED_R10_TARGET = 80.0  # R@10 of the gated search, a hit cut counting as not retrieved
LIMIT = 10  # the depth of R@10


# -- the prompts ----------------------------------------------------------------------

@dataclass(frozen=True)
class Prompt:
    """One prompt to the hook; `gold` are the evidence turns of an answerable question,
    `substance` whether a prompt of the coding set carries a question of substance."""

    kind: str  # answerable, unanswerable, adversarial or coding
    text: str
    gold: tuple[str, ...] = ()
    substance: bool = True
    category: str = ""


def load_coding(path: Path) -> list[Prompt]:
    """bench/data/coding_prompts.jsonl: one {"prompt": str, "substance": bool} a line."""
    out: list[Prompt] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            text, substance = row["prompt"], row["substance"]
        except (ValueError, KeyError, TypeError):
            raise SystemExit(f"{path}:{number}: not a prompt record") from None
        if not isinstance(text, str) or not text.strip() or not isinstance(substance, bool):
            raise SystemExit(f"{path}:{number}: not a prompt record")
        out.append(Prompt("coding", text, substance=substance))
    return out


def prompts(conv: locomo.Conversation, unanswerable: Sequence[dict[str, Any]],
            coding: Sequence[Prompt]) -> list[Prompt]:
    """The prompts asked in one conversation's brain: its answerable questions, its
    unanswerable ones, its adversarial ones (LoCoMo's category 5) and every coding prompt."""
    out = [Prompt("answerable", q.text, tuple(q.gold), category=locomo.CATEGORIES[q.category])
           for q in conv.questions if q.category in locomo.SCORED]
    out += [Prompt("unanswerable", u["question"], category=u["category"]) for u in unanswerable]
    out += [Prompt("adversarial", q.text, tuple(q.gold), category=locomo.CATEGORIES[q.category])
            for q in conv.questions if q.category not in locomo.SCORED]
    return out + list(coding)


# -- judging one block ----------------------------------------------------------------

def turn_ids(memories: Iterable[Memory]) -> list[str]:
    """The LoCoMo turns the memories hold (metadata dia_id, or dia_ids for a memory of
    several), in order, once each."""
    out: list[str] = []
    for memory in memories:
        for dia_id in memory.metadata.get("dia_ids") or [memory.metadata.get("dia_id")]:
            if dia_id and dia_id not in out:
                out.append(dia_id)
    return out


def whole(memories: Iterable[Memory], text: str) -> list[Memory]:
    """The memories whose content the block shows in full (not cut to fit the budget),
    whitespace aside."""
    flat = " ".join(text.split())
    return [m for m in memories if " ".join(m.content.split()) in flat]


def evidence_shown(shown: Sequence[str], gold: Sequence[str]) -> tuple[bool, bool]:
    """Whether the turns shown hold any of the evidence, and all of it."""
    found = set(gold) & set(shown)
    return bool(found), bool(gold) and found == set(gold)


@dataclass
class Asked:
    """One prompt's injection."""

    conv: str
    prompt: Prompt
    ids: tuple[int, ...] = ()
    turns: list[str] = field(default_factory=list)
    tokens: int = 0
    reason: str = ""
    any_evidence: bool = False
    all_evidence: bool = False
    whole_evidence: bool = False  # an evidence turn is shown in full
    seconds: float = 0.0
    r10: float | None = None  # R@10 of the search without the gate (answerable only)
    r10_gated: float | None = None  # and with it, a hit cut counting as not retrieved

    @property
    def silent(self) -> bool:
        return not self.ids and not self.tokens


def ask(brain: Brain, conv: str, prompt: Prompt, settings: RecallSettings) -> Asked:
    started = time.perf_counter()
    got = recall(brain, prompt.text, settings=settings)
    seconds = time.perf_counter() - started
    memories = got.memories if got.text else ()
    turns = turn_ids(memories)
    found, every = evidence_shown(turns, prompt.gold)
    in_full, _ = evidence_shown(turn_ids(whole(memories, got.text)), prompt.gold)
    r10, r10_gated = ranking_recall(brain, prompt) if prompt.kind == "answerable" else (None, None)
    return Asked(conv, prompt, tuple(m.id for m in memories), turns, got.tokens if got.text else 0,
                 got.reason, found, every, in_full, seconds, r10, r10_gated)


def ranking_recall(brain: Brain, prompt: Prompt) -> tuple[float, float]:
    """R@10 of the question as bench/locomo.py scores it: of the search without the gate
    (min_relevance 0), and of the search the hook runs (the brain's min_relevance), where
    a hit the gate cuts is not retrieved. One search: the gated one lists the same
    ranking's hits that reach the threshold (gated)."""
    hits = list(brain.search(prompt.text, limit=LIMIT, track=False, min_relevance=0.0))
    everything, kept = (locomo.recall_row(locomo.hit_ids(h, LIMIT), prompt.gold)[1]
                        for h in (hits, gated(hits, brain.config.min_relevance)))
    return everything, kept


def gated(hits: Sequence[Hit], threshold: float) -> list[Hit]:
    """What Brain.search(limit=LIMIT) lists through the gate, from its ungated hits: those
    whose relevance reaches `threshold`, and none when no hit does (LIMIT is
    Brain.search's JUDGED_HITS: it judges as deep as it lists)."""
    if threshold and max((h.relevance or 0.0 for h in hits), default=0.0) < threshold:
        return []
    return [h for h in hits if h.relevance is None or h.relevance >= threshold]


# -- figures --------------------------------------------------------------------------

def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (`share` from 0 to 100): the smallest value at or above
    which `share` % of the values lie; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(share / 100 * len(ordered)))
    return float(ordered[rank - 1])


def token_stats(tokens: Sequence[int]) -> dict[str, float]:
    """Tokens injected per prompt: mean, p95 and max (0 for no prompts)."""
    return {"mean": sum(tokens) / len(tokens) if tokens else 0.0,
            "p95": percentile(tokens, 95), "max": float(max(tokens, default=0))}


def pct(flags: Sequence[bool]) -> float | None:
    return 100 * sum(flags) / len(flags) if flags else None


def mean_pct(values: Sequence[float | None]) -> float | None:
    """The mean of fractions as a percentage (None for none)."""
    known = [v for v in values if v is not None]
    return 100 * sum(known) / len(known) if known else None


def figures(asked: Sequence[Asked]) -> dict[str, Any]:
    by = {k: [a for a in asked if a.prompt.kind == k] for k in SETS}
    answerable, coding = by["answerable"], by["coding"]
    nothing = by["unanswerable"] + coding
    return {
        "conversations": sorted({a.conv for a in asked}),
        "n": {k: len(v) for k, v in by.items()},
        "evidence_any": pct([a.any_evidence for a in answerable]),
        "evidence_all": pct([a.all_evidence for a in answerable]),
        "evidence_whole": pct([a.whole_evidence for a in answerable]),
        "r10": mean_pct([a.r10 for a in answerable]),
        "r10_gated": mean_pct([a.r10_gated for a in answerable]),
        "evidence_by_category": {c: pct([a.any_evidence for a in answerable if a.prompt.category == c])
                                 for c in sorted({a.prompt.category for a in answerable})},
        "answerable_silent": pct([a.silent for a in answerable]),
        "tokens": {k: token_stats([a.tokens for a in v]) for k, v in by.items()},
        "tokens_when_injected": token_stats([a.tokens for a in answerable if not a.silent]),
        "memories_per_block": (sum(len(a.ids) for a in answerable if not a.silent)
                               / max(1, sum(not a.silent for a in answerable))),
        "silent": {"unanswerable": pct([a.silent for a in by["unanswerable"]]),
                   "adversarial": pct([a.silent for a in by["adversarial"]]),
                   "coding": pct([a.silent for a in coding]),
                   "coding_substance": pct([a.silent for a in coding if a.prompt.substance]),
                   "coding_no_substance": pct([a.silent for a in coding if not a.prompt.substance]),
                   "pooled": pct([a.silent for a in nothing])},
        "n_coding": {"substance": sum(a.prompt.substance for a in coding),
                     "no_substance": sum(not a.prompt.substance for a in coding)},
        "ms_per_prompt": 1000 * sum(a.seconds for a in asked) / max(1, len(asked)),
        "loudest_coding": loudest(coding),
        "reasons": {k: reasons(v) for k, v in by.items()},
    }


def reasons(asked: Sequence[Asked]) -> dict[str, int]:
    """How often recall() gave each reason (its figures replaced by N), most frequent first."""
    counts: dict[str, int] = {}
    for a in asked:
        reason = re.sub(r"\d+(\.\d+)?", "N", a.reason)
        counts[reason] = counts.get(reason, 0) + 1
    return dict(sorted(counts.items(), key=lambda t: (-t[1], t[0])))


def loudest(coding: Sequence[Asked], count: int = 5) -> list[str]:
    """The coding prompts injected into the most brains (for reading what the gate let by)."""
    times: dict[str, int] = {}
    for a in coding:
        if not a.silent:
            times[a.prompt.text] = times.get(a.prompt.text, 0) + 1
    return [f"{text} ({n})" for text, n in sorted(times.items(), key=lambda t: (-t[1], t[0]))[:count]]


def fmt(value: float | None, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def verdict(value: float | None, target: float, above: bool = True) -> str:
    if value is None:
        return "-"
    return "yes" if (value >= target if above else value <= target) else "no"


def table(f: dict[str, Any]) -> str:
    """The figures as a Markdown table (the one docs/benchmarks.md shows)."""
    n, silent, tokens = f["n"], f["silent"], f["tokens"]
    t = tokens["answerable"]
    ns = f["n_coding"]
    rows = [
        ("answerable (LoCoMo cat. 1-4): block holds an evidence turn", n["answerable"],
         f"{fmt(f['evidence_any'])} % (all evidence: {fmt(f['evidence_all'])} %)",
         f">= {EVIDENCE_TARGET:.0f} %", verdict(f["evidence_any"], EVIDENCE_TARGET)),
        ("answerable: tokens injected per prompt, mean / p95 / max", n["answerable"],
         f"{t['mean']:.0f} / {t['p95']:.0f} / {t['max']:.0f}", f"<= {TOKEN_TARGET}",
         verdict(t["max"], TOKEN_TARGET, above=False)),
        ("answerable: R@10 with the gate (without it)", n["answerable"],
         f"{fmt(f['r10_gated'])} ({fmt(f['r10'])})", f">= {GATED_R10_TARGET:.0f}",
         verdict(f["r10_gated"], GATED_R10_TARGET)),
        ("unanswerable (bench/data/unanswerable.jsonl): inject nothing", n["unanswerable"],
         f"{fmt(silent['unanswerable'])} %", f">= {SILENCE_TARGET:.0f} %",
         verdict(silent["unanswerable"], SILENCE_TARGET)),
        ("adversarial (LoCoMo cat. 5, asked of the wrong speaker): inject nothing", n["adversarial"],
         f"{fmt(silent['adversarial'])} %", f">= {SILENCE_TARGET:.0f} %",
         verdict(silent["adversarial"], SILENCE_TARGET)),
        ("coding prompts, each in every brain: inject nothing", n["coding"], f"{fmt(silent['coding'])} %",
         f">= {SILENCE_TARGET:.0f} %", verdict(silent["coding"], SILENCE_TARGET)),
        ("  of which with a question of substance", ns["substance"], f"{fmt(silent['coding_substance'])} %", "", ""),
        ("  of which without (\"yes\", \"go on\")", ns["no_substance"], f"{fmt(silent['coding_no_substance'])} %",
         "", ""),
        ("nothing to recall (unanswerable and coding), pooled: inject nothing", n["unanswerable"] + n["coding"],
         f"{fmt(silent['pooled'])} %",
         f">= {SILENCE_TARGET:.0f} %", verdict(silent["pooled"], SILENCE_TARGET)),
    ]
    lines = ["| prompts | n | measured | target | met |", "|---|---:|---|---|---|"]
    lines += [f"| {what} | {count} | {value} | {target} | {met} |" for what, count, value, target, met in rows]
    return "\n".join(lines)


def groups(asked: Sequence[Asked], tuning: Sequence[str] = locomo.TUNING) -> dict[str, dict[str, Any]]:
    """The figures of each group present in the run (held-out: LoCoMo's conversations
    outside the tuning pair), and of both together when both are."""
    halves = {"held-out": [a for a in asked if a.conv not in tuning],
              "tuning": [a for a in asked if a.conv in tuning]}
    out = {name: figures(mine) for name, mine in halves.items() if mine}
    if len(out) == 2:
        out["all"] = figures(asked)
    return out


def by_conversation(asked: Sequence[Asked]) -> dict[str, dict[str, Any]]:
    """The figures of each conversation, in the order asked."""
    order = list(dict.fromkeys(a.conv for a in asked))
    return {conv: figures([a for a in asked if a.conv == conv]) for conv in order}


def side_by_side(per: dict[str, dict[str, Any]], pooled: dict[str, Any],
                 fitted: Sequence[str] = relevance_eval.CALIBRATION) -> str:
    """One row a conversation and one of the micro-average over them (every question
    of every conversation counted once), as a Markdown table; `fitted` (the relevance
    gate's calibration half) are starred."""
    head = ("| conversation | answerable | evidence in block | tokens max | R@10 | R@10 with gate "
            "| unanswerable | nothing injected | adversarial | nothing injected | coding: nothing injected |")
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def row(name: str, f: dict[str, Any]) -> str:
        n, silent = f["n"], f["silent"]
        return (f"| {name} | {n['answerable']} | {fmt(f['evidence_any'])} % | {f['tokens']['answerable']['max']:.0f} "
                f"| {fmt(f['r10'])} | {fmt(f['r10_gated'])} | {n['unanswerable']} | {fmt(silent['unanswerable'])} % "
                f"| {n['adversarial']} | {fmt(silent['adversarial'])} % | {fmt(silent['coding'])} % |")

    lines += [row(conv + (" *" if conv in fitted else ""), f) for conv, f in per.items()]
    lines.append(row(f"**micro-average, {len(per)}**", pooled))
    return "\n".join(lines)


def report(result: dict[str, Any], out: Any = None) -> None:
    def line(text: str = "") -> None:
        print(text, file=out or sys.stdout)

    runs = result.get("runs", 1)
    line("what the prompt hook injects: recall() with its defaults, each conversation in its own brain; "
         + (f"{result['embedded']} texts embedded this run, the rest from the cache; {result['seconds']:.0f} s"
            if runs == 1 else f"combined from {runs} runs, which embedded {result['embedded']} texts and took "
                              f"{result['seconds']:.0f} s in all"))
    for name, f in result["groups"].items():
        per = {c: result["conversations"][c] for c in f["conversations"]}
        line()
        line(f"{name} ({', '.join(f['conversations'])})"
             + (": LoCoMo's tuning pair, not a held-out figure" if name == "tuning" else ""))
        line()
        if name != "all":
            line(side_by_side(per, f))
            if set(per) & set(relevance_eval.CALIBRATION):
                line("* the relevance gate's constants were fitted on this conversation "
                     "(bench/relevance_eval.py's calibration half)")
            line()
        line(table(f))
        line()
        details(f, line)


def details(f: dict[str, Any], line: Any) -> None:
    line("evidence in the block, by category: " + ", ".join(
        f"{c} {fmt(v)} %" for c, v in f["evidence_by_category"].items())
        + f"; an evidence turn shown in full (not cut to fit): {fmt(f['evidence_whole'])} %")
    tw = f["tokens_when_injected"]
    line(f"answerable questions with nothing injected: {fmt(f['answerable_silent'])} %; when a block is "
         f"injected: {f['memories_per_block']:.2f} memories, {tw['mean']:.0f} tokens mean, {tw['p95']:.0f} p95")
    for kind in ("unanswerable", "adversarial", "coding"):
        t = f["tokens"][kind]
        line(f"tokens injected per {kind} prompt: mean {t['mean']:.1f}, p95 {t['p95']:.0f}, max {t['max']:.0f}")
    for kind, counts in f["reasons"].items():
        if counts:
            line(f"recall()'s reasons, {kind}: " + "; ".join(f"{r or '(none)'} {n}" for r, n in counts.items()))
    if f["loudest_coding"]:
        line("coding prompts injected into the most brains: " + "; ".join(f["loudest_coding"]))
    if f["ms_per_prompt"]:
        line(f"recall() took {f['ms_per_prompt']:.1f} ms per prompt (including embedding the prompts not cached)")


# -- the run --------------------------------------------------------------------------

def run(conversations: Sequence[locomo.Conversation], unanswerable: dict[str, list[dict[str, Any]]],
        coding: Sequence[Prompt], embedder: Embedder, workdir: Path,
        settings: RecallSettings | None = None) -> list[Asked]:
    """Every prompt through recall() in each conversation's own brain, one brain at a time."""
    settings = settings or RecallSettings()
    out: list[Asked] = []
    for conv in conversations:
        path = workdir / f"{conv.sample_id}.db"
        with Brain.open(path, embedder=embedder) as brain:
            brain.remember_many(conv.items, near=False)
            out += [ask(brain, conv.sample_id, p, settings)
                    for p in prompts(conv, unanswerable.get(conv.sample_id, []), coding)]
        path.unlink(missing_ok=True)
    return out


def chosen(names: str | None) -> list[str] | None:
    """--conversations "conv-26,conv-41" as a list; None when not given (the held-out
    eight) or "all" (every conversation)."""
    if names is None or names.strip() == "all":
        return None
    picked = [n.strip() for n in names.split(",") if n.strip()]
    if not picked:
        raise SystemExit("--conversations: give sample ids separated by commas, e.g. conv-41,conv-43")
    return picked


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, type=Path, help="path to LoCoMo's locomo10.json")
    parser.add_argument("--conversations", metavar="IDS",
                        help="comma-separated sample ids to run, or \"all\" (default: LoCoMo's held-out eight, "
                             "every conversation but the tuning pair conv-26 and conv-30)")
    parser.add_argument("--unanswerable", type=Path, default=relevance_eval.UNANSWERABLE)
    parser.add_argument("--coding", type=Path, default=CODING, help="the coding prompts (JSON lines)")
    parser.add_argument("--json", type=Path, help="write the figures and every prompt's injection here")
    parser.add_argument("--cache", type=Path, default=locomo.OUT / "locomo-embeddings.sqlite",
                        help="embedding cache kept between runs (shared with bench/locomo.py)")
    parser.add_argument("--combine", type=Path, nargs="+", metavar="JSON",
                        help="ask nothing: report the conversations chosen from earlier runs' --json files (run "
                             "side by side, e.g. a few conversations a process), micro-averaged as one run")
    args = parser.parse_args(argv)
    for path in (args.data, args.unanswerable, args.coding):
        if not path.is_file():
            raise SystemExit(f"no such file: {path}")
    conversations = locomo.load(args.data, chosen(args.conversations))
    if args.conversations is None:
        conversations = [c for c in conversations if c.sample_id not in locomo.TUNING]
    unanswerable = relevance_eval.load_unanswerable(args.unanswerable)
    coding = load_coding(args.coding)
    inner = make_embedder("local", Config())
    assert inner is not None
    embedder = locomo.CachedEmbedder(inner, args.cache)
    if args.combine:
        asked, embedded, seconds = combined(args.combine, conversations, unanswerable, coding)
    else:
        inner = make_embedder("local", Config())
        assert inner is not None
        embedder = locomo.CachedEmbedder(inner, args.cache)
        started = time.perf_counter()
        asked = []
        try:
            with tempfile.TemporaryDirectory(prefix="maxmem-inject-") as workdir:
                for conv in conversations:  # the --json file rewritten after each, for a run cut short
                    asked += run([conv], unanswerable, coding, embedder, Path(workdir))
                    if args.json:
                        save(args.json, asked, embedder.embedded, time.perf_counter() - started)
        finally:
            embedder.close()
        embedded, seconds = embedder.embedded, time.perf_counter() - started
    report({**save(args.json, asked, embedded, seconds), "runs": len(args.combine or [None])})
    return 0


def save(path: Path | None, asked: Sequence[Asked], embedded: int, seconds: float) -> dict[str, Any]:
    """The figures of the prompts asked; written with every prompt's injection to `path`."""
    result = {"embedded": embedded, "seconds": seconds,
              "conversations": by_conversation(asked), "groups": groups(asked)}
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        rows = [{"conv": a.conv, "kind": a.prompt.kind, "prompt": a.prompt.text, "gold": list(a.prompt.gold),
                 "turns": a.turns, "ids": list(a.ids), "tokens": a.tokens, "reason": a.reason,
                 "any_evidence": a.any_evidence, "all_evidence": a.all_evidence,
                 "whole_evidence": a.whole_evidence, "r10": a.r10, "r10_gated": a.r10_gated,
                 "seconds": a.seconds} for a in asked]
        path.write_text(json.dumps({**result, "prompts": rows}, indent=1), encoding="utf-8")
    return result


def combined(paths: Sequence[Path], conversations: Sequence[locomo.Conversation],
             unanswerable: dict[str, list[dict[str, Any]]],
             coding: Sequence[Prompt]) -> tuple[list[Asked], int, float]:
    """The injections of earlier runs (their --json files, e.g. of conversations run
    side by side in several processes) of the conversations chosen, each prompt rebuilt
    from the data; with the texts those runs embedded and the seconds they took, summed."""
    known = {(c.sample_id, p.kind, p.text, p.gold): p
             for c in conversations for p in prompts(c, unanswerable.get(c.sample_id, []), coding)}
    wanted = [c.sample_id for c in conversations]
    asked: list[Asked] = []
    embedded, seconds = 0, 0.0
    for path in paths:
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
            embedded, seconds = embedded + saved["embedded"], seconds + saved["seconds"]
            for row in saved["prompts"]:
                if row["conv"] not in wanted:
                    continue
                prompt = known[(row["conv"], row["kind"], row["prompt"], tuple(row["gold"]))]
                asked.append(Asked(row["conv"], prompt, tuple(row["ids"]), row["turns"], row["tokens"], row["reason"],
                                   row["any_evidence"], row["all_evidence"], row["whole_evidence"],
                                   row.get("seconds", 0.0), row["r10"], row["r10_gated"]))
        except (OSError, ValueError, KeyError, TypeError):
            raise SystemExit(f"--combine {path}: not the --json file of a run on these data") from None
    missing = set(wanted) - {a.conv for a in asked}
    if missing:
        raise SystemExit(f"--combine: no run of {', '.join(sorted(missing))} in the files given")
    asked.sort(key=lambda a: wanted.index(a.conv))
    return asked, embedded, seconds


if __name__ == "__main__":
    raise SystemExit(main())
