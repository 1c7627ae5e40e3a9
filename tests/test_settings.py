"""The tables of config.toml (maxmem.settings): read and checked once, by load_config, with
one line naming the key; older spellings; maxmem's variables; what `init` writes back."""

from __future__ import annotations

import re
import tomllib
from dataclasses import fields
from pathlib import Path

import pytest
import tomli_w

from maxmem import Config, load_config
from maxmem.config import brain_path
from maxmem.errors import ConfigError
from maxmem.memory import CATEGORIES
from maxmem.settings import SECTIONS, RetentionSettings, TriggerTable

ROOT = Path(__file__).resolve().parent.parent


def load(tmp_path: Path, text: str, **env: str) -> Config:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(env={"MAXMEM_HOME": str(tmp_path), **env}, path=path)


@pytest.mark.parametrize("text, message", [
    ("[capture]\nchunk_tokens = 0", "[capture] chunk_tokens = 0 must be a whole number ≥ 1"),
    ("[capture]\nclaude_dirs = 3", "[capture] claude_dirs must be a list of folders"),
    ("[embed]\nbatch_size = 0", "[embed] batch_size = 0 must be a whole number from 1 to 100000"),
    ('[retention]\ndaily = "ninety"', "[retention] daily = 'ninety': give days (90), a duration (90d, 12w, 2y)"),
    ('[retention]\ntimezone = "Mars/Olympus"', "[retention] timezone 'Mars/Olympus' is not a time zone name"),
    ('[retention]\nschedule = "3am"', "[retention] schedule = '3am' must be a time of day like 03:00"),
    ('[triggers]\nguards = ["(x"]', "[triggers] guards: invalid regular expression '(x'"),
    ('[triggers.lesson]\nroles = ["tool"]', "[triggers.lesson] roles: 'tool' is not one of user, assistant"),
    ('[triggers]\nenabled = ["gossip"]', "[triggers] enabled: unknown trigger 'gossip'"),
    ("[curation]\ndedup = 1", "[curation] dedup = 1 must be true or false"),
    ('[redact]\nsecret_names = ["two words"]', "[redact] secret_names[0] = 'two words': a name is letters"),
    ("[brief]\nbudget_tokens = 50", "[brief] budget_tokens = 50 must be a whole number ≥ 100"),
    ('[context]\ntimezone = "Nowhere/Town"', "[context] timezone 'Nowhere/Town' is not a time zone name"),
    ("[recall]\nwarm_minutes = -1", "[recall] warm_minutes = -1 must be a number of minutes from 0 to 1440"),
    ("[search]\ncandidates = 5", "[search] candidates = 5 must be a whole number from 10 to 1000"),
    ("[search]\nrecency_weight = 1.5", "[search] recency_weight = 1.5 must be a number from 0 to 1"),
    ("[search]\nrecency_half_life = 0", "[search] recency_half_life = 0 must be a number of days more than 0"),
    ('[hook]\nbudget_seconds = "soon"', "[hook] budget_seconds = 'soon' must be a number of seconds more than 0"),
    ("[backup]\nkeep = 0", "[backup] keep = 0 must be a whole number ≥ 1"),
    ("[doctor.max_age_hours]\ncapture = 0", "[doctor] max_age_hours.capture = 0 must be a number of hours"),
    ("[doctor]\nfail_after = 2.5", "[doctor] fail_after = 2.5 must be a whole number ≥ 1"),
    ('[sync.postgres]\nindex_memory = "lots"', "[sync.postgres] index_memory must look like 512MB or 2GB"),
    ("[sync.folder]\nvectors = 1", "[sync.folder] vectors = 1 must be true or false"),
    ("[retention]\nweekly = 7", "[retention]: unknown setting 'weekly' (known: core, project, daily, conversation,"),
    ("[sync.cloud]\nurl = 1", "[sync]: unknown table or setting 'cloud' (known: [sync.folder], [sync.postgres])"),
    ("[retension]\ndaily = 7", "unknown section [retension] (known: [backup], [brief], [capture], [context] "
                               "(older spelling of [brief]), [curation], "),
    ("retention = 7", "[retention] must be a table"),
])
def test_a_bad_table_stops_the_load_with_one_line_naming_the_file_and_the_key(tmp_path, text, message):
    with pytest.raises(ConfigError) as err:
        load(tmp_path, text)
    said = str(err.value)
    assert said.startswith(f"{tmp_path / 'config.toml'}: {message}") and "\n" not in said, said


