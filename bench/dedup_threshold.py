"""Choose the near-duplicate threshold from measurements with the real local embedder.

    python bench/dedup_threshold.py

Two kinds of pairs, written by hand:
- paraphrases: the same fact said twice (the second should update the first);
- related-but-different: same topic, different fact (both must be kept; merging
  them loses knowledge, e.g. "Postgres for billing" vs "Postgres for analytics",
  or a changed value: "dentist on Tuesday" vs "dentist on Thursday").

It prints the cosine similarity distribution of each kind (multilingual-e5-small,
passage embeddings, as brain.remember stores them) and, for candidate thresholds,
how many paraphrases would be merged (recall) and how many different facts would
be wrongly merged (false merges). A wrong merge loses a fact, a missed merge only
leaves a duplicate, so the default is the lowest threshold with no false merge
here, plus a margin.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from maxmem.embeddings import LocalEmbedder  # noqa: E402

PARAPHRASES = [
    ("Remember that my passport expires in March 2027.", "My passport expires in March 2027."),
    ("We decided to use PostgreSQL instead of MySQL because we need JSONB.", "Decision: PostgreSQL over MySQL, because we need JSONB."),
    ("I prefer 2-space indentation in JavaScript.", "For JavaScript, the user prefers indenting with 2 spaces."),
    ("The outage was caused by an expired TLS certificate on the load balancer.", "Root cause of the outage: the load balancer's TLS certificate had expired."),
    ("Lesson learned: always take a database snapshot before running migrations.", "Always snapshot the database before running a migration."),
    ("We shipped version 2.0 to all customers today.", "Version 2.0 shipped to all customers today."),
    ("Jonas's birthday is on May 3rd.", "Don't forget that Jonas has his birthday on May 3."),
    ("I'm allergic to penicillin.", "The user is allergic to penicillin."),
    ("Never use git push --force on my repositories.", "Do not force-push to my repos, ever."),
    ("The staging cluster is rebuilt every Sunday night.", "Every Sunday night the staging cluster gets rebuilt."),
    ("Invoices go to billing@acme.example.", "Send invoices to billing@acme.example."),
    ("We agreed to freeze deploys on Fridays.", "Decision: no deploys on Fridays."),
    ("Call me Max, not Maximilian.", "The user wants to be called Max rather than Maximilian."),
    ("Our production region is eu-central-1.", "Production runs in the eu-central-1 region."),
    ("The VPN config lives in ~/vpn/office.ovpn.", "The office VPN configuration file is ~/vpn/office.ovpn."),
    ("The backup script failed for a week because the S3 credentials had rotated.", "Backups silently failed for a week: the S3 credentials were rotated."),
    ("Next time, book the hotel before the flights.", "Lesson: book hotels first, flights second."),
    ("I like my coffee black, no sugar.", "User drinks coffee black without sugar."),
    ("We settled on weekly releases every Tuesday.", "Releases happen weekly, on Tuesdays."),
    ("The landlord's number is 0151 2345678.", "Landlord phone: 0151 2345678."),
    ("Please keep responses under 200 words unless I ask for more.", "Keep answers below 200 words unless asked for more."),
    ("The team decided to drop Python 3.8 support in the next release.", "Python 3.8 support will be dropped in the next release, the team decided."),
    ("The memory leak was an unbounded cache in the session middleware.", "Memory leak cause: the session middleware's cache had no bound."),
    ("I'm vegetarian, so leave meat out of recipe suggestions.", "User is vegetarian: no meat in recipe suggestions."),
    ("The cat needs her thyroid pill every morning.", "Every morning the cat must get her thyroid pill."),
    ("We chose SQLite because the tool must run offline.", "SQLite was chosen since the tool has to work offline."),
    ("My employee ID is 48213.", "Employee ID: 48213."),
    ("Always write commit messages in the imperative mood.", "Commit messages should be in the imperative mood."),
    ("The API is versioned in the URL path, not in headers.", "API versioning goes in the URL path rather than headers."),
    ("The wifi at the cabin is called Seeblick_5G.", "Cabin wifi network name: Seeblick_5G."),
    ("We lost two hours of data because backups stopped when the disk filled up.", "Two hours of data were lost: the disk filled up and backups stopped."),
    ("Tom is the on-call lead for December.", "In December, Tom leads on-call."),
    ("I want prices shown in euros, not dollars.", "Show prices in EUR instead of USD."),
    ("The parking permit renews every January.", "Parking permit renewal is every January."),
    ("We moved the wedding to June 14th.", "The wedding is now on June 14th."),
    ("Use pytest, not unittest, in my projects.", "In the user's projects, tests use pytest rather than unittest."),
    ("The client's fiscal year ends in June.", "The client has a fiscal year ending in June."),
    ("Dates should be written as YYYY-MM-DD.", "Write dates in YYYY-MM-DD format."),
    ("The deploy failed because the migration locked the users table.", "Deploy failure: the migration held a lock on the users table."),
    ("I passed my driving test this morning.", "Passed the driving test today."),
]

# The commonest real duplicate: the same fact restated with small edits (a trigger
# that fires again in a later conversation, a re-import, "remember that" prefixed).
RESTATEMENTS = [
    ("My passport expires in March 2027.", "Remember that my passport expires in March 2027."),
    ("We decided to use PostgreSQL instead of MySQL because we need JSONB.", "We decided to use PostgreSQL instead of MySQL, because we need JSONB"),
    ("I prefer 2-space indentation in JavaScript.", "i prefer 2-space indentation in javascript"),
    ("The staging cluster is rebuilt every Sunday night.", "Please remember: the staging cluster is rebuilt every Sunday night."),
    ("Never use git push --force on my repos.", "Never use git push --force on my repos!"),
    ("We settled on weekly releases every Tuesday.", "We settled on weekly releases every Tuesday morning."),
    ("Jonas's birthday is on May 3rd.", "Don't forget that Jonas's birthday is on May 3rd."),
    ("Lesson learned: always take a database snapshot before running migrations.", "Lesson learned: always take a DB snapshot before running migrations."),
    ("The outage was caused by an expired TLS certificate on the load balancer.", "The outage was caused by an expired TLS cert on the load balancer; we renewed it."),
    ("Invoices go to billing@acme.example.", "Commit this to memory: invoices go to billing@acme.example."),
    ("I'm allergic to penicillin.", "Keep in mind that I'm allergic to penicillin."),
    ("Call me Max, not Maximilian.", "Call me Max (not Maximilian)."),
    ("We shipped version 2.0 to all customers today.", "We shipped version 2.0 to all of our customers today!"),
    ("Use pytest, not unittest, in my projects.", "Use pytest and not unittest in my projects."),
    ("The client's fiscal year ends in June.", "Please remember that the client's fiscal year ends in June."),
    ("Tom is the on-call lead for December.", "Make sure you remember that Tom is the on-call lead for December."),
    ("The VPN config lives in ~/vpn/office.ovpn.", "For future reference, the VPN config lives in ~/vpn/office.ovpn."),
    ("I like my coffee black, no sugar.", "I like my coffee black with no sugar."),
    ("The backup script failed for a week because the S3 credentials had rotated.", "The backup script silently failed for a week because the S3 credentials had rotated."),
    ("We agreed to freeze deploys on Fridays.", "We agreed to freeze deploys on Fridays after the last incident."),
]

RELATED_DIFFERENT = [
    ("We decided to use PostgreSQL for the billing service.", "We decided to use PostgreSQL for the analytics service."),
    ("The dentist appointment is on Tuesday.", "The dentist appointment is on Thursday."),
    ("My passport expires in March 2027.", "My driving licence expires in March 2027."),
    ("I prefer 2-space indentation in JavaScript.", "I prefer 4-space indentation in Python."),
    ("Jonas's birthday is on May 3rd.", "Anna's birthday is on May 3rd."),
    ("We shipped version 2.0 to all customers today.", "We shipped version 2.1 to all customers today."),
    ("The outage was caused by an expired TLS certificate.", "The outage was caused by a full disk on the database server."),
    ("Our production region is eu-central-1.", "Our staging region is eu-west-1."),
    ("I'm allergic to penicillin.", "I'm allergic to peanuts."),
    ("Never use git push --force on my repositories.", "Never commit directly to main in my repositories."),
    ("Invoices go to billing@acme.example.", "Support tickets go to help@acme.example."),
    ("The staging cluster is rebuilt every Sunday night.", "The staging database is backed up every Sunday night."),
    ("I like my coffee black, no sugar.", "I like my tea with milk and honey."),
    ("We agreed to freeze deploys on Fridays.", "We agreed to hold retros on Fridays."),
    ("Tom is the on-call lead for December.", "Tom is the on-call lead for January."),
    ("The VPN config lives in ~/vpn/office.ovpn.", "The SSH config lives in ~/.ssh/config."),
    ("Lesson learned: always snapshot the database before migrations.", "Lesson learned: always announce migrations in the team channel."),
    ("We chose SQLite because the tool must run offline.", "We chose Go because the tool must ship as one binary."),
    ("The wifi at the cabin is called Seeblick_5G.", "The wifi at the office is called Acme-Guest."),
    ("My employee ID is 48213.", "My badge number is 48213."),
    ("The cat needs her thyroid pill every morning.", "The dog needs his heart pill every evening."),
    ("Use pytest, not unittest, in my projects.", "Use ruff, not flake8, in my projects."),
    ("The API is versioned in the URL path.", "The API is rate-limited to 100 requests per minute."),
    ("The parking permit renews every January.", "The car insurance renews every January."),
    ("I want prices shown in euros.", "I want distances shown in kilometres."),
    ("We moved the wedding to June 14th.", "We moved the rehearsal dinner to June 13th."),
    ("The client's fiscal year ends in June.", "Our fiscal year ends in December."),
    ("The backup script failed because the S3 credentials had rotated.", "The deploy script failed because the SSH key had expired."),
    ("Next time, book the hotel before the flights.", "Next time, book the rental car before the flights."),
    ("Call me Max, not Maximilian.", "Call my wife Anna, not Annabelle."),
    ("We settled on weekly releases every Tuesday.", "We settled on monthly planning every first Monday."),
    ("Please keep responses under 200 words.", "Please keep commit messages under 72 characters per line."),
    ("I passed my driving test this morning.", "I failed my driving test this morning."),
    ("The memory leak was an unbounded cache in the session middleware.", "The memory leak was an unclosed file handle in the log rotator."),
    ("The team decided to drop Python 3.8 support.", "The team decided to drop Node 16 support."),
    ("Dates should be written as YYYY-MM-DD.", "Times should be written in 24-hour format."),
    ("I'm vegetarian.", "My daughter is vegan."),
    ("The landlord's number is 0151 2345678.", "The plumber's number is 0151 8765432."),
    ("We lost two hours of data when the disk filled up.", "We lost two hours of sleep when the alarm went off at 4am."),
    ("The deploy failed because the migration locked the users table.", "The deploy failed because the migration dropped the wrong index."),
]


def same_numbers(a: str, b: str) -> bool:
    from maxmem.curation import numbers

    return numbers(a) == numbers(b)


def cosines(embedder: LocalEmbedder, pairs: list[tuple[str, str]]) -> np.ndarray:
    left = embedder.embed_documents([a for a, _ in pairs])
    right = embedder.embed_documents([b for _, b in pairs])
    return np.sum(left * right, axis=1)


def main() -> None:
    embedder = LocalEmbedder()
    same = cosines(embedder, PARAPHRASES)
    restated = cosines(embedder, RESTATEMENTS)
    diff = cosines(embedder, RELATED_DIFFERENT)
    print(f"model: {embedder.provider}:{embedder.model}:{embedder.dim}")
    for name, values in (("restatement", restated), ("paraphrase", same), ("related-different", diff)):
        q = np.percentile(values, [0, 10, 50, 90, 100])
        print(f"{name:<18} n={len(values):>3}  min {q[0]:.3f}  p10 {q[1]:.3f}  median {q[2]:.3f}  p90 {q[3]:.3f}  max {q[4]:.3f}")
    print()
    print("merged = similarity >= threshold and the same numbers on both sides (the guard)")
    print(f"{'threshold':>9} {'restatements':>13} {'paraphrases':>12} {'false merges':>13} {'(no guard)':>11}")
    guard_same = np.array([same_numbers(a, b) for a, b in PARAPHRASES])
    guard_restated = np.array([same_numbers(a, b) for a, b in RESTATEMENTS])
    guard_diff = np.array([same_numbers(a, b) for a, b in RELATED_DIFFERENT])
    for threshold in np.arange(0.86, 0.995, 0.01):
        r = int(np.sum((restated >= threshold) & guard_restated))
        p = int(np.sum((same >= threshold) & guard_same))
        w = int(np.sum((diff >= threshold) & guard_diff))
        unguarded = int(np.sum(diff >= threshold))
        print(f"{threshold:>9.2f} {r:>8}/{len(restated):<4} {p:>7}/{len(same):<4} {w:>8}/{len(diff):<4} {unguarded:>6}/{len(diff):<4}")
    print()
    from maxmem.curation import DEDUP_SUPERSET_THRESHOLD, DEDUP_THRESHOLD, is_near_duplicate

    print(
        f"chosen rule (similarity >= {DEDUP_THRESHOLD}, or >= {DEDUP_SUPERSET_THRESHOLD} when the new text "
        "has every word of the old; numbers equal):"
    )
    for name, pairs, values in (
        ("restatements", RESTATEMENTS, restated),
        ("paraphrases", PARAPHRASES, same),
        ("false merges", RELATED_DIFFERENT, diff),
    ):
        merged = sum(is_near_duplicate(float(v), a, b) for (a, b), v in zip(pairs, values))
        print(f"  {name:<13} {merged}/{len(pairs)}")
    print()
    print("closest related-but-different pairs:")
    for i in np.argsort(-diff)[:5]:
        print(f"  {diff[i]:.3f}  {RELATED_DIFFERENT[i][0]}  |  {RELATED_DIFFERENT[i][1]}")
    print("least similar paraphrases:")
    for i in np.argsort(same)[:5]:
        print(f"  {same[i]:.3f}  {PARAPHRASES[i][0]}  |  {PARAPHRASES[i][1]}")


if __name__ == "__main__":
    main()
