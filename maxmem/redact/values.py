"""What a secret name and a secret value look like.

A name such as `OPENAI_API_KEY`, `db_password` or `x-auth-token` says its value may be a
secret; how strongly depends on its last word (`token_count` is a count, `sort_key` a
column, `password_field` a form field). A value is then checked against that strength:
placeholders (`<your-key>`, `${API_KEY}`, `sk-...`), references to other names
(`password=db_password`, `self.token`), type names (`password: str`), paths and
numbers are never secrets; the weaker the name, the more random the value must look
(character classes and Shannon entropy).
"""

from __future__ import annotations

import hashlib
import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from enum import IntEnum
from functools import lru_cache
from typing import Any

from .precision import names_an_object

__all__ = [
    "SECRET_HEADS",
    "Strength",
    "camel_words",
    "is_placeholder",
    "looks_random",
    "mixed_case_random",
    "name_strength",
    "shannon",
    "value_is_secret",
    "char_offset",
    "char_offsets",
    "find_words",
    "inside_words",
    "may_hold",
    "present_words",
    "scan",
    "scan_apart",
    "word_blob",
    "word_index",
    "text_words",
    "wallet_key",
    "wordy",
]


class Strength(IntEnum):
    """How much a name says about its value."""

    WEAK = 1  # "key", "auth", a key of unknown purpose: only a random-looking value counts
    TOKEN = 2  # api_key, access_token, client_secret: a token-like value counts
    PASSWORD = 3  # password, passwd, passphrase, db_pwd: any literal that is not a placeholder


# The last word of a name decides; words after it that only qualify the value
# (API_KEY_2, token_b64, password_prod) are dropped first.
_TRAILING = frozenset({
    "value", "b64", "base64", "encoded", "enc", "raw", "plain", "plaintext", "str", "string", "prod",
    "production", "dev", "development", "staging", "stage", "test", "live", "old", "new", "current",
    "override", "default", "primary", "secondary", "v1", "v2", "v3", "hex", "bytes", "literal",
    "base",  # Rails' secret_key_base
})
# "password" in other languages, as a config key or variable is spelled (ASCII, no accents).
FOREIGN_PASSWORDS = ("contrasena", "motdepasse", "kennwort", "wachtwoord", "parola", "haslo", "senha", "salasana",
                     "heslo", "jelszo", "sifre", "losenord", "adgangskode", "kodeord", "geslo", "lozinka", "parool")
_PASSWORD_HEADS = frozenset({"password", "passwd", "passphrase", "passcode", "passwort", "pword", "mnemonic", "psk",
                             "passkey", *FOREIGN_PASSWORDS})
_TOKEN_HEADS = frozenset({"token", "secret", "apikey", "credential", "credentials", "creds", "cred", "priv", "privkey",
                          "seckey", "secretkey", "authtok"})
SECRET_HEADS = _PASSWORD_HEADS | _TOKEN_HEADS | {"key", "auth", "authorization", "pwd", "pass", "pw"}

