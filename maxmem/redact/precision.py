"""A last look at what the low-precision rules found: does the value itself read as a secret?

Most rules know a secret by what names it or by a vendor's prefix. Three families know it
by its randomness alone, or by a secret word somewhere before it, and those are the ones
that ordinary text trips, whatever the source:

- a long run of random-looking characters with no name (`long random token`) and a
  token behind a short lower-case word (`token with a vendor prefix`): identifiers are
  long too (Frozen_CaseSensitivityTestPEP302, tokenize_tests-utf8-coding-cookie,
  gpt-4o-mini-realtime-preview-2024-12-17, MS_Mac_OE_3071477847_720252_MIME_Part);
- the word after a secret word in prose, a command's positional argument, a call's
  argument: in code that is a type or an expression (`key: Optional[bytes]`,
  `password: Optional[HiddenText]`, `key: Callable[[_T], …]`).

The check is one structure model, not a list: the value is cut where its separators,
its case and its digits change, and each piece is judged as a word (pronounceable:
letters with a vowel, lower-case, Capitalised or a short acronym, no long consonant
cluster), a number, or noise. A random token falls into short pieces and noise (a
capital or a digit every few characters); an identifier into words and numbers. A value
that starts with a name followed by `[`, `(` or `<` is code: a subscript, a call, a
generic type. What a rule found is kept unless the model says identifier or code.
"""

from __future__ import annotations

import re

__all__ = ["SECRET_PREFIX_WORDS", "named_as_identifier", "names_a_technology", "names_an_object", "patterned", "plausible", "reads_as_code", "reads_as_identifier", "reads_as_noise"]

# The rules whose value is judged by its look: their names, as each rule states them.
_RANDOM_RULES = ("long random token", "token with a vendor prefix")
_CONTEXT_RULES = ("value after '", "password given to a command by position", "password passed to a login call",
                  "password literal after its user", "password passed to a connection by position")

_PARTS = re.compile(r"[A-Za-z0-9]+")
_PIECES = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_HEX = re.compile(r"[0-9a-fA-F]+")
_VOWELS = frozenset("aeiouyAEIOUY")
_CLUSTER = re.compile(r"[^aeiouy]{4,}")  # four consonants in a row: rare in a word (strength has ngth)
_CODE = re.compile(r"[A-Za-z_][A-Za-z_.]{2,40}[!?]?[\[(<]")  # fetch_env!(…), valid?(…): Elixir's, Ruby's names
_ACRONYMS = ("http", "smtp", "ftp", "html", "xml", "sql", "ssh", "tcp", "dns", "pkcs", "ssl", "tls", "cfg", "src")
_NOISE_CLUSTER = re.compile(r"[^aeiouy]{5,}")  # five consonants in a row: no word has them (strength has four)
# What the words just before a random value call it when it is no secret: an identifier's
# nouns, a digest's algorithm, and the words that say public.
_NAME_REACH = 40
# The words, then at most four characters that join a name to its value (: = " ' and spaces).
_NAMED = re.compile(r"([A-Za-z0-9][\w .-]*?)[\s:=\"'`]{1,4}\Z")
_NAME_WORDS = re.compile(r"[A-Z]+[0-9]*(?![a-z])|[A-Z]?[a-z]+[0-9]*")
_IDENTIFIER_NOUNS = frozenset({
    "id", "ids", "identifier", "uuid", "guid", "hash", "digest", "checksum", "fingerprint", "sha", "sha1", "sha256",
    "sha384", "sha512", "md5", "blake2b", "blake3", "integrity", "etag", "nonce", "commit", "revision", "rev", "ref",
    "address", "addr", "wallet", "cid", "url", "uri", "path", "file", "filename", "name", "slug", "version", "challenge",
    "kid", "deployment", "build", "trace", "span", "cursor", "handle",
})
_SECRET_OWNERS = frozenset({"session", "sess", "secret", "token", "key", "access", "private", "auth", "api", "password"})
_PUBLIC_WORDS = frozenset({"public", "publishable", "pubkey", "pub"})
# A word's share of the letters, and the least number of words, for a value to read as an identifier.
_WORD_SHARE = 0.7
_MIN_WORDS = 2
# Random characters change case or class every two or three: their pieces are short; a
# name's pieces are words, four or five letters on average.
_PIECE_LETTERS = 3.5
_SNAKE_JOINS = 4


def _word(piece: str) -> bool:
    """A piece that reads as a word: three letters or more, a vowel, no long consonant
    cluster; lower-case, Capitalised, or capitals of five letters at most (an acronym)."""
    if len(piece) < 3 or not piece.isalpha() or _VOWELS.isdisjoint(piece):
        return False
    if piece.isupper():
        return len(piece) <= 6
    lowered = piece.lower()
    return not _CLUSTER.search(lowered) and (piece.islower() or piece[0].isupper() and piece[1:].islower())


