"""Secret redaction: every supported shape goes, ordinary text stays."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from maxmem.config import Config
from maxmem.errors import ConfigError, InvalidInput
from maxmem.redact import Redactor, RedactSettings, explain, redact

# (label, text containing the secret, the secret itself). Kept in one list so the
# capture tests can plant every shape in a transcript and check brain.db for it.
SECRETS = [
    ("openai", "my key is sk-proj-Abc123def456ghi789jkl012mno345", "sk-proj-Abc123def456ghi789jkl012mno345"),
    ("openai-legacy", "sk-4f8Kq2Lx9Zt7Wm3Nc6Vb1Rd5Hy0Pj8Gs2Af7", "sk-4f8Kq2Lx9Zt7Wm3Nc6Vb1Rd5Hy0Pj8Gs2Af7"),
    ("anthropic", "ANTHROPIC key sk-ant-api03-" + "Q" * 40 + "-AAAA", "sk-ant-api03-" + "Q" * 40),
    ("github", "token ghp_" + "a1B2c3D4e5" * 4, "ghp_" + "a1B2c3D4e5" * 4),
    # (was "x" * 60: a run of x is a placeholder now, like ghp_xxxx… in docs)
    ("github-pat", "github_pat_11ABCDEFG0" + "k3Jq9ZtW7m" * 6, "github_pat_11ABCDEFG0" + "k3Jq9ZtW7m" * 6),
    ("slack", "bot xoxb-2190-48213-kQz8Wm3Nc6Vb1Rd5", "xoxb-2190-48213-kQz8Wm3Nc6Vb1Rd5"),
    ("slack-webhook", "post to https://hooks.slack.com/services/T0AB/B0CD/zz9yy8xx7", "T0AB/B0CD/zz9yy8xx7"),
    ("slack-webhook-env", "SLACK_WEBHOOK_URL=https://hooks.slack.com/services/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",
     "q4Xv9LmTz2WbN7cR5pKs1YhE"),
    ("slack-webhook-json-escaped",
     r'{"url":"https:\/\/hooks.slack.com\/services\/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"}',
     "q4Xv9LmTz2WbN7cR5pKs1YhE"),
    ("slack-webhook-percent-encoded",
     "?next=https%3A%2F%2Fhooks.slack.com%2Fservices%2F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&x=1",
     "q4Xv9LmTz2WbN7cR5pKs1YhE"),
    ("slack-webhook-no-scheme", "the hook is hooks.slack.com/services/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.",
     "q4Xv9LmTz2WbN7cR5pKs1YhE"),
    ("slack-workflow", "https://hooks.slack.com/workflows/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",
     "Zk3pQ9rX2mW8vT5nB1cY7hLd"),
    ("discord-webhook", "https://discord.com/api/webhooks/1187348523478573056/xKq9-Lm2ZpW8vT5nB1cY7hLdR4sF6gJ0aE3uI9oP2qW8eR5t",
     "xKq9-Lm2ZpW8vT5nB1cY7hLdR4sF6gJ0aE3uI9oP2qW8eR5t"),
    ("discord-webhook-versioned", "curl https://ptb.discord.com/api/v10/webhooks/1187348523478573056/"
     "xKq9-Lm2ZpW8vT5nB1cY7hLdR4sF6gJ0aE3uI9oP2qW8eR5t?wait=true", "xKq9-Lm2ZpW8vT5nB1cY7hLdR4sF6gJ0aE3uI9oP2qW8eR5t"),
    ("teams-webhook", "https://acme.webhook.office.com/webhookb2/4f2a9c1e-7b3d-4e8a-9c2f-1a2b3c4d5e6f@9b8c7d6e-5f4a-"
     "3b2c-1d0e-f9e8d7c6b5a4/IncomingWebhook/8d2e4f6a1b3c5d7e9f0a2b4c6d8e0f1a/3c5e7a9b-1d2f-4a6b-8c0d-2e4f6a8b0c1d/"
     "V2abcDEFghiJKLmnoPQRstuVWXyz0123456789ABCDEF", "8d2e4f6a1b3c5d7e9f0a2b4c6d8e0f1a"),
    ("teams-webhook-legacy", "https://outlook.office.com/webhook/4f2a9c1e-7b3d-4e8a-9c2f-1a2b3c4d5e6f@9b8c7d6e-5f4a-"
     "3b2c-1d0e-f9e8d7c6b5a4/IncomingWebhook/8d2e4f6a1b3c5d7e9f0a2b4c6d8e0f1a/3c5e7a9b-1d2f-4a6b-8c0d-2e4f6a8b0c1d",
     "8d2e4f6a1b3c5d7e9f0a2b4c6d8e0f1a"),
    ("google", "maps AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    ("aws-secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ4rT8vLkW",
     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ4rT8vLkW"),
    ("bearer", "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.opaque-token-value'",
     "opaque-token-value"),
    ("jwt", "session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
     "dozjgNryP4J3jVmNHl0w5N"),
    ("pem", ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAA\n"
            "-----END OPENSSH PRIVATE KEY-----"), "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAA"),
    ("url-password", "DATABASE at postgres://admin:hunter2xyz@db.internal:5432/app", "hunter2xyz"),
    ("env-assignment", "export STRIPE_WEBHOOK_SECRET=whsec_live_9f8e7d6c5b4a", "whsec_live_9f8e7d6c5b4a"),
    ("json-field", '{"client_secret": "c1i3nt-s3cr3t-v4lu3"}', "c1i3nt-s3cr3t-v4lu3"),
    ("yaml-password", "db:\n  password: Tr0ub4dor&3", "Tr0ub4dor"),
    ("camel-case", "const apiKey = 'k-7781-zz-991';", "k-7781-zz-991"),
    ("private-span", "note <private>my therapist is Dr. Wexler</private> done", "Dr. Wexler"),
]


@pytest.mark.parametrize("label,text,secret", SECRETS, ids=[s[0] for s in SECRETS])
def test_every_supported_shape_is_redacted(label, text, secret):
    out, count = redact(text)
    assert secret not in out, out
    assert count >= 1


def test_replacement_names_the_kind_and_keeps_context():
    out, count = redact("export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx now")
    assert out == "export OPENAI_API_KEY=[REDACTED:openai] now"
    assert count == 1


def test_private_spans_vanish_even_unclosed():
    assert redact("a <private>x</private> b <PRIVATE>y</PRIVATE> c") == ("a  b  c", 2)
    assert redact("keep this <private>but not this\nnor this") == ("keep this ", 1)


def test_pem_block_is_redacted_and_the_rest_kept():
    text = "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\nafter"
    assert redact(text) == ("before\n[REDACTED:private-key]\nafter", 1)


def test_url_keeps_user_and_host():
    out, _ = redact("git clone https://me:s3cr3t@github.com/x/y.git")
    assert out == "git clone https://me:[REDACTED:url-password]@github.com/x/y.git"


@pytest.mark.parametrize("text", [
    "max_tokens=400 and total_tokens: 1200",
    "the keyboard: qwerty",
    "PWD=/home/user",
    "token: null, password: None",
    "password=${DB_PASSWORD}",
    "Look at https://example.com/docs?page=2",
    "The meeting is at 10:30; notes: bring the key to the office.",
    "sk-short",
    "Heizungsreparatur ist auf Dienstag verschoben 火曜日",
    "Slack's docs: https://api.slack.com/messaging/webhooks and https://hooks.slack.com/",
    "placeholder https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "discord.com/api/webhooks/{id}/{token} and https://discord.com/channels/1187348523478573056/1187348523",
    "Teams: https://learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook",
])
def test_ordinary_text_is_left_alone(text):
    assert redact(text) == (text, 0)


def test_extra_patterns_whole_match_or_named_group():
    out, count = redact("ticket ACME-1234 and ref 4711", patterns=[r"ACME-\d+", r"ref (?P<secret>\d{4})"])
    assert out == "ticket [REDACTED:custom] and ref [REDACTED:custom]"
    assert count == 2


def test_a_bad_extra_pattern_is_a_one_line_error():
    with pytest.raises(InvalidInput, match="bad redaction pattern"):
        redact("x", patterns=["(unclosed"])


def test_redacting_twice_changes_nothing_more():
    text = " ".join(s[1] for s in SECRETS)
    once, n = redact(text)
    assert n >= len(SECRETS)
    assert redact(once) == (once, 0)


def test_several_assignments_in_one_text():
    text = 'A_TOKEN=abc123;B_SECRET=def456 {"token":"ghi789","password":"two words"} max_tokens=9'
    out, count = redact(text)
    assert out == ('A_TOKEN=[REDACTED:secret];B_SECRET=[REDACTED:secret] {"token":"[REDACTED:secret]",'
                   '"password":"[REDACTED:secret]"} max_tokens=9')
    assert count == 4


def test_secret_value_after_a_url_scheme_in_the_same_text():
    out, count = redact("see https://api.example.com/v1?access_token=zz9&page=2 for details")
    assert out == "see https://api.example.com/v1?access_token=[REDACTED:secret]&page=2 for details"
    assert count == 1


# -- leaks and false positives found in real transcripts ----------------------------------
REPORTED_LEAKS = [
    ("aws-secret-next-line", "aws_access_key_id = AKIAZ7Q3XK2M9PLW4RTE\nXq7bT9vLm2Kp4Rs8Wz1Nc5Hy3Jd6Fg0AeUiOo2Qw",
     "Xq7bT9vLm2Kp4Rs8Wz1Nc5Hy3Jd6Fg0AeUiOo2Qw"),
    ("aws-pair", "AKIAZ7Q3XK2M9PLW4RTE\nwJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ4rT8vLkW", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ4rT8vLkW"),
    ("pgpassword", "PGPASSWORD=s3cr3t-pg-pass psql -h localhost -U postgres", "s3cr3t-pg-pass"),
    ("huggingface", "HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"),
    ("pypi", "password = pypi-AgEIcHlwaS5vcmcCJGFiY2RlZjAxLTIzNDUtNjc4OS1hYmNkLWVmMDEyMzQ1Njc4OQACKlsz",
     "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZjAxLTIzNDUtNjc4OS1hYmNkLWVmMDEyMzQ1Njc4OQACKlsz"),
    ("npm", "//registry.npmjs.org/:_authToken=npm_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8", "npm_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"),
    ("gitlab", "PRIVATE-TOKEN: glpat-xY9zW8vU7tS6rQ5pO4nM", "glpat-xY9zW8vU7tS6rQ5pO4nM"),
    ("sendgrid", "SG.aBcDeFgHiJkLmNoPqRsTuV.wXyZaBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgHiJkLm",
     "SG.aBcDeFgHiJkLmNoPqRsTuV.wXyZaBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgHiJkLm"),
    ("twilio-env", "TWILIO_AUTH_TOKEN=9f1c2b3a4d5e6f708192a3b4c5d6e7f8", "9f1c2b3a4d5e6f708192a3b4c5d6e7f8"),
    ("twilio-pair", "client = Client('AC1234567890abcdef1234567890abcdef', '25c5e12c3fc34716534d06392431c4fa')",
     "25c5e12c3fc34716534d06392431c4fa"),
    ("azure", ("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0"
              "Z2FycGx5d2FsZG9mcmVkcGx1Z2g9PQ==;EndpointSuffix=core.windows.net"),
     "Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5d2FsZG9mcmVkcGx1Z2g9PQ=="),
    ("gcp-service-account", ('{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
                            'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----\\n"}'), "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"),
    ("mysql-p", "mysql -uroot -pMyS3cret db", "MyS3cret"),
    ("mysql-p-quoted", "mysql -u root -p'Pa$$w0rd' db", "Pa$$w0rd"),
    ("curl-u", "curl -u admin:S3cretPass! https://jenkins.local/api", "S3cretPass!"),
    ("netrc", "machine github.com\nlogin octocat\npassword gh0st-Pa55word", "gh0st-Pa55word"),
    ("netrc-one-line", "machine example.org login me password hunter2", "hunter2"),
    ("json-escaped-tool-call", '{"command": "curl -d \'{\\"password\\": \\"hunter22\\"}\' https://x"}', "hunter22"),
    ("k8s-env-pair", "env:\n- name: DB_PASSWORD\n  value: hunter22x\n", "hunter22x"),
    ("dotnet-appsettings", '<add key="ApiKey" value="e3b0c44298fc1c149afbf4c8996fb924" />', "e3b0c44298fc1c149afbf4c8996fb924"),
    ("dockerfile-env", "ENV DB_PASSWORD Sup3rS3cret", "Sup3rS3cret"),
    ("yaml-unquoted", "password: hunter2", "hunter2"),
    ("prose", "my password is hunter2", "hunter2"),
    ("requests-auth", 'requests.get(url, auth=("ci-bot", "Wint3r-Sun"))', "Wint3r-Sun"),
    ("maven", "<server><id>x</id><password>Hunter22x</password></server>", "Hunter22x"),
    ("kubeconfig-client-key", "client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVB",
     "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVB"),
]


@pytest.mark.parametrize("label,text,secret", REPORTED_LEAKS, ids=[s[0] for s in REPORTED_LEAKS])
def test_the_shapes_that_leaked_are_redacted(label, text, secret):
    out, count = redact(text)
    assert secret not in out, out
    assert count >= 1


HARMLESS = [
    "sort_key: created_at", "token_count: 1532", "KEY_LENGTH=2048", "secret_santa_list: [alice, bob, carol]",
    "src/auth/token.py:42:def refresh_token(self, token_id: str):",
    "password_field = forms.CharField(widget=forms.PasswordInput, max_length=64)",
    "the openai embedder needs an API key: set OPENAI_API_KEY (or openai_api_key in ~/.config/maxmem/config.toml)",
    "maxmem: error: content is empty once secrets and <private> parts are taken out",
    "maxmem: warning: redacted 1 secret(s) before storing",
    '{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":9210}}}}',
    '"idempotencyKey":"6f1c2e8a-9b3d-4c5e-8f9a-0b1c2d3e4f5a"',
    "export OPENAI_API_KEY=sk-...", "API_KEY=<your-api-key>", "TOKEN=${GITHUB_TOKEN}", "password: ********",
    "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "postgres://user:password@localhost:5432/mydb",
    "token: ${{ secrets.GITHUB_TOKEN }}", "--password PASSWORD  The password to log in with.",
    "def get_secret(name: str) -> str:", "if password is None:", "self.api_key = api_key",
    'api_key = os.environ["OPENAI_API_KEY"]', "password = getpass.getpass()", "token = tokenizer.encode(text)",
    "cache_key = 'users:list'", "primary_key=True", "max_tokens=4096", "PWD=/home/user/proj",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "integrity sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+5vGDrmmQaPBpBFUhdoCFzsaIlYRMIfbaJoJGpUQ==",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq8k2Zr9y0cFQ3m4nLx7Yw1Tb5Vd6Hs8Pj2Ku3Ra9Ee dana@laptop",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----",
    'x = "-----BEGIN RSA PRIVATE KEY-----\\n" + body',
    "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db-secret\n      key: password",
    "interface Credentials {\n  password?: string;\n  apiKey: string | undefined;\n}",
    "password_hash VARCHAR(255) NOT NULL,", '{"bos_token": "<s>", "eos_token": "</s>", "pad_token_id": 0}',
    "docker run -u 1000:1000 -p 8080:80 nginx", "mysql -u root -p shop", "mkdir -p build",
    '{"UserId": "AIDAJQABLZS4A3QDU576Q", "Account": "123456789012"}',
    "Error code: 401 - Incorrect API key provided: sk-proj-********************************************abcd.",
    "the password reset email never arrived", "Bearer token authentication is required",
    "A small token of appreciation; the key to the back door is under the mat.",
    "at TokenService.refresh (src/auth/tokenService.ts:88:13)",
    "Traceback (most recent call last):\n  File \"/app/auth/password.py\", line 12, in check\nKeyError: 'secret'",
]


@pytest.mark.parametrize("text", HARMLESS)
def test_harmless_text_is_left_alone(text):
    assert redact(text) == (text, 0)


# -- the labelled corpus ------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "secrets"


def _corpus(split):
    with open(CORPUS / f"{split}.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_the_corpus_files_are_what_the_generator_writes():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_secrets_corpus.py"), "--check"],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr


def test_the_corpus_is_big_and_varied_enough():
    for split in ("dev", "heldout"):
        items = _corpus(split)
        spans = [s for i in items for s in i["spans"]]
        assert len(spans) >= 300 and len({s[2] for s in spans}) >= 30
        assert sum(i["label"] == "negative" for i in items) >= 300
        for item in items:
            for start, end, _ in item["spans"]:
                assert 0 <= start < end <= len(item["text"])


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_every_corpus_secret_goes_and_redacting_again_changes_nothing(split):
    """dev is what the rules were tuned on; heldout is checked against the targets only."""
    redactor = Redactor(cache_size=0)
    secrets = missed = 0
    for item in _corpus(split):
        found = redactor.findings(item["text"])
        for start, end, shape in item["spans"]:
            secrets += 1
            if not any(f.start <= start and end <= f.end for f in found):
                missed += 1
                assert split != "dev", f"{item['id']} {shape}: {item['text'][:120]!r}"
        once, _ = redactor.redact(item["text"])
        assert redactor.redact(once) == (once, 0), item["id"]
    assert 1 - missed / secrets >= 0.99


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_hard_negatives_are_left_alone(split):
    redactor = Redactor(cache_size=0)
    negatives = [i for i in _corpus(split) if i["label"] == "negative"]
    touched = [i["id"] for i in negatives if redactor.findings(i["text"])]
    lines = sum(i["text"].count("\n") + 1 for i in negatives)
    assert (touched == []) if split == "dev" else (1000 * len(touched) / lines <= 1), touched


# -- findings, explain, offsets --------------------------------------------------------------
def test_findings_say_kind_span_and_rule_and_never_hold_the_secret():
    text = "a=1\nexport GITHUB_TOKEN=ghp_1A2b3C4d5E6f7G8h9I0jK1l2M3n4O5p6Q7r8 and password: hunter22\n"
    found = explain(text)
    assert [(f.kind, text[f.start:f.end]) for f in found] == [
        ("github", "ghp_1A2b3C4d5E6f7G8h9I0jK1l2M3n4O5p6Q7r8"), ("secret", "hunter22")]
    assert "github" in found[0].rule and "password" in found[1].rule
    assert all("hunter22" not in f.rule and "ghp_" not in json.dumps(f.to_dict()) for f in found)


def test_offsets_stay_right_after_non_ascii_text_and_lone_surrogates():
    token = "ghp_1A2b3C4d5E6f7G8h9I0jK1l2M3n4O5p6Q7r8"
    for prefix in ("Ünïcödé 日本語 🚀 ", "\udcff\udc80 broken ", "İstanbul İİİ "):
        text = prefix + token + " ok"
        (finding,) = explain(text)
        assert text[finding.start:finding.end] == token
        assert redact(text) == (prefix + "[REDACTED:github] ok", 1)


def test_a_dotted_capital_i_changes_nothing_found():
    """İ lowers to two characters; a text holding one is searched as the same text without it."""
    body = ("DB_PASSWORD=Zq8#vLm2!pR4tX Straße ÜBER ALLES\n"
            "curl -H 'Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0' https://api.example.org\n")
    plain = [(f.kind, f.start, f.end) for f in explain("Istanbul " + body)]
    dotted = [(f.kind, f.start, f.end) for f in explain("İstanbul " + body)]
    assert plain and dotted == plain


def test_a_non_string_is_a_one_line_error():
    with pytest.raises(InvalidInput, match="decode bytes first"):
        redact(b"password=hunter22")  # type: ignore[arg-type]


def test_overlapping_rules_make_one_redaction_named_by_the_specific_kind():
    assert redact("OPENAI_API_KEY='sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90'") == (
        "OPENAI_API_KEY='[REDACTED:openai]'", 1)


# -- [redact] in the config ---------------------------------------------------------------------
def test_config_patterns_allow_list_and_names():
    settings = RedactSettings.from_table({
        "patterns": ["ACME-[0-9]{6}", {"kind": "ticket", "pattern": r"TKT-(?P<secret>[A-Z0-9]{8})"}],
        "allow": ["AKIAIOSFODNN7EXAMPLE"],
        "secret_names": ["pin"],
        "ignore_names": ["DEPLOY_TOKEN"],
    })
    redactor = Redactor(settings)
    text = ("order ACME-123456, TKT-AB12CD34, id AKIAIOSFODNN7EXAMPLE, VAULT_PIN=4711, "
            "DEPLOY_TOKEN=abc123def456")
    assert redactor.redact(text) == (
        ("order [REDACTED:custom], TKT-[REDACTED:ticket], id AKIAIOSFODNN7EXAMPLE, VAULT_PIN=[REDACTED:secret], "
        "DEPLOY_TOKEN=abc123def456"), 3)


@pytest.mark.parametrize("table,message", [
    ({"patern": []}, r"\[redact\]: unknown setting 'patern' \(known: patterns, allow, secret_names, ignore_names\)"),
    ({"patterns": "(x"}, r"\[redact\] patterns\[0\]: bad redaction pattern '\(x'"),
    ({"patterns": [".*"]}, "matches the empty string"),
    ({"patterns": [{"kind": "Bad Kind", "pattern": "x"}]}, "kind = 'Bad Kind': use lowercase letters"),
    ({"patterns": [{"regex": "x"}]}, "takes pattern \\(required\\) and kind, not regex"),
    ({"patterns": [3]}, "must be a regex or a table"),
    ({"allow": {"a": 1}}, r"\[redact\] allow must be a list, not dict"),
    ({"secret_names": ["two words"]}, "a name is letters, digits"),
])
def test_bad_config_is_a_clear_config_error(table, message):
    with pytest.raises(ConfigError, match=message):
        Config.from_tables({"redact": table})


def test_capture_redact_patterns_still_count():
    config = Config.from_tables({"capture": {"redact_patterns": ["ACME-[0-9]+"]}})
    assert Redactor.from_config(config).redact("see ACME-42") == ("see [REDACTED:custom]", 1)
    both = Config.from_tables({"capture": {"redact_patterns": ["ACME-[0-9]+"]}, "redact": {"patterns": ["TKT-[0-9]+"]}})
    assert Redactor.from_config(both).redact("ACME-42 TKT-7") == ("[REDACTED:custom] [REDACTED:custom]", 2)
    with pytest.raises(ConfigError, match=r"^\[capture\] redact_patterns\[0\]: bad redaction pattern '\(oops'"):
        Config.from_tables({"capture": {"redact_patterns": ["(oops"]}})


# -- bad input: finishes, no error, linear time -----------------------------------------------
BAD_INPUTS = {
    "one long line": lambda n: ("word password=x " * (n // 16))[:n],
    "equals signs": lambda n: "=" * n,
    "colons": lambda n: ":" * n,
    "secret names": lambda n: "password=" * (n // 9),
    "name runs": lambda n: "a" * n + "password",
    "token run": lambda n: "ghp_" + "A" * n,
    "keys glued": lambda n: "keykeykey" * (n // 9),
    "url schemes": lambda n: "://" * (n // 3),
    "unclosed quotes": lambda n: 'password: "' * (n // 11),
    "pem markers": lambda n: "-----BEGIN RSA PRIVATE KEY-----\n" * (n // 32),
    "private tags": lambda n: "<private>" * (n // 9),
    "command flags": lambda n: "mysql" + " -p" * (n // 3),
    "escaped newlines": lambda n: "\\n" * (n // 2),
    "aws ids": lambda n: "AKIAIOSFODNN7EXAMPL1 " * (n // 21),
    "nul bytes": lambda n: "\x00" * n,
    "lone surrogates": lambda n: "\udcff password=\udc80" * (n // 18),
}


def _seconds(text, method="redact"):
    """Best of three runs of a fresh Redactor's `method` (redact or redact_json) on `text`,
    in the process's CPU time: other work on a shared machine does not count."""
    run = getattr(Redactor(cache_size=0), method)
    best = float("inf")
    for _ in range(3):
        t0 = time.process_time()
        run(text)
        best = min(best, time.process_time() - t0)
    return best


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_bad_input_finishes_in_linear_time(name):
    """n and 4n characters in one run: a linear redactor takes about 4x as long, a
    quadratic one 16x. Asserted loosely; bench/redact_eval.py prints the speeds."""
    make = BAD_INPUTS[name]
    small, large = make(400_000), make(1_600_000)
    out, _ = Redactor(cache_size=0).redact(large)
    assert isinstance(out, str)
    large_s = _seconds(large)
    ratio = large_s / max(_seconds(small), 1e-4)
    # Below 0.1 s timings are mostly noise (the machine is shared); a quadratic rule
    # would take minutes on 1.6 MB, not tenths of a second.
    assert large_s < 0.1 or ratio < 10, f"{name}: {ratio:.1f}x for 4x the input ({large_s:.2f} s)"
    assert large_s < 10, f"{name}: {large_s:.1f} CPU s for 1.6 MB"  # a guard only: the ratio says linear


