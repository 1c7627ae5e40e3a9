"""Secrets given away by the structure that labels them (`maxmem/redact/labels.py`) and by
the look of a generated password (`precision.reads_as_noise`): each family with members in
other languages, formats and tools than the ones it was written from, and the ordinary lines
of the same structure that must stay."""

from __future__ import annotations

import pytest

from maxmem.redact import explain, redact
from maxmem.redact.precision import names_a_technology, reads_as_noise

FAMILIES = [
    # a label line: a secret word in the label, a colon, one value that ends the line
    ("**Password:** `uoQgMaE2QXgRug`", ["uoQgMaE2QXgRug"]),
    ("senha do wi-fi: gpywua1141", ["gpywua1141"]),
    ("WLAN-Schlüssel: 44018397113444829715", ["44018397113444829715"]),
    ("Mot de passe de la box : tulipe8842", ["tulipe8842"]),
    ("- contraseña del router: ranita5521 (la de siempre)", ["ranita5521"]),
    ("LUKS passphrase for /dev/sda2: maple-orbit-candle-4417", ["maple-orbit-candle-4417"]),
    ("admin password reset: Lq7mZx2Pw9Kd", ["Lq7mZx2Pw9Kd"]),
    ("NAS keypad: 48213", ["48213"]),
    ('Wachtwoord voor de NAS: "otter velvet canyon morsel quartz"', ["otter velvet canyon morsel quartz"]),
    ("Dropbox-Schlüssel: 12345678qZ7vK2mW9xL4pR8t", ["12345678qZ7vK2mW9xL4pR8t"]),
    # a table whose header names a secret column: Markdown, CSV, TSV
    ("| host | login | Passwort |\n|---|---|---|\n| nas | anna | Kx8mQ2vLp7Zw |", ["Kx8mQ2vLp7Zw"]),
    ("username,password,role\nsvc-ci,Qz7!mK2vXp9L,deploy\nsvc-bi,Wn4@rT8yLp2K,read", ["Qz7!mK2vXp9L", "Wn4@rT8yLp2K"]),
    ("name\ttoken\nbuildbot\tq9Kx2LmZ7vPw4RtY8nB3cD6f", ["q9Kx2LmZ7vPw4RtY8nB3cD6f"]),
    # a secret-named lookup's literal fallback, in several languages
    ('const secret = process.env.SESSION_SECRET ?? "9f2c7a41e8b3d6f0a5c9e2b7d4f1a8c3";',
     ["9f2c7a41e8b3d6f0a5c9e2b7d4f1a8c3"]),
    ('token = os.getenv("GITLAB_TOKEN") or "Zq8vLm2Kx7Pw4Rt9"', ["Zq8vLm2Kx7Pw4Rt9"]),
    ('val pw = System.getenv("DB_PASSWORD") ?: "Xk9!mQ2pLw"', ["Xk9!mQ2pLw"]),
    ('password: <%= ENV.fetch("SMTP_PASSWORD") { "Mz7-Qp2vKx9" } %>', ["Mz7-Qp2vKx9"]),
    ("environment:\n  - REDIS_PASSWORD=${REDIS_PASSWORD:-Rv8mZq2Lx7}", ["Rv8mZq2Lx7"]),
    # a secret-named declaration across a type, a string prefix or a constructor
    ('const API_KEY: &str = "LFeHGjGwUFHYHTtAwtQOXf8AoMOmEsAu";', ["LFeHGjGwUFHYHTtAwtQOXf8AoMOmEsAu"]),
    ('private const val API_TOKEN: String = "Hq7Lm2Zx9Kv4Pw8RtY3n"', ["Hq7Lm2Zx9Kv4Pw8RtY3n"]),
    ('var clientSecret: String = String("Tq8Wm3Kx7Lp2Zv9Yn4R")', ["Tq8Wm3Kx7Lp2Zv9Yn4R"]),
    ('SIGNING_KEY = b"N9Cy7RxLgwZgg2gvN/QS8hePq44dTMI6"', ["N9Cy7RxLgwZgg2gvN/QS8hePq44dTMI6"]),
    ('string ApiKey = @"Wz8Kq2Lm7Xv4Pn9RtY3c";', ["Wz8Kq2Lm7Xv4Pn9RtY3c"]),
    ("ALTER LOGIN app WITH PASSWORD = N'Rr7HGPCEHRcv#1';", ["Rr7HGPCEHRcv#1"]),
    ("transport = nodemailer.createTransport({ auth: { user: 'bot@acme.io', pass: 'gzgqgbftsseizlbq' } })",
     ["gzgqgbftsseizlbq"]),
    # a user, then a password: a pair, a label after the user, "as / with … and"
    ("jdoe@acme.io / O8JvMTp1ycW5 works for the staging admin", ["O8JvMTp1ycW5"]),
    ("ssh creds: deploy:eWB5fZ95vRe7Fy", ["eWB5fZ95vRe7Fy"]),
    ("switch mgmt: user netops pass QX7T2PBH6K", ["QX7T2PBH6K"]),
    ("pi@192.168.0.40 pw Zr8mK2xLq7", ["Zr8mK2xLq7"]),
    ("log in as svc-backup and Kx9tUzCopcOIrIx0 (it's in the vault too)", ["Kx9tUzCopcOIrIx0"]),
    ("Connectez-vous avec admin et Tz8kQ2mXv7Lp.", ["Tz8kQ2mXv7Lp"]),
    # a password literal after its user's identity, in any call
    ("smtp.start('acme.io', 'noreply@acme.io', 'l82nVCCrnuI9DBcP', :login)", ["l82nVCCrnuI9DBcP"]),
    ('Connection(server, "uid=backup,ou=people,dc=corp", "Pz8vKq2Lm7Xw", auto_bind=True)', ["Pz8vKq2Lm7Xw"]),
    ("INSERT INTO accounts (email, pw_hash) VALUES ('root@corp.io', 'Vk8mZ2qLx7Pw');", ["Vk8mZ2qLx7Pw"]),
    # a value put in place of a placeholder
    ("sed -i 's/REPLACE_ME/t9PtzoRSvkDv1YRnzYOz/' .env", ["t9PtzoRSvkDv1YRnzYOz"]),
    ('conf = tpl.replaceAll("__SMTP_PASS__", "Kq7mZ2xLp9Vw4RtY")', ["Kq7mZ2xLp9Vw4RtY"]),
    # an element named by the secret, with attributes
    ('<Pass encoding="base64">zJrjjzHnaYJdlStO==</Pass>', ["zJrjjzHnaYJdlStO=="]),
    ('<ApiKey env="prod">Hx8Lm2Kq7Zv9Pw4R</ApiKey>', ["Hx8Lm2Kq7Zv9Pw4R"]),
    # a one-time link's token
    ("Reset your password: https://acme.io/reset-password/903c5a3fc4b0ca29af38795137ca671d0dd65441",
     ["903c5a3fc4b0ca29af38795137ca671d0dd65441"]),
    ("join us: https://team.example/invite/accept?code=vzDsRFYLWD5J2JT38hoYF3A6OYn52JuR",
     ["vzDsRFYLWD5J2JT38hoYF3A6OYn52JuR"]),
    ("https://app.example.org/verify-email/confirm?t=Qm8vZ2kLx7Pw4RtY9nB3cD6f", ["Qm8vZ2kLx7Pw4RtY9nB3cD6f"]),
    ("https://app.example.org/activate/Qm8vZ2kLx7Pw4RtY9nB3cD6f", ["Qm8vZ2kLx7Pw4RtY9nB3cD6f"]),
    # prose: generated passwords that read as tech terms, a word and its digits, dialled combinations
    ("sudo password on the build box is gvbkq430", ["gvbkq430"]),
    ("el PIN del portátil es 5521 y la clave es NUNGEQJU57", ["NUNGEQJU57"]),
    ("heslo k serveru je TkWPCYACnynZ", ["TkWPCYACnynZ"]),
    ("Lösenordet till nätverket är Kanelbulle60", ["Kanelbulle60"]),
    ("The safe combination is 32-17-08.", ["32-17-08"]),
    ("garage opener code 1-9-8-4", ["1-9-8-4"]),
    ("код від домофону 1128", ["1128"]),
]


