"""Passwords that a command or a call takes by position, and cookies.

    echo 'pw' | docker login -u bob --password-stdin     htpasswd -b .htpasswd alice pw
    server.login('alice@example.com', 'pw')               net user backup pw /add
    sqlplus scott/tiger@orcl                              Cookie: sessionid=…

The mechanism: a value piped into a command that reads a password from standard input;
the positional argument a command documents as the password; the last string literal
of a call whose name says it logs in or binds (two literals or more: a user, then the
password); the `user/password@` of Oracle's tools; the values of a cookie header.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from .shapes import Hit, scan_within, words_within
from .values import (
    Strength,
    camel_words,
    char_offsets,
    find_words,
    inside_words,
    is_placeholder,
    looks_random,
    may_hold,
    mixed_case_random,
    name_strength,
    scan,
    text_words,
    value_is_secret,
    wordy,
)

__all__ = ["KEYED_CALL_WORDS", "annotation_hits", "announced_hits", "call_hits", "cookie_hits", "credential_flag_hits",
           "dsn_hits", "fed_hits", "flag_hits", "host_map_hits", "key_call_hits", "login_argument_hits", "pair_literal_hits", "pgpass_hits",
           "positional_hits", "printed_hits", "secret_set_hits", "stdin_hits", "store_flag_hits"]

_WORD = r"""(?:\$?'[^'\n]{1,256}'|"[^"\n]{1,256}"|[^\s'"|;&]{1,256})"""


_STAND_INS = frozenset({"password", "passwd", "passphrase", "secret", "key", "pass", "token", "mypassword",
                        "yourpassword", "my-password", "your-password", "mysecret", "apikey", "api_key"})


def _secret(value: str) -> bool:
    value = value.removeprefix("$").strip("'\"")
    if (not value or value.startswith(("-", "$", "[REDACTED", "<", "%")) or is_placeholder(value)
            or value.lower() in _STAND_INS):  # PRAGMA key = 'passphrase': the docs' stand-in
        return False
    return value_is_secret(value, Strength.PASSWORD, quoted=True, literal=True)


def _span(match: re.Match[str], group: str) -> tuple[int, int]:
    start, end = match.span(group)
    if match.group(group).startswith("$'"):  # bash's $'…' quoting
        return start + 2, end - 1
    if end - start >= 2 and match.group(group)[0] in "'\"" and match.group(group)[-1] == match.group(group)[0]:
        return start + 1, end - 1
    return start, end


# echo pw | … --password-stdin / sudo -S / chpasswd / passwd --stdin
_STDIN = re.compile(rf"""\b(?:echo|printf)(?:[ \t]+-[neE]{{1,3}})*(?:[ \t]+(?:'%s(?:\\n)?'|"%s(?:\\n)?"))?[ \t]+"""
                    rf"""(?P<secret>{_WORD})[ \t]*\|[^\n|]{{0,200}}?(?:--?password-stdin|--stdin\b|\bsudo[ \t]+(?:-\w+[ \t]+)*-S\b|"""
                    rf"""\bchpasswd\b|\bpasswd\b|\bkinit\b|--pass(?:word)?-stdin)""")


_STDIN_WORDS = ("stdin", "sudo", "passwd", "chpasswd", "kinit")


# echo X | vercel env add DB_PASSWORD, printf X | gh secret set NAME, | wrangler secret put NAME,
# | docker secret create NAME -: a value piped into a command that stores it as a secret.
_STDIN_STORED = re.compile(rf"""(?:echo|printf)(?:[ \t]+-[neE]{{1,3}})*(?:[ \t]+(?:'%s(?:\\n)?'|"%s(?:\\n)?"))?[ \t]+"""
                           rf"""(?P<secret>{_WORD})[ \t]*\|[ \t]*(?P<command>[^\n|;&]{{1,200}})""")
_STORES = re.compile(r"(?<![\w-])(?:set|add|put|create|insert|store|import)(?![\w-])")
_NAMED_ARGUMENT = re.compile(r"[A-Za-z_][\w.:-]{1,127}")


def _stores_secret(command: str) -> bool:
    """The command stores what it reads under a secret's name (or as a secret)."""
    if not _STORES.search(command):
        return False
    for word in command.split():
        word = word.strip("'\"")
        if word in ("secret", "secrets") or word.endswith((":secrets:set", ":secret:set")):
            return True
        if _NAMED_ARGUMENT.fullmatch(word) and name_strength(re.split(r"[:]", word)[-1]) in (Strength.PASSWORD,
                                                                                           Strength.TOKEN):
            return True
    return False


_PIPED_INTO = re.compile(rf"""(?:echo|printf)(?:[ \t]+-[neE]{{1,3}})*[ \t]+(?P<secret>{_WORD})[ \t]*\|(?P<command>[^\n|;&]{{1,200}})""")


def stdin_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """A value echoed into a command that reads a password from standard input, or that
    stores it as a secret."""
    if b"echo" not in words and b"printf" not in words:
        return
    for at, _word in find_words(lowered, data, [w for w in ("echo", "printf") if w.encode() in words]):
        stored = _STDIN_STORED.match(text, at)
        if stored and _stores_secret(stored.group("command")) and _secret(stored.group("secret")):
            yield Hit("password", *_span(stored, "secret"), "a value piped into a command that stores a secret")
        piped = _PIPED_INTO.match(text, at) if not (stored and _stores_secret(stored.group("command"))) else None
        if (piped and _SECRET_COMMAND.search(piped.group("command")) and not _NOT_READERS.match(piped.group("command"))
                and _secret(piped.group("secret")) and _pair_password(piped.group("secret").strip("'\""))):
            yield Hit("password", *_span(piped, "secret"), "a value piped into a command that takes a secret")
    done = 0
    for at, word in find_words(lowered, data, [w for w in _STDIN_WORDS if w.encode() in words]):
        yield from _stdin_line(text, max(done, at - 400), at + len(word) + 20)
        done = max(done, at)


def _stdin_line(text: str, start: int, end: int) -> Iterator[Hit]:
    for match in _STDIN.finditer(text, start, min(len(text), end)):
        value = match.group("secret")
        if _secret(value.split(":", 1)[1] if "chpasswd" in match.group(0) and ":" in value else value):
            start, end = _span(match, "secret")
            yield Hit("password", start, end, "password piped into a command's standard input")


