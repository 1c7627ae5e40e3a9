"""Values whose structure says public: an object's name ending in its UUID or digest,
a variable reference in code, a counting or repeating placeholder, a schema's type name.
Every value is generated here (a fixed seed), none copied from a corpus; the secrets of
the same families beside them are still found."""

from __future__ import annotations

import random
import string
import uuid

import pytest

from maxmem.redact import Redactor

RNG = random.Random(20261207)
REDACTOR = Redactor(cache_size=0)


def _hex(n: int) -> str:
    return "".join(RNG.choice("0123456789abcdef") for _ in range(n))


def _alnum(n: int) -> str:
    return "".join(RNG.choice(string.ascii_letters + string.digits) for _ in range(n))


def _lowernum(n: int) -> str:
    return "".join(RNG.choice(string.ascii_lowercase + string.digits) for _ in range(n))


def _uuid() -> str:
    return str(uuid.UUID(int=RNG.getrandbits(128), version=4))


def _found(text: str) -> list[str]:
    return [text[f.start:f.end] for f in REDACTOR.findings(text)]


# -- an object's name that ends in its UUID or digest ------------------------------------------------
OBJECT_NAMES = [
    *(f"no cache for input: {tool}-cache-{os_}-{arch}-{manager}-{_hex(64)}"
      for tool, os_, arch, manager in (("gradle", "Windows", "arm64", "wrapper"), ("pip", "macOS", "x64", "poetry"),
                                       ("rust", "Linux", "amd64", "cargo"))),
    *(f"leader: {name}-{_lowernum(10)}-{_lowernum(5)}_{_uuid()}" for name in ("scheduler", "webhook", "ingress")),
    *(f'waiting on "operations/{_lowernum(3)}.{_lowernum(2)}-{RNG.randrange(10**11, 10**12)}-{_uuid()}"'
      for _ in range(3)),
    *(f'<Item key="{word}-{_uuid()}" />' for word in ("cell", "tab", "node")),
    *(f"s3://{_lowernum(3)}-{_lowernum(9)}-staging-{RNG.randrange(10**11, 10**12)}-us-east-2/{_hex(64)}.json"
      for _ in range(3)),
]

VENDOR_DIGESTS = [
    f"acme_live_{_hex(40)}",  # a vendor's word, its mode, a hex body
    f"zq_{_hex(48)}",
    f"xapp-1-A{_lowernum(9).upper()}-{RNG.randrange(10**12, 10**13)}-{_hex(64)}",
    f"pat-eu1-{_uuid()}",  # a prefix that says secret vouches for a UUID
]
# A name that says secret vouches for a UUID behind a word too (an SDK key, a platform key).
NAMED_UUIDS = [f"ACME_SDK_KEY=sdk-{_uuid()}", f"PLATFORM_API_KEY=PLT-{_uuid()}", f'api_key: "mob-{_uuid()}"']


@pytest.mark.parametrize("line", OBJECT_NAMES)
def test_an_object_name_ending_in_its_uuid_or_digest_stays(line):
    assert _found(line) == []


@pytest.mark.parametrize("token", VENDOR_DIGESTS)
def test_a_vendor_token_with_a_hex_or_uuid_body_is_still_found(token):
    assert any(token.startswith(found[:10]) for found in _found(f"TOKEN={token}")), token
    assert any(token.startswith(found[:10]) for found in _found(f"use {token} for the upload")), token


@pytest.mark.parametrize("line", NAMED_UUIDS)
def test_a_uuid_behind_a_word_under_a_secret_name_is_still_found(line):
    assert _found(line) == [line.split("=")[-1].split(": ")[-1].strip('"')]


# -- a reference to the secret in code, with an operator after it --------------------------------------
def _env_name() -> str:
    vendor = "".join(RNG.choice(string.ascii_uppercase) for _ in range(RNG.randrange(3, 7)))
    return f"{vendor}_{RNG.choice(['SECRET_KEY', 'API_TOKEN', 'DB_PASSWORD', 'CLIENT_SECRET'])}"