def reads_as_identifier(value: str) -> bool:
    """Words and numbers joined by separators or case (a name, a slug, a file's stem),
    not a random token: words hold most of the letters, and no stretch of noise is left."""
    letters = words = noise = 0
    count = pieces = 0
    for part in _PARTS.findall(value):
        if len(part) >= 8 and _HEX.fullmatch(part) and not part.isdigit():
            noise += len(part)  # a digest: its letters make syllables (dce, fefd) by chance
            continue
        for piece in _PIECES.findall(part):
            if piece.isdigit():
                continue
            letters += len(piece)
            pieces += 1
            if _word(piece):
                words += len(piece)
                count += 1
            elif len(piece) > 2:
                noise += len(piece)
    # snake_case of four joins or more (N23_ossl_old_des_ks_struct4DOLLAR_10E) is structure by
    # itself: its short pieces (ks, 10E) are abbreviations, not noise
    snake = value.count("_") >= _SNAKE_JOINS
    return (count >= _MIN_WORDS and words >= _WORD_SHARE * letters and noise <= 4
            and (snake or letters >= _PIECE_LETTERS * pieces))


def reads_as_noise(value: str) -> bool:
    """Letters no word or acronym is made of, the way a generated password has them:
    a run of five or more small letters with no vowel or with five consonants in a row
    (gvbkq430, TulpfnzrWS), capitals too many for an acronym (NUNGEQJU57), letters and
    digits changing places four times or more (o9u2qkzk0wqm, PRX6PBH6TJ), or capitals
    scattered through small letters, a new piece every three letters (TkWPCYACnynZ). A name, a version or a tech term
    (argon2id, utf8mb4, HTTP2, python311) has none of these."""
    if len(value) < 8 or not value.isascii():
        return False
    for part in _PARTS.findall(value):
        classes = [c.isdigit() for c in part]
        if sum(a != b for a, b in zip(classes, classes[1:])) >= 4 and sum(classes) <= len(classes) - 4:
            return True
        letters = re.sub(r"[0-9]+", " ", part).split()
        for run in letters:
            pieces = _PIECES.findall(run)
            if len(run) >= 10 and len(pieces) >= 4 and len(run) < 3.3 * len(pieces):
                return True  # TkWPCYACnynZ: case changes every three letters (getElementById every 3.5)
            for piece in pieces:
                lowered = piece.lower()
                if (len(piece) >= 5 and not piece.isupper() and not lowered.startswith(_ACRONYMS)
                        and (_VOWELS.isdisjoint(piece) or _NOISE_CLUSTER.search(lowered))):
                    return True
                if piece.isupper() and len(piece) >= 7:
                    return True
    return False


# Algorithms, encodings, curves, platforms and versions: letters, then the digits of their name.
_TECH_NAME = re.compile(r"(?i)(?:sha|md|aes|rsa|utf|x|ed|blake|crc|argon|bcrypt|scrypt|pbkdf|chacha|des|hmac|ecdsa|"
                        r"p|secp|curve|base|win|windows|py|python|node|java|php|ubuntu|debian|centos|macos|ios|"
                        r"android|v|ipv|http|tls|ssl|mysql|postgres|pg|redis|es|ecma|iso|rfc|cve|gpt|llama|claude)\d")


def names_a_technology(value: str) -> bool:
    """sha256, utf8mb4, python311, Windows10, ipv6, rfc7519: a technology's name and its
    number, not a word and the digits a person adds to make a password (panda317532)."""
    return _TECH_NAME.match(value) is not None


def reads_as_code(value: str) -> bool:
    """A name followed by a bracket, a parenthesis or an angle bracket (Optional[str,
    Callable[[_T, os.environ.get(…, Vec<u8>): a type or an expression, not a secret. The
    name is letters, dots and underscores, and its pieces are words or short."""
    match = _CODE.match(value)
    if not match:
        return False
    pieces = _PIECES.findall(match.group(0))
    return any((_word(p) or _macro_word(p)) and len(p) >= 4 for p in pieces) and all(_word(p) or len(p) <= 2 or _macro_word(p)
                                                                  for p in pieces)


def _macro_word(piece: str) -> bool:
    """DEFAULT, LOOKUP: a word in the capitals of a macro's or a constant's name."""
    return piece.isupper() and len(piece) <= 12 and _word(piece.lower())


_PARTS_SPLIT = re.compile(r"[-_./]")
_UUID_END = re.compile(r"(.*?)[-_./]?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")
_ONE_CASE_HEX = re.compile(r"[0-9a-f]{12,128}|[0-9A-F]{12,128}")
_SHORT_PART = re.compile(r"[A-Za-z0-9]{1,13}")
_NAMING_WORDS = 2
# A vendor prefix's words that say secret (sk-, pat-, …_key_): they vouch for a UUID or a hex body.
SECRET_PREFIX_WORDS = frozenset({"sk", "pat", "secret", "key", "token", "api", "auth", "access", "private", "priv",
                                 "pw", "pass", "apikey", "tkn", "pwd", "sec", "rk"})
_SECRET_STEMS = ("secret", "token", "passw", "apikey", "private", "credential", "session")