# The commands that take a password as a positional argument, and where: each pattern
# is tried only where its command's word stands.
_POSITIONAL = {word: re.compile(pattern, re.IGNORECASE) for word, pattern in {
    # -b (batch: the password on the command line), not -B (bcrypt)
    "htpasswd": rf"""htpasswd[ \t]+(?:-(?-i:[a-zA-Z]*n[a-zA-Z]*b[a-zA-Z]*)[ \t]+{_WORD}|-(?-i:[a-zA-Z]*b[a-zA-Z]*)[ \t]+(?:-\w+[ \t]+)*{_WORD}[ \t]+{_WORD})"""
                rf"""[ \t]+(?P<secret>{_WORD})""",  # -nb user pw, -b file user pw
    "lftp": rf"""lftp\b[^\n|;]{{0,200}}?[ \t]-u[ \t]+[^\s,'"]{{1,64}},(?P<secret>{_WORD})""",  # -u user,pw
    "xfreerdp": rf"""xfreerdp\b[^\n|;]{{0,200}}?[ \t]/p:(?P<secret>{_WORD})""",
    "rdesktop": rf"""rdesktop\b[^\n|;]{{0,200}}?[ \t]-p[ \t]+(?P<secret>{_WORD})""",
    "mosquitto_passwd": rf"""mosquitto_passwd[ \t]+-b[ \t]+{_WORD}[ \t]+{_WORD}[ \t]+(?P<secret>{_WORD})""",
    "rabbitmqctl": rf"""rabbitmqctl[ \t]+(?:add_user|change_password)[ \t]+{_WORD}[ \t]+(?P<secret>{_WORD})""",
    "net user": rf"""net[ \t]+user[ \t]+{_WORD}[ \t]+(?P<secret>(?!/)[^\s/*][^\s]{{0,255}})""",
    "net use": r"""net[ \t]+use[ \t]+(?:\w:[ \t]+)?\\{1,2}\S+[ \t]+(?P<secret>(?!/)[^\s/*][^\s]{0,255})""",
    "mysqladmin": rf"""mysqladmin\b[^\n|;]{{0,200}}?[ \t]password[ \t]+(?P<secret>{_WORD})""",
    "plus": r"""(?:sql)?plus[ \t]+(?:-\w+[ \t]+)*["']?[\w$#]{1,64}/(?P<secret>[^\s@/"']{1,128})@""",
    "dp": r"""(?:exp|imp)dp[ \t]+["']?[\w$#]{1,64}/(?P<secret>[^\s@/"']{1,128})@""",
    "rman": r"""rman[ \t]+target[ \t]+["']?[\w$#]{1,64}/(?P<secret>[^\s@/"']{1,128})@""",
    "conn": r"""conn(?:ect)?[ \t]+[\w$#]{1,64}/(?P<secret>[^\s@/"']{1,128})@""",
    "convertto-securestring": r"""convertto-securestring[ \t]+(?:-String[ \t]+)?(?P<secret>'[^'\n]{1,256}'|"[^"\n]{1,256}")""",
    "/pass": rf"""(?<![^\s"'])/(?:pass|password|pwd):(?P<secret>{_WORD})""",  # a flag, not a path's part
    # Redis AUTH [user] password, MySQL SET PASSWORD [FOR u] = 'x'
    # (MONITOR and the slow log print each word quoted: "AUTH" "default" "pw")
    "auth": rf"""(?<![\w.])(?:(?-i:AUTH)[ \t]+(?:[\w-]{{1,64}}[ \t]+)?|(?-i:AUTH|auth)"[ \t]+(?:"[\w-]{{1,64}}"[ \t]+)?(?="))"""
            rf"""(?P<secret>{_WORD})[ \t]*(?:\r?\n|\Z)""",
    # FTP's and POP3's PASS, as a session log or a protocol trace shows it (upper case only)
    "pass": rf"""(?<![\w.])(?-i:PASS)[ \t]+(?P<secret>{_WORD})[ \t]*(?:\r?\n|\Z)""",
    # mc admin user add ALIAS USER SECRET
    "user add": rf"""user[ \t]+add[ \t]+{_WORD}[ \t]+{_WORD}[ \t]+(?P<secret>{_WORD})[ \t]*(?:\r?\n|\Z)""",
    "using": rf"""using[ \t]+(?P<secret>{_WORD})""",  # db2 connect to DB user U using PW (the user: _USER_BEFORE)
    # SNMP communities (Cisco's snmp-server community X RO, net-snmp's rocommunity X)
    "community": rf"""(?:(?<=snmp-server[ ])|(?<=ro)|(?<=rw))community[ \t]+(?P<secret>{_WORD})(?=[ \t]+(?:RO|RW|ro|rw|view|\d)\b|[ \t]*(?:\r?\n|\Z)|[ \t]+[\d.:/]+)""",
    # strongSwan's ipsec.secrets: [ids] : PSK "X" (EAP, XAUTH, NTLM the same)
    "psk": r"""(?<=:)[ \t]{0,4}(?-i:PSK|EAP|XAUTH|NTLM)[ \t]+(?P<secret>"[^"\n]{1,256}"|'[^'\n]{1,256}'|0[xs][^\s]{1,256})""",
    # OpenVPN's inline <auth-user-pass> block: a user, then the password
    "<auth-user-pass>": r"""<auth-user-pass>[ \t]*\r?\n[^\n]{1,128}\r?\n(?P<secret>[^\s]{1,256})[ \t]*\r?\n[ \t]*</auth-user-pass>""",
    # Postfix's sasl_passwd: [host]:port user:password
    "]:": r"""(?:^|(?<=\n))\[[\w.-]{1,253}\](?::\d{1,5})?[ \t]+[^\s:]{1,128}:(?P<secret>[^\s]{1,256})(?=[ \t]*(?:\r?\n|\Z))""",
    # SQLCipher: PRAGMA [db.]key = 'x' / rekey, ATTACH … KEY 'x'
    "pragma": r"""pragma[ \t]+(?:\w{1,64}\.)?(?:re)?key[ \t]*=[ \t]*(?P<secret>'[^'\n]{1,256}'|"[^"\n]{1,256}")""",
    "attach": r"""attach[ \t]+(?:database[ \t]+)?'[^'\n]{1,256}'[ \t]+as[ \t]+\w{1,64}[ \t]+key[ \t]+(?P<secret>'[^'\n]{1,256}')""",
    "authorize-account": rf"""authorize-account[ \t]+{_WORD}[ \t]+(?P<secret>{_WORD})""",  # b2 authorize-account ID KEY
    "wpa_passphrase": rf"""wpa_passphrase[ \t]+{_WORD}[ \t]+(?P<secret>{_WORD})""",  # SSID, then its passphrase
    # composer config http-basic.HOST user password, github-oauth.github.com TOKEN, gitlab-token.HOST TOKEN
    "http-basic.": rf"""http-basic\.[\w.-]{{1,253}}[ \t]+{_WORD}[ \t]+(?P<secret>{_WORD})""",
    "-oauth.": rf"""(?<=github|gitlab)-oauth\.[\w.-]{{1,253}}[ \t]+(?P<secret>{_WORD})""",
    "-token.": rf"""(?<=gitlab)-token\.[\w.-]{{1,253}}[ \t]+(?P<secret>{_WORD})""",
    # MinIO's mc alias set NAME URL ACCESS_KEY SECRET_KEY (and its older config host add)
    "alias set": rf"""alias[ \t]+set[ \t]+{_WORD}[ \t]+\S{{1,256}}[ \t]+{_WORD}[ \t]+(?P<secret>{_WORD})""",
    "host add": rf"""host[ \t]+add[ \t]+{_WORD}[ \t]+\S{{1,256}}[ \t]+{_WORD}[ \t]+(?P<secret>{_WORD})""",
    "set password": r"""set[ \t]+password[ \t]+(?:for[ \t]+\S{1,128}[ \t]*)?=[ \t]*(?:password\()?(?P<secret>'[^'\n]{1,256}')""",
    "ssh-keygen": rf"""ssh-keygen\b[^\n|;]{{0,200}}?[ \t]-[NP][ \t]+(?P<secret>{_WORD})""",  # new / old passphrase
    "ldappasswd": rf"""ldappasswd\b[^\n|;]{{0,300}}?[ \t]-s[ \t]+(?P<secret>{_WORD})""",  # the new password
    # macOS keychain: security add-generic-password … -w password
    "-password": rf"""-password\b[^\n|;]{{0,200}}?[ \t]-w[ \t]+(?P<secret>{_WORD})""",
    # user/password@host:port/service (Oracle's EZConnect, in JDBC thin URLs and tools)
    "thin:": r"""thin:[\w$#]{1,64}/(?P<secret>[^\s@/"']{1,128})@""",
}.items()}
_BACK = {"plus": 3, "dp": 3, "psk": 8}
_USER_BEFORE = re.compile(r"(?<![\w-])user[ \t]+[^\s'\"]{1,64}[ \t]+\Z", re.IGNORECASE)  # sqlplus, expdp: the word is found inside the command's name