def test_every_table_is_read_typed_and_a_missing_one_gives_the_defaults(tmp_path):
    config = load(tmp_path, """
[capture]
claude_dirs = "~/claude"
settle_seconds = 30
[retention]
daily = "12w"
core = "forever"
archive_dir = "~/archives"
[triggers]
enabled = ["decision"]
[triggers.decision]
patterns = ['\\bwe locked in\\b']
replace = true
[doctor]
max_age_hours = { capture = 8 }
required = ["backup"]
[sync.folder]
dir = "~/Sync/maxmem"
""")
    home = Path("~").expanduser()
    assert config.capture.claude_dirs == (home / "claude",) and config.capture.settle_seconds == 30.0
    assert config.capture.openclaw_dirs is None  # the agent's own, found by capture
    assert (config.retention.daily, config.retention.core, config.retention.conversation) == (84, None, 30)
    assert config.retention.archive_dir == home / "archives"
    assert config.triggers.enabled == ("decision",)
    assert config.triggers.own == {"decision": TriggerTable(patterns=(r"\bwe locked in\b",), replace=True)}
    assert dict(config.doctor.max_age_hours) == {"capture": 8.0} and config.doctor.required == ("backup",)
    assert config.sync_folder.dir == home / "Sync" / "maxmem" and config.sync_postgres.dsn is None
    for name, (attribute, cls) in SECTIONS.items():  # Config() and an empty file: the same defaults
        assert getattr(load(tmp_path, ""), attribute) == getattr(Config(), attribute) == cls(), name


def test_the_brief_reads_its_older_spelling_and_the_newer_wins(tmp_path):
    older = load(tmp_path, "[context]\nbudget_tokens = 1500\ntimezone = 'Asia/Tokyo'\n")
    assert (older.brief.budget_tokens, older.brief.timezone) == (1500, "Asia/Tokyo")
    both = load(tmp_path, "[context]\nbudget_tokens = 1500\ntimezone = 'Asia/Tokyo'\n[brief]\nbudget_tokens = 900\n")
    assert (both.brief.budget_tokens, both.brief.timezone) == (900, "Asia/Tokyo")


def test_capture_redact_patterns_is_read_as_redact_patterns_too(tmp_path):
    config = load(tmp_path, '[capture]\nredact_patterns = ["ACME-[0-9]+"]\n[redact]\npatterns = ["TKT-[0-9]+"]\n')
    assert [p.pattern for p in config.redact.patterns] == ["TKT-[0-9]+", "ACME-[0-9]+"]


def test_maxmem_pg_dsn_is_read_by_load_config_over_the_file(tmp_path):
    text = '[sync.postgres]\ndsn = "postgresql://file@db/brain"\n'
    assert load(tmp_path, text).sync_postgres.dsn == "postgresql://file@db/brain"
    assert load(tmp_path, text, MAXMEM_PG_DSN="postgresql://env@db/brain").sync_postgres.dsn == \
        "postgresql://env@db/brain"
    assert load(tmp_path, "", MAXMEM_PG_DSN="postgresql://env@db/brain").sync_postgres.dsn == \
        "postgresql://env@db/brain"


def test_init_writes_back_the_files_tables_as_written_and_no_variable(tmp_path):
    text = ('embedder = "none"\n[retention]\ndaily = "12w"\n[context]\nbudget_tokens = 1500\n'
            '[sync.postgres]\ninterval_minutes = 30\n')
    config = load(tmp_path, text, MAXMEM_PG_DSN="postgresql://me:secret@db/brain")
    written = tomllib.loads(tomli_w.dumps(config.to_toml_dict()))
    assert {k: v for k, v in written.items() if isinstance(v, dict)} == {
        "retention": {"daily": "12w"}, "context": {"budget_tokens": 1500},
        "sync": {"postgres": {"interval_minutes": 30}}}
    assert "secret" not in tomli_w.dumps(config.to_toml_dict())


def test_retention_has_a_key_per_category():
    assert {f.name for f in fields(RetentionSettings)} >= set(CATEGORIES)


def test_code_reads_the_typed_settings_never_the_raw_tables():
    """No module looks a table up by name or guesses what it was given; the file's own tables
    are kept only for `init` to write back (and copied whole to browse's worker)."""
    lookups, raw = [], []
    for path in (ROOT / "maxmem").rglob("*.py"):
        text, name = path.read_text(encoding="utf-8"), str(path.relative_to(ROOT))
        lookups += [f"{name}: {m}" for m in re.findall(r"\.section\(|hasattr\(\w+, \"section\"\)", text)]
        raw += [name] if "file_tables" in text else []
    assert lookups == []
    assert sorted(raw) == ["maxmem/browse/worker.py", "maxmem/config.py"]


@pytest.mark.parametrize("in_file", [False, True])
@pytest.mark.parametrize("variable", [False, True])
@pytest.mark.parametrize("option", [False, True])
@pytest.mark.parametrize("home", [False, True])
def test_the_prompt_hooks_short_path_finds_brain_db_where_load_config_does(tmp_path, in_file, variable, option,
                                                                            home):
    path = tmp_path / "config.toml"
    path.write_text(f'db_path = "{tmp_path / "file.db"}"\n[retention]\ndaily = 30\n' if in_file else "")
    env = {**({"MAXMEM_DB": str(tmp_path / "env.db")} if variable else {}),
           **({"MAXMEM_HOME": str(tmp_path / "home")} if home else {})}
    db = tmp_path / "option.db" if option else None
    assert brain_path(env, path, db) == Path(load_config(env=env, path=path, db_path=db).db_path).expanduser()


def test_the_prompt_hooks_short_path_reads_no_table():
    import subprocess
    import sys

    code = ("import sys; from maxmem.config import brain_path; brain_path({}); "
            "print(sorted(m for m in sys.modules if m.startswith('maxmem.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "maxmem.settings" not in done.stdout and "maxmem.config" in done.stdout