def names_an_object(value: str, one_word: bool = False) -> bool:
    """An object's name that ends in its UUID or digest, not a vendor's token: words or short
    parts (a number, a region, a pod's ten-character hash), none saying secret, then a UUID
    (controller-7c9x2kq4mz-8fj2w_<uuid>, acf.p2-<number>-<uuid>), or three parts
    or more, two of them words, then a hex digest of one case
    (node-cache-Linux-x64-npm-<sha256>, assets-<account>-eu-west-1/<sha256>). A vendor's
    token has one long random body, a prefix that says secret (pat-na1-<uuid>), or a digest
    behind its vendor's word and mode alone (xapp-1-A0…-<digits>-<hex>, shippo_live_<hex>).
    A UUID behind one word alone (row-<uuid>, but also a vendor's sdk-<uuid>) counts only
    where the name or prefix has been judged already (`one_word`)."""
    uuid = _UUID_END.match(value)
    if uuid:
        head = [p for p in _PARTS_SPLIT.split(uuid.group(1)) if p]
        return len(head) >= (1 if one_word else 2) and all(_SHORT_PART.fullmatch(p) or p.isdigit() for p in head) and not _says_secret(head)
    parts = [p for p in _PARTS_SPLIT.split(value) if p]
    if len(parts) < 4 or not _ONE_CASE_HEX.fullmatch(parts[-1]) or parts[-1].isdigit():
        return False
    if not all(_SHORT_PART.fullmatch(p) or p.isdigit() for p in parts[:-1]) or _says_secret(parts[:-1]):
        return False
    words = sum(len(piece) >= 4 and not piece.isupper() and _word(piece) for p in parts[:-1] for piece in _PIECES.findall(p))
    return words >= _NAMING_WORDS


def _says_secret(parts: list[str]) -> bool:
    lowered = [p.lower() for p in parts]
    return any(p in SECRET_PREFIX_WORDS for p in lowered) or any(w in p for p in lowered for w in _SECRET_STEMS)


def named_as_identifier(text: str, start: int) -> bool:
    """Whether the words just before `start`, on its line, call the value what it is and
    not a secret: its last word an identifier's noun (a Doc id, sha256=, "challenge":,
    a commit, an address), or one of the two a word saying public (public key:)."""
    line = text.rfind("\n", max(0, start - _NAME_REACH), start) + 1
    named = _NAMED.search(text, max(line, start - _NAME_REACH), start)
    if not named:
        return False
    words = _NAME_WORDS.findall(named.group(1))
    if not words:
        return False
    last = [w.lower() for w in words[-2:]]
    if len(last) == 2 and last[0] in _SECRET_OWNERS:
        return False  # a session id, a secret's id, a token's hash: the secret itself
    return last[-1] in _IDENTIFIER_NOUNS or any(w in _PUBLIC_WORDS for w in last)


_PATTERN_MIN = 16  # shorter counting values (1234, 123456) are PINs people do use
_PATTERN_MAX = 4096  # a longer value is judged by the rule that found it (the check stays linear)
_PATTERN_UNIT = 32


def patterned(value: str) -> bool:
    """A value made by a rule, not drawn at random: a unit of 32 characters at most, repeated
    three times or more, or twice in hex (0x000…0, xxxx…, 0123456789abcdef0123456789abcdef,
    deadbeefdeadbeef), or counting with a fixed step, by
    character or by hex byte (abcdefghijklmnop, 000102…0e0f, 00112233…eeff): a placeholder,
    a mask or a test vector. A secret of sixteen characters or more never is."""
    core = value[2:] if value[:2] in ("0x", "0X") else value
    n = len(core)
    if n < _PATTERN_MIN or n > _PATTERN_MAX:
        return False
    hex_only = _HEX.fullmatch(core) is not None
    # a unit twice is a pattern only in hex (deadbeef…): a password typed twice
    # (Summer2024Summer2024) is still someone's password
    for period in range(1, min(_PATTERN_UNIT, n // 2 if hex_only else n // 3) + 1):
        if core[period:] == core[:n - period]:
            return True
    if _steps_evenly([ord(c) for c in core], 256):
        return True
    if n % 2 == 0 and hex_only:
        return _steps_evenly([int(core[i:i + 2], 16) for i in range(0, n, 2)], 256)
    return False


def _steps_evenly(numbers: list[int], modulo: int) -> bool:
    step = (numbers[1] - numbers[0]) % modulo
    return step != 0 and all((b - a) % modulo == step for a, b in zip(numbers, numbers[1:]))


def plausible(text: str, start: int, end: int, rule: str) -> bool:
    """Whether text[start:end], found by `rule`, may be a secret: False for a value made
    by a rule (`patterned`), and for the families judged here, when the value reads as an
    identifier or as code, or a random one is named as an identifier."""
    value = text[start:end]
    if patterned(value):
        return False
    if rule.startswith(_RANDOM_RULES):
        return not reads_as_identifier(value) and not named_as_identifier(text, start)
    if rule.startswith(_CONTEXT_RULES):
        return not reads_as_code(value)
    return True
