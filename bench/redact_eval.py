#!/usr/bin/env python3
"""How good is the redactor? maxmem vs detect-secrets, side by side in one run.

    python bench/redact_eval.py                       # both splits, the table
    python bench/redact_eval.py --split dev --misses  # what maxmem misses / over-redacts on dev
    python bench/redact_eval.py --json out.json
    python bench/redact_eval.py --baseline HEAD~3   # also the redactor of an older commit
    python bench/redact_eval.py --split unseen      # only the splits written without the rules
    python bench/redact_eval.py --split blind       # only the second set written without them
    python bench/redact_eval.py --split blind3      # only the third set written without them
    python bench/redact_eval.py --split blind4      # only the fourth set written without them
    python bench/redact_eval.py --split blind5      # only the fifth set written without them
    python bench/redact_eval.py --split blind6      # only the sixth set written without them, never read
    python bench/redact_eval.py --split blind7      # only the seventh set written without them, never read
    python bench/redact_eval.py --split develop     # every split but the ones never read
    python bench/redact_eval.py --real-text         # ordinary text of this machine, FP lines / 1k per source
    python bench/redact_eval.py --real-text --show 40 --source stdlib  # what fires there, the lines

On the labelled corpus (tests/data/secrets/, written by scripts/make_secrets_corpus.py),
split by template (dev / heldout), and on the shape split (`bench/secret_shapes.py`):
secrets of shapes the rules were written from (shapes-dev) and of shapes held out until
they were scored once (shapes-heldout: read since, development data now), and 1,200
ordinary technical lines (ordinary); and on the unseen split, written without reading
the rules, their tests or their docs: secrets (shapes-unseen) and ordinary lines that
only look risky (ordinary-unseen), which were scored blind once (recall 0.794, 32.0 FP
lines / 1k) and are development data since; and on the blind split, a second such set
written later by another hand, without reading the rules, their tests, their docs or the
unseen files: secrets (shapes-blind) and risky-looking ordinary lines (ordinary-blind),
scored blind once (recall 0.870, 26.7 FP lines / 1k) and development data since; and on
the blind3 split, a third such set by yet another hand (shapes-blind3, ordinary-blind3),
scored blind once (recall 0.886, 20.0 FP lines / 1k) and development data since; and on
the blind4 split, a fourth (shapes-blind4, ordinary-blind4), scored blind once (recall
0.897, 17.8 FP lines / 1k) and development data since; and on the blind5 split, a fifth
(shapes-blind5, ordinary-blind5), scored blind once (recall 0.951, 22.4 FP lines / 1k) and
development data since; and on the blind6 split, a sixth (shapes-blind6,
ordinary-blind6), scored blind once (recall 0.877, 8.8 FP lines / 1k) and only scored since;
and on the blind7 split, a seventh (shapes-blind7, ordinary-blind7), by yet another hand under
the same rule, scored blind once (recall 0.917, 11.2 FP lines / 1k) and only scored since:
`--misses` never lists a split in NEVER_READ.

- recall: the share of secret spans entirely removed (a span partly left is a miss);
- precision: the share of removed spans that overlap a secret;
- FP lines / 1k: lines of the hard negatives with anything removed, per 1,000 such lines;

then throughput in MB/s on a 2 MB synthetic coding transcript (Claude Code JSONL: prose,
tool calls, file contents, grep and test output), and the redactions made on the
LoCoMo conversations, which hold no secret (`--locomo PATH/locomo10.json`, read where
it is, never copied; without it that line is skipped).

detect-secrets (Yelp) runs with its default plugins and filters, the way
`detect-secrets scan` runs on a file: each item is written to a .txt file and scanned;
what it reports on a line is taken as removed wherever that value occurs on the line.
It is a detector, not a redactor, so its spans are its own `secret_value`s.
"""

from __future__ import annotations