_POSITIONAL_ANCHORS = {"htpasswd": b"htpasswd", "mosquitto_passwd": b"mosquitto", "rabbitmqctl": b"rabbitmqctl",
                       "net user": b"net", "net use": b"net", "mysqladmin": b"mysqladmin", "plus": b"sqlplus",
                       "dp": b"expdp", "rman": b"rman", "conn": b"conn", "convertto-securestring": b"convertto",
                       "/pass": b"pass", "ssh-keygen": b"keygen", "thin:": b"thin",
                       "auth": b"auth", "set password": b"set", "lftp": b"lftp", "xfreerdp": b"xfreerdp",
                       "rdesktop": b"rdesktop", "ldappasswd": b"ldappasswd", "-password": b"security",
                       "wpa_passphrase": b"wpa", "http-basic.": b"basic", "-oauth.": b"oauth", "-token.": b"token",
                       "alias set": b"alias", "host add": b"add", "pass": b"pass", "user add": b"add", "using": b"using",
                       "community": b"community", "psk": b"psk", "pragma": b"pragma", "attach": b"attach",
                       "authorize-account": b"authorize", "<auth-user-pass>": b"user", "]:": b"]:"}

_POSITIONAL_BASES = {"-token.": "token", "-oauth.": "auth", "<auth-user-pass>": "auth", "/pass": "pass",
                     "authorize-account": "auth", "mosquitto_passwd": "pass", "ldappasswd": "pass", "htpasswd": "pass",
                     "-password": "pass", "wpa_passphrase": "pass"}

_COMMUNITIES = frozenset({b"rocommunity", b"rwcommunity"})  # net-snmp's snmpd.conf
_POSITIONAL_GATE = frozenset(_POSITIONAL_ANCHORS.values()) - {b"pass"} | {b"impdp", b"connect"} | _COMMUNITIES