@pytest.mark.parametrize(("text", "secrets"), FAMILIES, ids=[f[0][:32] for f in FAMILIES])
def test_a_structure_that_labels_a_value_gives_it_away(text, secrets):
    out, _ = redact(text)
    for secret in secrets:
        assert secret not in out, (secret, out, explain(text))


@pytest.mark.parametrize("text", [
    # labels whose value is no secret
    "Password: required (min 8 chars)",
    "Password policy: 12 characters",
    "Password hashing: argon2id",
    "Key: F5",
    "Idempotency-Key: 7c3e12b1-3677-4115-bbb1-6e4377f699de",
    "    password: Optional[str]",
    "  password: z.string().min(12).max(128),",
    "token expiry: 2026-11-03T18:22:41Z",
    "Keypad: 3",
    "Secret scanning: enabled",
    # tables of names, not of secrets; code that only looks like a header
    "| field | type | password |\n|---|---|---|\n| email | string | no |",
    "define( 'DB_PASSWORD', 'x' );\ndefine( 'AUTH_KEY', 'y' );",
    "type Config struct {\n\tToken    string `json:\"token\"`\n\tPassword string `json:\"password,omitempty\"`\n}",
    # lookups with no literal secret
    'key = os.environ.get("CACHE_DIR", "/tmp/cache")',
    'String pw = System.getenv("DB_PASSWORD");',
    "const secret = process.env.SESSION_SECRET ?? defaultSecret();",
    # pairs that are no user and password
    "Server=tcp:sql.example.net,1433;Database=app;User Id=sa;Password=",
    "read / write access for the tcp:connections",
    "git checkout main / develop",
    "input / Output",
    "exit code 1-2-3",
    "the code is 12-05-24",
    'static DIGEST_KEY: &str = "sha256";',
    'sed -i "s/version = 1.2.3/version = 1.2.4/" pyproject.toml',
    "https://github.com/org/repo/pull/123/commits/5e78564864629433efef320d6219e0f3d6328fc2",
    "https://example.com/verify/index.html",
    "the password manager login works fine",
    "pass the test suite",
])
def test_the_same_structures_around_ordinary_values_stay(text):
    assert explain(text) == [], explain(text)


@pytest.mark.parametrize(("value", "noise"), [
    ("gvbkq430", True), ("o9u2qkzk0wqm", True), ("NUNGEQJU57", True), ("PRX6PBH6TJ", True), ("TkWPCYACnynZ", True),
    ("TulpfnzrWS", True), ("argon2id", False), ("utf8mb4", False), ("HKDF-SHA256", False), ("strength12", False),
    ("getElementById", False), ("XMLHttpRequest", False), ("HTTPServerError", False), ("_GetItemKeys", False),
])
def test_a_generated_password_reads_as_noise_and_a_name_does_not(value, noise):
    assert reads_as_noise(value) is noise


def test_a_technology_and_its_number_is_no_word_and_its_digits():
    assert names_a_technology("sha256") and names_a_technology("python311") and names_a_technology("Windows10")
    assert not names_a_technology("panda317532") and not names_a_technology("Kanelbulle60")
