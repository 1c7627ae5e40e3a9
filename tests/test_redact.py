"""Secret redaction: every supported shape goes, ordinary text stays."""

from __future__ import annotations

import pytest

from maxmem.errors import InvalidInput
from maxmem.redact import redact

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
    ("google", "maps AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    ("aws-id", "id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("aws-secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("bearer", "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.opaque-token-value'",
     "opaque-token-value"),
    ("jwt", "session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
     "dozjgNryP4J3jVmNHl0w5N"),
    ("pem", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAA\n"
            "-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAA"),
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
])
def test_ordinary_text_is_left_alone(text):
    assert redact(text) == (text, 0)


def test_extra_patterns_whole_match_or_named_group():
    out, count = redact("ticket ACME-1234 and pin 4711", patterns=[r"ACME-\d+", r"pin (?P<secret>\d{4})"])
    assert out == "ticket [REDACTED:custom] and pin [REDACTED:custom]"
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