def positional_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """Passwords in the place a command documents for them: htpasswd -b, net user, sqlplus u/p@db …"""
    windows = "/pass" in lowered or "/pwd:" in lowered
    protocol = b"pass" in words and "PASS " in text  # FTP's PASS, upper case
    relay = "]:" in text  # Postfix's [host]:port user:password
    if words.isdisjoint(_POSITIONAL_GATE) and not windows and not protocol and not relay:
        return
    present = [word for word, anchor in _POSITIONAL_ANCHORS.items()
               if anchor in words and anchor != b"pass" or (word == "dp" and b"impdp" in words)
               or (word == "conn" and b"connect" in words) or (word == "/pass" and windows)
               or (word == "]:" and relay)
               or (word == "community" and not words.isdisjoint(_COMMUNITIES))]
    # the single words read off the offsets of a part found anyway (token, auth, pass), in
    # the order find_words gives: by offset, the longer word first
    places = find_words(lowered, data, [w for w in present if " " in w]) + words_within(
        lowered, data, [w for w in present if " " not in w], _POSITIONAL_BASES)
    places.sort(key=lambda f: (f[0], -len(f[1])))
    if protocol:  # only where it stands in upper case
        at = text.find("PASS ")
        while at >= 0:
            places.append((at, "pass"))
            at = text.find("PASS ", at + 5)
    for at, word in places:
        pattern = _POSITIONAL[word]
        begin = max(0, at - _BACK.get(word, 0))
        if word == "]:":  # [host]:port user:password starts its line
            begin = text.rfind("\n", max(0, at - 260), at) + 1 if at else 0
            if not text.startswith("[", begin) or (begin == 0 and at > 260):
                continue
            match = pattern.match(text, begin)
        else:
            match = pattern.search(text, begin, min(len(text), at + 600)) if word in _BACK else pattern.match(text, at)
        if word == "using" and not _USER_BEFORE.search(text, max(0, at - 80), at):
            continue
        if match and match.start() <= at and _secret(match.group("secret")):
            start, end = _span(match, "secret")
            yield Hit("password", start, end, "password given to a command by position")


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
        if (not _HOST.fullmatch(value) and "/" not in value and _secret(value) and " " not in value
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
        args.append((arg.start("v"), arg.end("v")) if arg.group("q") else None)
        pos = arg.end()
        if not text.startswith(",", pos):
            break
        pos += 1
    if not text.startswith(")", pos) or not args:
        return
    if single and len(args) == 1:
        if args[0] is not None and _pair_password(text[args[0][0]:args[0][1]]):
            yield Hit("password", *args[0], "password passed to an auth call")
        return
    while len(args) > 2 and args[-1] is not None and _HOST.fullmatch(text[args[-1][0]:args[-1][1]]):
        args.pop()  # the server named after the password
    last = args[-1]
    if len(args) < 2 or last is None:
        return
    start, end = last
    value = text[start:end]
    if _secret(value) and "://" not in value and (wordy_ok or not _plain_word(value)):
        yield Hit("password", start, end, "password passed to a login call")


def _plain_word(value: str) -> bool:
    """A lower-case word as prose spells it (session, local): letters with a word's share
    of vowels; fzivkdldhwwnuwzv has too few."""
    return value.isalpha() and value.islower() and 10 * sum(c in "aeiou" for c in value) >= 3 * len(value)


_COOKIE = re.compile(r"(?i)(?:set-)?cookie[\"']?\s{0,4}[:=]\s{0,4}[\"']?|(?:\s-b|--cookie)\s{1,4}[\"']?")
def _cookie_places(lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[int]:
    present = [w for w in ("cookie", " -b ") if w.strip(" -").encode() in words]
    for at, word in find_words(lowered, data, present):
        yield at - 4 if word == "cookie" and lowered.startswith("set-", at - 4) else at


_PAIR = re.compile(r"""\s{0,2}(?P<name>[\w.$%!#&*+^`|~-]{1,128})=(?P<value>[^;,\s"'\\]{1,4096})\s{0,2}""")
# Analytics and preference cookies: counters and choices, not sessions (_ga=GA1.1.…, theme=dark).
_NOT_SESSION = re.compile(r"(?i)_?(?:ga|gid|gat|gcl_\w{1,8}|fbp|fbc|hj\w{0,24}|utm\w{0,8}|__utm\w|pk_id\.\S{1,16}|"
                          r"_pk_\w{1,16}|ajs_anonymous_id|mp_\w{1,40}|theme|lang|language|locale|consent|cookie_?consent|"
                          r"prefs?|preferences|tz|timezone|currency|country|region)(?:_[\w-]{1,24})?")
_CHOICES = re.compile(r"[A-Za-z]{2,24}(?:(?:%2[Cc]|,|\+|%20|-|_)[A-Za-z]{2,24}){0,12}")
_SESSION = re.compile(r"(?i)sess|sid\b|auth|token|jwt|login|remember|sso|csrf|xsrf|secret|key|identity|user_session|_gh_sess")


def cookie_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """Cookie / Set-Cookie headers, curl -b, document.cookie: each session-like value."""
    for at in _cookie_places(lowered, data, words):
        match = _COOKIE.match(text, at)
        if match is None:
            continue
        pos = match.end()
        for _ in range(32):
            pair = _PAIR.match(text, pos)
            if not pair:
                break
            value, name = pair.group("value"), pair.group("name")
            if (len(value) >= 8 and not is_placeholder(value) and not _NOT_SESSION.fullmatch(name)
                    and not _CHOICES.fullmatch(value)
                    and (looks_random(value, 16) or _SESSION.search(name) and any(c.isdigit() for c in value))):
                yield Hit("secret", pair.start("value"), pair.end("value"), f"cookie {name}")
            pos = pair.end()
            if not text.startswith(";", pos) or lowered.startswith("set-cookie", match.start()):
                break  # Set-Cookie: one cookie, then its attributes (Path=/, Max-Age=…)
            pos += 1


# ~/.pgpass: hostname:port:database:username:password, one entry a line.
_PORT_FIELD = re.compile(r":\d{1,5}:[\w.*-]{1,64}:[\w.@*-]{1,64}:[^\s:]")  # host:port:db:user:pw
_PGPASS = re.compile(r"(?<![\w.*:-])[\w.*-]{1,253}:(?:\d{1,5}|\*):[\w.*-]{1,64}:[\w.@*-]{1,64}:"
                     r"(?P<secret>(?:\\[:\\]|[^\s:\"'\\]){1,256})(?=[\s\"']|\\[nrt\"']|\Z)")  # \: and \\ escaped


_PORT_FIELD_BYTES = re.compile(_PORT_FIELD.pattern.replace(r"\w", "a-zA-Z0-9_").encode())


def pgpass_hits(text: str, lowered: str, data: bytes | None = None,
                words: frozenset[bytes] | None = None) -> Iterator[Hit]:
    """The password field of .pgpass lines (the file named, or a line with a * field;
    `data`: `lowered` in UTF-8, where the gate is looked for, and `words` its words, when given)."""
    if data is None:
        data = lowered.encode("utf-8", "surrogatepass")
    if words is None:
        words = text_words(data)
    if (not (may_hold(words, b"pgpass") and b"pgpass" in data) and b":*:" not in data
            and not _PORT_FIELD_BYTES.search(data)):
        return
    for match in _PGPASS.finditer(text):
        if _secret(match.group("secret")):
            yield Hit("password", match.start("secret"), match.end("secret"), ".pgpass password field")


# The flag convention of command lines: after a user flag (-u bob, --username bob,
# --cluster-username bob) a -p / -P on the same line is that user's password (az, psexec,
# mosquitto_pub, sqlcmd-likes); ssh-keygen's -P (old) and -N (new) are passphrases.
_USER_FLAG = re.compile(r"""\s(?:-[uU]|--(?:[a-z]+-)?user(?:name)?)(?:\s{1,4}|=)['"]?[A-Za-z]""")  # not a uid
_PASSWORD_FLAG = re.compile(r"\s-[pP](?:\s{1,4}|=)(?P<v>" + _WORD + ")")
_FLAG_WINDOW = 300
_ATTACHED_P = re.compile(r"(?<![\w-])(?:mysql\w*|mariadb\w*)\s")  # their -p takes its value attached (-pX)
_PORTS = re.compile(r"[\d.:/a-z-]*\d:\d[\d:/a-z-]*")  # docker's -p 8080:80, -p 127.0.0.1:53:53/udp
_PASSPHRASE_FLAG = re.compile(r"\s-[PN]\s{1,4}(?P<v>" + _WORD + ")")


def flag_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes] | None = None) -> Iterator[Hit]:
    """-p after a user flag on one command line; ssh-keygen's -P / -N (`words`: those
    of `data`, when found already)."""
    if words is None:
        words = text_words(data)
    starts = _places(data, " -u", len(text), "-u") + _places(data, "\t-u", len(text), "-u")
    for at in _places(data, "-user", len(text), "-u"):  # --user, --cluster-username
        space = max(text.rfind(" ", max(0, at - 24), at), text.rfind("\t", max(0, at - 24), at))
        if space >= 0:
            starts.append(space)
    users = sorted(m.end() for at in starts for m in [_USER_FLAG.match(text, at)] if m)  # -p looks back
    for at in _places(data, " -p", len(text)) if users else []:
        i = bisect.bisect_right(users, at) - 1
        user = users[i] if i >= 0 else -1
        if user < 0 or at - user > _FLAG_WINDOW or "\n" in text[user:at]:
            continue  # no user flag on this command line before the -p
        match = _PASSWORD_FLAG.match(text, at)
        if (match and not _PORTS.fullmatch(match.group("v")) and _flag_secret(match.group("v"))
                and not _ATTACHED_P.search(lowered, user - _FLAG_WINDOW if user > _FLAG_WINDOW else 0, at)):
            yield Hit("password", *_span(match, "v"), "password flag after a user flag")
    if may_hold(words, b"ssh-keygen") and b"ssh-keygen" in data:
        for at in _places(data, " -n", len(text)) + _places(data, " -p", len(text)):
            match = _PASSPHRASE_FLAG.match(text, at)
            if match and "ssh-keygen" in lowered[max(0, at - 200):at] and _secret(match.group("v")):
                yield Hit("password", *_span(match, "v"), "ssh-keygen passphrase (-P / -N)")