# Words before "key" that make it a secret (api_key, secret_key, private_key) ...
_KEY_QUALIFIERS = frozenset({
    "api", "secret", "access", "private", "master", "encryption", "encrypt", "crypt", "crypto", "signing",
    "sign", "license", "licence", "auth", "client", "app", "application", "service", "account",
    "subscription", "shared", "hmac", "jwt", "session", "consumer", "bot", "admin", "root", "webhook",
    "deploy", "deployment", "personal", "server", "storage", "write", "security", "integration",
    "partner", "merchant", "developer", "aes", "cipher", "decryption", "signature", "ingest",
    "management", "mgmt", "rest", "sdk", "live", "prod", "user", "project", "org", "organization",
    "workspace", "team", "cloud", "search", "maps", "speech", "vision",
    "translator", "openai", "azure", "cognitive", "function", "host", "instance",
})
# ... and words that make a key, token or secret something else entirely.
_NOT_SECRET_QUALIFIERS = frozenset({
    "sort", "foreign", "cache", "cached", "partition", "row", "range", "group", "lookup", "dict", "map",
    "hot", "short", "shortcut", "idempotency", "idempotent", "routing", "object", "bucket", "public",
    "pub", "publishable", "composite", "unique", "index", "cluster", "shard", "order", "sequence",
    "natural", "surrogate", "join", "field", "attr", "column", "table", "entry", "item", "record",
    "dedupe", "dedup", "lock", "mutex", "event", "message", "cursor", "page", "next", "prev",
    "previous", "continuation", "pagination", "sync", "translation", "i18n", "locale", "label", "enum",
    "registry", "music", "answer", "color", "colour", "theme", "design", "css", "max", "min", "num",
    "number", "total", "count", "eos", "bos", "pad", "unk", "sep", "cls", "mask", "special", "stop",
    "end", "start", "begin", "first", "last", "cancellation", "cancel", "progress", "lexer", "lex",
    "parse", "parser", "word", "input", "output", "prompt", "completion", "reasoning", "ast", "syntax",
    "grammar", "char", "eof", "newline", "indent", "dedent", "image", "audio", "video", "text",
    "santa", "ingredient", "sort_key", "dataclass", "typing", "type", "csrf_exempt", "keyboard",
    "hash", "react", "list", "sorting", "ordering", "metadata", "meta", "doc", "docs", "example",
    "sample", "dummy", "fake", "mock", "placeholder",
})
# Qualifiers that make a key something else (a cluster key, a cache key) but leave a
# password one: a cluster password, a cache password, a registry password.
_KEY_ONLY_QUALIFIERS = frozenset({
    "sort", "foreign", "cache", "cached", "partition", "row", "range", "group", "lookup", "dict", "map", "hot",
    "short", "shortcut", "idempotency", "idempotent", "routing", "object", "bucket", "composite", "unique",
    "index", "cluster", "shard", "order", "sequence", "natural", "surrogate", "join", "entry", "item", "record",
    "dedupe", "dedup", "lock", "mutex", "event", "message", "cursor", "page", "next", "prev", "previous",
    "continuation", "pagination", "sync", "registry", "music", "answer", "color", "colour", "theme", "design",
    "text",  # ClearTextPassword (NuGet): a text key is no secret, a clear-text password is one
})
_FILE_EXTENSIONS = frozenset({
    "py", "pyi", "js", "mjs", "cjs", "ts", "tsx", "jsx", "json", "yaml", "yml", "toml", "ini", "cfg", "conf",
    "env", "txt", "md", "rst", "rb", "go", "rs", "java", "kt", "swift", "c", "h", "cc", "cpp", "hpp", "cs",
    "php", "sh", "bash", "zsh", "lock", "log", "pem", "crt", "cer", "der", "p12", "pfx", "jks", "html",
    "css", "scss", "vue", "svelte", "sql", "xml", "gradle", "properties", "tf", "tfvars", "hcl", "lua",
    "ex", "exs", "erl", "scala", "dart", "m", "mm", "pl", "r", "ipynb", "csv", "tsv", "gpg", "asc", "pub",
    "key", "bak", "orig", "tmp", "example", "sample", "dist", "template", "tpl", "j2", "cache",
})
# storepass, keypass (keytool), sshpass, rootpass: a password; bypass, compass: no.
_PASS_QUALIFIERS = frozenset({"store", "key", "ssh", "root", "admin", "db", "user", "src", "dest", "new", "old", "mail",
                              "smtp", "ftp", "sudo", "trust", "login", "web", "vnc", "rpc", "bind", "ldap", "require",
                              "master", "remote", "local", "imap", "pop", "proxy", "sasl", "vpn", "wifi", "server",
                              "client", "app", "api", "auth", "sftp", "ssl", "tls", "wpa", "radius"})
# masterauth (Redis), proxyauth, smtpauth: "auth" glued to what it authenticates.
_AUTH_QUALIFIERS = frozenset({"master", "proxy", "smtp", "basic", "http", "ldap", "db", "admin", "root", "upstream"})
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_KEY_SEEDS = frozenset({"key", "private", "signing", "wallet", "master", "secret", "node", "validator"})


def _qualifiers(word: str, depth: int = 0) -> bool:
    """`word` is one qualifier of a password or two glued (store, srcstore, destkey)."""
    if word in _PASS_QUALIFIERS:
        return True
    return depth == 0 and any(word.startswith(q) and _qualifiers(word[len(q):], 1) for q in _PASS_QUALIFIERS)


def _split_compound(word: str) -> list[str]:
    """pgpassword -> pg password, apikey -> api key, authtoken -> auth token (not monkey)."""
    for head in ("password", "passwd", "passphrase", "token", "secret"):
        if word.endswith(head) and word != head:
            return [word[: -len(head)], head]
    if word.endswith("pass") and _qualifiers(word[:-4]):
        return [word[:-4], "pass"]  # storepass, srcstorepass (keytool): what the password opens, glued
    if word.endswith("pw") and word[:-2] in _PASS_QUALIFIERS:  # rootpw, bindpw (slapd, nslcd)
        return [word[:-2], "pw"]
    if word.endswith("key") and word[:-3] in _KEY_QUALIFIERS:
        return [word[:-3], "key"]
    if word.endswith("auth") and word[:-4] in _AUTH_QUALIFIERS:
        return [word[:-4], "auth"]
    return [word]