REFERENCES = [
    *(f"const {name} = process.env.{_env_name()}!;" for name in ("apiKey", "secret", "authToken")),
    *(f"  {name}: System.fetch_env!(\"{_env_name()}\")," for name in ("password", "secret_key_base", "token")),
    *(f"let {name} = env.{_env_name().lower()}?" for name in ("password", "key")),
]


@pytest.mark.parametrize("line", REFERENCES)
def test_a_reference_with_an_assertion_or_a_bang_call_stays(line):
    assert _found(line) == []


def test_a_quoted_password_ending_in_a_bang_is_still_found():
    value = f"{RNG.choice(['Amber', 'Cedar'])}.{_alnum(6)}!"
    assert _found(f'password: "{value}"') == [value]


# -- a value made by a rule: repeated, or counting with a fixed step --------------------------------------
def _repeated(n: int) -> str:
    unit = _hex(RNG.choice([1, 2, 4, 8, 16]))
    return (unit * n)[:n]


def _counting_bytes(count: int) -> str:
    first, step = RNG.randrange(256), RNG.choice([1, 2, 0x11, 0x10])
    return "".join(f"{(first + i * step) % 256:02x}" for i in range(count))


PATTERNED = [
    *(f"SIGNER_PRIVATE_KEY=0x{_repeated(64)}  # set in .env.local" for _ in range(3)),
    *(f'FIXTURE_KEY = "{_repeated(32)}"' for _ in range(3)),
    *(f"Key       : {_counting_bytes(16)}\nIV        : {_counting_bytes(16)}" for _ in range(3)),
    "api_token: abcdefghijklmnopqrstuvwx",
]


@pytest.mark.parametrize("text", PATTERNED)
def test_a_repeated_or_counting_value_is_a_placeholder(text):
    assert _found(text) == []


def test_a_random_value_of_the_same_places_is_still_found():
    key = _hex(64)
    assert _found(f"SIGNER_PRIVATE_KEY=0x{key}") and key in _found(f"SIGNER_PRIVATE_KEY=0x{key}")[0]
    assert _found(f'FIXTURE_KEY = "{_alnum(32)}"')
    assert _found("my phone PIN is 1234")  # a short counting value is a PIN people use


@pytest.mark.parametrize("password", ["Summer2024Summer2024", "Tr0ub4dor&3Tr0ub4dor&3", "Kx9-mQ2!Kx9-mQ2!"])
def test_a_password_typed_twice_is_still_a_password(password):
    # a unit twice is a pattern only in hex: people double their passwords
    assert _found(f"my password is {password}") and _found(f"DB_PASSWORD={password}")


# -- values whose place says public: a weak entity tag, a TLS session's id, a sealed password ----------
def _b64(n: int) -> str:
    return "".join(RNG.choice(string.ascii_letters + string.digits + "+/") for _ in range(n))


def _tls_session() -> str:
    return ("SSL-Session:\n    Protocol  : TLSv1.3\n    Cipher    : TLS_AES_256_GCM_SHA384\n"
            f"    Session-ID: {_hex(64).upper()}\n    Session-ID-ctx: \n    Master-Key: {{master}}\n")


PUBLIC_PLACES = [
    *(f'{header}: W/"{_hex(8)}-{_alnum(27)}"' for header in ("ETag", "etag", "If-None-Match")),
    *(f'{{"etag": "W/\\"{_hex(4)}-{_alnum(30)}\\""}}' for _ in range(2)),
    *(_tls_session().replace("{master}", "****") for _ in range(2)),
    *(f"  {name}: Ag{_b64(RNG.randrange(400, 900))}" for name in ("password", "db_password", "passphrase")),
]


@pytest.mark.parametrize("text", PUBLIC_PLACES)
def test_an_entity_tag_a_tls_session_id_and_a_sealed_password_stay(text):
    assert _found(text) == []