def _flag_secret(value: str) -> bool:
    """A quoted value as any password; a bare word only when it looks like one (-p shop: a name)."""
    if value[:1] in "'\"" or value.startswith("$'"):
        return _secret(value)
    return _secret(value) and value_is_secret(value, Strength.PASSWORD, quoted=False, literal=False)


def _places(data: bytes, needle: str, length: int, base: str = "") -> list[int]:
    """Where `needle` (ASCII) stands in the text of `length` characters whose UTF-8 (lower
    case) is `data`: found in the bytes, in C, and given in characters (read off the
    offsets of `base`, a part of it, when given: `scan_within`)."""
    places = scan_within(data, needle.encode(), base.encode()) if base else scan(data, needle.encode())
    return list(places) if len(data) == length else char_offsets(data, places)


def _starts(data: bytes, starts: re.Pattern[bytes]) -> list[int]:
    """The offsets `starts` finds in `data`: a first byte and a lookahead for several needles,
    one pass over the text for all of them, in C (a check for each reads the text once a needle)."""
    return [m.start() for m in starts.finditer(data)]


def _among(data: bytes, starts: list[int], needle: str, length: int) -> list[int]:
    """`_places` of `needle`, read off `starts` (`_starts` of a pattern that finds it)."""
    encoded = needle.encode()
    places = [at for at in starts if data.startswith(encoded, at)]
    return places if len(data) == length else char_offsets(data, places)


# A CLI's login: `wandb login TOKEN`, `snyk auth TOKEN`, `echo TOKEN | az devops login`,
# `codecovcli upload-process -t TOKEN`: a random-looking argument (or a UUID) where the
# tool takes its token. A word, a path, an option or an image tag is none.
_LOGIN_ARGUMENT = re.compile(r"(?:login|auth|authenticate)[ \t]{1,4}(?P<v>[A-Za-z0-9_.+/=-]{16,256})(?![^ \t\r\n])")
_TOKEN_FLAG = re.compile(r"[ \t]-t[ \t]{1,4}(?P<v>[A-Za-z0-9_.+/=-]{32,512})(?![^ \t\r\n])")
_PIPED = re.compile(r"echo[ \t]{1,4}(?P<v>[A-Za-z0-9_.+/=-]{32,256})[ \t]{0,4}\|[^|\n]{0,120}?"
                    r"(?<![\w-])(?:login|auth)(?![\w-])")
_UUID_VALUE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_LOGIN_PLACES = (("login", _LOGIN_ARGUMENT), ("auth", _LOGIN_ARGUMENT), ("echo", _PIPED), (" -t", _TOKEN_FLAG))


def login_argument_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """The token given to a CLI's login / auth subcommand, its -t flag, or piped to its login."""
    for word, pattern in _LOGIN_PLACES:
        if word != " -t" and word.strip(" -").encode() not in words:
            continue  # " -t": scanned for at once (a check first would read the text twice)
        for at in _places(data, word, len(text)):
            if word != " -t" and at and (lowered[at - 1].isalnum() or lowered[at - 1] in "_-"):
                continue  # a word's end (oauth), not the subcommand
            match = pattern.match(text, at)
            if match is None:
                continue
            value = match.group("v")
            if ((_UUID_VALUE.fullmatch(value) or looks_random(value, 16)) and not is_placeholder(value)
                    and value.count("/") < 2 and not value.startswith("-")):
                yield Hit("token", match.start("v"), match.end("v"), "token given to a command's login")


