"""Passwords and keys that code gives to a call.

    server.login('alice@example.com', 'pw')               hmac.new(b'k3y…', msg, sha256)
    pymysql.connect('h', 'u', 'pw', 'db')                 @Value("pw") private String dbPassword;

The mechanism: the last string literal of a call whose name says it logs in or binds
(two literals or more: a user, then the password); a connection's literal of a password's
shape; the literal arguments of a keyed call (an HMAC, JWT signing, a cipher, password
hashing); an annotation's literal on a secret-named field; a user literal, then a password
literal, near a word about getting in; base64 of user:password.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .arguments import (
    offsets_of,
    pair_password,
    plain_word,
    secret_argument,
)
from .shapes import Hit, words_within
from .values import (
    Strength,
    camel_words,
    find_words,
    inside_words,
    looks_random,
    may_hold,
    name_strength,
    wordy,
)

__all__ = ["KEYED_CALL_WORDS", "annotation_hits", "call_hits", "key_call_hits", "pair_literal_hits"]


# server.login('user', 'pw'), ldap.simple_bind_s(dn, 'pw'), HTTPBasicAuth('u', 'pw'),
# DriverManager.getConnection(url, 'u', 'pw'), new NetworkCredential("u", "pw")
# The name searched for, and the whole words (of text_words) that hold it.
_CALL_WORDS = {"login": ("login",), "logon": ("logon",), "signin": ("signin",), "authenticate": ("authenticate",),
               "bind": ("bind",), "basicauth": ("basicauth", "httpbasicauth"), "digestauth": ("httpdigestauth",),
               "networkcredential": ("networkcredential",), "passwordauthentication": ("passwordauthentication",),
               "passwordcredentials": ("usernamepasswordcredentials",), "getconnection": ("getconnection",),
               "pdo": ("pdo",)}  # new PDO($dsn, 'user', 'pw')
_CALL_ANCHORS = frozenset(f.encode() for forms in _CALL_WORDS.values() for f in forms)
_CALL_OPEN = re.compile(r"\w{0,24}\s{0,4}\(")
_LITERAL = re.compile(r"""\s{0,8}(?:\w{1,32}\s{0,4}=\s{0,4})?(?P<q>["'])(?P<v>(?:\\.|(?!(?P=q))[^\\\n]){0,256})(?P=q)\s{0,8}"""
                      r"""|\s{0,8}[\w.\[\]"'()]{1,128}\s{0,8}""")


# Any other call whose name ends in one of these takes credentials too: smtp.PlainAuth,
# PasswordAuthenticator, CRAMMD5Auth, client.auth, UserCredential, doLogin.
_AUTH_ENDINGS = (b"auth", b"authenticator", b"authenticate", b"login", b"logon", b"signin", b"credential",
                 b"credentials")
# Parts of those names the rules find anyway: a name is read off their offsets.
_CALL_BASES = ("auth", "cred", "login", "log", "sign", "connect")
_NOT_CALLS = frozenset({b"oauth", b"author", b"auth"})  # auth alone: only as a method (below)
_HOST = re.compile(r"[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}(?::\d{1,5})?|\d{1,5}|:\d{1,5}")


def call_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """The password literal of a call that logs in, binds or authenticates: the last string
    literal of two arguments or more (a host or port after it left aside), or the one literal
    of a method named auth (redis.auth("pw"), red:auth("pw"))."""
    present = [name for name, forms in _CALL_WORDS.items() if not words.isdisjoint(f.encode() for f in forms)]
    present += [w.decode() for w in words if w.endswith(_AUTH_ENDINGS) and w not in _NOT_CALLS and len(w) <= 40]
    if b"auth" in words:
        present.append("auth")
    connects = [w.decode() for w in _CONNECTS if w in words]
    present = list(dict.fromkeys(present))
    bases = {w: next(b for b in _CALL_BASES if b in w) for w in present if any(b in w for b in _CALL_BASES)}
    for at, word in words_within(lowered, data, present, bases):
        if word == "auth":  # a method (redis.auth, red:auth) or a name's end (CRAMMD5Auth)
            if at and (text[at - 1] in ".:" or text[at - 1].isalnum()) and text.startswith("(", at + 4):
                yield from _call_at(text, at + 5, single=text[at - 1] in ".:", wordy_ok=False)
            continue
        opened = _CALL_OPEN.match(text, at + len(word))
        if opened and not (at and (text[at - 1].isalnum() and word not in _CALL_WORDS)):
            yield from _call_at(text, opened.end(), wordy_ok=word in _CALL_WORDS and word != "authenticate")
    for at, word in find_words(lowered, data, connects) if connects else ():
        opened = _CONNECT_OPEN.match(text, at + len(word))
        if opened and not (at and text[at - 1].isalnum()):
            yield from _connect_at(text, opened.end())


# pymysql.connect('h', 'u', 'pw', 'db'), FTP('h', 'u', 'pw'), SMTP_SSL(…): a connection's
# arguments by position; the one literal with a password's shape among three or more.
_ANY_LITERAL = re.compile(r"""(?<![\w"'])[bB]?(?P<q>["'])(?P<v>[^"'\\\n]{0,256})(?P=q)""")
_CONNECT_OPEN = re.compile(r"\d?(?:_[A-Za-z0-9]{1,8})?\(")  # FTP_TLS(, SMTP_SSL(, IMAP4_SSL(
_CONNECTS = (b"connect", b"ftp", b"smtp", b"imap", b"pop", b"sequelize")


def _connect_at(text: str, pos: int) -> Iterator[Hit]:
    literals = list(_ANY_LITERAL.finditer(text, pos, _closing(text, pos - 1, min(len(text), pos + 400))))
    if len(literals) < 3:
        return
    for literal in literals:
        value = literal.group("v")
        if (not _HOST.fullmatch(value) and "/" not in value and secret_argument(value) and " " not in value
                and (_strong(value) or looks_random(value, 16))):
            yield Hit("password", literal.start("v"), literal.end("v"), "password passed to a connection by position")


def _strong(value: str) -> bool:
    return (len(value) >= 10 and any(c.isupper() for c in value) and any(c.islower() for c in value)
            and any(c.isdigit() for c in value))


def _call_at(text: str, pos: int, single: bool = False, wordy_ok: bool = True) -> Iterator[Hit]:
    """The call's arguments from `pos`: the last string literal of two arguments or more,
    a host or a port after it left aside (smtp.PlainAuth("", user, pw, host)); with
    `single`, a call of one literal that looks like a password. Unless `wordy_ok` (a name
    that surely logs in: login, bind), a plain lower-case word is no password."""
    args: list[tuple[int, int] | None] = []
    for _ in range(6):
        arg = _LITERAL.match(text, pos)
        if not arg:
            break
        if not arg.group("q") and arg.group(0).count("(") > arg.group(0).count(")"):
            return  # f(g('a', 'b')): the literals are another call's arguments
        args.append((arg.start("v"), arg.end("v")) if arg.group("q") else None)
        pos = arg.end()
        if not text.startswith(",", pos):
            break
        pos += 1
    if not text.startswith(")", pos) or not args:
        return
    if single and len(args) == 1:
        if args[0] is not None and pair_password(text[args[0][0]:args[0][1]]):
            yield Hit("password", *args[0], "password passed to an auth call")
        return
    while len(args) > 2 and args[-1] is not None and _HOST.fullmatch(text[args[-1][0]:args[-1][1]]):
        args.pop()  # the server named after the password
    last = args[-1]
    if len(args) < 2 or last is None:
        return
    start, end = last
    value = text[start:end]
    if secret_argument(value) and "://" not in value and (wordy_ok or not plain_word(value)):
        yield Hit("password", start, end, "password passed to a login call")


# The key of an HMAC is a secret wherever it is written: hmac.new(b"k", …), createHmac('sha256', 'k'),
# hash_hmac('sha256', $body, 'k'), hmac.New(sha256.New, []byte("k")), new SecretKeySpec("k".getBytes(), …).
_HMAC_LITERAL = re.compile(r"""(?<![\w"'])[bB]?(?P<q>["'])(?P<v>[^"'\\\n]{8,256})(?P=q)""")
_COMPARES = re.compile(r"compare|equal|verify")
_ALGORITHM = re.compile(r"(?i)(?:hmac[-_]?)?(?:sha[-_]?\d{1,3}(?:[-_/]\d{1,3})?|md5|sha3[-_]\d{3}|blake2[bs]?|sm3|ripemd\d{3})"
                        r"|[HREP]S\d{3}|aes-?\d{3}(?:-[a-z]{2,4})?|chacha20(?:-poly1305)?|des-ede3(?:-cbc)?|utf-?8|hex|base64|latin-?1|ascii")


# Calls whose literal arguments are keys or passwords: HMACs, JWT signing and checking,
# ciphers, password hashing and key derivation.
_KEYED_CALLS = {"hmac": b"hmac", "secretkeyspec": b"secretkeyspec", "jwt.encode(": b"jwt", "jwt.sign(": b"jwt",
                "jwt.decode(": b"jwt", "jwt.verify(": b"jwt", "fernet(": b"fernet", "aes.new(": b"aes",
                "cipheriv(": b"cipheriv", "pbekeyspec(": b"pbekeyspec", "hashpw(": b"hashpw", "checkpw(": b"checkpw"}
KEYED_CALL_WORDS = frozenset({b"jwt", b"fernet", b"aes", b"createcipheriv", b"createdecipheriv", b"pbekeyspec",
                              b"hashpw", b"checkpw", b"tochararray", b"secretkeyspec"})
_CHARS = re.compile(r"""(?P<q>["'])(?P<v>[^"'\\\n]{3,256})(?P=q)\.tochararray\(\)""", re.IGNORECASE)


def key_call_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """String literals that look like keys in the arguments of a keyed call (an HMAC, a
    JWT's signing, a cipher, password hashing), and a literal made a char[] (Java hands
    passwords over that way: "x".toCharArray())."""
    for needle, gate in _KEYED_CALLS.items():
        base = "jwt." if needle.startswith("jwt.") else ""  # the four jwt calls: one pass over the text, not four
        if not may_hold(words, gate) or not base and needle.encode() not in data:
            continue
        for at in offsets_of(data, needle, len(text), base):
            end = text.find("\n", at, at + 300)
            end = end if end >= 0 else min(len(text), at + 300)
            opened = text.find("(", at, end)
            if opened < 0 or _COMPARES.search(lowered, at, min(end, at + 40)):
                continue  # hmac.compare_digest(sig, "…"): a signature compared, not the key
            for literal in _HMAC_LITERAL.finditer(text, opened, _closing(text, opened, end)):
                value = literal.group("v")
                if (not _ALGORITHM.fullmatch(value) and secret_argument(value) and " " not in value
                        and (looks_random(value, 12) or pair_password(value))):
                    yield Hit("secret", literal.start("v"), literal.end("v"), f"key given to {needle.rstrip('(')}")
    if may_hold(words, b"tochararray") and b".tochararray()" in data:
        for at in offsets_of(data, ".tochararray()", len(text)):
            chars = _CHARS.search(text, max(0, at - 260), at + 14)
            if chars and chars.end() == at + 14 and secret_argument(chars.group("v")) and not plain_word(chars.group("v")):
                yield Hit("password", chars.start("v"), chars.end("v"), "a literal made a char[] password")


# @Value("x") private String adminPassword; (Spring, Micronaut, Quarkus): a literal given to the
# annotation of a field whose name says secret.
_ANNOTATED = re.compile(r"""@[A-Za-z_][\w.]{0,40}\(\s{0,4}(?:value\s{0,4}=\s{0,4})?"(?P<v>[^"\\\n]{1,256})"\s{0,4}\)\s{1,8}"""
                        r"""(?:(?:private|public|protected|internal|static|final|readonly|lateinit|val|var)\s{1,8}){0,4}"""
                        r"""(?:[\w<>\[\].?,]{1,64}\s{1,8})?(?P<name>[A-Za-z_]\w{0,63})\s{0,4}[;:=]""")


def _closing(text: str, opened: int, end: int) -> int:
    """Where the call opened at `opened` closes (its arguments only: not a digest compared
    after it), or `end`."""
    depth, quote = 0, ""
    for at in range(opened, end):
        c = text[at]
        if quote:
            quote = "" if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return at
    return end


_PATTERN_LIKE = re.compile(r"[\s\[\]{}^\\]|\$\{")  # @Pattern("^[A-Za-z0-9]{8,}$"), @Description("the admin password")


def annotation_hits(text: str) -> Iterator[Hit]:
    """The literal of an annotation on a secret-named field."""
    for match in _ANNOTATED.finditer(text):
        value = match.group("v")
        if (name_strength(match.group("name")) in (Strength.PASSWORD, Strength.TOKEN) and secret_argument(value)
                and not _PATTERN_LIKE.search(value) and (pair_password(value) or looks_random(value, 12))):
            yield Hit("secret", match.start("v"), match.end("v"), f"annotated value of {match.group('name')}")


# A user literal, then a password literal, as a call's adjacent arguments on a line that
# speaks of getting in: Client::new("bob", "pw"), NewDialer(h, 587, "u", "pw"),
# new mysqli('h', 'u', 'pw', 'db'), yagmail.SMTP('u@x', 'pw'), basic_auth("u", Some("pw")).
_USER_THEN_PASSWORD = re.compile(r"""(?P<q>["'])(?P<user>[\w.@+-]{1,64})(?P=q)[ \t]{0,4},[ \t]{0,4}(?:Some\()?"""
                                 r"""(?P<q2>["'])(?P<v>[^"'\\\s]{8,128})(?P=q2)""")
# base64 of "user:password" written in code: btoa('u:pw'), b64encode(b'u:pw')
_ENCODERS = ("btoa(", "b64encode(", "encodebase64(", "base64_encode(", "strict_encode64(", "encode64(", "tobase64string(")
_ENCODED_PAIR = re.compile(r"""(?:btoa|b64encode|encodebase64|base64_encode|strict_encode64|encode64|tobase64string)"""
                           r"""\([ \t]{0,4}[bB]?(["'])[\w.@+-]{1,64}:(?P<v>[^"'\\\s]{6,128})\1""", re.IGNORECASE)


_GETTING_IN_BASES = {"logon": "log", "pop3": "pop"}  # found anyway (prose, call_hits)
_GETTING_IN_WORDS = ("auth", "cred", "login", "logon", "connect", "dial", "smtp", "ftp", "imap", "pop3", "mysql", "pdo",
                     "dbi", "ssh", "ldap", "client")


def pair_literal_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """The password of a user and password given side by side as literals, just after a word
    about getting in on its line (only those places are read)."""
    for needle in _ENCODERS:
        # its words looked up first: most texts call no encoder, and a check of an absent needle reads the whole text
        base = "encode" if "encode" in needle else ""  # five of them: one pass over the text for all
        for at in (offsets_of(data, needle, len(text), base) if may_hold(words, needle.encode())
                   and (base or needle.encode() in data) else ()):
            encoded = _ENCODED_PAIR.match(text, at)
            if encoded and secret_argument(encoded.group("v")) and (pair_password(encoded.group("v"))
                                                             or looks_random(encoded.group("v"), 12)):
                yield Hit("password", encoded.start("v"), encoded.end("v"), "password in base64 of user:password")
    done = 0
    for at, _word in words_within(lowered, data, inside_words(words, _GETTING_IN_WORDS), _GETTING_IN_BASES):
        if at < done:
            continue
        end = text.find("\n", at, at + 240)
        end = end if end >= 0 else min(len(text), at + 240)
        for match in _USER_THEN_PASSWORD.finditer(text, max(done, at - 40), end):
            value = match.group("v")
            if ((_strong(value) or looks_random(value, 16)) and not _strong(match.group("user"))
                    and not looks_random(match.group("user"), 12) and secret_argument(value) and not wordy(value)
                    and not camel_words(value[0].upper() + value[1:]) and not _HOST.fullmatch(value) and "/" not in value):
                yield Hit("password", match.start("v"), match.end("v"), "password literal after its user")
        done = end
