#!/usr/bin/env python3
"""Regenerate brain.db.sample: a few dozen realistic memories, embedded with the local model.

    python scripts/make_sample_db.py [OUT]      (default: brain.db.sample at the repo root)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from maxmem import Brain, FixedClock

NOW = "2026-11-28T18:00:00Z"

MEMORIES = [
    # core: who the user is, how they want things, what was decided
    ("core", "preference", "Sam prefers answers in short bullet points, with commands in code blocks.", 0.9, ["style"], "2026-09-02"),
    ("core", "preference", "Never run `git push --force` on main; open a pull request instead.", 0.95, ["git"], "2026-09-10"),
    ("core", "decision", "We chose PostgreSQL 16 with pgvector for the shared agent memory, because SQLite cannot take several writers on the home server.", 0.9, ["sync", "postgres"], "2026-10-04"),
    ("core", "decision", "Backups of the NAS go to Backblaze B2 every night at 02:30 with restic; retention 30 daily, 12 monthly.", 0.85, ["backup", "nas"], "2026-10-12"),
    ("core", "fact", "Sam's timezone is America/New_York; working hours 9:00-17:30.", 0.8, ["schedule"], "2026-09-01"),
    ("core", "lesson", "When Home Assistant stops after an update, check the custom_components first: the HACS integration broke twice.", 0.8, ["homeassistant"], "2026-10-21"),
    ("core", "failure", "The Jellyfin container lost its library because the volume was mounted read-only; fixed by mounting /srv/media with rw and re-scanning.", 0.8, ["docker", "jellyfin"], "2026-11-03"),
    ("core", "milestone", "Shipped v1.0 of the invoice parser to production on 2026-11-14.", 0.85, ["invoices"], "2026-11-14"),
    ("core", "preference", "Use metric units and 24-hour times in every report.", 0.7, ["style"], "2026-09-05"),
    ("core", "fact", "The home server is an Intel NUC called 'atlas' at 192.168.1.20, running Debian 12.", 0.8, ["homelab"], "2026-09-03"),
    # project: ongoing work
    ("project", "task", "Invoice parser: OCR of scanned PDFs uses Tesseract 5 with the deu+eng language packs; accuracy 97% on the test set.", 0.7, ["invoices", "ocr"], "2026-10-30"),
    ("project", "task", "Migrate the Grafana dashboards from InfluxDB to Prometheus; the power-usage panel still reads from Influx.", 0.6, ["grafana", "homelab"], "2026-11-18"),
    ("project", "fact", "The staging API runs on port 8443 behind Caddy; production uses port 443.", 0.7, ["api", "ports"], "2026-11-05"),
    ("project", "decision", "The mobile app will use Expo with React Native; Flutter was rejected for lack of team experience.", 0.75, ["mobile"], "2026-10-15"),
    ("project", "fact", "CI for the invoice parser runs on GitHub Actions; the slowest job is the OCR integration test at 6 minutes.", 0.5, ["ci", "invoices"], "2026-11-10"),
    ("project", "task", "Write the data-retention policy for customer uploads: delete raw PDFs after 90 days, keep extracted totals.", 0.6, ["privacy", "invoices"], "2026-11-20"),
    ("project", "fact", "Kubernetes is not used at home: everything runs with docker compose files in /srv/compose.", 0.6, ["docker", "homelab"], "2026-09-20"),
    ("project", "task", "Set up Tailscale so the laptop reaches atlas from outside without opening ports.", 0.6, ["network", "homelab"], "2026-11-22"),
    # daily notes
    ("daily", "note", "Dentist appointment moved to Tuesday 2 December at 15:00.", 0.6, ["personal"], "2026-11-26"),
    ("daily", "note", "Ordered a 4 TB SSD for atlas; arrives Thursday.", 0.4, ["homelab"], "2026-11-25"),
    ("daily", "note", "Standup: Priya is blocked on the Stripe webhook signature check; pair with her tomorrow.", 0.5, ["work"], "2026-11-27"),
    ("daily", "note", "The invoice parser misread a Swiss invoice: CHF amounts with apostrophes as thousands separators (1'250.00).", 0.6, ["invoices", "bug"], "2026-11-27"),
    ("daily", "note", "Read about sqlite-vec binary quantization; rescoring is needed to keep recall.", 0.3, ["reading"], "2026-11-24"),
    ("daily", "note", "Grocery list for the weekend: oat milk, coffee beans, lemons.", 0.2, ["personal"], "2026-11-28"),
    ("daily", "note", "Renewed the domain example-home.net until 2028.", 0.4, ["domains"], "2026-11-21"),
    ("daily", "note", "Power cut at 21:10 for 20 minutes; the UPS kept atlas up, the router rebooted.", 0.5, ["homelab", "power"], "2026-11-23"),
    ("daily", "note", "Call with accountant: VAT return due 10 January.", 0.6, ["finance"], "2026-11-19"),
    ("daily", "note", "Tried Ollama with llama3.1 8B on the laptop: 14 tokens/s, good enough for summaries.", 0.4, ["llm"], "2026-11-17"),
    # conversation snippets (as capture would store them)
    ("conversation", "exchange", "user: what port is the staging API on again?\nassistant: Staging listens on 8443 behind Caddy; production is on 443.", 0.3, [], "2026-11-26"),
    ("conversation", "exchange", "user: why did the backup fail last night?\nassistant: restic could not reach B2: the API key had expired. I rotated it and re-ran the backup, which finished in 41 minutes.", 0.4, ["backup"], "2026-11-27"),
    ("conversation", "exchange", "user: docker ps shows grafana restarting\nassistant: The container exits because /var/lib/grafana is owned by root; chown 472:472 fixed it. Grafana is on port 3000.", 0.4, ["docker", "grafana"], "2026-11-24"),
    ("conversation", "exchange", "user: remind me how we deploy the invoice parser\nassistant: Tag a release, GitHub Actions builds the image, and Watchtower on atlas pulls it within 5 minutes.", 0.4, ["invoices", "deploy"], "2026-11-16"),
    ("conversation", "exchange", "user: can you summarise the Stripe webhook issue?\nassistant: Signatures failed because the body was parsed as JSON before verification; verify against the raw bytes.", 0.4, ["stripe"], "2026-11-28"),
    ("conversation", "exchange", "user: which SSD did I order?\nassistant: A Samsung 990 Pro 4 TB, for atlas' second M.2 slot.", 0.3, ["homelab"], "2026-11-25"),
    ("conversation", "exchange", "user: what did we decide about Flutter?\nassistant: We rejected Flutter for the mobile app and picked Expo with React Native.", 0.3, ["mobile"], "2026-11-15"),
    ("conversation", "exchange", "user: my laptop can't reach atlas from the café\nassistant: Without a VPN that's expected; the Tailscale task is still open.", 0.3, ["network"], "2026-11-22"),
]


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "brain.db.sample"
    with tempfile.TemporaryDirectory() as tmp:
        with Brain.open(Path(tmp) / "brain.db", embedder="local", clock=FixedClock(NOW)) as brain:
            brain.remember_many([
                {"content": content, "category": category, "kind": kind, "importance": importance,
                 "tags": tags, "created_at": day + "T12:00:00Z", "agent": "sample", "source": "manual",
                 "pinned": kind == "preference" and importance >= 0.9}
                for category, kind, content, importance, tags, day in MEMORIES
            ], near=False)
            brain.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            if out.exists():
                out.unlink()
            brain.db.execute("VACUUM INTO ?", (str(out),))
    print(f"wrote {out} with {len(MEMORIES)} memories")


if __name__ == "__main__":
    main()