import argparse
import bisect
import json
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
CORPUS = ROOT / "tests" / "data" / "secrets"
SHAPE_SPLITS = ("shapes-dev", "shapes-heldout", "ordinary", "shapes-unseen", "ordinary-unseen", "shapes-blind",
                "ordinary-blind", "shapes-blind3", "ordinary-blind3", "shapes-blind4", "ordinary-blind4",
                "shapes-blind5", "ordinary-blind5", "shapes-blind6", "ordinary-blind6", "shapes-blind7",
                "ordinary-blind7")
UNSEEN_SPLITS = ("shapes-unseen", "ordinary-unseen")
BLIND_SPLITS = ("shapes-blind", "ordinary-blind")
BLIND3_SPLITS = ("shapes-blind3", "ordinary-blind3")
BLIND4_SPLITS = ("shapes-blind4", "ordinary-blind4")
BLIND5_SPLITS = ("shapes-blind5", "ordinary-blind5")
BLIND6_SPLITS = ("shapes-blind6", "ordinary-blind6")
BLIND7_SPLITS = ("shapes-blind7", "ordinary-blind7")
# scored, never read: no rule is written from them (the unseen and blind to blind5 splits were, once)
NEVER_READ: tuple[str, ...] = (*BLIND6_SPLITS, *BLIND7_SPLITS)

Span = tuple[int, int]
Detector = Callable[[list[str]], list[list[Span]]]


def load(split: str, corpus: Path = CORPUS, limit: int | None = None) -> list[dict]:
    if split in SHAPE_SPLITS:
        return load_shapes(split, limit)
    with open(corpus / f"{split}.jsonl", encoding="utf-8") as f:
        items = [json.loads(line) for line in f]
    if limit:  # a smoke run: some secrets and some negatives
        items = items[: limit // 2] + [i for i in items if i["label"] == "negative"][: limit - limit // 2]
    return items


def load_shapes(split: str, limit: int | None = None) -> list[dict]:
    import secret_shapes

    if split == "ordinary":
        lines = secret_shapes.ordinary_lines(limit or 1200)
        return [{"id": f"ordinary-{i}", "label": "negative", "shape": "ordinary", "context": "line", "text": line,
                 "spans": []} for i, line in enumerate(lines)]
    if split.startswith("ordinary-"):
        items = secret_shapes.ordinary_file_items(split.removeprefix("ordinary-"))
    else:
        items = secret_shapes.shape_items(split.removeprefix("shapes-"))
    return items[:limit] if limit else items


# -- detectors: texts -> removed spans per text ------------------------------------------------
def maxmem_detector() -> Detector:
    from maxmem.redact import Redactor

    redactor = Redactor(cache_size=0)
    return lambda texts: [[(f.start, f.end) for f in redactor.findings(t)] for t in texts]


def baseline_detector(revision: str, folder: Path) -> Detector:
    """The redactor of an older commit of this checkout (`git archive`), imported as
    maxmem_baseline beside the current one: before and after in one run."""
    import importlib
    import subprocess
    import tarfile

    archive = folder / "baseline.tar"
    with open(archive, "wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", revision, "maxmem"], stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder / "src", filter="data")
    (folder / "src" / "maxmem").rename(folder / "src" / "maxmem_baseline")
    sys.path.insert(0, str(folder / "src"))
    redactor = importlib.import_module("maxmem_baseline.redact").Redactor(cache_size=0)
    return lambda texts: [[(f.start, f.end) for f in redactor.findings(t)] for t in texts]


def detect_secrets_detector() -> Detector | None:
    try:
        from detect_secrets.core.scan import scan_file
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def detect(texts: list[str]) -> list[list[Span]]:
        out = []
        with tempfile.TemporaryDirectory() as tmp, default_settings():
            path = Path(tmp) / "item.txt"
            for text in texts:
                path.write_text(text, encoding="utf-8", errors="surrogatepass")
                out.append(_ds_spans(text, scan_file(str(path))))
        return out

    return detect