# A secret that a command prints or a log announces, alone on a line below (or after the
# announcing line's last colon): `$ wg genkey`, `argocd admin initial-password`,
# "Please use the following password …:", "A temporary password is generated for …: X",
# "Password for the [elastic] user successfully reset. New value: X".
_PRINTS_SECRET = {"genkey": b"genkey", "initial-password": b"initial", "print-access-token": b"print",
                  "pwgen": b"pwgen", "generate-password": b"generate", "following password": b"following",
                  "temporary password": b"temporary", "generated password": b"generated",
                  "new password": b"new", "password is generated": b"generated",
                  "successfully reset": b"successfully", "new value": b"value", "initial password": b"initial"}
_ANNOUNCED = re.compile(r"[^\n]{0,200}?(?::[ \t]{1,4}(?P<inline>[^\s]{8,256})[ \t]*(?=\n|\Z)|\n)"
                        r"(?:[ \t]*\n){0,2}(?:New value:[ \t]*)?(?P<below>[^\s]{8,512})?[ \t]*(?=\n|\Z)")


def announced_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """The value a command prints or a log line announces as a new password or key."""
    for word, gate in _PRINTS_SECRET.items():
        # read off the offsets of pass and token (found anyway) where the phrase holds them
        base = "pass" if "password" in word else "token" if "token" in word else ""
        if gate not in words or not may_hold(words, word.encode()) or not base and word.encode() not in data:
            continue
        for at in _places(data, word, len(text), base):
            match = _ANNOUNCED.match(text, at + len(word))
            if match is None:
                continue
            group = "inline" if match.group("inline") else "below"
            value = match.group(group)
            if value and _announced_secret(value):
                yield Hit("password", match.start(group), match.end(group), f"a secret printed after '{word}'")


# A command run at a shell prompt whose words name a secret (terraform output -raw
# db_password, kubectl get secret … '{.data.password}' | base64 -d, vault kv get -field=token),
# and the one word it printed on the next line.
# An auth file (OpenVPN's auth-user-pass, a .netrc-like creds file) printed: a user, then the password.
_PROMPT_SECRET = re.compile(r"[^\n]{0,300}?(?:passw(?:or)?d|passphrase|secret|token|api[_-]?key|private[_-]?key|credential"
                            r"|(?<![a-z])(?:auth|creds?)(?=[._-]|\s|\Z))"
                            r"[^\n]{0,300}\n(?:[^\s]{1,64}[ \t]*\n)??(?P<v>[^\s]{8,512})[ \t]*(?:\n|\Z)", re.IGNORECASE)


def printed_hits(text: str, data: bytes) -> Iterator[Hit]:
    """The lone word a shell command printed when the command names a secret."""
    for at in scan(data, b"$ "):
        if at and data[at - 1] not in (10, 32, 9):  # a prompt starts its line
            continue
        start = at if len(data) == len(text) else char_offsets(data, [at])[0]
        match = _PROMPT_SECRET.match(text, start + 2)
        if match and text.count("\n", start, match.start("v")) <= 2 and _announced_secret(match.group("v")):
            yield Hit("password", match.start("v"), match.end("v"), "a secret a command printed")


# Go's MySQL driver: user:password@tcp(host:port)/db, user:password@unix(/path)/db.
_GO_DSN_USER = re.compile(r"""(?:^|(?<=[\s"'`=(]))[\w.$-]{1,64}:(?P<secret>[^\s@"'`]{1,128})\Z""")


_DSN_STARTS = re.compile(rb"@(?=tcp\(|unix\()")


def dsn_hits(text: str, data: bytes) -> Iterator[Hit]:
    """The password of a `user:password@tcp(…)` data source name (Go's MySQL driver)."""
    starts = _starts(data, _DSN_STARTS)
    for needle in (b"@tcp(", b"@unix("):
        places = [at for at in starts if data.startswith(needle, at)]
        for at in places if len(data) == len(text) else char_offsets(data, places):
            user = _GO_DSN_USER.search(text, max(0, at - 200), at)
            if user and _secret(user.group("secret")):
                yield Hit("url-password", user.start("secret"), user.end("secret"), "password in a user:password@tcp(…) DSN")


def _announced_secret(value: str) -> bool:
    if is_placeholder(value) or value.startswith(("/", "http", "$", "-", "[", "(")) or value.endswith((".", ":")):
        return False
    return looks_random(value, 12) or value_is_secret(value, Strength.PASSWORD, quoted=False, literal=False) \
        and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


# user:password after a flag that takes credentials, in any tool: --auth, --basic-auth,
# --credentials, --user, -u (httpie's -a, ab's -A, curl's combined -su on their lines).
# A random user with an empty or one-letter password is an API key (curl -u KEY:X).
_CREDENTIAL_FLAG = re.compile(r"""(?<!\S)(?P<flag>--(?:basic-|http-|proxy-)?(?:auth|basic|user|credentials?|creds)|-u|-[a-zA-Z]{1,3}u|-[aA])"""
                              r"""(?:[ \t]{1,4}|=)(?P<q>['"]?)(?P<user>[^\s:'"/@$]{1,128}):(?P<v>[^\s'"]{0,256})(?P=q)(?=[\s;|&)]|\Z)""")
_CREDENTIAL_GATE = re.compile(rb"-(?:[a-z]{0,3}[ua]|A|-(?:basic-|http-|proxy-)?(?:auth|basic|user|credentials?|creds))[ \t=]")
_HTTP_CLIENTS = re.compile(r"(?<![\w-])(?:https?|xh|ab|curlie|httpie)[ \t]")
_CURLS = re.compile(r"(?<![\w-])(?:curl|curlie|xh)[ \t]")


def credential_flag_hits(text: str, data: bytes) -> Iterator[Hit]:
    """The password (or the API key given as the user) of user:password after a
    credentials flag."""
    for found in _CREDENTIAL_GATE.finditer(data):
        if not found.start() or data[found.start() - 1] not in b" \t\n":
            continue
        at = found.start() if len(data) == len(text) else char_offsets(data, [found.start()])[0]
        match = _CREDENTIAL_FLAG.match(text, at)
        if match is None:
            continue
        flag = match.group("flag")
        line = text[max(text.rfind("\n", 0, at) + 1, at - 300):at]
        if flag in ("-a", "-A") and not _HTTP_CLIENTS.search(line) or (
                len(flag) > 2 and not flag.startswith("--") and not _CURLS.search(line)):
            continue  # rsync -a host:dir, tar -cu: not credentials
        user, value = match.group("user"), match.group("v")
        if len(value) <= 1 and looks_random(user, 16) and not is_placeholder(user):
            yield Hit("token", match.start("user"), match.end("user"), f"API key given as the user of {flag}")
        elif _pair_password(value):
            yield Hit("password", match.start("v"), match.end("v"), f"password of user:password after {flag}")


