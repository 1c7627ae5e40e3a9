"""What a rule found but is public or a stand-in, judged by the value and its neighbours.

Every rule proposes spans; these checks then keep what is not a secret:

- documented examples: a value holding the marker EXAMPLE (AKIAIOSFODNN7EXAMPLE), and a
  URL whose password repeats its user (guest:guest, postgres:postgres: a default);
- keys public by design: Stripe publishable keys (pk_live_…, pk_test_…), PostHog project
  keys (phc_…), Mapbox public tokens (pk.eyJ…), extended public keys (xpub…, zpub…),
  reCAPTCHA site keys, the public key of a Sentry DSN;
- data, not credentials: base64 that decodes to JSON with no secret-named member
  (a JWT header, a preferences cookie), a JSON Web Key's public members (x, y, n, e) in
  JSON or YAML, the name of a secret in an ARN (…:secret:prod/db/password-AbC123);
- identifiers named as such before the value: a cache key, a key identifier, the key
  gpg says it is using, Sec-WebSocket-Key;
- labels: a value that names the secret itself ("Password": "Mot de passe").
"""

from __future__ import annotations

import base64
import binascii
import json
import re

from .tokens import secret_json
from .values import FOREIGN_PASSWORDS

__all__ = ["public_value"]

_PUBLIC_PREFIXES = ("pk_live_", "pk_test_", "phc_", "pk.eyJ", "xpub", "ypub", "zpub", "tpub", "vpub", "upub", "Ltub",
                    "Mtub")
_BEFORE = 80
_JWK_NEAR = 400  # a JSON Web Key's "kty" stands this close to its members
# The name just before a value that makes it an identifier, not a secret.
_IDENTIFIER_BEFORE = re.compile(
    r"(?i)(?:\bcache\b[^\n]{0,30}\bkey|\bkey[ _-]?identifier|\bfingerprint|\busing (?:rsa|dsa|ecdsa|eddsa|ed25519|ed448|cv25519|elg|elgamal|pgp|gpg|openpgp|ssh|signing|sub|nist\w{0,8}|brainpool\w{0,8}) ?key|"
    r"sec-websocket-key|data-sitekey|\bsite[ _-]?key|\bpublic[ _-]?key|\bchallenge|\bkid)\W{0,4}\Z")
# A name that says the value is public by design (shipped to browsers, search-only) or an
# identifier (…_ID, not a key's id: that is half of a credential).
_PUBLIC_NAME = re.compile(
    r"(?i)(?:^|[\s{,;(])[\"']?(?P<name>[\w.-]*(?:(?:public|publishable|search[_-]?only|client[_-]?token|anon[_-]?key)[\w.-]*|"
    r"(?-i:(?<![Kk]ey)(?<!KEY)(?<![Ss]ecret)(?<!SECRET)(?:_id|_ID|-id)|(?<=[a-z])(?<![Kk]ey)(?<![Ss]ecret)Id)))[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"'`]?\Z")
_TOKEN_START = re.compile(r"[\w.-]{1,12}\Z")
_PAGE_TOKEN = re.compile(r"(?i)(?:(?:next|prev|previous|continuation|resume)[ _-]?(?:page[ _-]?)?|(?<![\w.-])page[ _-]?)"
                         r"(?:token|cursor)"
                         r"[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?\Z")
# Encrypted and stored that way: Bitnami sealed secrets, SOPS, Ansible Vault.
_ENCRYPTED_BEFORE = re.compile(r"(?i)encrypteddata:|\$ansible_vault|sops:")
_YAML_TAG = re.compile(r"![A-Za-z][\w.-]{0,24}")  # password: !vault |, !secret db_pw, !Ref
_JWK_PUBLIC = re.compile(r"""(?:^|[\s{,])\\?["']?(?:x|y|n|e|kid|x5t)\\?["']?[ \t]{0,4}:[ \t]{0,4}\\?["']?\Z""")
_ARN_SECRET = re.compile(r"arn:aws[\w-]*:secretsmanager:[\w-]*:\d*:secret:\Z")
_URL_USER = re.compile(r"://(?:([^\s:/?#@\"'<>\\]{1,256}):)?\Z")
_SENTRY_AFTER = re.compile(r"@[\w.-]{0,64}(?:sentry\.io|ingest\.[\w.-]{1,64})/")
_LABEL_WORDS = frozenset({"password", "passwort", "contraseña", "senha", "wachtwoord", "hasło", "пароль", "mot de passe",
                          "kennwort", "parola", "clave", "clé", "secret", "token"})


def public_value(text: str, start: int, end: int) -> bool:
    """text[start:end], found by some rule, is public or a stand-in, not a secret."""
    value = text[start:end]
    if "EXAMPLE" in value or value.startswith(_PUBLIC_PREFIXES) or _YAML_TAG.fullmatch(value):
        return True
    before = text[max(0, start - _BEFORE):start]
    token = _TOKEN_START.search(before)
    if (token and (token.group(0) + value).startswith(_PUBLIC_PREFIXES)) or _PUBLIC_NAME.search(before):
        return True  # pk.|eyJ… (a rule that took the JWT after the prefix), NEXT_PUBLIC_…, PROJECT_ID
    if _PAGE_TOKEN.search(before):
        return True  # nextPageToken: "…": where the next page of a listing starts
    if value.startswith("AIza") and "firebase" in before.lower():
        return True  # a Firebase web config's API key: public by design
    if _ENCRYPTED_BEFORE.search(text, max(0, start - 400), start):
        return True
    if _IDENTIFIER_BEFORE.search(before) or _ARN_SECRET.search(before):
        return True
    if _JWK_PUBLIC.search(before) and "kty" in text[max(0, start - _JWK_NEAR):start + _JWK_NEAR]:
        return True
    url_user = _URL_USER.search(before)
    if url_user and (url_user.group(1) == value or _SENTRY_AFTER.match(text, end)):
        return True
    if value.startswith(("eyJ", "ewo")) and "." not in value and _plain_json(value):
        return True
    return len(value) <= 24 and _names_secret(value)


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