@lru_cache(maxsize=4096)
def name_strength(name: str, flag: bool = False, query: bool = False) -> Strength | None:
    """How strongly `name` (OPENAI_API_KEY, db.password, x-auth-token) marks its value as
    a secret; None when it does not (token_count, sort_key, refresh_token.py)."""
    segment = name.strip("-_.$@")
    if "." in segment:
        last = segment.rsplit(".", 1)[1]
        if last.lower() in _FILE_EXTENSIONS and not (last.lower() == "key" and segment.count(".") >= 2):
            return None  # server.key is a file; gradle.publish.key a setting
        segment = last
    words: list[str] = []
    for word in _WORDS.findall(segment):
        words.extend(_split_compound(word.lower()))
    while len(words) > 1 and (words[-1] in _TRAILING or words[-1].isdigit()):
        words.pop()
    if not words:
        return None
    if len(words) > 1 and words[-1] == "private" and words[-2] in SECRET_HEADS:
        words.pop()  # MJ_APIKEY_PRIVATE: the private half of a key pair
    if len(words) > 1 and words[-2] + words[-1] in ("passphrase", "password", "passwd"):
        words[-2:] = [words[-2] + words[-1]]  # pass_phrase, pass-word: one word written apart
    head, qualifiers = words[-1], words[:-1]
    if head == "pat":  # a personal access token: GITHUB_PAT, ASANA_PAT (a bare "pat" is a name)
        return Strength.TOKEN if qualifiers else None
    if head in ("sig", "signature"):
        return Strength.TOKEN if query else None
    if head == "id" and (qualifiers[-2:] in (["private", "key"], ["access", "key"], ["secret", "key"])
                         or qualifiers[-1:] == ["secret"]):
        # private_key_id, accessKeyId: the id of a key, half of the credential, when random;
        # a secret_id (Vault AppRole, Tencent SecretId) is the secret itself
        if any(q in _NOT_SECRET_QUALIFIERS for q in qualifiers):
            return None
        return Strength.TOKEN if qualifiers[-1] == "secret" else Strength.WEAK
    if head == "seed" and not _KEY_SEEDS.isdisjoint(qualifiers):
        return Strength.WEAK  # SIGNING_KEY_SEED, wallet_seed: a key's seed, when random (not a test's seed=42)
    if head not in SECRET_HEADS:
        return None
    if head != "key":  # pub_key, pubkey: a public key; PUB_TOKEN (a package registry's): no public thing
        qualifiers = [q for q in qualifiers if q != "pub"]
    if any(q in _NOT_SECRET_QUALIFIERS for q in qualifiers) and not (
            head in _PASSWORD_HEADS and all(q in _KEY_ONLY_QUALIFIERS or q not in _NOT_SECRET_QUALIFIERS
                                            for q in qualifiers)):
        return None
    if head in _PASSWORD_HEADS:
        return Strength.PASSWORD
    if head in ("pwd", "pw", "pass"):
        # PWD is the shell's working directory, `pass` a Python keyword: only db_pwd, --pass;
        # a bare PWD= (ODBC) or Pwd= (a connection string) only with a random-looking value.
        if qualifiers or flag:
            return Strength.PASSWORD
        return Strength.WEAK if head == "pwd" else None
    if head == "key":
        if any(q in _KEY_QUALIFIERS for q in qualifiers) or "api" in qualifiers:
            return Strength.TOKEN
        return Strength.WEAK
    if head in ("auth", "authorization"):
        return Strength.WEAK
    return Strength.TOKEN


def shannon(value: str) -> float:
    """Bits per character of `value`'s own character distribution."""
    if not value:
        return 0.0
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in Counter(value).values())


_PLACEHOLDER = re.compile(
    r"""(?:
        \$\{\{.*\}\}            # ${{ secrets.TOKEN }}
      | \$\{?[A-Za-z_][A-Za-z0-9_]*(?::?[-=?+][^}]*)?\}?   # $TOKEN ${TOKEN} ${TOKEN:-x}
      | \$\(.*\)?               # $(pass show x)
      | \$\{[A-Za-z_][\w.]*\}    # ${session.accessToken}: a template's reference
      | \$env:[A-Za-z_]\w*      # PowerShell's $env:NAME
      | \{\{.*\}\}?             # {{ token }}
      | \{[A-Za-z_][\w.]*\}     # {token}
      | %\(?\w*\)?s | %\w+%     # %s %(pw)s %API_KEY%
      | <[^<>]*>?               # <your-key>
      | \[[^\]]*\]?             # [REDACTED] [your key]
      | [*xX.•·…#_?-]{3,}       # ****, xxxx, ...
      | \#[0-9a-fA-F]{3,8}      # a colour
      | (?:env|file|vault|secret|op|ssm|arn):.*   # env:NAME, op://, arn:aws:...
    )""",
    re.VERBOSE,
)
_PLACEHOLDER_WORDS = ("your", "example", "placeholder", "changeme", "change_me", "change-me", "changeit",
                      "redacted", "dummy", "sample", "insert", "replace", "foobar", "lorem", "notreal",
                      "not_a_real", "fake", "xxxx", "****", "...", "…", "<", ">", "todo", "fixme",
                      "secret_here", "token_here", "key_here", "goes_here", "here")