def _pair_password(value: str) -> bool:
    """A password's shape: digits or symbols with letters, or random; not a port, a group
    (www-data), a path or a number."""
    if not _secret(value) or _PORTS.fullmatch(value) or value.isdigit() or wordy(value) or "/" in value:
        return False
    return (looks_random(value, 12) or mixed_case_random(value)
            or any(c.isdigit() for c in value) and any(c.isalpha() for c in value))


# A CLI's secret store given NAME then the value: dotnet user-secrets set "Smtp:Password" X,
# gh secret set NAME --body X, a vault's kv put NAME X; the name (its last part after a
# ':' or '__') says secret.
_SECRET_SET = re.compile(rf"""(?<![\w-])(?:secrets?|user-secrets|env|config|vars?|kv|parameter|param)[ \t]+(?:set|add|put)"""
                         rf"""(?:[ \t]+--?[\w-]{{1,32}}(?:=\S{{1,64}})?)*[ \t]+(?P<name>"[^"\n]{{1,128}}"|'[^'\n]{{1,128}}'|[^\s'"=]{{1,128}})"""
                         rf"""[ \t]+(?:(?:--body|-b|--value)(?:[ \t]+|=))?(?P<secret>{_WORD})""")


_STORE_VERBS = (b" set ", b" add ", b" put ", b" set\t", b" add\t", b" put\t")
_STORE_BEFORE = re.compile(rb"(?<![\w-])(?:secrets?|user-secrets|env|config|vars?|kv|parameter|param)[ \t]{1,4}\Z")


def secret_set_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """The value a CLI stores under a secret's name."""
    places = [at for verb in _STORE_VERBS if verb[1:4] in words for at in scan_within(data, verb, verb[1:4])
              if _STORE_BEFORE.search(data, max(0, at - 16), at + 1)]
    for at in places if len(data) == len(text) else char_offsets(data, places):
        match = _SECRET_SET.search(text, max(0, at - 14), min(len(text), at + 400))
        if match is None or match.start() > at:
            continue
        name = re.split(r":|__", match.group("name").strip("'\""))[-1]
        value = match.group("secret").strip("'\"")
        if name_strength(name) in (Strength.PASSWORD, Strength.TOKEN) and _secret(value) and not _plain_word(value):
            yield Hit("password", *_span(match, "secret"), f"value stored as {name}")  # not: env add NAME production


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
        for at in _places(data, needle, len(text), base):
            end = text.find("\n", at, at + 300)
            end = end if end >= 0 else min(len(text), at + 300)
            opened = text.find("(", at, end)
            if opened < 0 or _COMPARES.search(lowered, at, min(end, at + 40)):
                continue  # hmac.compare_digest(sig, "…"): a signature compared, not the key
            for literal in _HMAC_LITERAL.finditer(text, opened, _closing(text, opened, end)):
                value = literal.group("v")
                if (not _ALGORITHM.fullmatch(value) and _secret(value) and " " not in value
                        and (looks_random(value, 12) or _pair_password(value))):
                    yield Hit("secret", literal.start("v"), literal.end("v"), f"key given to {needle.rstrip('(')}")
    if may_hold(words, b"tochararray") and b".tochararray()" in data:
        for at in _places(data, ".tochararray()", len(text)):
            chars = _CHARS.search(text, max(0, at - 260), at + 14)
            if chars and chars.end() == at + 14 and _secret(chars.group("v")) and not _plain_word(chars.group("v")):
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
        if (name_strength(match.group("name")) in (Strength.PASSWORD, Strength.TOKEN) and _secret(value)
                and not _PATTERN_LIKE.search(value) and (_pair_password(value) or looks_random(value, 12))):
            yield Hit("secret", match.start("v"), match.end("v"), f"annotated value of {match.group('name')}")


# A here-string or a process substitution hands a value over as a file or standard input:
# `gh secret set NAME <<< X`, `passwd --stdin bob <<< X`, `--vault-password-file=<(echo X)`.
_HERE_STRING = re.compile(rf"""<<<[ \t]*(?P<secret>{_WORD})""")
_SUBSTITUTED = re.compile(rf"""--?[\w-]{{0,40}}(?:pass|secret|token|key|cred)[\w-]{{0,40}}(?:=|[ \t]{{1,4}})<\([ \t]{{0,4}}"""
                          rf"""(?:echo|printf)(?:[ \t]+-[neE]{{1,3}})?[ \t]+(?P<secret>{_WORD})[ \t]*\)""", re.IGNORECASE)
_ECHOED = re.compile(rf"""<\([ \t]{{0,4}}(?:echo|printf)(?:[ \t]+-[neE]{{1,3}})?[ \t]+(?P<secret>{_WORD})[ \t]*\)""")
_READS_SECRET = re.compile(r"(?i)--?password-stdin|--stdin\b|\bchpasswd\b|\bpasswd\b|\bkinit\b|--pass(?:word)?-stdin")
# A command whose own words say it takes a secret (smbpasswd, pass insert, keyring set, gh auth
# login --with-token, cryptsetup luksOpen, age -p): a word of it, not a path's part.
_SECRET_COMMAND = re.compile(r"(?i)(?<![\w/.$-])(?:\w*passw(?:or)?d\w*|pass|\w*secrets?\w*|\w*token\w*|\w*crypt\w*|keyring|"
                             r"keychain|login|auth|creds?|credentials?|age[ \t]+-p)(?![\w/.-])")
_NOT_READERS = re.compile(r"[ \t]*(?:grep|egrep|rg|sed|awk|tee|cat|jq|yq|xargs|wc|sort|uniq|head|tail|less|more|base64|"
                          r"cut|tr|od|xxd|hexdump|sha\d*sum|md5sum|python3?|node|ruby|perl)\b")