# What redact_json (tool-call arguments) meets: JSON nested deeper than Python
# recurses, unclosed, escaped quotes, many strings (each decoded and redacted).
BAD_JSON = {
    "deep arrays": lambda n: "[" * n,
    "deep objects": lambda n: '{"a":' * (n // 5),
    "nested and closed": lambda n: "[" * (n // 2) + "]" * (n // 2),
    "escaped quotes": lambda n: '["' + '\\"' * (n // 2) + '"]',
    "many strings": lambda n: json.dumps(["password=hunter2hunter2 x"] * (n // 30)),
    "strings of json": lambda n: json.dumps([json.dumps({"password": "Tr0ub4dor&3xyz"})] * (n // 40)),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BAD_JSON))
def test_bad_json_finishes_in_linear_time(name):
    make = BAD_JSON[name]
    small, large = make(250_000), make(1_000_000)
    out, _ = Redactor(cache_size=0).redact_json(large)
    assert isinstance(out, str)
    large_s = _seconds(large, "redact_json")
    ratio = large_s / max(_seconds(small, "redact_json"), 1e-4)
    assert large_s < 0.1 or ratio < 10, f"{name}: {ratio:.1f}x for 4x the input ({large_s:.2f} s)"
    assert large_s < 10, f"{name}: {large_s:.1f} s for 1 MB"  # a guard only: the ratio says linear


def test_json_arguments_are_redacted_inside_their_strings_and_by_key():
    redactor = Redactor()
    escaped = json.dumps({"command": "machine api.example.com login deploy password d7HQZf2Gy*wM\n"})
    assert "d7HQZf2Gy" not in redactor.redact_json(escaped)[0]
    twice = json.dumps({"input": json.dumps({"command": 'curl -d \'{"password": "Juniper4053%"}\' x'})})
    assert "Juniper4053" not in redactor.redact_json(twice)[0]
    assert "Tr0ub4dor" not in redactor.redact_json('{"password": "Tr0ub4dor&3xyz"}')[0]
    plain = '{"path": "src/auth/token.py", "line": 42}'
    assert redactor.redact_json(plain) == (plain, 0)  # nothing found: the text as it was


def test_a_megabyte_of_random_bytes_decoded_leniently_is_redacted_without_error():
    data = random.Random(5).randbytes(1_000_000)
    text = data.decode("utf-8", "surrogateescape")
    out, _ = redact(text)
    assert isinstance(out, str)
    assert out.encode("utf-8", "surrogateescape")  # still writable back as bytes


# -- maxmem redact-test ---------------------------------------------------------------------------
def test_redact_test_lists_places_kinds_rules_without_the_secret(tmp_path):
    from click.testing import CliRunner

    from maxmem.cli import cli

    file = tmp_path / "notes.txt"
    file.write_bytes(b"ok\nexport OPENAI_API_KEY=sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90\n"
                     b"bad \xff byte, password: hunter22\n")
    runner = CliRunner()
    result = runner.invoke(cli, ["redact-test", str(file)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("2:23  openai  openai key") and "sk-p…(48 chars)" in lines[0]
    assert lines[1].startswith("3:23  secret  value of secret-named password:")
    assert lines[-1] == "2 secret(s) would be redacted (openai 1, secret 1)"
    assert "hunter22" not in result.output and "Ab12Cd34" not in result.output

    as_json = json.loads(runner.invoke(cli, ["redact-test", "--json", str(file)]).output)
    assert as_json["count"] == 2 and as_json["findings"][1]["kind"] == "secret"

    redacted = runner.invoke(cli, ["redact-test", "--redacted", str(file)])
    assert redacted.stdout_bytes == (b"ok\nexport OPENAI_API_KEY=[REDACTED:openai]\n"
                                     b"bad \xff byte, password: [REDACTED:secret]\n")


def test_redact_test_uses_the_config_and_reports_a_bad_one(tmp_path):
    from maxmem.cli import main

    config = tmp_path / "config.toml"
    config.write_text('[redact]\npatterns = [{ kind = "ticket", pattern = "ACME-[0-9]{6}" }]\n')
    file = tmp_path / "f.txt"
    file.write_text("ticket ACME-123456\n")
    result = subprocess.run([sys.executable, "-m", "maxmem", "--config", str(config), "redact-test", str(file)],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert "1:8  ticket  custom pattern" in result.stdout
    config.write_text('[redact]\nallow = ["(unclosed"]\n')
    result = subprocess.run([sys.executable, "-m", "maxmem", "--config", str(config), "redact-test", str(file)],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2
    assert result.stderr.strip().startswith(f"maxmem: error: {config}: [redact] allow[0]: bad redaction pattern")
    assert len(result.stderr.strip().splitlines()) == 1
    assert main  # the entry point the subprocess ran


def test_an_unclosed_private_tag_in_a_code_comment_is_talked_about():
    """Code that mentions the tag in a comment (captured source, as JSON-escaped tool
    output too) keeps the rest of its text; a tag that is used still hides to the end."""
    code = "if not text:\n    forget(m)  # nothing but <private> text\nreport.count += 1\n"
    assert redact(code) == (code, 0)
    escaped = '{"content": "a\\n    forget(m)  // only <private> left\\n    b"}'
    assert redact(escaped) == (escaped, 0)
    assert redact("keep this <private>but not this\nnor this") == ("keep this ", 1)