_BARE_WORDS = frozenset({
    "null", "none", "nil", "true", "false", "yes", "no", "on", "off", "undefined", "str", "string", "int",
    "integer", "bool", "boolean", "bytes", "any", "optional", "secretstr", "text", "varchar", "char",
    "object", "number", "float", "list", "dict", "required", "hidden", "masked", "empty", "unset",
    "default", "auto", "env", "file", "prompt", "stdin", "inherit", "password", "passwd", "pass", "pwd",
    "secret", "secrets", "token", "key", "apikey", "api_key", "user", "username", "foo", "bar", "baz",
    "qux", "value", "values", "mypassword", "mysecret", "mytoken", "yourpassword", "bearer", "basic", "digest", "none_", "redacted", "sensitive",
    "confidential", "private", "public", "local", "remote", "present", "missing", "set", "notset",
    "invalid", "valid", "expired", "revoked", "ok", "na", "tbd", "self", "this", "cls", "args", "kwargs",
    "config", "settings", "options", "os", "env_var", "environ", "getenv", "secret_key", "access_key",
})
# Words prose and code put after "password:" / "password =" that are no password.
_PROSE_WORDS = frozenset({
    "please", "enter", "entered", "change", "changed", "forgot", "forgotten", "reset", "required",
    "optional", "incorrect", "invalid", "expired", "unknown", "hidden", "hashed", "encrypted", "decrypted",
    "request", "response", "result", "params", "kwargs", "string", "secret", "unused", "missing",
    "provided", "supplied", "should", "cannot", "before", "after", "always", "never", "masked",
    "protected", "managed", "stored", "removed", "deleted", "updated", "generated", "random", "strong",
    "values", "settings", "config", "options", "prompt", "stdin", "nullable", "notnull",
    "bcrypt", "argon2", "argon2id", "scrypt", "pbkdf2", "sha256", "sha512", "plaintext", "cleartext",
})
_SECRET_WORDS = ("password", "passwd", "pwd", "pass", "secret", "token", "key", "auth", "cred")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_LONGEST_PASSWORD = 256
_BASE64_BLOB = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_HASH_PREFIX = re.compile(r"(?i)(?:sha1|sha224|sha256|sha384|sha512|md5|blake2b|blake3|h1|xxh64)[:=-]")
_NUMBER = re.compile(r"[-+]?\d+(?:[.,_]\d+)*(?:[eE][-+]?\d+)?[a-zA-Z%]{0,3}")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOTTED = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|->|::|\?\.)[A-Za-z_$][A-Za-z0-9_$]*)+")
_PARTS = re.compile(r"[_\-. /]+")
_CHUNKS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
_VOWELS = frozenset("aeiouyAEIOUY")
_PATH = re.compile(r"(?:~|\.{1,2})?/[^\s]*|[A-Za-z]:\\.*|.*\.(?:json|ya?ml|pem|key|txt|env|toml|ini|cfg|conf|"
                   r"p12|pfx|jks|crt|p8|gpg|asc|der|keystore|kdbx)")


def wordy(value: str) -> bool:
    """Words joined by _ - . / or camel case, at most a short number at the end:
    created_at, createdAt, my-db-secret, user2. Identifiers and slugs, not secrets."""
    parts = [p for p in _PARTS.split(value) if p]
    if not parts:
        return False
    parts[-1] = parts[-1].rstrip("0123456789") if len(parts[-1].lstrip("0123456789")) > 0 else parts[-1]
    if len(value) - len("".join(_PARTS.split(value))) > len(value) / 2:
        return False
    for part in parts:
        if not part.isalpha() or not part.isascii():
            return False
        chunks = _CHUNKS.findall(part)
        if len(chunks) > 1 and (min(map(len, chunks)) < 2 or len(part) / len(chunks) < 3):
            return False
        if any(len(c) > 5 and not _VOWELS & set(c) for c in chunks):
            return False
    return len(value) - len(value.rstrip("0123456789")) <= 2


# user@host:port/db, me@example.com: an address where a description stands, not a password
_ADDRESS = re.compile(r"[\w.+-]+@[A-Za-z][\w-]*(?:\.[\w-]+)*(?:(?:\.[A-Za-z]{2,}|:\w+|/)\S*)")


def mixed_case_random(value: str) -> bool:
    """Letters whose case changes at random (pwGGspFumtAX, QevSeQVbLx): cut where the
    case changes, they fall into more pieces than a third of their length; a name made
    of words (JavaScript, XMLHttpRequest, OAuthToken) falls into fewer."""
    n = len(value)
    return n >= 8 and value.isalpha() and value.isascii() and 3 * len(_CHUNKS.findall(value)) > n \
        and not value.isupper() and not value.islower()


_DIGIT_RUNS = re.compile(r"\d+")


def camel_words(value: str) -> bool:
    """Ed25519PrivateKey, PKCS7PrivateKeyTypes, SecretStr: a type or class name, made of
    capitalised words (digits allowed between them), not a random token."""
    value = value.lstrip("_")
    if not _IDENTIFIER.fullmatch(value) or not value[0].isupper() or len(_DIGIT_RUNS.findall(value)) > 1:
        return False  # Xeb08NwgumCq6Gqo: digits scattered through it, no type's name
    chunks = _CHUNKS.findall(value)
    words = [c for c in chunks if len(c) >= 3 and c[0].isupper() and c[1:].islower() and _VOWELS & set(c)]
    letters = sum(c.isalpha() for c in value)
    # Random capitals cut noise into "words" too (VZiwAavyUTkiZp: V Ziw Aavy U Tki Zp); a
    # name has at most two stray pieces of one or two letters (MyAppKeyV2).
    stray = sum(len(c) <= 2 and not c.isupper() or len(c) == 1 for c in chunks)
    return len(words) >= 2 and sum(map(len, words)) >= 0.6 * letters and stray <= 2