def _ds_spans(text: str, found: Iterable) -> list[Span]:
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    lines = text.split("\n")
    spans: set[Span] = set()
    for secret in found:
        i = secret.line_number - 1
        if not 0 <= i < len(lines):
            continue
        value, line, hit = secret.secret_value or "", lines[i], False
        at = line.find(value) if value else -1
        while at >= 0:
            spans.add((starts[i] + at, starts[i] + at + len(value)))
            hit = True
            at = line.find(value, at + 1)
        if not hit:  # a transformed line: count the whole line as flagged
            spans.add((starts[i], starts[i] + len(line)))
    return sorted(spans)


# -- scoring ---------------------------------------------------------------------------------------
def _union(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def score(items: list[dict], predicted: list[list[Span]]) -> dict:
    secrets = covered = removed = true_removed = neg_lines = fp_lines = 0
    misses, false_positives = [], []
    for item, spans in zip(items, predicted):
        merged = _union(spans)
        for start, end, shape in item["spans"]:
            secrets += 1
            if any(s <= start and end <= e for s, e in merged):
                covered += 1
            else:
                misses.append((item["id"], shape, item["context"]))
        for s, e in merged:
            removed += 1
            if any(s < end and start < e for start, end, _ in item["spans"]):
                true_removed += 1
            else:
                false_positives.append((item["id"], item["shape"], item["text"][max(0, s - 30):e + 10]))
        if item["label"] == "negative":
            offsets, at = [], 0
            for line in item["text"].split("\n"):
                offsets.append((at, at + len(line)))
                at += len(line) + 1
            neg_lines += len(offsets)
            fp_lines += sum(any(s < le and ls < e or s == ls == e for s, e in merged) for ls, le in offsets)
    return {
        "secrets": secrets, "recall": covered / secrets if secrets else 1.0,
        "precision": true_removed / removed if removed else 1.0, "removed": removed,
        "negative_lines": neg_lines, "fp_lines": fp_lines,
        "fp_per_1k_lines": 1000 * fp_lines / neg_lines if neg_lines else 0.0,
        "misses": misses, "false_positives": false_positives,
    }


# -- real ordinary text: what this machine holds, written by others ------------------------------------
# Read where it is, never copied. Every removal there is taken as a false positive (a test fixture's
# private key is the rare exception: `--show` lists them to check). The rules are developed on the
# first two sources; the last two are held out: `--show` refuses them.
REAL_SUFFIXES = frozenset({".py", ".pyi", ".txt", ".md", ".rst", ".json", ".cfg", ".toml", ".yaml", ".yml", ".ini",
                           ".html", ".js", ".css", ".c", ".h", ".xml", ".csv", ".sh", ".in", ".gz", ""})
REAL_HELD_OUT = ("doc", "man")
REAL_CHUNK_LINES = 40  # text reaches the redactor in pieces of a few KB, as capture cuts it


def real_sources() -> dict[str, list[Path]]:
    """source -> its files, sorted: the Python standard library, the packages of this
    interpreter's environment, /usr/share/doc and the man pages."""
    import sysconfig

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    purelib = Path(sysconfig.get_paths()["purelib"])
    roots = {"stdlib": [stdlib], "site-packages": [purelib], "doc": [Path("/usr/share/doc")],
             "man": [Path("/usr/share/man")]}
    out: dict[str, list[Path]] = {}
    for source, folders in roots.items():
        files: list[Path] = []
        for folder in folders:
            if folder.is_dir():
                files += [p for p in folder.rglob("*") if p.suffix in REAL_SUFFIXES and p.is_file()
                          and (source != "stdlib" or "site-packages" not in p.parts)
                          and (source != "man" or p.suffix == ".gz")]
        out[source] = sorted(files)
    return out


def _read_text(path: Path) -> str | None:
    import gzip

    try:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
        return None
    return None if "\x00" in text else text


def real_chunks(files: list[Path], budget: int, seed: int = 11) -> list[tuple[str, str]]:
    """(file, chunk) pairs: files drawn at random (`seed`) until `budget` bytes, cut every
    REAL_CHUNK_LINES lines; a file gives at most 40 KB, so no one file fills the budget."""
    rng = random.Random(seed)
    order = files[:]
    rng.shuffle(order)
    out: list[tuple[str, str]] = []
    total = 0
    for path in order:
        if total >= budget:
            break
        text = _read_text(path)
        if not text:
            continue
        lines = text[:40_000].split("\n")
        for i in range(0, len(lines), REAL_CHUNK_LINES):
            chunk = "\n".join(lines[i:i + REAL_CHUNK_LINES])
            out.append((str(path), chunk))
            total += len(chunk)
    return out


def real_text_scores(budget: int, sources: list[str], show: int) -> None:
    from maxmem.redact import Redactor

    redactor = Redactor(cache_size=0)
    found = real_sources()
    print("| source | files | sampled MB | lines | FP lines | FP lines / 1k |\n|---|---|---|---|---|---|")
    shown: list[str] = []
    rules: dict[str, Counter] = {}
    for source in sources:
        chunks = real_chunks(found[source], budget)
        lines = fp = 0
        rules[source] = Counter()
        for path, chunk in chunks:
            findings = redactor.findings(chunk)
            starts = [0]
            for line in chunk.split("\n"):
                starts.append(starts[-1] + len(line) + 1)
            flagged: set[int] = set()
            for f in findings:
                first = bisect.bisect_right(starts, f.start) - 1
                last = bisect.bisect_right(starts, max(f.start, f.end - 1)) - 1
                flagged.update(range(first, last + 1))
                rules[source][f.rule] += 1
                if source not in REAL_HELD_OUT and len(shown) < show:
                    line = chunk[starts[first]:starts[first + 1] - 1]
                    shown.append(f"{source} {path}\n    {f.kind} [{f.rule}]\n    {line[:300]!r}\n"
                                 f"    value {chunk[f.start:f.end][:120]!r}")
            lines += sum(1 for line in chunk.split("\n") if line.strip())
            fp += len(flagged)
        mb = sum(len(c) for _, c in chunks) / 1e6
        print(f"| {source}{' (held out)' if source in REAL_HELD_OUT else ''} | {len(found[source])} | {mb:.1f} "
              f"| {lines} | {fp} | {1000 * fp / max(lines, 1):.2f} |")
    for source, counter in rules.items():
        if counter:
            print(f"\n{source}: rules that fired")
            for rule, n in counter.most_common(15):
                print(f"  {n:5d}  {rule}")
    if shown:
        print("\n" + "\n".join(shown))


# -- a 2 MB coding transcript ----------------------------------------------------------------------
PROSE = [
    "Can you look at why the nightly export is slow? It used to take two minutes.",
    "The test fails only on CI; locally everything passes. Maybe a timezone thing?",
    "Let me check the configuration loader and the retry logic before changing anything.",
    "I found it: the cursor is re-created for every page, so each query starts from scratch.",
    "Refactor the token bucket so the refill happens lazily on read, and add a test for the edge.",
    "Great, that works. Now update the changelog and open a pull request against main.",
    "The key insight is that the session cache keys were never invalidated after a password reset.",
]
COMMANDS = ["pytest -q tests/test_export.py", "rg -n 'token' src/", "git log --oneline -20", "git diff --stat",
            "python -m mypy maxmem", "ls -la src/auth", "cat pyproject.toml", "npm test -- --watch=false"]


def synthetic_transcript(size: int = 2_000_000, seed: int = 7) -> str:
    """Claude Code JSONL of a coding session: prose, tool calls, and tool results made of
    real source files (maxmem's own, the redactor and its tests left out), grep, git and
    test output. No secret is planted: it measures speed and ordinary-text damage."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import make_secrets_corpus as corpus

    rng = random.Random(seed)
    sources = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "maxmem").rglob("*.py"))
               if "redact" not in str(p.relative_to(ROOT))]
    outputs = [corpus.neg_grep, corpus.neg_traceback, corpus.neg_git, corpus.neg_lock_hashes, corpus.neg_diff,
               corpus.neg_tool_paths, corpus.neg_js_trace, corpus.neg_usage, corpus.neg_claude_meta]
    lines: list[str] = []
    total = 0
    while total < size:
        source = rng.choice(sources)
        start = rng.randrange(max(1, len(source) - 3000))
        result = rng.choice([source[start:start + rng.randrange(500, 3000)], rng.choice(outputs)(rng)])
        session = corpus._uuid(rng)
        records = [
            {"type": "user", "sessionId": session, "uuid": corpus._uuid(rng),
             "message": {"role": "user", "content": rng.choice(PROSE)}},
            {"type": "assistant", "sessionId": session, "uuid": corpus._uuid(rng),
             "message": {"id": "msg_01" + corpus.chars(rng, corpus.ALNUM, 22), "role": "assistant", "content": [
                 {"type": "text", "text": rng.choice(PROSE)},
                 {"type": "tool_use", "id": "toolu_01" + corpus.chars(rng, corpus.ALNUM, 22), "name": "Bash",
                  "input": {"command": rng.choice(COMMANDS)}}]}},
            {"type": "user", "sessionId": session, "uuid": corpus._uuid(rng),
             "message": {"role": "user", "content": [{"type": "tool_result", "content": result}]}},
        ]
        for record in records:
            line = json.dumps(record, ensure_ascii=False)
            lines.append(line)
            total += len(line.encode("utf-8")) + 1
    return "\n".join(lines).encode("utf-8")[:size].decode("utf-8", "ignore")  # size in bytes


def throughput(detect: Detector, text: str, repeats: int = 3, clock: Callable[[], float] = time.perf_counter
               ) -> tuple[float, int]:
    best, found = float("inf"), 0
    for _ in range(repeats):
        t0 = clock()
        found = len(detect([text])[0])
        best = min(best, clock() - t0)
    return len(text.encode("utf-8")) / best / 1e6, found


BAD_INPUTS: dict[str, Callable[[int], str]] = {
    "1 MB single line": lambda n: ("word password=x " * (n // 16 + 1))[:n],
    "100k+ '='": lambda n: "=" * n,
    "100k+ ':'": lambda n: ":" * n,
    "NUL bytes": lambda n: "\x00" * n,
    "lone surrogates": lambda n: ("\udcff password=\udc80" * (n // 18 + 1))[:n],
    "'password=' repeated": lambda n: ("password=" * (n // 9 + 1))[:n],
    "unterminated PEM blocks": lambda n: ("-----BEGIN RSA PRIVATE KEY-----\n" * (n // 32 + 1))[:n],
    "'mysql -p -p …'": lambda n: ("mysql" + " -p" * (n // 3))[:n],
}


def bad_input_speeds(size: int = 1_000_000) -> dict[str, tuple[float, float]]:
    """name -> (MB/s at `size`, time ratio of 4x the input to 1x): linear is about 4."""
    from maxmem.redact import Redactor

    redactor = Redactor(cache_size=0)

    def seconds(text: str) -> float:
        best = float("inf")
        for _ in range(2):
            t0 = time.perf_counter()
            redactor.redact(text)
            best = min(best, time.perf_counter() - t0)
        return best

    out = {}
    for name, make in BAD_INPUTS.items():
        one, four = seconds(make(size // 4)), seconds(make(size))
        out[name] = (size / four / 1e6, four / max(one, 1e-6))
    return out


def locomo_texts(path: Path | None) -> list[str] | None:
    if path is None:
        return None
    if not path.is_file():
        raise SystemExit(f"--locomo {path}: no such file (LoCoMo-10's locomo10.json)")
    texts = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        for key, turns in sample["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    text = f"{turn['speaker']}: {turn['text']}"
                    if turn.get("blip_caption"):
                        text += f" [shares {turn['blip_caption']}]"
                    texts.append(text)
    return texts


def split_table(figures: dict[str, dict], systems: list[str], splits: list[str]) -> list[str]:
    """The Markdown rows of each split's figures, the systems side by side: recall and
    precision where there are secrets, FP lines per 1k where there are only ordinary lines."""
    rows = ["| | " + " | ".join(systems) + " |", "|---" * (len(systems) + 1) + "|"]
    for split in splits:
        for key, label, fmt in (("recall", "recall", "{:.3f}"), ("precision", "precision", "{:.3f}"),
                                ("fp_per_1k_lines", "FP lines / 1k negative lines", "{:.1f}")):
            ordinary = split == "ordinary" or split.startswith("ordinary-")
            if split in SHAPE_SPLITS and ordinary != (key == "fp_per_1k_lines"):
                continue  # the shape splits hold only secrets, the ordinary lines none
            cells = [fmt.format(figures[n][split][key]) for n in systems]
            rows.append(f"| {split} {label} | " + " | ".join(cells) + " |")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=["dev", "heldout", "both", "shapes", "unseen", "blind", "blind3", "blind4",
                                                  "blind5", "blind6", "blind7", "develop", "all"],
                        default="all",
                        help="dev/heldout: the template split; shapes: shapes-dev, shapes-heldout, the "
                             "ordinary lines, the unseen and the blind splits; unseen: shapes-unseen and "
                             "ordinary-unseen; blind: shapes-blind and ordinary-blind; blind3: shapes-blind3 "
                             "and ordinary-blind3; blind4: shapes-blind4 and ordinary-blind4; "
                             "blind5: shapes-blind5 and ordinary-blind5; blind6: shapes-blind6 and "
                             "ordinary-blind6; blind7: shapes-blind7 and ordinary-blind7; both: dev and "
                             "heldout; develop: all but the splits never read; all (default): everything")
    parser.add_argument("--baseline", metavar="REV", help="also run the redactor of this git revision")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--locomo", type=Path, help="LoCoMo-10 (locomo10.json): count redactions in it")
    parser.add_argument("--transcript-mb", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=3, help="throughput: best of N runs")
    parser.add_argument("--cpu-time", action="store_true",
                        help="throughput in the process's CPU time, not the wall clock's (a machine others share)")
    parser.add_argument("--no-detect-secrets", action="store_true")
    parser.add_argument("--no-bad-input", action="store_true", help="skip the bad-input timings")
    parser.add_argument("--limit", type=int, help="only the first N items of each split (a smoke run)")
    parser.add_argument("--misses", action="store_true",
                        help="list maxmem's misses and false positives (never on a split only scored: blind6, "
                             "blind7)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--real-text", action="store_true",
                        help="only the ordinary text of this machine: FP lines per 1,000 per source "
                             "(stdlib, site-packages; held out: doc, man)")
    parser.add_argument("--real-mb", type=float, default=1.0, help="--real-text: MB drawn from each source")
    parser.add_argument("--source", action="append", choices=["stdlib", "site-packages", *REAL_HELD_OUT],
                        help="--real-text: only these sources (repeat it)")
    parser.add_argument("--show", type=int, default=0,
                        help="--real-text: list the first N removals (never from the held-out sources)")
    args = parser.parse_args(argv)
    if args.real_text:
        real_text_scores(int(args.real_mb * 1_000_000), args.source or ["stdlib", "site-packages", *REAL_HELD_OUT],
                         args.show)
        return 0

    systems: dict[str, Detector] = {"maxmem": maxmem_detector()}
    scratch = tempfile.TemporaryDirectory()
    if args.baseline:
        systems[f"maxmem {args.baseline}"] = baseline_detector(args.baseline, Path(scratch.name))
    ds = None if args.no_detect_secrets else detect_secrets_detector()
    if ds:
        systems["detect-secrets"] = ds
    elif not args.no_detect_secrets:
        print("detect-secrets is not installed (pip install detect-secrets): maxmem only", file=sys.stderr)
    splits = {"both": ["dev", "heldout"], "shapes": list(SHAPE_SPLITS), "unseen": list(UNSEEN_SPLITS),
              "blind": list(BLIND_SPLITS), "blind3": list(BLIND3_SPLITS), "blind4": list(BLIND4_SPLITS),
              "blind5": list(BLIND5_SPLITS), "blind6": list(BLIND6_SPLITS),
              "blind7": list(BLIND7_SPLITS),
              "develop": ["dev", "heldout", *(s for s in SHAPE_SPLITS if s not in NEVER_READ)],
              "all": ["dev", "heldout", *SHAPE_SPLITS]}.get(args.split, [args.split])
    figures: dict[str, dict] = {name: {} for name in systems}
    for split in splits:
        items = load(split, args.corpus, args.limit)
        texts = [item["text"] for item in items]
        for name, detect in systems.items():
            figures[name][split] = score(items, detect(texts))

    transcript = synthetic_transcript(int(args.transcript_mb * 1_000_000))
    locomo = locomo_texts(args.locomo)
    for name, detect in systems.items():
        clock = time.process_time if args.cpu_time else time.perf_counter
        # best of N for maxmem and its baseline alike; detect-secrets (minutes a run) once
        mbps, found = throughput(detect, transcript, 1 if name == "detect-secrets" else args.repeats, clock)
        figures[name]["throughput_mb_s"] = mbps
        figures[name]["transcript_redactions"] = found
        if locomo is not None:
            figures[name]["locomo_redactions"] = sum(len(s) for s in detect(locomo))

    loaded = {split: load(split, args.corpus, args.limit) for split in splits}
    shapes = {s for items in loaded.values() for item in items for *_, s in item["spans"]}
    sizes = {split: (sum(len(i["spans"]) for i in items), sum(i["label"] == "negative" for i in items))
             for split, items in loaded.items()}
    print("corpus: " + "; ".join(f"{s}: {n} secrets, {m} negatives" for s, (n, m) in sizes.items())
          + f"; {len(shapes)} shapes")
    print(f"transcript: {len(transcript.encode()) / 1e6:.1f} MB synthetic Claude Code JSONL; "
          f"LoCoMo: {f'{len(locomo)} turns' if locomo is not None else 'no --locomo, skipped'}")
    print()
    print("\n".join(split_table(figures, list(systems), splits)))

    def row(label: str, cells: list[str]) -> None:
        print(f"| {label} | " + " | ".join(cells) + " |")

    row(f"throughput, {args.transcript_mb:g} MB transcript (MB/s{', CPU time' if args.cpu_time else ''})",
        [f"{figures[n]['throughput_mb_s']:.1f}" for n in systems])
    row("redactions in the transcript", [str(figures[n]["transcript_redactions"]) for n in systems])
    if locomo is not None:
        row("redactions in LoCoMo (no secrets)", [str(figures[n]["locomo_redactions"]) for n in systems])

    if not args.no_bad_input:
        speeds = bad_input_speeds(int(args.transcript_mb * 500_000))
        figures["maxmem"]["bad_input"] = speeds
        print("\n| maxmem on bad input | MB/s | time for 4x the input |\n|---|---|---|")
        for name, (mbps, ratio) in speeds.items():
            print(f"| {name} | {mbps:.1f} | {ratio:.1f}x |")

    if args.misses:
        for split in splits:
            result = figures["maxmem"][split]
            if split in NEVER_READ:
                continue  # scored, never read: the rules are not written from it
            print(f"\n{split}: maxmem misses {len(result['misses'])}, "
                  f"false positives {len(result['false_positives'])}")
            for miss in result["misses"]:
                print("  miss", *miss)
            for fp in result["false_positives"]:
                print("  fp  ", fp[0], fp[1], repr(fp[2]))
            theirs = figures.get("detect-secrets", {}).get(split, {}).get("misses", [])
            by_shape = Counter(shape for _, shape, _ in theirs)
            if by_shape:
                print("  detect-secrets misses by shape:", dict(by_shape.most_common(12)))
    if args.json:
        for per_system in figures.values():
            for split in splits:
                per_system[split] = {k: v for k, v in per_system[split].items()
                                     if k not in ("misses", "false_positives")}
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