def test_their_secret_neighbours_are_still_found():
    master = _hex(96).upper()
    assert _found(_tls_session().replace("{master}", master)) == [master]
    session = _alnum(40)
    assert _found(f"X-Session-ID: {session}") == [session]
    password = _alnum(24)
    assert _found(f"  password: {password}") == [password]
    assert _found(f'token: "{_alnum(44)}"')  # a random value without an entity tag's W/


# -- a schema's type where a value would stand ----------------------------------------------------------
TYPED = [f'"{name}": "{kind}{mark}",' for name, kind, mark in
         (("password", "string", "?"), ("passphrase", "String", "!"), ("client_secret", "str", " | None"),
          ("db_password", "text", "?"), ("apiToken", "string", " | undefined"))]


@pytest.mark.parametrize("text", TYPED)
def test_a_type_name_with_its_marks_is_no_value(text):
    assert _found(text) == []


def test_a_password_ending_in_a_mark_is_still_found():
    value = f"{_alnum(9)}?"
    assert _found(f'"password": "{value}",') == [value]


# -- one-time codes: context words with digits or hyphens in them, in more languages, lists with "and" ---
def _code(n: int = 6) -> str:
    return "".join(RNG.choice(string.digits) for _ in range(n))


ONE_TIME = [
    ("my 2FA code is {c}", "{c}"), ("2FA code: {c}", "{c}"), ("der 2FA-Code lautet {c}", "{c}"),
    ("my sign-in code is {c}", "{c}"), ("the one-time code is {c}", "{c}"),
    ("le code de vérification envoyé par e-mail : {c}", "{c}"), ("der Bestätigungscode lautet {c}", "{c}"),
    ("el código de confirmación es {c}", "{c}"), ("ваш код подтверждения: {c}", "{c}"),
]


@pytest.mark.parametrize(("template", "secret"), ONE_TIME)
def test_a_one_time_code_is_found_whatever_its_words_hold(template, secret):
    code = _code()
    assert _found(template.format(c=code)) == [secret.format(c=code)]


def test_the_last_code_of_a_list_after_its_conjunction_goes_too():
    codes = [_code(8) for _ in range(3)]
    assert _found(f"my recovery codes are {codes[0]}, {codes[1]} and {codes[2]}") == codes
    assert _found(f"backup codes: {codes[0]} und {codes[1]}") == codes[:2]


def test_a_network_named_by_its_name_is_no_password():
    name = f"{RNG.choice(['Lab', 'Shop', 'Home'])}-{_code(2)}G"
    assert _found(f"Wi-Fi network: {name}, channel {RNG.randrange(1, 165)}") == []
    assert _found(f"wifi SSID {name}") == []
    password = _alnum(12)
    assert _found(f"the Wi-Fi password is {password}") == [password]


# -- a password flag glued to two qualifiers; a key's bytes with their brackets ---------------------------
@pytest.mark.parametrize("flag", ["-srcstorepass", "-deststorepass", "-srckeypass", "-destkeypass", "--newrootpass"])
def test_a_flag_naming_what_its_password_opens_twice_glued_is_a_password_flag(flag):
    value = _alnum(12)
    assert _found(f"tool {flag} {value} -v") == [value]


@pytest.mark.parametrize("word", ["bypass", "compass", "encompass"])
def test_words_ending_in_pass_stay_words(word):
    assert _found(f"--{word} {_alnum(12)}") == []


def test_a_keys_bytes_go_with_their_brackets():
    numbers = "[" + ",".join(str(RNG.randrange(256)) for _ in range(64)) + "]"
    assert _found(f"$ cat ~/.config/solana/id.json\n{numbers}") == [numbers]


@pytest.mark.parametrize("name", ["PUB_TOKEN", "NPM_PUB_TOKEN", "pub_secret"])
def test_pub_makes_only_a_key_public(name):
    value = _alnum(40)
    assert _found(f"{name}={value}") == [value]
    assert _found(f"PUB_KEY={value}") == []