def is_placeholder(value: str) -> bool:
    """`<your-key>`, `${API_KEY}`, `sk-...`, `xxxx`, `your_token_here`, `[REDACTED:x]`."""
    if _PLACEHOLDER.fullmatch(value):
        return True
    lowered = value.lower()
    if any(word in lowered for word in _PLACEHOLDER_WORDS):
        # A real random token that happens to contain "here" keeps its randomness.
        letters = sum(c.isalpha() for c in value)
        return not looks_random(value) or letters / len(value) > 0.8 and "xxxx" in lowered
    lowered = lowered.strip("'\"")
    return lowered in _BARE_WORDS or _TYPE_MARKS.sub("", lowered) in _BARE_WORDS


# A type's marks in a schema or a signature: string?, String!, string[], str | None
_TYPE_MARKS = re.compile(r"(?:\?|!|\[\]|\s{0,2}\|\s{0,2}(?:null|none|undefined))+\Z")


def _is_reference(value: str) -> bool:
    """A name standing for the secret, not the secret: db_password, GITHUB_TOKEN, self.key,
    challengePassword. (A lone lower-case word is not one: POSTGRES_PASSWORD=mysecretpassword.)"""
    if len(value) >= 20 and any(c.isdigit() for c in value) and looks_random(value, 20):
        return False  # E3pyIgKpaUnArl63Xyk…: capitals inside noise make no camelCase name
    if value[-1:] in ("!", "?") and _DOTTED.fullmatch(value, 0, len(value) - 1):
        value = value[:-1]  # process.env.API_KEY!, env.token?: a non-null assertion, an unwrap
    if _DOTTED.fullmatch(value):
        parts = re.split(r"\.|->|::|\?\.", value.strip("$"))
        return wordy(parts[-1]) or camel_words(parts[-1]) or all(wordy(p) or len(p) <= 2 for p in parts)
    if camel_words(value):
        return not mixed_case_random(value)  # SecretStr is a name; EYucoogYwnCrjV noise
    if _IDENTIFIER.fullmatch(value) and wordy(value):
        if value.isupper() and "_" in value:
            return True
        lowered = value.lower()
        compound = "_" in value or (value[0].islower() and any(c.isupper() for c in value))
        return compound and any(word in lowered for word in _SECRET_WORDS)
    return False


_SEPARATORS = re.compile(r"[-_./+=:]+")


def _mostly_words(value: str) -> bool:
    """Separated parts that read as words (letters with a vowel, lower-case or capitalised,
    a short number at most) make up most of `value`."""
    parts = [p for p in _SEPARATORS.split(value) if p]
    if len(parts) < 2:
        return False
    word_chars = 0
    for part in parts:
        letters = part.rstrip("0123456789")
        if (len(part) - len(letters) <= 2 and len(letters) >= 3 and letters.isalpha()
                and (letters.islower() or letters.istitle() or letters.isupper()) and _VOWELS & set(letters)):
            word_chars += len(part)
    return word_chars >= 0.6 * sum(map(len, parts))


def looks_random(value: str, min_length: int = 16) -> bool:
    """Random enough for a secret: several character classes, no words, high entropy."""
    n = len(value)
    if n < min_length or wordy(value):
        return False
    digits = sum(c.isdigit() for c in value)
    upper = sum(c.isupper() for c in value)
    lower = sum(c.islower() for c in value)
    if len(set(value)) < min(n, 16) * 0.5:  # aaaaaaaa, 00000000, abababab
        return False
    if sum(not c.isalnum() for c in value) > n / 4:  # __f2py_cb_#name#, a.b.c.d: structure, not noise
        return False
    if _HEX.fullmatch(value):
        return n >= 16 and digits > 0 and digits < n
    if _mostly_words(value):  # types-auth0-python, my-app-secret-v2
        return False
    entropy = shannon(value)
    if digits and (upper or lower):
        return entropy >= min(3.0, math.log2(n) * 0.75)
    return upper > 0 and lower > 0 and n >= 20 and entropy >= 3.5


