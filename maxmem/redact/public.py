"""What a rule found but is public or a stand-in, judged by the value and its neighbours.

Every rule proposes spans; these checks then keep what is not a secret:

- documented examples: a value holding the marker EXAMPLE (AKIAIOSFODNN7EXAMPLE), the
  sample values vendors print in their docs for everyone to paste (Stripe's test key,
  jwt.io's token), and a URL whose password repeats its user (guest:guest: a default);
- keys public by design: Stripe publishable keys (pk_live_…, pk_test_…), PostHog project
  keys (phc_…), Mapbox public tokens (pk.eyJ…), extended public keys (xpub…, zpub…),
  reCAPTCHA site keys, the public key of a Sentry DSN;
- data, not credentials: base64 that decodes to JSON with no secret-named member
  (a JWT header, a preferences cookie), a JSON Web Key's public members (x, y, n, e) in
  JSON or YAML, the name of a secret in an ARN (…:secret:prod/db/password-AbC123);
- identifiers: a key's id alone (AWS_ACCESS_KEY_ID=…, "private_key_id": … with no secret
  or private key near it), the id half of a key pair that is hex or capitals beside a
  secret of the same prefix (PUSHER_APP_KEY beside PUSHER_APP_SECRET), an IBAN (by its
  mod-97 checksum), and what is named as such before the value: a cache key, a key
  identifier, the key gpg says it is using, Sec-WebSocket-Key, a CSRF token (it proves a
  form came from the page; it signs no one in);
- identifiers named in prose: what follows an id word (Google Doc id …, Tenant ID: …;
  not a session's, a secret's, a key's or a token's id) or an address word (a Monero
  address, a wallet address), a key id or fingerprint of 8, 16 or 40 hex digits where a
  signature is spoken of (gpg's long key id), what follows a key called public,
  publishable or search-only, a resource's ARN, a C++ mangled symbol (_ZN4acme6crypto…),
  a file name with a content hash (main.ab2507ee….js);
- stand-ins: one character repeated (0000, ****), a value shown with its own redaction
  as the expected result (redact("password=x") == "password=[REDACTED]"), a password
  manager's name (the password is in 1Password), a Basic credential that decodes to
  placeholder words (username:password), a type in a signature (key: &SecretKey), a span
  across JSON members (a rule that read past a closing quote);
- labels: a value that names the secret itself ("Password": "Mot de passe").
"""

from __future__ import annotations

import base64
import binascii
import json
import re

from .precision import names_an_object
from .tokens import secret_json
from .values import FOREIGN_PASSWORDS

__all__ = ["public_value"]

_PUBLIC_PREFIXES = ("pk_live_", "pk_test_", "phc_", "pk.eyJ", "xpub", "ypub", "zpub", "tpub", "vpub", "upub", "Ltub",
                    "Mtub")
_BEFORE = 80
_AFTER = 160
# Values vendors print in their docs for everyone to paste: public whatever names them.
_DOCUMENTED = ("sk_test_4eC39HqLyjWDarjtT1zdp7dc",  # Stripe's API reference
               "sk_test_BQokikJOvBiI2HlWgH4olfQ2",  # Stripe's older docs
               "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",  # jwt.io's sample token (its signature)
               "TJVA95OrM7E2cBab30RMHrHDcEfxjoYZgeFONFh7HgQ")  # jwt.io's older sample
# A key's id (AWS_ACCESS_KEY_ID, "AccessKeyId", private_key_id) names the key: alone it
# is an identifier; beside the secret or private key it names, the pair goes.
_KEY_ID_NAME = re.compile(r"(?i)key[_ -]?id[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?\Z")
_KEY_ID_PAIR = re.compile(r"(?i)secret|private[_ -]?key")
_KEY_ID_NEAR = 400
# The id half of a key pair, beside the secret half under the same prefix: PUSHER_APP_KEY
# beside PUSHER_APP_SECRET, key= beside token= (Trello), Client(key=…, secret=…). Such an
# id is hex, or capitals and digits; a key of mixed case beside a secret is a secret too
# (gradle.publish.key beside gradle.publish.secret).
_PAIR_KEY = re.compile(r"(?i)(?:^|[\s{,;(&?])[\"']?(?P<prefix>[\w.-]{0,40}?)[_.-]?(?:api[_-]?|app[_-]?|access[_-]?)?key"
                       r"[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?\Z")