_FED_STARTS = re.compile(rb"<(?=<<|\()")


def fed_hits(text: str, data: bytes) -> Iterator[Hit]:
    """A value given by here-string to a command that reads or stores a secret, or by a
    process substitution to a flag that names one."""
    starts = _starts(data, _FED_STARTS)
    for at in _among(data, starts, "<<<", len(text)):
        match = _HERE_STRING.match(text, at)
        command = text[max(text.rfind("\n", 0, at) + 1, at - 300):at]
        if match and _secret(match.group("secret")) and (
                _READS_SECRET.search(command) or _stores_secret(command)
                or _SECRET_COMMAND.search(command) and not _NOT_READERS.match(command)
                and _pair_password(match.group("secret").strip("'\"").split()[-1])):
            secret = _span(match, "secret")
            value = text[secret[0]:secret[1]]
            if " " in value and "user" in value.lower():  # ftp's 'user bob PW'
                secret = (secret[0] + value.rindex(" ") + 1, secret[1])
            yield Hit("password", *secret, "a secret given by here-string")
    for at in _among(data, starts, "<(", len(text)):
        match = _SUBSTITUTED.search(text, max(0, at - 90), at + 300)
        if match and match.start() <= at < match.end() and _secret(match.group("secret")):
            yield Hit("password", *_span(match, "secret"), "a secret given by process substitution")
            continue
        echoed = _ECHOED.match(text, at)
        command = text[max(text.rfind("\n", 0, at) + 1, at - 300):at]
        if (echoed and _SECRET_COMMAND.search(command) and _secret(echoed.group("secret"))
                and _pair_password(echoed.group("secret").strip("'\""))):  # gcloud secrets … --data-file=<(echo X)
            yield Hit("password", *_span(echoed, "secret"), "a secret given by process substitution")


# A secret store's value flag (az keyvault secret set --value X, aws ssm put-parameter --value X,
# vault kv put … --value X) and Windows tools' /p: after a /u: (mstsc, net, runas-likes).
_VALUE_FLAG = re.compile(rf"""--(?:value|secret-value|secret-string|data)(?:=|[ \t]{{1,4}})(?P<secret>{_WORD})""")
_STORE_WORDS = re.compile(r"(?i)(?<![\w/.-])(?:secrets?|keyvault|ssm|put-parameter|parameter|vault|credentials?)(?![\w/.-])")
_SLASH_P = re.compile(rf"""/p(?:ass(?:word)?)?:(?P<secret>{_WORD})""", re.IGNORECASE)
_SLASH_USER = re.compile(r"(?i)(?<!\S)/u(?:ser)?:\S")


_VALUE_FLAG_STARTS = re.compile(rb"--(?=value|secret-value|secret-string|data)")


def store_flag_hits(text: str, data: bytes) -> Iterator[Hit]:
    """The value flag of a command that stores a secret; /p: after /u: on a command line."""
    starts = _starts(data, _VALUE_FLAG_STARTS)
    for needle in ("--value", "--secret-value", "--secret-string", "--data"):
        for at in _among(data, starts, needle, len(text)):
            match = _VALUE_FLAG.match(text, at)
            line = text[max(text.rfind("\n", 0, at) + 1, at - 300):at]
            if (match and _STORE_WORDS.search(line) and _secret(match.group("secret"))
                    and (_pair_password(match.group("secret").strip("'\"")) or looks_random(match.group("secret"), 16))):
                yield Hit("password", *_span(match, "secret"), f"the value of {needle} of a secret store")
    for at in _places(data, " /p", len(text)) if b" /p" in data else ():
        match = _SLASH_P.match(text, at + 1)
        line = text[max(text.rfind("\n", 0, at) + 1, at - 300):at]
        if (match and _SLASH_USER.search(line) and _secret(match.group("secret"))
                and not match.group("secret").strip("'\"").isdigit()):  # robocopy's /p:8080 is no password
            yield Hit("password", *_span(match, "secret"), "/p: after /u: on a command line")


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
        for at in (_places(data, needle, len(text), base) if may_hold(words, needle.encode())
                   and (base or needle.encode() in data) else ()):
            encoded = _ENCODED_PAIR.match(text, at)
            if encoded and _secret(encoded.group("v")) and (_pair_password(encoded.group("v"))
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
                    and not looks_random(match.group("user"), 12) and _secret(value) and not wordy(value)
                    and not camel_words(value[0].upper() + value[1:]) and not _HOST.fullmatch(value) and "/" not in value):
                yield Hit("password", match.start("v"), match.end("v"), "password literal after its user")
        done = end


# composer's auth.json: a secret-named object whose members are hosts, each given its token
# ("github-oauth": {"github.com": "…"}, "gitlab-token": {…}, "bearer": {…}).
_HOST_MAP = re.compile(r"""(?P<name>[\w-]{0,24}(?:oauth|token|bearer|auth))\\?"[ \t]{0,4}:[ \t]{0,4}\{[ \t\r\n]{0,40}"""
                       r"""\\?"[\w-]{1,63}(?:\.[\w-]{1,63}){1,6}(?::\d{1,5})?\\?"[ \t]{0,4}:[ \t]{0,4}\\?"(?P<v>[^"\\\s]{8,256})\\?\"""",
                       re.IGNORECASE)
_HOST_MAP_NEEDLES = (("oauth\"", "auth"), ("token\"", "token"), ("bearer\"", "bearer"), ("auth\"", "auth"))


def host_map_hits(text: str, data: bytes) -> Iterator[Hit]:
    """The token of each host under a secret-named object (composer's auth.json)."""
    for needle, base in _HOST_MAP_NEEDLES:  # read off the offsets of auth and token, found anyway
        for at in _places(data, needle, len(text), base) if base.encode() in data else ():
            begin = at
            while begin > 0 and at - begin < 24 and (text[begin - 1].isalnum() or text[begin - 1] in "_-"):
                begin -= 1
            match = _HOST_MAP.match(text, begin)
            if match and (looks_random(match.group("v"), 16) or _pair_password(match.group("v"))) and _secret(match.group("v")):
                yield Hit("token", match.start("v"), match.end("v"), f"token of a host under {match.group('name')}")