def value_is_secret(value: str, strength: Strength, *, quoted: bool, literal: bool) -> bool:
    """Is `value`, given to a name of `strength`, a secret?

    `quoted`: the value was in quotes. `literal`: the context makes it a literal rather
    than code (NAME=value in a shell or .env line, a flag, a header)."""
    if not value or value.startswith("[REDACTED") or "://" in value:
        return False
    if is_placeholder(value) or _HASH_PREFIX.match(value) or _is_reference(value) and not quoted:
        return False
    if quoted and _is_reference(value) and any(w in value.lower() for w in _SECRET_WORDS) and not _DOTTED.fullmatch(value):
        return False  # "challengePassword", "db_password": a field's name in quotes
    if _PATH.fullmatch(value) and not looks_random(value.replace("/", "")):
        return False
    if _NUMBER.fullmatch(value):
        return strength is Strength.PASSWORD and len(value) >= 4 and value.isdigit()
    if strength is Strength.WEAK:
        return looks_random(value, 16) and not _UUID.fullmatch(value) and not names_an_object(value, one_word=True)
    if strength is Strength.TOKEN:
        if len(value) < (6 if quoted or literal else 8) or wordy(value) or " " in value.strip():
            return False
        has_digit = any(c.isdigit() for c in value)
        has_alpha = any(c.isalpha() for c in value)
        return (has_digit and has_alpha) or looks_random(value, 12) or (
            len(value) >= 16 and any(c.isupper() for c in value) and any(c.islower() for c in value))
    # A password: any literal, but not a lone word where code or prose could put one, nor
    # base64 longer than anyone types (a sealed or encrypted value: its key is elsewhere).
    if len(value) < 3 or len(value) > _LONGEST_PASSWORD and _BASE64_BLOB.fullmatch(value):
        return False
    if quoted or literal:
        return not (_is_reference(value) and not quoted)
    if _ADDRESS.fullmatch(value):
        return False
    if value.isalpha():  # "password: supersecret" (YAML) yes, "Password: enter it twice" no
        return len(value) >= 6 and value.islower() and value not in _PROSE_WORDS or mixed_case_random(value)
    # created_at, newPassword: a name; hunter2, Tr0ub4dor&3: a password
    return not (_IDENTIFIER.fullmatch(value) and wordy(value) and not any(c.isdigit() for c in value))


_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = {c: i for i, c in enumerate(_B58)}


def base58check(token: str) -> bytes | None:
    """The payload of a base58check string whose checksum holds, else None."""
    number = 0
    for c in token:
        digit = _B58_INDEX.get(c)
        if digit is None:
            return None
        number = number * 58 + digit
    data = number.to_bytes((number.bit_length() + 7) // 8, "big")
    data = b"\0" * (len(token) - len(token.lstrip("1"))) + data
    payload, checksum = data[:-4], data[-4:]
    if len(payload) < 1 or hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4] != checksum:
        return None
    return payload


def wallet_key(token: str) -> bool:
    """A Bitcoin WIF private key or a BIP-32 extended private key (xprv/tprv/yprv/zprv)."""
    if len(token) in (51, 52) and token[0] in "5KLc9":
        payload = base58check(token)
        return payload is not None and payload[0] in (0x80, 0xEF)
    if len(token) == 111 and token[1:4] == "prv":
        return base58check(token) is not None
    return False


_LETTERS = bytes(i if 97 <= i <= 122 or i >= 128 else 32 for i in range(256))


def text_words(data: bytes) -> frozenset[bytes]:
    """The words of a lower-cased text given as UTF-8 `data` (runs of letters): the rules
    that start from a word (password, cookie, htpasswd …) look here first, one translate
    and one split for all of them, and scan the text only for the words it holds."""
    return frozenset(data.translate(_LETTERS).split())


_NOT_LETTERS = re.compile(r"[^a-z\x80-\U0010ffff]+")
_last_blob: list[tuple[frozenset[bytes], Any]] = []  # the word set looked at last, by identity
_last_foreign: list[tuple[frozenset[bytes], Any]] = []


def _once_per(words: frozenset[bytes], last: list[tuple[frozenset[bytes], Any]],
              make: Callable[[frozenset[bytes]], Any]) -> Any:
    """make(words), made once per word set: `last` keeps the one made last."""
    for seen, made in last:
        if seen is words:
            return made
    made = make(words)
    last[:] = [(words, made)]
    return made


def word_blob(words: frozenset[bytes]) -> bytes:
    """The distinct `words` joined by spaces (made once per word set): a run of letters
    stands in the text exactly when it stands in here, a scan of a few KB, not of the text."""
    return bytes(_once_per(words, _last_blob, b" ".join))


def may_hold(words: frozenset[bytes], needle: bytes) -> bool:
    """Whether a text whose `words` these are may hold the lower-case ASCII `needle`:
    each run of letters of it inside one of the words (a needle of no letter: yes)."""
    blob = word_blob(words)
    return all(part in blob for part in _letter_runs(needle))


_LETTER_RUNS = re.compile(rb"[a-z]+")


@lru_cache(maxsize=4096)
def _letter_runs(needle: bytes) -> tuple[bytes, ...]:
    """The runs of letters of a needle: the rules ask of the same few needles, text after text."""
    return tuple(_LETTER_RUNS.findall(needle))
_last_scans: list[tuple[bytes, dict[bytes, list[int]]]] = []  # the texts scanned last, by identity