@pytest.mark.parametrize("scheme", ["AWS4-HMAC-SHA256", "OSS4-HMAC-SHA256", "HMAC-SHA512", "EG1-HMAC-SHA256"])
def test_a_scheme_followed_by_its_params_is_no_credential(scheme):
    signature = _hex(64)
    text = f"Authorization: {scheme} SignedHeaders=host;x-date, Signature={signature}"
    assert scheme not in "".join(_found(text))


def test_a_bare_token_in_an_authorization_header_is_still_found():
    token = _alnum(32)
    assert _found(f"Authorization: {token}") == [token]


# -- code where a rule expected a value: prose after AUTH, a nested call, a macro, snake_case -----------
def _snake() -> str:
    words = ["ossl", "old", "des", "ks", "struct", "entry", "priv", "impl", "state", "rec", "list"]
    middle = "_".join(RNG.choice(words) for _ in range(5))
    return f"N{RNG.randrange(10, 99)}_{middle}4DOLLAR_{RNG.randrange(10, 99)}E"


CODE_NOT_VALUES = [
    f"    # end AUTH {word} stuff." for word in ("related", "handling", "specific")
] + [
    f"conf.Remove{verb}BindNames(conf.GetSectionList('default', '{section}'))," for verb, section in
    (("Key", "extensions"), ("Old", "plugins"))
] + [
    f"\tregproc\t\tprstoken {macro}(pg_proc);" for macro in ("BKI_LOOKUP", "BKI_DEFAULT")
] + [
    f"class {name}(Union):\n    _fields_ = [('ks', {name})]" for name in (_snake(), _snake())
]


@pytest.mark.parametrize("text", CODE_NOT_VALUES)
def test_code_where_a_rule_expected_a_value_stays(text):
    assert _found(text) == []


def test_the_same_rules_still_find_their_secrets():
    password = _alnum(12)
    assert _found(f"127.0.0.1:6379> AUTH {password}") == [password]
    assert _found(f"server.login(get_user(), '{password}')") == [password]
    assert _found(f"requirepass {password}") == [password]


# -- a key's seed by its name; what a command that names a password printed ------------------------------
@pytest.mark.parametrize("name", ["SIGNING_KEY_SEED", "VALIDATOR_KEY_SEED", "private_key_seed"])
def test_a_keys_seed_is_found_by_its_name(name):
    seed = _hex(64)
    assert _found(f"{name}={seed}") == [seed]
    assert _found(f"{name}={RNG.randrange(1, 99)}") == []  # a test's seed number


@pytest.mark.parametrize("command", ["cat /etc/ssl/private/pass.txt", "admin initial-password -n ops",
                                     "cat ~/.config/app/pw.txt"])
def test_a_password_a_command_printed_alone_goes(command):
    value = "".join(RNG.choice(string.ascii_letters) for _ in range(16))  # letters only, cases mixed
    assert _found(f"$ {command}\n{value}\n") == [value]
    assert _found(f"$ cat compass.txt\n{value}\n") == []


def test_a_user_password_line_gives_its_password_or_verifier_away():
    password, verifier = _alnum(20), f"md5{_hex(32)}"
    assert _found(f'"svc_{_lowernum(4)}" "{password}"') == [password]
    assert _found(f'"app" "{verifier}"\n"ro" "{password}"') == [verifier, password]
    assert _found('"en" "English"\n"de" "Deutsch"') == []


def test_a_recovery_phrase_ends_where_its_sentence_goes_on():
    bip = ["cactus", "arena", "bamboo", "glove", "drift", "eagle", "fossil", "giraffe", "anchor", "coral", "bridge",
           "axis", "cotton", "dune", "frost"]
    words = " ".join(RNG.sample(bip, 12))
    assert _found(f"my wallet recovery phrase is {words}, can you check the path?") == [words]
    listed = ", ".join(RNG.sample(bip, 12))
    assert _found(f"seed: {listed}") == [listed]


def test_a_member_named_cookies_is_read_as_a_cookie_header():
    session = _lowernum(32)
    assert _found(f'    "cookies": "sessionid={session}; theme=dark"') == [session]
    assert _found("we use cookies: they keep you signed in") == []
