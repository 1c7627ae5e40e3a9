#!/usr/bin/env python3
"""Write the labelled secrets corpus: tests/data/secrets/{dev,heldout}.jsonl.

    python scripts/make_secrets_corpus.py          # (re)write the files
    python scripts/make_secrets_corpus.py --check  # exit 1 if they differ from what this writes

Every secret is made up here from a fixed seed (none is real; the shapes follow the
providers' documented formats). Each line is one item:

    {"id": "dev-0042", "split": "dev", "label": "secret" | "negative", "shape": "github-classic",
     "context": "dotenv", "text": "...", "spans": [[start, end, "github-classic"], ...]}

`spans` are character offsets into `text` of what must go (empty for a negative).

The two splits share the provider formats (a key's format is public knowledge, not a
tuning knob) but nothing else: different surrounding templates (file formats, shells,
transcript encodings), different variable names, different password styles, and
different families of hard negatives. The redactor is tuned on dev only; heldout
says how the rules generalise.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import string
import sys
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "secrets"
SEED = 16

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
B32 = string.ascii_uppercase + "234567"


@dataclass(frozen=True)
class Secret:
    value: str
    shape: str


Parts = list["str | Secret"]


def chars(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


# -- provider formats ---------------------------------------------------------------------
def _jwt(rng: random.Random) -> str:
    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")
    header = part({"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"})
    payload = part({"sub": str(rng.randrange(10**6, 10**9)), "iat": rng.randrange(1_600_000_000, 1_800_000_000),
                    "scope": rng.choice(["read", "read write", "admin"])})
    return f"{header}.{payload}.{chars(rng, B64URL, 43)}"


def _discord(rng: random.Random) -> str:
    uid = base64.b64encode(str(rng.randrange(10**17, 10**18)).encode()).decode().rstrip("=")
    return f"{uid}.{chars(rng, B64URL, 6)}.{chars(rng, B64URL, 38)}"


def _pem(rng: random.Random, label: str, lines: int = 12, escaped_newline: str = "\n") -> str:
    body = escaped_newline.join(chars(rng, B64, 64) for _ in range(lines))
    return f"-----BEGIN {label}-----{escaped_newline}{body}{escaped_newline}{chars(rng, B64, 20)}=={escaped_newline}-----END {label}-----"


def _pem_b64(rng: random.Random) -> str:
    return base64.b64encode(_pem(rng, "RSA PRIVATE KEY", 6).encode()).decode()


def _aws_secret(rng: random.Random) -> str:
    while True:
        value = chars(rng, ALNUM + "/+", 40)
        if any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value):
            return value


PROVIDERS: dict[str, Callable[[random.Random], str]] = {
    "openai-proj": lambda r: "sk-proj-" + chars(r, B64URL, 74) + "T3BlbkFJ" + chars(r, B64URL, 74),
    "openai-legacy": lambda r: "sk-" + chars(r, ALNUM, 20) + "T3BlbkFJ" + chars(r, ALNUM, 20),
    "openai-svcacct": lambda r: "sk-svcacct-" + chars(r, B64URL, 64) + "T3BlbkFJ" + chars(r, B64URL, 64),
    "anthropic": lambda r: "sk-ant-api03-" + chars(r, B64URL, 93) + "AA",
    "anthropic-admin": lambda r: "sk-ant-admin01-" + chars(r, B64URL, 93) + "AA",
    "github-classic": lambda r: "ghp_" + chars(r, ALNUM, 36),
    "github-oauth": lambda r: "gho_" + chars(r, ALNUM, 36),
    "github-app": lambda r: "ghs_" + chars(r, ALNUM, 36),
    "github-fine-grained": lambda r: "github_pat_11" + chars(r, string.ascii_uppercase + string.digits, 20)
    + "_" + chars(r, ALNUM, 59),
    "gitlab": lambda r: "glpat-" + chars(r, B64URL, 20),
    "slack-bot": lambda r: f"xoxb-{chars(r, string.digits, 12)}-{chars(r, string.digits, 13)}-{chars(r, ALNUM, 24)}",
    "slack-user": lambda r: (f"xoxp-{chars(r, string.digits, 12)}-{chars(r, string.digits, 12)}-"
                             f"{chars(r, string.digits, 13)}-{chars(r, HEX, 32)}"),
    "google-api": lambda r: "AIza" + chars(r, B64URL, 35),
    "google-oauth-access": lambda r: "ya29." + chars(r, B64URL, 150),
    "google-client-secret": lambda r: "GOCSPX-" + chars(r, B64URL, 28),
    "aws-access-key-id": lambda r: "AKIA" + chars(r, B32, 16),
    "aws-session-token": lambda r: "IQoJb3JpZ2luX2Vj" + chars(r, B64, 300) + "==",
    "stripe-secret": lambda r: "sk_live_" + chars(r, ALNUM, r.choice([24, 99])),
    "stripe-restricted": lambda r: "rk_live_" + chars(r, ALNUM, 99),
    "stripe-webhook": lambda r: "whsec_" + chars(r, ALNUM, 32),
    "huggingface": lambda r: "hf_" + chars(r, string.ascii_letters, 34),
    "pypi": lambda r: "pypi-AgEIcHlwaS5vcmc" + chars(r, B64URL, 150),
    "npm": lambda r: "npm_" + chars(r, ALNUM, 36),
    "sendgrid": lambda r: "SG." + chars(r, B64URL, 22) + "." + chars(r, B64URL, 43),
    "twilio-api-key": lambda r: "SK" + chars(r, HEX, 32),
    "azure-ad-client-secret": lambda r: chars(r, ALNUM, 3) + r.choice("78") + "Q~" + chars(r, ALNUM + "_~.-", 34),
    "jwt": _jwt,
    "digitalocean": lambda r: "dop_v1_" + chars(r, HEX, 64),
    "shopify": lambda r: "shpat_" + chars(r, HEX, 32),
    "mailgun": lambda r: "key-" + chars(r, HEX, 32),
    "mailchimp": lambda r: chars(r, HEX, 32) + "-us" + str(r.randrange(1, 21)),
    "telegram-bot": lambda r: chars(r, string.digits, 10) + ":AA" + chars(r, B64URL, 33),
    "discord-bot": _discord,
    "vault": lambda r: "hvs." + chars(r, B64URL, 90),
    "databricks": lambda r: "dapi" + chars(r, HEX, 32),
    "linear": lambda r: "lin_api_" + chars(r, ALNUM, 40),
    "notion": lambda r: "ntn_" + chars(r, ALNUM, 46),
    "age-secret-key": lambda r: "AGE-SECRET-KEY-1" + chars(r, string.ascii_uppercase + string.digits, 58),
    "groq": lambda r: "gsk_" + chars(r, ALNUM, 52),
    "replicate": lambda r: "r8_" + chars(r, ALNUM, 37),
    "perplexity": lambda r: "pplx-" + chars(r, ALNUM, 48),
    "xai": lambda r: "xai-" + chars(r, ALNUM, 80),
    "atlassian": lambda r: "ATATT3xFfGF0" + chars(r, B64URL, 170) + "=" + chars(r, HEX.upper(), 8),
    "postman": lambda r: "PMAK-" + chars(r, HEX, 24) + "-" + chars(r, HEX, 34),
    "grafana": lambda r: "glsa_" + chars(r, ALNUM, 32) + "_" + chars(r, HEX, 8),
    "newrelic": lambda r: "NRAK-" + chars(r, string.ascii_uppercase + string.digits, 27),
    "square": lambda r: "sq0atp-" + chars(r, B64URL, 22),
    "firebase-fcm": lambda r: "AAAA" + chars(r, B64URL, 7) + ":APA91b" + chars(r, B64URL, 134),
}
# Natural variable names for each provider: dev uses the first, heldout the others.
NAMES: dict[str, list[str]] = {
    "openai": ["OPENAI_API_KEY", "openaiApiKey", "OPENAI_KEY", "llm.api_key"],
    "anthropic": ["ANTHROPIC_API_KEY", "anthropicKey", "CLAUDE_API_KEY", "anthropic.api_key"],
    "github": ["GITHUB_TOKEN", "GH_TOKEN", "githubToken", "GITHUB_PAT"],
    "gitlab": ["GITLAB_TOKEN", "CI_JOB_TOKEN", "gitlabToken", "GL_TOKEN"],
    "slack": ["SLACK_BOT_TOKEN", "SLACK_TOKEN", "slackToken", "slack.bot_token"],
    "google": ["GOOGLE_API_KEY", "GEMINI_API_KEY", "googleApiKey", "MAPS_KEY"],
    "aws": ["AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID", "awsAccessKeyId", "aws.access_key_id"],
    "stripe": ["STRIPE_SECRET_KEY", "STRIPE_API_KEY", "stripeSecret", "stripe.secret_key"],
    "huggingface": ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "hfToken", "HUGGINGFACE_TOKEN"],
    "pypi": ["TWINE_PASSWORD", "PYPI_TOKEN", "pypiToken", "UV_PUBLISH_TOKEN"],
    "npm": ["NPM_TOKEN", "NODE_AUTH_TOKEN", "npmToken", "NPM_AUTH_TOKEN"],
    "sendgrid": ["SENDGRID_API_KEY", "SENDGRID_KEY", "sendgridApiKey", "mail.sendgrid_key"],
    "twilio": ["TWILIO_API_KEY", "TWILIO_KEY_SID", "twilioApiKey", "TWILIO_SID"],
    "azure": ["AZURE_CLIENT_SECRET", "ARM_CLIENT_SECRET", "azureClientSecret", "AAD_CLIENT_SECRET"],
    "jwt": ["ACCESS_TOKEN", "ID_TOKEN", "accessToken", "auth.jwt"],
}


def provider_family(shape: str) -> str:
    return shape.split("-")[0]


def natural_names(shape: str) -> list[str]:
    family = provider_family(shape)
    if family in NAMES:
        return NAMES[family]
    base = family.upper()
    return [f"{base}_API_KEY", f"{base}_TOKEN", f"{family}ApiKey", f"{family}.token"]


# -- passwords ------------------------------------------------------------------------------
WORDS = ["amber", "river", "falcon", "copper", "meadow", "lantern", "violet", "harbor", "cedar", "pixel", "quartz", "summit", "willow", "ember", "orbit", "tundra", "canyon", "saffron", "glacier", "maple", "nimbus", "indigo", "cobalt", "juniper"]
SAFE_SYMBOLS = "!@%^*_+-."


def password_dev(rng: random.Random) -> str:
    style = rng.randrange(3)
    if style == 0:  # Sunset42!
        return rng.choice(WORDS).capitalize() + str(rng.randrange(10, 9999)) + rng.choice("!@%*")
    if style == 1:  # random 16 with symbols
        while True:
            value = chars(rng, ALNUM + SAFE_SYMBOLS, rng.randrange(12, 21))
            if any(c.isdigit() for c in value) and value[0] not in "-.":
                return value
    return rng.choice(WORDS) + str(rng.randrange(1, 99))  # hunter2-like


def password_heldout(rng: random.Random) -> str:
    style = rng.randrange(3)
    if style == 0:  # passphrase
        return "-".join(rng.sample(WORDS, 4))
    if style == 1:  # long random alphanumeric
        return chars(rng, ALNUM, 24)
    word = rng.choice(WORDS)
    leet = word.translate(str.maketrans("aeio", "@310"))
    return leet.capitalize() + "#" + str(rng.randrange(2019, 2027))  # C0pp3r#2024


def url_safe(password: str) -> str:
    return urllib.parse.quote(password, safe="")


# -- assembling items -----------------------------------------------------------------------
_SLOT = re.compile(r"⟦(\w+)⟧")


def fill(template: str, secrets: dict[str, Secret], **fields: str) -> Parts:
    """Template text with «field» values and ⟦SLOT⟧ secrets, as parts."""
    for key, value in fields.items():
        template = template.replace(f"«{key}»", value)
    parts: Parts = []
    at = 0
    for match in _SLOT.finditer(template):
        parts.append(template[at:match.start()])
        parts.append(secrets[match.group(1)])
        at = match.end()
    parts.append(template[at:])
    return parts


def json_escape(parts: Parts) -> Parts:
    """The parts as they read inside a JSON string (JSON escaping is per character)."""
    out: Parts = []
    for part in parts:
        if isinstance(part, Secret):
            out.append(Secret(json.dumps(part.value, ensure_ascii=False)[1:-1], part.shape))
        else:
            out.append(json.dumps(part, ensure_ascii=False)[1:-1])
    return out


def inside_json(parts: Parts, record: dict[str, object]) -> Parts:
    """`record` serialised to one JSONL line with the parts as its "\\x00" string."""
    line = json.dumps(record, ensure_ascii=False)
    before, after = line.split("\\u0000", 1)
    return [before, *json_escape(parts), after]


def render(parts: Parts) -> tuple[str, list[list[object]]]:
    text, spans = "", []
    for part in parts:
        if isinstance(part, Secret):
            spans.append([len(text), len(text) + len(part.value), part.shape])
            text += part.value
        else:
            text += part
    return text, spans


def claude_tool_result(parts: Parts, rng: random.Random) -> Parts:
    record = {"parentUuid": _uuid(rng), "isSidechain": False, "type": "user", "sessionId": _uuid(rng),
              "message": {"role": "user", "content": [{"tool_use_id": "toolu_01" + chars(rng, ALNUM, 22),
                                                        "type": "tool_result", "content": "\x00",
                                                        "is_error": False}]},
              "uuid": _uuid(rng), "timestamp": f"2026-11-28T10:0{rng.randrange(10)}:0{rng.randrange(10)}.112Z"}
    return inside_json(parts, record)


def codex_function_call(parts: Parts, rng: random.Random) -> Parts:
    """Codex rollout: arguments is itself a JSON string, so the command is escaped twice."""
    inner = inside_json(parts, {"command": ["bash", "-lc", "\x00"], "workdir": "/home/user/proj"})
    record = {"timestamp": f"2026-11-28T10:00:0{rng.randrange(10)}Z", "type": "response_item",
              "payload": {"type": "function_call", "name": "shell", "arguments": "\x00",
                          "call_id": "call_" + chars(rng, ALNUM, 24)}}
    return inside_json(inner, record)


def _uuid(rng: random.Random) -> str:
    h = chars(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name.split(".")[-1]).lower()


def _camel(name: str) -> str:
    words = _snake(name).split("_")
    return words[0] + "".join(w.capitalize() for w in words[1:])


# Token contexts: (name, template). «NAME» is a variable name, ⟦S⟧ the secret.
TOKEN_CONTEXTS = {
    "dev": [
        ("export", "export «NAME»=⟦S⟧"),
        ("dotenv", "APP_ENV=production\nPORT=8080\n«NAME»=⟦S⟧\nLOG_LEVEL=info\n"),
        ("json-config", '{"service": "billing", "«snake»": "⟦S⟧", "timeout": 30, "retries": 3}'),
        ("python-kwarg", 'client = Client(«snake»="⟦S⟧", timeout=30)'),
        ("yaml-config", "service:\n  name: billing\n  «snake»: ⟦S⟧\n  region: eu-west-1\n"),
        ("shell-inline", "«NAME»=⟦S⟧ python manage.py runserver 0.0.0.0:8000"),
        ("curl-bearer", 'curl -s -H "Authorization: Bearer ⟦S⟧" https://api.example.com/v1/models'),
        ("claude-tool-result", "$ cat .env\nDEBUG=false\n«NAME»=⟦S⟧\n"),
    ],
    "heldout": [
        ("toml", '[service]\nendpoint = "https://api.example.com"\n«snake» = "⟦S⟧"\n'),
        ("js-const", "const «camel» = '⟦S⟧';\nexport default «camel»;"),
        ("codex-function-call", "«NAME»=⟦S⟧ ./scripts/deploy.sh --region eu-west-1"),
        ("cli-flag", "./deploy.sh --api-token ⟦S⟧ --region eu-west-1"),
        ("python-log-dict", ("2026-03-02 10:14:07,118 DEBUG urllib3 sending headers={'Authorization': "
                            "'Bearer ⟦S⟧', 'Accept': 'application/json'}")),
        ("k8s-secret", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n  «NAME»: \"⟦S⟧\"\n"),
        ("compose-env", "    environment:\n      - «NAME»=⟦S⟧\n      - TZ=UTC\n"),
        ("ini", "[default]\nregion = eu-west-1\n«snake» = ⟦S⟧\n"),
        ("x-api-key-header", "GET /v2/items HTTP/1.1\nHost: api.example.com\nX-Api-Key: ⟦S⟧\nAccept: */*\n"),
        ("powershell", '$env:«NAME» = "⟦S⟧"'),
    ],
}
# Contexts where nothing names the secret: only a provider's own shape can tell.
BARE_CONTEXTS = {
    "dev": [
        ("prose", "Here is the key you asked for: ⟦S⟧ — rotate it after the demo."),
        ("tool-output-line", "Created token ⟦S⟧ (expires in 30 days)"),
    ],
    "heldout": [
        ("chat", "ok I regenerated it, the new one is ⟦S⟧ can you update CI?"),
        ("markdown-table", "| service | credential |\n|---|---|\n| deploy | ⟦S⟧ |"),
    ],
}
PASSWORD_CONTEXTS = {
    "dev": [
        ("dotenv", "DB_HOST=db.internal\nDB_USER=app\nDB_PASSWORD=⟦P⟧\n"),
        ("pgpassword", "PGPASSWORD=⟦P⟧ psql -h db.internal -U app app -c 'select 1'"),
        ("json", '{"username": "admin", "password": "⟦P⟧", "remember": true}'),
        ("yaml", "database:\n  user: app\n  password: \"⟦P⟧\"\n  host: db.internal\n"),
        ("mysql-attached", "mysql -h db.internal -u root -p⟦P⟧ shop -e 'show tables'"),
        ("mysql-quoted", "mysqldump -u backup -p'⟦P⟧' --all-databases > dump.sql"),
        ("curl-user", "curl -u deploy:⟦P⟧ https://ci.example.com/api/json"),
        ("postgres-url", "DATABASE_URL=postgres://app:⟦U⟧@db.internal:5432/app"),
        ("netrc", "machine api.example.com login deploy password ⟦P⟧\n"),
        ("flag", "./manage.py createsuperuser --username admin --password ⟦P⟧"),
        ("python-connect", 'conn = psycopg.connect(host="db", user="app", password="⟦P⟧")'),
        ("escaped-curl-body", "curl -X POST -d '{\"user\": \"bob\", \"password\": \"⟦P⟧\"}' https://x.example.com/login"),
        ("k8s-env-pair", "env:\n- name: DB_PASSWORD\n  value: \"⟦P⟧\"\n- name: TZ\n  value: UTC\n"),
        ("php-define", "define('DB_PASSWORD', '⟦P⟧');"),
        ("mysql-identified-by", "CREATE USER 'app'@'%' IDENTIFIED BY '⟦P⟧';"),
        ("compose-env-map", "    environment:\n      POSTGRES_USER: app\n      POSTGRES_PASSWORD: ⟦P⟧\n"),
    ],
    "heldout": [
        ("toml", '[database]\nuser = "app"\npassword = "⟦P⟧"\n'),
        ("mongodb-srv", "mongosh \"mongodb+srv://svc:⟦U⟧@cluster0.ab1cd.mongodb.net/prod\""),
        ("odbc", "Server=tcp:sql.example.net,1433;Database=app;User Id=sa;Password=⟦P⟧;Encrypt=true"),
        ("java-properties", "spring.datasource.url=jdbc:postgresql://db:5432/app\nspring.datasource.password=⟦P⟧\n"),
        ("wget", "wget --user=ci --password=⟦P⟧ https://artifacts.example.com/build.zip"),
        ("requests-auth", 'r = requests.get(url, auth=("ci-bot", "⟦P⟧"), timeout=10)'),
        ("my-cnf", "[client]\nuser=root\npassword=⟦P⟧\nhost=127.0.0.1\n"),
        ("docker-login", "docker login -u ci -p ⟦P⟧ registry.example.com"),
        ("netrc-multiline", "machine git.example.com\n  login ci\n  password ⟦P⟧\n"),
        ("libpq-keywords", 'psql "host=db.internal port=5432 user=app password=⟦P⟧ dbname=app"'),
        ("ansible", "ansible_user: deploy\nansible_become_pass: ⟦P⟧\n"),
        ("sshpass", "sshpass -p '⟦P⟧' ssh deploy@10.0.0.5 uptime"),
        ("redis-cli", "redis-cli -h cache.internal -a ⟦P⟧ ping"),
        ("maven-xml", "<server>\n  <id>nexus</id>\n  <username>ci</username>\n  <password>⟦P⟧</password>\n</server>"),
        ("prose", "btw the staging db password is ⟦P⟧ until we move it to vault"),
        ("js-object", "const db = { user: 'app', password: '⟦P⟧', port: 5432 };"),
        ("sql", "ALTER USER app WITH PASSWORD '⟦P⟧';"),
        ("curl-long-user", "curl --user admin:⟦P⟧ -X POST https://jenkins.example.com/job/build"),
    ],
}
GENERIC_TOKENS: dict[str, Callable[[random.Random], str]] = {
    "generic-hex40": lambda r: chars(r, HEX, 40),
    "generic-alnum32": lambda r: chars(r, ALNUM, 32),
    "generic-uuid-key": _uuid,
    "generic-b64": lambda r: chars(r, B64, 43) + "=",
}
GENERIC_NAMES = {
    "dev": ["API_KEY", "SECRET_KEY", "AUTH_TOKEN", "SERVICE_TOKEN", "HEROKU_API_KEY", "CLIENT_SECRET"],
    "heldout": ["apiToken", "DEPLOY_KEY", "x-auth-token", "WEBHOOK_SECRET", "signing_key", "accessToken"],
}


def wrap(context: str, parts: Parts, rng: random.Random) -> Parts:
    if context.startswith("claude-"):
        return claude_tool_result(parts, rng)
    if context.startswith("codex-"):
        return codex_function_call(parts, rng)
    return parts


def positives(split: str, rng: random.Random) -> list[tuple[str, str, Parts]]:
    """(shape, context, parts) for every secret item of a split."""
    items: list[tuple[str, str, Parts]] = []
    name_pick = (lambda names: names[0]) if split == "dev" else (lambda names: rng.choice(names[1:]))
    for shape, make in PROVIDERS.items():
        contexts = TOKEN_CONTEXTS[split] + BARE_CONTEXTS[split]
        for context, template in rng.sample(contexts, 4):
            name = name_pick(natural_names(shape))
            value = make(rng)
            parts = fill(template, {"S": Secret(value, shape)}, NAME=_snake(name).upper(), snake=_snake(name),
                         camel=_camel(name))
            items.append((shape, context, wrap(context, parts, rng)))
    for shape, make in GENERIC_TOKENS.items():
        for context, template in rng.sample(TOKEN_CONTEXTS[split], 5):
            name = rng.choice(GENERIC_NAMES[split])
            parts = fill(template, {"S": Secret(make(rng), shape)}, NAME=_snake(name).upper(),
                         snake=_snake(name), camel=_camel(name))
            items.append((shape, context, wrap(context, parts, rng)))
    make_password = password_dev if split == "dev" else password_heldout
    for context, template in PASSWORD_CONTEXTS[split]:
        for _ in range(4 if split == "dev" else 3):
            password = make_password(rng)
            secrets = {"P": Secret(password, "password"), "U": Secret(url_safe(password), "password")}
            items.append(("password", context, fill(template, secrets)))
    items += SPECIALS[split](rng)
    return items


# -- secrets that need their own template ----------------------------------------------------
def specials_dev(rng: random.Random) -> list[tuple[str, str, Parts]]:
    items: list[tuple[str, str, Parts]] = []
    for _ in range(4):
        key_id, secret = PROVIDERS["aws-access-key-id"](rng), _aws_secret(rng)
        items.append(("aws-pair", "aws-credentials-file", fill(
            "[default]\naws_access_key_id = ⟦I⟧\naws_secret_access_key = ⟦K⟧\nregion = eu-west-1\n",
            {"I": Secret(key_id, "aws-access-key-id"), "K": Secret(secret, "aws-secret-access-key")})))
        key_id, secret = PROVIDERS["aws-access-key-id"](rng), _aws_secret(rng)
        items.append(("aws-pair", "bare-next-line", fill(
            "$ cat ~/Downloads/ci-user.txt\n⟦I⟧\n⟦K⟧\n",
            {"I": Secret(key_id, "aws-access-key-id"), "K": Secret(secret, "aws-secret-access-key")})))
    for _ in range(3):
        sid, token = "AC" + chars(rng, HEX, 32), chars(rng, HEX, 32)
        items.append(("twilio-auth-token", "python-client", fill(
            f'from twilio.rest import Client\nclient = Client("{sid}", "⟦T⟧")',
            {"T": Secret(token, "twilio-auth-token")})))
        items.append(("twilio-auth-token", "env", fill(
            f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN=⟦T⟧\n", {"T": Secret(chars(rng, HEX, 32), "twilio-auth-token")})))
    for label in ("RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY"):
        items.append(("pem-private-key", "cat-file", fill(
            "$ cat ~/.ssh/deploy_key\n⟦K⟧\n$ chmod 600 ~/.ssh/deploy_key",
            {"K": Secret(_pem(rng, label), "pem-private-key")})))
    for _ in range(2):
        pem = _pem(rng, "PRIVATE KEY", 8)
        sa = ('{\n  "type": "service_account",\n  "project_id": "billing-prod",\n  "private_key_id": "«kid»",\n'
              '  "private_key": "⟦K⟧",\n  "client_email": "ci@billing-prod.iam.gserviceaccount.com",\n'
              '  "token_uri": "https://oauth2.googleapis.com/token"\n}')
        items.append(("gcp-service-account", "json-file", fill(
            sa.replace("⟦K⟧", "⟦K⟧\\n"), {"K": Secret(json.dumps(pem)[1:-1], "pem-private-key")},
            kid=chars(rng, HEX, 40))))
    for _ in range(3):
        items.append(("jwt", "cookie-header", fill("Cookie: session=⟦J⟧; theme=dark",
                                                   {"J": Secret(_jwt(rng), "jwt")})))
    for _ in range(3):
        token = PROVIDERS["github-app"](rng)
        items.append(("url-token", "git-remote", fill(
            "git remote set-url origin https://x-access-token:⟦T⟧@github.com/acme/billing.git",
            {"T": Secret(token, "github-app")})))
    for _ in range(2):
        key = chars(rng, B64, 86) + "=="
        items.append(("azure-storage", "connection-string", fill(
            "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey=⟦K⟧;"
            "EndpointSuffix=core.windows.net", {"K": Secret(key, "azure-storage-key")})))
    for _ in range(2):
        path = f"T{chars(rng, string.ascii_uppercase + string.digits, 8)}/B{chars(rng, string.ascii_uppercase + string.digits, 10)}/{chars(rng, ALNUM, 24)}"
        items.append(("slack-webhook", "json", fill(
            '{"alerts": {"slack_webhook": "https://hooks.slack.com/services/⟦W⟧"}}', {"W": Secret(path, "slack-webhook")})))
    for _ in range(2):
        user = rng.choice(["ci", "deploy", "bot"])
        auth = base64.b64encode(f"{user}:{password_dev(rng)}".encode()).decode()
        items.append(("basic-auth", "header", fill("Authorization: Basic ⟦A⟧", {"A": Secret(auth, "basic-auth")})))
    return items


def specials_heldout(rng: random.Random) -> list[tuple[str, str, Parts]]:
    items: list[tuple[str, str, Parts]] = []
    for _ in range(3):
        key_id, secret = PROVIDERS["aws-access-key-id"](rng), _aws_secret(rng)
        items.append(("aws-pair", "iam-csv", fill(
            "User name,Password,Access key ID,Secret access key,Console login link\n"
            "ci-bot,,⟦I⟧,⟦K⟧,https://123456789012.signin.aws.amazon.com/console\n",
            {"I": Secret(key_id, "aws-access-key-id"), "K": Secret(secret, "aws-secret-access-key")})))
        key_id, secret = PROVIDERS["aws-access-key-id"](rng), _aws_secret(rng)
        items.append(("aws-pair", "aws-configure", fill(
            "$ aws configure\nAWS Access Key ID [None]: ⟦I⟧\nAWS Secret Access Key [None]: ⟦K⟧\n"
            "Default region name [None]: eu-west-1\nDefault output format [None]: json\n",
            {"I": Secret(key_id, "aws-access-key-id"), "K": Secret(secret, "aws-secret-access-key")})))
        key_id, secret = PROVIDERS["aws-access-key-id"](rng), _aws_secret(rng)
        parts = fill('{\n    "AccessKey": {\n        "UserName": "ci-bot",\n        "AccessKeyId": "⟦I⟧",\n'
                     '        "Status": "Active",\n        "SecretAccessKey": "⟦K⟧",\n'
                     '        "CreateDate": "2026-11-28T10:00:00+00:00"\n    }\n}',
                     {"I": Secret(key_id, "aws-access-key-id"), "K": Secret(secret, "aws-secret-access-key")})
        items.append(("aws-pair", "claude-create-access-key", claude_tool_result(parts, rng)))
    for _ in range(3):
        sid, token = "AC" + chars(rng, HEX, 32), chars(rng, HEX, 32)
        items.append(("twilio-auth-token", "curl-basic", fill(
            f"curl -X POST https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json -u {sid}:⟦T⟧",
            {"T": Secret(token, "twilio-auth-token")})))
        token = chars(rng, HEX, 32)
        items.append(("twilio-auth-token", "node-client", fill(
            f"const client = require('twilio')('{sid}', '⟦T⟧');", {"T": Secret(token, "twilio-auth-token")})))
    for label in ("ENCRYPTED PRIVATE KEY", "DSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK"):
        parts = fill("$ cat secrets/signing.key\n⟦K⟧\n", {"K": Secret(_pem(rng, label), "pem-private-key")})
        items.append(("pem-private-key", "claude-tool-result", claude_tool_result(parts, rng)))
    body = "\n".join(chars(rng, B64, 64) for _ in range(5))
    items.append(("pem-private-key", "truncated-output", fill(
        "$ kubectl get secret tls -o jsonpath='{.data.tls\\.key}' | base64 -d\n⟦K⟧\n… (output truncated)",
        {"K": Secret("-----BEGIN RSA PRIVATE KEY-----\n" + body, "pem-private-key")})))
    for _ in range(2):
        pem = _pem(rng, "PRIVATE KEY", 8)
        sa = json.dumps({"type": "service_account", "project_id": "ml-prod", "private_key_id": chars(rng, HEX, 40),
                         "private_key": "\x00", "client_email": "trainer@ml-prod.iam.gserviceaccount.com"})
        before, after = sa.split('"\\u0000"')
        items.append(("gcp-service-account", "env-one-line", [
            "GOOGLE_CREDENTIALS='" + before + '"', Secret(json.dumps(pem)[1:-1], "pem-private-key"),
            '\\n"' + after + "'"]))
    for _ in range(2):
        items.append(("kubeconfig", "kubeconfig", fill(
            "users:\n- name: admin\n  user:\n    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t"
            + chars(rng, B64, 60) + "\n    client-key-data: ⟦K⟧\n", {"K": Secret(_pem_b64(rng), "kube-client-key")})))
        items.append(("kubeconfig", "kubeconfig-token", fill(
            "users:\n- name: ci\n  user:\n    token: ⟦J⟧\n", {"J": Secret(_jwt(rng), "jwt")})))
    for _ in range(3):
        auth = base64.b64encode(f"ci:{password_heldout(rng)}".encode()).decode()
        items.append(("docker-auth", "docker-config", fill(
            '{\n  "auths": {\n    "registry.example.com": {\n      "auth": "⟦A⟧"\n    }\n  }\n}',
            {"A": Secret(auth, "basic-auth")})))
    for _ in range(2):
        sig = urllib.parse.quote(base64.b64encode(bytes(rng.randrange(256) for _ in range(32))).decode(), safe="")
        items.append(("azure-sas", "sas-url", fill(
            "https://acmelogs.blob.core.windows.net/exports/report.csv?sv=2022-11-02&ss=b&srt=o&sp=r"
            "&se=2026-12-01T00:00:00Z&spr=https&sig=⟦S⟧", {"S": Secret(sig, "azure-sas-signature")})))
    for _ in range(2):
        token = PROVIDERS["telegram-bot"](rng)
        items.append(("telegram-bot", "bot-url", fill(
            "requests.post(f\"https://api.telegram.org/bot⟦T⟧/sendMessage\", json=payload)",
            {"T": Secret(token, "telegram-bot")})))
    for _ in range(2):
        password = password_heldout(rng)
        items.append(("url-password", "redis-url", fill(
            "REDIS_URL=redis://:⟦U⟧@cache.internal:6379/0", {"U": Secret(url_safe(password), "password")})))
    return items


SPECIALS = {"dev": specials_dev, "heldout": specials_heldout}


# -- hard negatives ---------------------------------------------------------------------------
def _sha(rng: random.Random, n: int = 40) -> str:
    return chars(rng, HEX, n)


CODE_LINES = [
    "def refresh_token(self, token_id: str) -> Token:", "    password = models.CharField(max_length=128)",
    "    if not verify_password(password, user.password_hash):", "class TokenBucket:",
    "SECRET_HEADER = \"x-request-secret\"", "    api_key = request.headers.get(\"X-Api-Key\")",
    "    token = tokenizer.encode(text)", "from .secrets import load_secret, SecretStore",
    "    key = cache_key(user_id, scope)", "def rotate_keys(keyring: KeyRing) -> None:",
    "    return self.token_count", "export function getAuthToken(): string | null {",
    "    secret = vault.read(path)", "KEY_LENGTH = 2048", "    password_field = forms.CharField(widget=forms.PasswordInput)",
]
PATHS = ["src/auth/token.py", "app/models.py", "lib/secrets.ts", "src/keys/rotate.go", "services/auth/password.rb",
         "pkg/crypto/key.py", "web/src/api/auth.ts", "tests/test_tokens.py", "internal/secret/store.go"]


def neg_grep(rng: random.Random) -> str:
    return "\n".join(f"{rng.choice(PATHS)}:{rng.randrange(1, 400)}:{rng.choice(CODE_LINES)}" for _ in range(rng.randrange(2, 5)))


def neg_traceback(rng: random.Random) -> str:
    return ("Traceback (most recent call last):\n"
            f'  File "/app/{rng.choice(PATHS)}", line {rng.randrange(10, 300)}, in refresh_token\n'
            "    token = self._store[token_id]\n"
            f'  File "/usr/lib/python3.11/site-packages/requests/auth.py", line {rng.randrange(50, 120)}, in __call__\n'
            "    r.headers['Authorization'] = _basic_auth_str(self.username, self.password)\n"
            f"{rng.choice(['KeyError', 'TokenExpiredError', 'InvalidSignatureError'])}: 'api_key'")


def neg_git(rng: random.Random) -> str:
    return (f"commit {_sha(rng)}\nAuthor: Dana Smith <dana@example.com>\nDate:   Tue Nov 25 10:{rng.randrange(10, 59)}:00 2026\n\n"
            f"    Rotate token refresh logic (#{rng.randrange(100, 999)})\n\n$ git rev-parse HEAD\n{_sha(rng)}")


def neg_uuid_json(rng: random.Random) -> str:
    return json.dumps({"session_id": _uuid(rng), "request_id": _uuid(rng), "token_count": rng.randrange(100, 9000),
                       "parent": _uuid(rng)})


def neg_lock_hashes(rng: random.Random) -> str:
    name = rng.choice(["requests", "urllib3", "certifi", "idna", "charset-normalizer"])
    return (f'[[package]]\nname = "{name}"\nversion = "2.{rng.randrange(30)}.0"\nfiles = [\n'
            f'    {{file = "{name}-2.31.0-py3-none-any.whl", hash = "sha256:{_sha(rng, 64)}"}},\n'
            f'    {{file = "{name}-2.31.0.tar.gz", hash = "sha256:{_sha(rng, 64)}"}},\n]\n'
            f"{name}==2.31.0 --hash=sha256:{_sha(rng, 64)}")


def neg_npm_integrity(rng: random.Random) -> str:
    return (f'"node_modules/lodash": {{\n  "version": "4.17.21",\n  "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz",\n'
            f'  "integrity": "sha512-{chars(rng, B64, 86)}=="\n}}')


def neg_data_image(rng: random.Random) -> str:
    return f"![screenshot](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{chars(rng, B64, rng.randrange(300, 900))}=)"


ISSUE_NEGATIVES = [
    "sort_key: created_at", "token_count: 1532", "KEY_LENGTH=2048", "secret_santa_list: [alice, bob, carol]",
    "src/auth/token.py:42:def refresh_token(self, token_id: str):",
    "password_field = forms.CharField(widget=forms.PasswordInput, max_length=64)",
]
IDENTIFIER_NEGATIVES = [
    "def get_api_key(self) -> str:", "token = tokenizer.encode(text)", "max_tokens=4096, temperature=0.2",
    'api_key = os.environ["OPENAI_API_KEY"]', "password = getpass.getpass()", "const apiKey = process.env.API_KEY;",
    "secret = secrets.token_hex(32)", "self.password = password", "token=token, timeout=timeout",
    "primary_key: id", "cache_key = f\"user:{user_id}:profile\"", "keyboard: us", "PWD=/home/dana/proj",
    "if token is None:\n    raise AuthError('token is required')", "password_reset_url: /accounts/reset/",
    "auth: true", "credentials: include", "token_type: bearer", "expires_in: 3600",
]
PLACEHOLDER_NEGATIVES = [
    "OPENAI_API_KEY=<your-key>", "API_KEY=${API_KEY}", "export OPENAI_API_KEY=sk-...", "password: xxxx",
    "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 'token: "****"', "Authorization: Bearer <token>",
    "postgres://user:password@localhost:5432/mydb", "--password PASSWORD  The password to log in with.",
    "ANTHROPIC_API_KEY=your-api-key-here", "AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX", "HF_TOKEN=hf_...",
    "SECRET_KEY=changeme", 'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
]
DOC_NEGATIVES = [
    "Set OPENAI_API_KEY before running the script.", "Rotate your API keys every 90 days.",
    "The password must contain at least 12 characters.", "Never commit secrets to git; use a secret manager.",
    "Use `--token` to pass a GitHub token, or set GH_TOKEN.", "Your API key is stored in ~/.config/tool/config.toml.",
    "A bearer token is sent in the Authorization header.",
]
MAXMEM_MESSAGES = [
    "maxmem: error: the openai embedder needs an API key: set OPENAI_API_KEY (or openai_api_key in ~/.config/maxmem/config.toml)",
    "maxmem: warning: redacted 1 secret(s) before storing",
    "maxmem: error: content is empty once secrets and <private> parts are taken out",
    "captured 3 files, 41 turns, 12 memories, 0 secrets redacted",
]


def neg_claude_meta(rng: random.Random) -> str:
    return json.dumps({"parentUuid": _uuid(rng), "sessionId": _uuid(rng), "type": "assistant",
                       "message": {"id": "msg_01" + chars(rng, ALNUM, 22), "content": [
                           {"type": "thinking", "thinking": "Check the token refresh path first.",
                            "signature": chars(rng, B64, 300) + "=="},
                           {"type": "tool_use", "id": "toolu_01" + chars(rng, ALNUM, 22), "name": "Bash",
                            "input": {"command": "pytest -q tests/test_tokens.py"}}]},
                       "requestId": "req_011CV" + chars(rng, ALNUM, 19), "uuid": _uuid(rng)})


def neg_codex_tokens(rng: random.Random) -> str:
    n = rng.randrange(5000, 30000)
    return json.dumps({"type": "event_msg", "payload": {"type": "token_count", "info": {
        "total_token_usage": {"input_tokens": n, "cached_input_tokens": n // 2, "output_tokens": n // 10,
                              "reasoning_output_tokens": n // 20, "total_tokens": n + n // 10}}}})


def neg_ssh_public(rng: random.Random) -> str:
    return f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{chars(rng, B64, 43)} dana@laptop"


def neg_certificate(rng: random.Random) -> str:
    return _pem(rng, rng.choice(["CERTIFICATE", "PUBLIC KEY"]), 6)


def neg_docker_digest(rng: random.Random) -> str:
    return (f"REPOSITORY   TAG     IMAGE ID       CREATED\nbilling      latest  {_sha(rng, 12)}   2 days ago\n"
            f"Digest: sha256:{_sha(rng, 64)}")


def neg_usage(rng: random.Random) -> str:
    p = rng.randrange(100, 4000)
    return json.dumps({"usage": {"prompt_tokens": p, "completion_tokens": p // 7, "total_tokens": p + p // 7}})


def neg_urls(rng: random.Random) -> str:
    return rng.choice([
        f"https://example.com/search?q=password+reset&page={rng.randrange(2, 9)}",
        "https://docs.github.com/en/authentication/keeping-your-account-and-data-secure/managing-your-personal-access-tokens",
        f"https://api.example.com/v1/keys?limit={rng.randrange(10, 100)}&sort=created_at",
    ])


def _choice_list(values: list[str]) -> Callable[[random.Random], str]:
    return lambda rng: rng.choice(values)


DEV_NEGATIVES: dict[str, Callable[[random.Random], str]] = {
    "grep-output": neg_grep, "traceback": neg_traceback, "git-sha": neg_git, "uuid-json": neg_uuid_json,
    "lockfile-hash": neg_lock_hashes, "npm-integrity": neg_npm_integrity, "base64-image": neg_data_image,
    "issue-examples": _choice_list(ISSUE_NEGATIVES), "identifiers": _choice_list(IDENTIFIER_NEGATIVES),
    "placeholders": _choice_list(PLACEHOLDER_NEGATIVES), "docs": _choice_list(DOC_NEGATIVES),
    "maxmem-messages": _choice_list(MAXMEM_MESSAGES), "claude-metadata": neg_claude_meta,
    "codex-token-count": neg_codex_tokens, "ssh-public-key": neg_ssh_public, "certificate": neg_certificate,
    "docker-digest": neg_docker_digest, "llm-usage": neg_usage, "urls": neg_urls,
}


def neg_tool_paths(rng: random.Random) -> str:
    path = rng.choice(PATHS)
    return rng.choice([
        f"{path}:{rng.randrange(1, 300)}:{rng.randrange(1, 40)}:    token = auth.get_token(scope)",
        f"{path}:{rng.randrange(1, 300)}: error: Name \"secret_key\" is not defined  [name-defined]",
        f"{path}:{rng.randrange(1, 300)}:{rng.randrange(1, 9)}: F401 'keyring' imported but unused",
        f"FAILED tests/test_auth.py::test_password_reset - AssertionError: token mismatch at {path}:{rng.randrange(1, 300)}",
    ])


def neg_js_trace(rng: random.Random) -> str:
    return (f"TypeError: Cannot read properties of undefined (reading 'token')\n"
            f"    at TokenService.refresh (src/auth/tokenService.ts:{rng.randrange(10, 200)}:{rng.randrange(1, 40)})\n"
            f"    at com.example.auth.KeyStoreLoader.load(KeyStoreLoader.java:{rng.randrange(10, 200)})\n"
            f"    at async PasswordResetHandler.handle (src/handlers/passwordReset.ts:{rng.randrange(10, 99)}:5)")


def neg_diff(rng: random.Random) -> str:
    return (f"diff --git a/src/secrets.py b/src/secrets.py\nindex {_sha(rng, 7)}..{_sha(rng, 7)} 100644\n"
            "--- a/src/secrets.py\n+++ b/src/secrets.py\n@@ -10,7 +10,7 @@ def load():\n"
            "-    password = get_password()\n+    password = get_password(prompt=True)\n     token = session.token")


def neg_other_locks(rng: random.Random) -> str:
    return rng.choice([
        f'[[package]]\nname = "serde"\nversion = "1.0.{rng.randrange(200)}"\nchecksum = "{_sha(rng, 64)}"',
        f"golang.org/x/crypto v0.{rng.randrange(30)}.0 h1:{chars(rng, B64, 43)}=",
        f'lodash@^4.17.21:\n  version "4.17.21"\n  integrity sha512-{chars(rng, B64, 86)}==',
    ])


def neg_k8s_refs(rng: random.Random) -> str:
    return ("env:\n- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db-secret\n      key: password\n"
            f"- name: API_TOKEN\n  valueFrom:\n    secretKeyRef:\n      name: api-{rng.randrange(1, 9)}\n      key: token")


def neg_terraform(rng: random.Random) -> str:
    return ('variable "db_password" {\n  type      = string\n  sensitive = true\n}\n\n'
            'resource "aws_db_instance" "main" {\n  username = "app"\n  password = var.db_password\n}')


def neg_actions(rng: random.Random) -> str:
    return rng.choice([
        "      - uses: docker/login-action@v3\n        with:\n          username: ${{ github.actor }}\n          password: ${{ secrets.GITHUB_TOKEN }}",
        "    env:\n      NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}\n      TWINE_PASSWORD: ${{ secrets.PYPI_API_TOKEN }}",
    ])


def neg_types(rng: random.Random) -> str:
    return rng.choice([
        "interface Credentials {\n  username: string;\n  password?: string;\n  apiKey: string | undefined;\n}",
        'type Config struct {\n\tToken    string `json:"token"`\n\tPassword string `json:"password,omitempty"`\n}',
        "pub struct Client {\n    pub api_key: Option<String>,\n    pub secret: SecretString,\n}",
        "class Settings(BaseSettings):\n    api_key: SecretStr\n    db_password: str = Field(..., min_length=12)",
    ])


def neg_sql(rng: random.Random) -> str:
    return rng.choice([
        "CREATE TABLE users (\n  id BIGINT PRIMARY KEY,\n  password_hash VARCHAR(255) NOT NULL,\n  api_key_id BIGINT\n);",
        "SELECT token_id, expires_at FROM api_tokens WHERE revoked = false ORDER BY expires_at;",
        "CREATE INDEX idx_tokens_user ON tokens(user_id);",
    ])


def neg_tokenizer(rng: random.Random) -> str:
    return json.dumps({"bos_token": "<s>", "eos_token": "</s>", "pad_token_id": 0, "unk_token": "<unk>",
                       "model_max_length": rng.choice([4096, 8192, 32768]), "tokenizer_class": "LlamaTokenizer"})


def neg_css(rng: random.Random) -> str:
    return f"--color-token-primary: #{_sha(rng, 6)};\n--spacing-key-md: {rng.randrange(2, 24)}px;\n$secret-banner-bg: #{_sha(rng, 6)};"


def neg_policy(rng: random.Random) -> str:
    return rng.choice([
        f"PASSWORD_MIN_LENGTH={rng.randrange(8, 20)}", f"password_expiry_days: {rng.randrange(30, 365)}",
        f"token_ttl_seconds: {rng.randrange(600, 86400)}", "AUTH_PASSWORD_VALIDATORS = [\n    {'NAME': 'django.contrib.auth.password_validation.MinimumLengthValidator'},\n]",
        f"SESSION_COOKIE_AGE = {rng.randrange(600, 86400)}  # seconds",
    ])


def neg_numbers(rng: random.Random) -> str:
    mac = ":".join(_sha(rng, 2) for _ in range(6))
    return (f"color #{_sha(rng, 6)} mac {mac} ipv6 2001:db8::{_sha(rng, 4)} at "
            f"2026-11-{rng.randrange(10, 28)}T10:{rng.randrange(10, 59)}:00Z v{rng.randrange(1, 9)}.{rng.randrange(20)}.{rng.randrange(20)}")


CHAT = [
    "my key insight was that the cache never expires", "Secret Santa this year: Alice draws Bob",
    "the password reset email never arrived, can you check the logs?", "a small token of appreciation for the team",
    "the key to the back door is under the mat", "we passed the audit; no secrets were found in the repo",
    "Passwords are hashed with argon2id; tokens are opaque and expire after an hour.",
]
MASKED = [
    "Error code: 401 - Incorrect API key provided: sk-proj-********************************************abcd.",
    "Using key sk-ant-...Q8AA (from ANTHROPIC_API_KEY)", "token: ghp_****************************1a2B",
    "AWS_SECRET_ACCESS_KEY=****************************************",
]


def neg_ids(rng: random.Random) -> str:
    return json.dumps({"request_id": "req_" + chars(rng, ALNUM, 24), "trace_id": _sha(rng, 32),
                       "idempotency_key": _uuid(rng), "etag": f'"{_sha(rng, 32)}"',
                       "next_page_token": chars(rng, B64URL, 40), "cursor": chars(rng, B64, 24) + "=="})


ENV_EXAMPLES = [
    "STRIPE_SECRET_KEY=sk_test_your_key_here", "DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/DB",
    "SLACK_BOT_TOKEN=xoxb-your-token", "SENTRY_DSN=", "JWT_SECRET=replace-me-with-a-long-random-string",
]


def neg_caller_identity(rng: random.Random) -> str:
    return json.dumps({"UserId": "AIDA" + chars(rng, B32, 17), "Account": chars(rng, string.digits, 12),
                       "Arn": f"arn:aws:iam::{chars(rng, string.digits, 12)}:user/ci-bot"}, indent=4)


def neg_shell_history(rng: random.Random) -> str:
    return rng.choice([
        "pass show work/github | head -1", "gh auth token", "op read op://Private/github/token",
        "kubectl get secret db-secret -o yaml", "vault kv get -field=password secret/db",
        "mkdir -p build && cmake -S . -B build", "docker run -u 1000:1000 -p 8080:80 nginx",
        "pip install -U keyring", "ssh-keygen -t ed25519 -C dana@laptop -f ~/.ssh/id_ed25519",
    ])


HELDOUT_NEGATIVES: dict[str, Callable[[random.Random], str]] = {
    "tool-paths": neg_tool_paths, "js-java-trace": neg_js_trace, "git-diff": neg_diff, "other-locks": neg_other_locks,
    "k8s-secret-refs": neg_k8s_refs, "terraform-vars": neg_terraform, "actions-secrets": neg_actions,
    "type-declarations": neg_types, "sql": neg_sql, "tokenizer-config": neg_tokenizer, "css-tokens": neg_css,
    "password-policy": neg_policy, "numbers": neg_numbers, "chat": _choice_list(CHAT), "masked-keys": _choice_list(MASKED),
    "random-ids": neg_ids, "env-example": _choice_list(ENV_EXAMPLES), "caller-identity": neg_caller_identity,
    "shell-history": neg_shell_history,
}
NEGATIVES = {"dev": DEV_NEGATIVES, "heldout": HELDOUT_NEGATIVES}


def negatives(split: str, rng: random.Random, count: int) -> list[tuple[str, str]]:
    families = list(NEGATIVES[split].items())
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    attempts = 0
    while len(out) < count and attempts < count * 20:
        family, make = families[attempts % len(families)]
        attempts += 1
        text = make(rng)
        if rng.random() < 0.25:  # some as transcripts hold them
            text = render(claude_tool_result([text], rng))[0]
        if text not in seen:
            seen.add(text)
            out.append((family, text))
    return out


def build(split: str) -> list[dict[str, object]]:
    rng = random.Random(f"{SEED}-{split}")
    items: list[dict[str, object]] = []
    for shape, context, parts in positives(split, rng):
        text, spans = render(parts)
        items.append({"label": "secret", "shape": shape, "context": context, "text": text, "spans": spans})
    for family, text in negatives(split, rng, 360):
        items.append({"label": "negative", "shape": family, "context": family, "text": text, "spans": []})
    for i, item in enumerate(items):
        item["id"] = f"{split}-{i:04d}"
        item["split"] = split
    return [{k: item[k] for k in ("id", "split", "label", "shape", "context", "text", "spans")} for item in items]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="exit 1 if the files differ from what would be written")
    args = parser.parse_args(argv)
    stale = []
    for split in ("dev", "heldout"):
        items = build(split)
        body = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
        path = args.out / f"{split}.jsonl"
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != body:
                stale.append(str(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
        spans = sum(len(i["spans"]) for i in items)  # type: ignore[arg-type]
        shapes = {s[2] for i in items for s in i["spans"]}  # type: ignore[union-attr]
        negs = sum(i["label"] == "negative" for i in items)
        print(f"{path}: {spans} secrets of {len(shapes)} shapes, {negs} negatives")
    if stale:
        print("stale: " + ", ".join(stale) + " (run scripts/make_secrets_corpus.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