def scan(data: bytes, needle: bytes) -> list[int]:
    """Every offset of `needle` in `data`, overlapping ones too, in order. Each needle is
    looked for once per text: several rules start from the same word (auth, login)."""
    found = next((known for seen, known in _last_scans if seen is data), None)
    if found is None:
        found = {}
        _last_scans[:] = [*_last_scans[-1:], (data, found)]
    places = found.get(needle)
    if places is None:
        places = _within_found(data, needle, found)
        if places is None:
            places = []
            at = data.find(needle)
            while at >= 0:
                places.append(at)
                at = data.find(needle, at + 1)
        found[needle] = places
    return places


_DERIVED_MAX = 1000  # offsets of a part worth checking one by one rather than reading the text again


def _within_found(data: bytes, needle: bytes, found: dict[bytes, list[int]]) -> list[int] | None:
    """The offsets of `needle` read off those of a part of it found already (authenticate
    off auth, connect off conn): each occurrence holds the part at one offset. None when
    no part was found, or one found too often to be worth it."""
    best: tuple[bytes, list[int]] | None = None
    for part, places in found.items():
        if part in needle and len(places) <= _DERIVED_MAX and (best is None or len(places) < len(best[1])):
            best = (part, places)
    if best is None:
        return None
    k = needle.index(best[0])
    return [at - k for at in best[1] if at >= k and data.startswith(needle, at - k)]


def scan_apart(data: bytes, needle: bytes) -> list[int]:
    """`scan`, each occurrence starting after the previous one ends (as repeated finds
    from the end of the last one give them)."""
    places = scan(data, needle)
    if len(needle) < 2 or not any(needle.startswith(needle[-k:]) for k in range(1, len(needle))):
        return places  # no occurrence can overlap another
    out: list[int] = []
    for at in places:
        if not out or at >= out[-1] + len(needle):
            out.append(at)
    return out


def inside_words(words: frozenset[bytes], needles: Iterable[str]) -> list[str]:
    """The lower-case `needles` that may occur in the text whose `words` these are: each
    run of letters of a needle inside one of the words (a scan of the distinct words,
    a few KB, instead of the whole text)."""
    blob = word_blob(words)
    return [needle for needle, first, rest in _letter_parts(needles if isinstance(needles, tuple) else tuple(needles))
            if first in blob and (not rest or all(p in blob for p in rest))]


@lru_cache(maxsize=256)
def _letter_parts(needles: tuple[str, ...]) -> tuple[tuple[str, bytes, tuple[bytes, ...]], ...]:
    """Each needle with its first run of letters and the others, in UTF-8: split once, not
    once a text (b"" when it has none: every text may hold it)."""
    out = []
    for needle in needles:
        parts = [p.encode() for p in _NOT_LETTERS.split(needle) if p] or [b""]
        out.append((needle, parts[0], tuple(parts[1:])))
    return tuple(out)


_ENDINGS = (b"", b"s", b"es", b"si", b"n", b"en", b"a", b"e", b"i", b"u", b"et", b"er", b"ul", b"ta", b"y",
            "ı".encode(), "ü".encode(), "ın".encode(),  # passwords, şifresi (Turkish: its password), salasanan
            b"m", b"ni", b"nsa", b"mme", b"nya", b"ku", b"mu")  # possessives: şifrem, salasanani, sandinya


_Phrase = tuple[str, tuple[frozenset[bytes], ...], frozenset[str]]
WordIndex = tuple[dict[bytes, tuple[str, ...]], tuple[_Phrase, ...], "re.Pattern[str] | None", frozenset[bytes], bool]


_ASCII_LETTERS = re.compile(r"[a-z]+")


def word_index(candidates: tuple[str, ...]) -> WordIndex:
    """The one-word ASCII candidates by each form of theirs; the others (phrases, other
    scripts) with the forms of their ASCII parts and their other parts; a pattern that
    finds those other parts; every form that can make a candidate present, and whether
    some candidate is in another script only."""
    index: dict[bytes, tuple[str, ...]] = {}
    others = []
    scripts: set[str] = set()
    for candidate in candidates:
        if " " not in candidate and candidate.isascii() and candidate.isalpha():
            for ending in _ENDINGS:
                form = candidate.encode() + ending
                index[form] = (*index.get(form, ()), candidate)
            continue
        # a text's words are runs of letters: 2fa-code, wi-fi and sign-in are found by theirs
        parts = [run for p in candidate.split() for run in (_ASCII_LETTERS.findall(p) if p.isascii() else [p])]
        forms = tuple(frozenset(p.encode() + e for e in _ENDINGS) for p in parts if p.isascii())
        foreign = frozenset(p for p in parts if not p.isascii())
        scripts |= foreign
        others.append((candidate, forms, foreign))
    pattern = re.compile("|".join(map(re.escape, sorted(scripts, key=len, reverse=True)))) if scripts else None
    gate = frozenset(index).union(*(forms[0] for _, forms, _ in others if forms))
    return index, tuple(others), pattern, gate, any(not forms for _, forms, _ in others)