_ID_VALUE = re.compile(r"[0-9a-f]{8,40}|[0-9A-F]{8,40}|[A-Z0-9]{16,24}")
_PAIR_NEAR = 300
_IBAN = re.compile(r"[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}")
_JWK_NEAR = 400  # a JSON Web Key's "kty" stands this close to its members
# The name just before a value that makes it an identifier, not a secret.
_IDENTIFIER_BEFORE = re.compile(
    r"(?i)(?:\bcache\b[^\n]{0,30}\bkey|\bkey[ _-]?identifier|\bfingerprint|\busing (?:rsa|dsa|ecdsa|eddsa|ed25519|ed448|cv25519|elg|elgamal|pgp|gpg|openpgp|ssh|signing|sub|nist\w{0,8}|brainpool\w{0,8}) ?key|"
    r"sec-websocket-key|data-sitekey|\bsite[ _-]?key|\bpublic[ _-]?key|\bchallenge|\bkid|applicationserverkey|"
    r"\bminisign\b[^\n]{0,80}\s-P|\bIN[ \t]+TXT|"
    r"[cx]srf[\w-]{0,12})\W{0,4}\Z")
# A name that says the value is public by design (shipped to browsers, search-only) or an
# identifier (…_ID; a key's id only alone, above; not a secret id, which is the secret
# itself: Vault's SECRET_ID).
_PUBLIC_NAME = re.compile(
    r"(?i)(?:^|[\s{,;(])[\"']?(?P<name>[\w.-]*(?:(?:public|publishable|search[_-]?only|client[_-]?token|anon[_-]?key)[\w.-]*|"
    r"(?-i:(?<![Kk]ey)(?<!KEY)(?<![Ss]ecret)(?<!SECRET)(?:_id|_ID|-id)|(?<=[a-z])(?<![Kk]ey)(?<![Ss]ecret)Id)))[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"'`]?\Z")
_TOKEN_START = re.compile(r"[\w.-]{1,12}\Z")
_PAGE_TOKEN = re.compile(r"(?i)(?:(?:next|prev|previous|continuation|resume)[ _-]?(?:page[ _-]?)?|(?<![\w.-])page[ _-]?)"
                         r"(?:token|cursor)"
                         r"[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?\Z")
# Encrypted and stored that way: Bitnami sealed secrets, SOPS, Ansible Vault.
_ENCRYPTED_BEFORE = re.compile(r"(?i)encrypteddata:|\$ansible_vault|sops:")
_SOPS_VALUE = re.compile(r"ENC\[[A-Z0-9_]{3,24},data:")  # SOPS: ENC[AES256_GCM,data:…,iv:…,tag:…]
# A Monero address (standard or integrated): base58, 95 or 106 characters, from 4 or 8.
_MONERO_ADDRESS = re.compile(r"[48][1-9A-HJ-NP-Za-km-z]{94}(?:[1-9A-HJ-NP-Za-km-z]{11})?")
_YAML_TAG = re.compile(r"![A-Za-z][\w.-]{0,24}")  # password: !vault |, !secret db_pw, !Ref
_JWK_PUBLIC = re.compile(r"""(?:^|[\s{,])\\?["']?(?:x|y|n|e|kid|x5t)\\?["']?[ \t]{0,4}:[ \t]{0,4}\\?["']?\Z""")
_ARN_SECRET = re.compile(r"arn:aws[\w-]*:secretsmanager:[\w-]*:\d*:secret:\Z")
_URL_USER = re.compile(r"://(?:([^\s:/?#@\"'<>\\]{1,256}):)?\Z")
_SENTRY_AFTER = re.compile(r"@[\w.-]{0,64}(?:sentry\.io|ingest\.[\w.-]{1,64})/")
# What names the value an identifier in prose: an id word (not a session's, secret's, key's
# or token's id, which is the secret), an address word (wallet and mail addresses are
# given out), a key called public, publishable or search-only.
_NAMED_ID_BEFORE = re.compile(
    r"(?i)(?:(?<![\w-])(?<!session )(?<!secret )(?<!key )(?<!token )ids?|\baddress(?:es)?|"
    r"\b(?:public|publishable|search[ _-]only)[ _-](?:api[ _-])?key\b[^\n\"'`=]{0,40}?)\W{0,4}\Z")
# A key id or fingerprint (gpg's 8, 16 or 40 hex digits) where a signature is spoken of.
_KEY_ID_HEX = re.compile(r"[0-9A-F]{8}|[0-9A-F]{16}|[0-9A-F]{40}|[0-9a-f]{16}|[0-9a-f]{40}")
_SIGNATURE_WORDS = re.compile(r"(?i)\b(?:signer|signed|signature|signing|gpg|pgp|verif\w*)\b")
_MANGLED_NAME = re.compile(r"(\d{1,2})")
_FILE_AFTER = re.compile(r"\.(?:js|mjs|css|map|wasm|chunk|bundle|min|png|svg|woff2?)\b")
_JSON_MEMBERS = re.compile(r"[\"'],[\"'\s]|[\"']:[\"'\s]")
# The name before a value (password= , "token": ), to find it again beside a redaction.
_NAME_BEFORE = re.compile(r"([A-Za-z_][\w.-]{0,40})[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?\Z")
# The names of the places passwords are kept: a password manager is no password.
_PASSWORD_STORES = frozenset({"1password", "lastpass", "bitwarden", "keepass", "keepassxc", "dashlane", "keychain",
                              "vaultwarden", "enpass", "nordpass", "protonpass"})
_PLACEHOLDER_USERS = frozenset({"user", "username", "login", "name", "your_username", "youruser"})
_PLACEHOLDER_PASSWORDS = frozenset({"password", "pass", "passwd", "pwd", "secret", "your_password", "yourpassword"})
_LABEL_WORDS = frozenset({"password", "passwort", "contraseña", "senha", "wachtwoord", "hasło", "пароль", "mot de passe",
                          "kennwort", "parola", "clave", "clé", "secret", "token"})


def public_value(text: str, start: int, end: int) -> bool:
    """text[start:end], found by some rule, is public or a stand-in, not a secret."""
    value = text[start:end]
    if "EXAMPLE" in value or value.startswith(_PUBLIC_PREFIXES) or _YAML_TAG.fullmatch(value):
        return True
    if _iban(value) or _documented(text, start, end) or names_an_object(value):
        return True
    if text.endswith('W/"', max(0, start - 3), start) or text.endswith('W/\\"', max(0, start - 4), start):
        return True  # W/"…": a weak entity tag (ETag, If-None-Match), a version of a resource
    if _ID_VALUE.fullmatch(value) and _key_id_alone(text, start, end):
        return True
    before = text[max(0, start - _BEFORE):start]
    token = _TOKEN_START.search(before)
    if (token and (token.group(0) + value).startswith(_PUBLIC_PREFIXES)) or _PUBLIC_NAME.search(before):
        return True  # pk.|eyJ… (a rule that took the JWT after the prefix), NEXT_PUBLIC_…, PROJECT_ID
    if _ID_VALUE.fullmatch(value) and _pair_id(text, start, end, before):
        return True
    if _PAGE_TOKEN.search(before):
        return True  # nextPageToken: "…": where the next page of a listing starts
    if value.startswith("AIza") and "firebase" in before.lower():
        return True  # a Firebase web config's API key: public by design
    if _ENCRYPTED_BEFORE.search(text, max(0, start - 400), start) or _SOPS_VALUE.match(value):
        return True
    if _MONERO_ADDRESS.fullmatch(value) and len(value) in (95, 106):
        return True
    if _IDENTIFIER_BEFORE.search(before) or _ARN_SECRET.search(before):
        return True
    if _JWK_PUBLIC.search(before) and "kty" in text[max(0, start - _JWK_NEAR):start + _JWK_NEAR]:
        return True
    if _not_a_value(text, start, end, before) or _named_identifier(value, before):
        return True
    url_user = _URL_USER.search(before)
    if url_user and (url_user.group(1) == value or _SENTRY_AFTER.match(text, end)):
        return True
    if value.startswith(("eyJ", "ewo")) and "." not in value and _plain_json(value):
        return True
    return len(value) <= 24 and _names_secret(value)


def _not_a_value(text: str, start: int, end: int, before: str) -> bool:
    """A stand-in, a name or a piece of code where a rule expected a value."""
    value = text[start:end]
    lowered = value.lower()
    if len(value) >= 4 and len(set(value)) == 1:
        return True  # 0000, ****: a mask or a factory default
    if lowered in _PASSWORD_STORES:
        return True
    after = text[end:end + _AFTER]
    name = _NAME_BEFORE.search(before[-48:]) if "[REDACTED" in after or "***" in after else None
    if name and re.search(r"(?:==|->|=>|→|\.to(?:Be|Equal)\()[^\n]{0,40}?" + re.escape(name.group(1))
                          + r"[\"']?\s{0,4}[:=]\s{0,4}[\"']?(?:\[REDACTED|\*{3})", after):
        return True  # redact("password=x") == "password=[REDACTED]": an example, shown with its result
    if value[0] in "&*" and _IDENTIFIER_VALUE.fullmatch(value.lstrip("&*").removeprefix("mut ")):
        return True  # key: &SecretKey, *Config: a type in a signature
    if _JSON_MEMBERS.search(value):
        return True  # format","key_prefix":"sk-: a span across JSON members is no one value
    if value.startswith("_Z") and _mangled(value):
        return True
    if _FILE_AFTER.match(text, end) and (start == 0 or text[start - 1] in "/ \t\"'=(" or "." in value):
        return True  # main.ab2507ee8791fad6b414.js: a file named with its content's hash
    return "basic" in before[-24:].lower() and _placeholder_basic(value)


def _named_identifier(value: str, before: str) -> bool:
    """Named an id, an address or a public key just before, or a key id where a signature
    is spoken of, or a resource's ARN."""
    word = _WORD_BEFORE.search(before) if "arn:" in before else None
    if (word.group(0) + value if word else value).startswith("arn:"):
        return True  # a resource's name, or a part of it (…:secret:shop/api-Kq7Lm2 after "secret")
    if _HEX_VALUE.fullmatch(value) and _HEX_GROUPS_BEFORE.search(before):
        return True  # the last group of 92B0:32775:4A656D:…: a request id, an IPv6 address
    near = before[-64:]
    lowered = near.lower()
    if ("id" in lowered or "address" in lowered or "key" in lowered) and _NAMED_ID_BEFORE.search(near):
        return True
    return bool(_KEY_ID_HEX.fullmatch(value) and _SIGNATURE_WORDS.search(before))


_WORD_BEFORE = re.compile(r"[^\s\"'`=(,]{1,200}\Z")
_HEX_VALUE = re.compile(r"[0-9A-Fa-f]{1,16}")
_HEX_GROUPS_BEFORE = re.compile(r"(?<![\w.:-])(?:[0-9A-Fa-f]{1,8}:){3,}\Z")
_IDENTIFIER_VALUE = re.compile(r"[A-Za-z_][\w:<>]{0,80}")


def _mangled(value: str) -> bool:
    """A C++ mangled symbol: _Z, then names each led by its length (_ZN4acme6crypto…)."""
    names, at = 0, 2
    while names < 3:
        length = _MANGLED_NAME.search(value, at)
        if not length:
            return False
        size = int(length.group(1))
        name = value[length.end():length.end() + size]
        if len(name) == size and name.replace("_", "").isalpha():
            names += 1
            at = length.end() + size
        else:
            at = length.start() + 1
    return True


def _placeholder_basic(value: str) -> bool:
    """A Basic credential that decodes to placeholder words (username:password) or repeats
    its user as its password (guest:guest)."""
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    user, colon, password = decoded.partition(":")
    lowered = password.lower()
    return bool(colon) and (lowered == user.lower() or (user.lower() in _PLACEHOLDER_USERS
                                                         and lowered in _PLACEHOLDER_PASSWORDS))


_TOKEN_AROUND = re.compile(r"[\w.+/=-]{0,2000}")


def _documented(text: str, start: int, end: int) -> bool:
    """The whole token around text[start:end] holds a vendor's documented sample (a rule
    may have taken a part of it: a JWT's first two parts)."""
    left = start
    while left > 0 and start - left < 2000 and (text[left - 1].isalnum() or text[left - 1] in "_.+/=-"):
        left -= 1
    tail = _TOKEN_AROUND.match(text, end)
    token = text[left:tail.end() if tail else end]
    return any(sample in token for sample in _DOCUMENTED)


def _key_id_alone(text: str, start: int, end: int) -> bool:
    """The value is named a key's id and no secret or private key stands near it (its own
    name, private_key_id, aside)."""
    name = _KEY_ID_NAME.search(text, max(0, start - 40), start)
    if not name:
        return False
    begin = name.start()
    while begin > 0 and start - begin < 80 and (text[begin - 1].isalnum() or text[begin - 1] in "_-."):
        begin -= 1
    return not (_KEY_ID_PAIR.search(text, max(0, begin - _KEY_ID_NEAR), begin)
                or _KEY_ID_PAIR.search(text, end, min(len(text), end + _KEY_ID_NEAR)))


def _pair_id(text: str, start: int, end: int, before: str) -> bool:
    """The value is named a key and a secret or token of the same prefix stands near: the
    key is the pair's id (the app, the account), the secret is what signs."""
    key = _PAIR_KEY.search(before)
    if not key:
        return False
    prefix = re.escape(key.group("prefix"))
    sibling = re.compile(rf"(?i)(?:^|[^\w.-]){prefix}[_.-]?(?:api[_-]?|app[_-]?)?(?:secret|token)[\"']?[ \t]{{0,4}}[:=]")
    return bool(sibling.search(text, max(0, start - _PAIR_NEAR), min(len(text), end + _PAIR_NEAR)))


def _iban(value: str) -> bool:
    """An IBAN (DE89 3704 0044 0532 0130 00): its country, its mod-97 check digits. An
    account's address, given out on every invoice."""
    compact = value.replace(" ", "")
    if not _IBAN.fullmatch(compact):
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _plain_json(value: str) -> bool:
    """base64 of JSON that holds no secret: a JWT header, a preferences cookie."""
    body = value.rstrip("=")
    try:
        decoded = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_" if "-" in body or "_" in body else None)
        json.loads(decoded)
    except (binascii.Error, ValueError):
        return False
    return not secret_json(value.encode())


def _names_secret(value: str) -> bool:
    """A value of words that name a secret ("Mot de passe"): a label or translation."""
    lowered = value.lower()
    return lowered in _LABEL_WORDS or lowered.replace(" ", "") in FOREIGN_PASSWORDS