def present_words(words: frozenset[bytes], candidates: WordIndex) -> list[str]:
    """The candidates (lower-case words or phrases, `word_index`ed once) that the text
    whose `words` these are may hold: each part a word of the text (or one with a short
    ending), a part in another script found inside one of the text's words (密码是 holds 密码)."""
    index, others, pattern, gate, script_only = candidates
    if words.isdisjoint(gate) and not (script_only and not word_blob(words).isascii()):
        return []
    found: set[str] = set()
    if len(words) < len(index):
        for word in words:
            found.update(index.get(word, ()))
    else:
        for form, names in index.items():
            if form in words:
                found.update(names)
    scripts: set[str] | None = None
    for candidate, forms, foreign in others:
        if forms and any(words.isdisjoint(f) for f in forms):
            continue
        if foreign:
            if scripts is None:
                text = _foreign_text(words)
                scripts = set(pattern.findall(text)) if pattern and text else set()
            if not foreign <= scripts:
                continue
        found.add(candidate)
    return sorted(found)


def _foreign_text(words: frozenset[bytes]) -> str:
    """The words outside ASCII, decoded and joined by spaces: made once per word set."""
    return str(_once_per(words, _last_foreign,
                         lambda ws: " ".join(w.decode("utf-8", "ignore") for w in ws if not w.isascii())))


# Words a phrase is never found by: in any text they are everywhere ("ssh into" by "ssh").
_COMMON_PARTS = frozenset({b"in", b"into", b"on", b"onto", b"as", b"to", b"with", b"of", b"is", b"the", b"a", b"user",
                           b"use", b"password"})


def find_words(lowered: str, data: bytes, words: Iterable[str]) -> list[tuple[int, str]]:
    """(offset in `lowered`, word) of every occurrence of `words`, in order. Found in the
    UTF-8 `data` of `lowered` (a byte scan, twice as fast as one over a text that holds
    a non-ASCII character), then turned into character offsets in one pass."""
    if not words:
        return []
    # A phrase is found by its longest word, one scan for all the phrases that share it
    # ("door code", "alarm code", "access code": one scan for "code").
    by_anchor: dict[bytes, list[tuple[bytes, int, str]]] = {}
    shared = Counter(p for word in words for p in set(word.encode().split(b" ")) if " " in word)
    for word in words:
        encoded = word.encode()
        parts = encoded.split(b" ")
        # the part most phrases share (alarm code, door code: one scan for "code"), else the longest
        anchor = encoded if not (parts[0] and parts[-1]) else max(  # " -b ": by itself
            [p for p in parts if p not in _COMMON_PARTS] or parts, key=lambda p: (min(shared[p], 3), len(p)))
        by_anchor.setdefault(anchor, []).append((encoded, encoded.index(anchor), word))
    found = []
    for anchor, phrases in by_anchor.items():
        if len(phrases) == 1 and phrases[0][0] == anchor:
            word = phrases[0][2]
            found += [(at, word) for at in scan_apart(data, anchor)]
            continue
        for at in scan_apart(data, anchor):
            for encoded, offset, word in phrases:
                if data.startswith(encoded, at - offset) and at >= offset:
                    found.append((at - offset, word))
    found.sort(key=lambda f: (f[0], -len(f[1])))
    if len(data) == len(lowered):
        return found
    return list(zip(char_offsets(data, [at for at, _ in found]), [word for _, word in found]))


# UTF-8 continuation bytes (10xxxxxx) as "c", every other byte as ".".
_CONTINUATION = bytes(ord("c") if 0x80 <= i < 0xC0 else ord(".") for i in range(256))
_Runs = tuple[bytes, list[int], list[int]]
_last_runs: list[_Runs] = []  # the texts looked at last, by identity (equal texts compare slowly)


def _continuations(data: bytes) -> tuple[list[int], list[int]]:
    """Where each run of UTF-8 continuation bytes ends, and how many precede that end."""
    for seen, ends, counts in _last_runs:
        if seen is data:
            return ends, counts
    ends, counts, total = [], [], 0
    marks = data.translate(_CONTINUATION)
    at = marks.find(b"c")
    while at >= 0:
        end = marks.find(b".", at)
        end = len(marks) if end < 0 else end
        total += end - at
        ends.append(end)
        counts.append(total)
        at = marks.find(b"c", end)
    _last_runs[:] = [*_last_runs[-1:], (data, ends, counts)]  # the text and its UTF-8, lower-cased
    return ends, counts


def char_offsets(data: bytes, places: list[int]) -> list[int]:
    """`char_offset` of each of `places` (byte offsets in ascending order), in one walk."""
    ends, counts = _continuations(data)
    out = []
    i, n, before = 0, len(ends), 0
    for at in places:
        while i < n and ends[i] <= at:
            before = counts[i]
            i += 1
        out.append(at - before)
    return out


def char_offset(data: bytes, at: int) -> int:
    """The offset in characters of the byte offset `at` of UTF-8 `data` (at a character's
    first byte): the bytes before it less their continuation bytes. The runs of those are
    found once per text, so each offset costs a binary search."""
    ends, counts = _continuations(data)
    i = bisect_right(ends, at)
    return at - (counts[i - 1] if i else 0)
