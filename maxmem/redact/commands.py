"""Passwords that a command line takes by position or by flag, or reads from standard input.

    echo 'pw' | docker login -u bob --password-stdin     htpasswd -b .htpasswd alice pw
    net user backup pw /add                               sqlplus scott/tiger@orcl
    gh secret set NAME <<< pw                             az login -u bob -p pw

The mechanism: a value piped into a command that reads a password from standard input
(or stores it as a secret); the positional argument a command documents as the password;
the `user/password@` of Oracle's tools; -p after a user flag; user:password after a
credentials flag; a secret store's value; what a command prints after naming a secret.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from .arguments import (
    PORTS,
    SHELL_WORD,
    offsets_among,
    offsets_of,
    pair_password,
    pattern_starts,
    plain_word,
    secret_argument,
    value_span,
)
from .shapes import Hit, scan_within, words_within
from .values import (
    Strength,
    char_offsets,
    find_words,
    is_placeholder,
    looks_random,
    may_hold,
    mixed_case_random,
    name_strength,
    scan,
    text_words,
    value_is_secret,
)

__all__ = ["announced_hits", "credential_flag_hits", "fed_hits", "flag_hits", "login_argument_hits", "positional_hits",
           "printed_hits", "secret_set_hits", "stdin_hits", "store_flag_hits"]


# echo pw | … --password-stdin / sudo -S / chpasswd / passwd --stdin
_STDIN = re.compile(rf"""\b(?:echo|printf)(?:[ \t]+-[neE]{{1,3}})*(?:[ \t]+(?:'%s(?:\\n)?'|"%s(?:\\n)?"))?[ \t]+"""
                    rf"""(?P<secret>{SHELL_WORD})[ \t]*\|[^\n|]{{0,200}}?(?:--?password-stdin|--stdin\b|\bsudo[ \t]+(?:-\w+[ \t]+)*-S\b|"""
                    rf"""\bchpasswd\b|\bpasswd\b|\bkinit\b|--pass(?:word)?-stdin)""")


_STDIN_WORDS = ("stdin", "sudo", "passwd", "chpasswd", "kinit")


# echo X | vercel env add DB_PASSWORD, printf X | gh secret set NAME, | wrangler secret put NAME,
# | docker secret create NAME -: a value piped into a command that stores it as a secret.
_STDIN_STORED = re.compile(rf"""(?:echo|printf)(?:[ \t]+-[neE]{{1,3}})*(?:[ \t]+(?:'%s(?:\\n)?'|"%s(?:\\n)?"))?[ \t]+"""
                           rf"""(?P<secret>{SHELL_WORD})[ \t]*\|[ \t]*(?P<command>[^\n|;&]{{1,200}})""")
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


_PIPED_INTO = re.compile(rf"""(?:echo|printf)(?:[ \t]+-[neE]{{1,3}})*[ \t]+(?P<secret>{SHELL_WORD})[ \t]*\|(?P<command>[^\n|;&]{{1,200}})""")


def stdin_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """A value echoed into a command that reads a password from standard input, or that
    stores it as a secret."""
    if b"echo" not in words and b"printf" not in words:
        return
    for at, _word in find_words(lowered, data, [w for w in ("echo", "printf") if w.encode() in words]):
        stored = _STDIN_STORED.match(text, at)
        if stored and _stores_secret(stored.group("command")) and secret_argument(stored.group("secret")):
            yield Hit("password", *value_span(stored, "secret"), "a value piped into a command that stores a secret")
        piped = _PIPED_INTO.match(text, at) if not (stored and _stores_secret(stored.group("command"))) else None
        if (piped and _SECRET_COMMAND.search(piped.group("command")) and not _NOT_READERS.match(piped.group("command"))
                and secret_argument(piped.group("secret")) and pair_password(piped.group("secret").strip("'\""))):
            yield Hit("password", *value_span(piped, "secret"), "a value piped into a command that takes a secret")
    done = 0
    for at, word in find_words(lowered, data, [w for w in _STDIN_WORDS if w.encode() in words]):
        yield from _stdin_line(text, max(done, at - 400), at + len(word) + 20)
        done = max(done, at)


def _stdin_line(text: str, start: int, end: int) -> Iterator[Hit]:
    for match in _STDIN.finditer(text, start, min(len(text), end)):
        value = match.group("secret")
        if secret_argument(value.split(":", 1)[1] if "chpasswd" in match.group(0) and ":" in value else value):
            start, end = value_span(match, "secret")
            yield Hit("password", start, end, "password piped into a command's standard input")


# The commands that take a password as a positional argument, and where: each pattern
# is tried only where its command's word stands.
_POSITIONAL = {word: re.compile(pattern, re.IGNORECASE) for word, pattern in {
    # -b (batch: the password on the command line), not -B (bcrypt)
    "htpasswd": rf"""htpasswd[ \t]+(?:-(?-i:[a-zA-Z]*n[a-zA-Z]*b[a-zA-Z]*)[ \t]+{SHELL_WORD}|-(?-i:[a-zA-Z]*b[a-zA-Z]*)[ \t]+(?:-\w+[ \t]+)*{SHELL_WORD}[ \t]+{SHELL_WORD})"""
                rf"""[ \t]+(?P<secret>{SHELL_WORD})""",  # -nb user pw, -b file user pw
    "lftp": rf"""lftp\b[^\n|;]{{0,200}}?[ \t]-u[ \t]+[^\s,'"]{{1,64}},(?P<secret>{SHELL_WORD})""",  # -u user,pw
    "xfreerdp": rf"""xfreerdp\b[^\n|;]{{0,200}}?[ \t]/p:(?P<secret>{SHELL_WORD})""",
    "rdesktop": rf"""rdesktop\b[^\n|;]{{0,200}}?[ \t]-p[ \t]+(?P<secret>{SHELL_WORD})""",
    "mosquitto_passwd": rf"""mosquitto_passwd[ \t]+-b[ \t]+{SHELL_WORD}[ \t]+{SHELL_WORD}[ \t]+(?P<secret>{SHELL_WORD})""",
    "rabbitmqctl": rf"""rabbitmqctl[ \t]+(?:add_user|change_password)[ \t]+{SHELL_WORD}[ \t]+(?P<secret>{SHELL_WORD})""",
    "net user": rf"""net[ \t]+user[ \t]+{SHELL_WORD}[ \t]+(?P<secret>(?!/)[^\s/*][^\s]{{0,255}})""",
    "net use": r"""net[ \t]+use[ \t]+(?:\w:[ \t]+)?\\{1,2}\S+[ \t]+(?P<secret>(?!/)[^\s/*][^\s]{0,255})""",
    "mysqladmin": rf"""mysqladmin\b[^\n|;]{{0,200}}?[ \t]password[ \t]+(?P<secret>{SHELL_WORD})""",
    "plus": r"""(?:sql)?plus[ \t]+(?:-\w+[ \t]+)*["']?[\w$#]{1,64}/(?P<secret>[^\s@/"']{1,128})@""",
    "dp": r"""(?:exp|imp)dp[ \t]+["']?[\w$#]{1,64}/(?P<secret>[^\s@/"']{1,128})@""",
    "rman": r"""rman[ \t]+target[ \t]+["']?[\w$#]{1,64}/(?P<secret>[^\s@/"']{1,128})@""",
    "conn": r"""conn(?:ect)?[ \t]+[\w$#]{1,64}/(?P<secret>[^\s@/"']{1,128})@""",
    "convertto-securestring": r"""convertto-securestring[ \t]+(?:-String[ \t]+)?(?P<secret>'[^'\n]{1,256}'|"[^"\n]{1,256}")""",
    "/pass": rf"""(?<![^\s"'])/(?:pass|password|pwd):(?P<secret>{SHELL_WORD})""",  # a flag, not a path's part
    # Redis AUTH [user] password, MySQL SET PASSWORD [FOR u] = 'x'
    # (MONITOR and the slow log print each word quoted: "AUTH" "default" "pw")
    "auth": rf"""(?<![\w.])(?:(?-i:AUTH)[ \t]+(?:[\w-]{{1,64}}[ \t]+)?|(?-i:AUTH|auth)"[ \t]+(?:"[\w-]{{1,64}}"[ \t]+)?(?="))"""
            rf"""(?P<secret>{SHELL_WORD})[ \t]*(?:\r?\n|\Z)""",
    # FTP's and POP3's PASS, as a session log or a protocol trace shows it (upper case only)
    "pass": rf"""(?<![\w.])(?-i:PASS)[ \t]+(?P<secret>{SHELL_WORD})[ \t]*(?:\r?\n|\Z)""",
    # mc admin user add ALIAS USER SECRET
    "user add": rf"""user[ \t]+add[ \t]+{SHELL_WORD}[ \t]+{SHELL_WORD}[ \t]+(?P<secret>{SHELL_WORD})[ \t]*(?:\r?\n|\Z)""",
    "using": rf"""using[ \t]+(?P<secret>{SHELL_WORD})""",  # db2 connect to DB user U using PW (the user: _USER_BEFORE)
    # SNMP communities (Cisco's snmp-server community X RO, net-snmp's rocommunity X)
    "community": rf"""(?:(?<=snmp-server[ ])|(?<=ro)|(?<=rw))community[ \t]+(?P<secret>{SHELL_WORD})(?=[ \t]+(?:RO|RW|ro|rw|view|\d)\b|[ \t]*(?:\r?\n|\Z)|[ \t]+[\d.:/]+)""",
    # strongSwan's ipsec.secrets: [ids] : PSK "X" (EAP, XAUTH, NTLM the same)
    "psk": r"""(?<=:)[ \t]{0,4}(?-i:PSK|EAP|XAUTH|NTLM)[ \t]+(?P<secret>"[^"\n]{1,256}"|'[^'\n]{1,256}'|0[xs][^\s]{1,256})""",
    # OpenVPN's inline <auth-user-pass> block: a user, then the password
    "<auth-user-pass>": r"""<auth-user-pass>[ \t]*\r?\n[^\n]{1,128}\r?\n(?P<secret>[^\s]{1,256})[ \t]*\r?\n[ \t]*</auth-user-pass>""",
    # Postfix's sasl_passwd: [host]:port user:password
    "]:": r"""(?:^|(?<=\n))\[[\w.-]{1,253}\](?::\d{1,5})?[ \t]+[^\s:]{1,128}:(?P<secret>[^\s]{1,256})(?=[ \t]*(?:\r?\n|\Z))""",
    # SQLCipher: PRAGMA [db.]key = 'x' / rekey, ATTACH … KEY 'x'
    "pragma": r"""pragma[ \t]+(?:\w{1,64}\.)?(?:re)?key[ \t]*=[ \t]*(?P<secret>'[^'\n]{1,256}'|"[^"\n]{1,256}")""",
    "attach": r"""attach[ \t]+(?:database[ \t]+)?'[^'\n]{1,256}'[ \t]+as[ \t]+\w{1,64}[ \t]+key[ \t]+(?P<secret>'[^'\n]{1,256}')""",
    "authorize-account": rf"""authorize-account[ \t]+{SHELL_WORD}[ \t]+(?P<secret>{SHELL_WORD})""",  # b2 authorize-account ID KEY
    "wpa_passphrase": rf"""wpa_passphrase[ \t]+{SHELL_WORD}[ \t]+(?P<secret>{SHELL_WORD})""",  # SSID, then its passphrase
    # composer config http-basic.HOST user password, github-oauth.github.com TOKEN, gitlab-token.HOST TOKEN
    "http-basic.": rf"""http-basic\.[\w.-]{{1,253}}[ \t]+{SHELL_WORD}[ \t]+(?P<secret>{SHELL_WORD})""",
    "-oauth.": rf"""(?<=github|gitlab)-oauth\.[\w.-]{{1,253}}[ \t]+(?P<secret>{SHELL_WORD})""",
    "-token.": rf"""(?<=gitlab)-token\.[\w.-]{{1,253}}[ \t]+(?P<secret>{SHELL_WORD})""",
    # MinIO's mc alias set NAME URL ACCESS_KEY SECRET_KEY (and its older config host add)
    "alias set": rf"""alias[ \t]+set[ \t]+{SHELL_WORD}[ \t]+\S{{1,256}}[ \t]+{SHELL_WORD}[ \t]+(?P<secret>{SHELL_WORD})""",
    "host add": rf"""host[ \t]+add[ \t]+{SHELL_WORD}[ \t]+\S{{1,256}}[ \t]+{SHELL_WORD}[ \t]+(?P<secret>{SHELL_WORD})""",
    "set password": r"""set[ \t]+password[ \t]+(?:for[ \t]+\S{1,128}[ \t]*)?=[ \t]*(?:password\()?(?P<secret>'[^'\n]{1,256}')""",
    "ssh-keygen": rf"""ssh-keygen\b[^\n|;]{{0,200}}?[ \t]-[NP][ \t]+(?P<secret>{SHELL_WORD})""",  # new / old passphrase
    "ldappasswd": rf"""ldappasswd\b[^\n|;]{{0,300}}?[ \t]-s[ \t]+(?P<secret>{SHELL_WORD})""",  # the new password
    # macOS keychain: security add-generic-password … -w password
    "-password": rf"""-password\b[^\n|;]{{0,200}}?[ \t]-w[ \t]+(?P<secret>{SHELL_WORD})""",
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


# Where a command starts: its line's start, a prompt (redis> , $ , 127.0.0.1:6379> ), the client
# named before it (redis-cli … AUTH), a pipe or a quote.
_COMMAND_START = re.compile(r"(?:^|\n)[ \t]*(?:[\w.:@-]{0,40}>[ \t]*|\$[ \t]+)?\Z|(?i:redis|valkey|keydb)[^\n]{0,100}\Z|[|;`\"'][ \t]*\Z")


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
        if word == "auth" and text.startswith("AUTH ", at) and not _COMMAND_START.search(text, max(0, at - 120), at):
            continue  # "# end AUTH related stuff.": the word in prose, not Redis's command
        if match and match.start() <= at and secret_argument(match.group("secret")):
            start, end = value_span(match, "secret")
            yield Hit("password", start, end, "password given to a command by position")


# The flag convention of command lines: after a user flag (-u bob, --username bob,
# --cluster-username bob) a -p / -P on the same line is that user's password (az, psexec,
# mosquitto_pub, sqlcmd-likes); ssh-keygen's -P (old) and -N (new) are passphrases.
_USER_FLAG = re.compile(r"""\s(?:-[uU]|--(?:[a-z]+-)?user(?:name)?)(?:\s{1,4}|=)['"]?[A-Za-z]""")  # not a uid
_PASSWORD_FLAG = re.compile(r"\s-[pP](?:\s{1,4}|=)(?P<v>" + SHELL_WORD + ")")
_FLAG_WINDOW = 300
_ATTACHED_P = re.compile(r"(?<![\w-])(?:mysql\w*|mariadb\w*)\s")  # their -p takes its value attached (-pX)
_PASSPHRASE_FLAG = re.compile(r"\s-[PN]\s{1,4}(?P<v>" + SHELL_WORD + ")")


def flag_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes] | None = None) -> Iterator[Hit]:
    """-p after a user flag on one command line; ssh-keygen's -P / -N (`words`: those
    of `data`, when found already)."""
    if words is None:
        words = text_words(data)
    starts = offsets_of(data, " -u", len(text), "-u") + offsets_of(data, "\t-u", len(text), "-u")
    for at in offsets_of(data, "-user", len(text), "-u"):  # --user, --cluster-username
        space = max(text.rfind(" ", max(0, at - 24), at), text.rfind("\t", max(0, at - 24), at))
        if space >= 0:
            starts.append(space)
    users = sorted(m.end() for at in starts for m in [_USER_FLAG.match(text, at)] if m)  # -p looks back
    for at in offsets_of(data, " -p", len(text)) if users else []:
        i = bisect.bisect_right(users, at) - 1
        user = users[i] if i >= 0 else -1
        if user < 0 or at - user > _FLAG_WINDOW or "\n" in text[user:at]:
            continue  # no user flag on this command line before the -p
        match = _PASSWORD_FLAG.match(text, at)
        if (match and not PORTS.fullmatch(match.group("v")) and _flag_secret(match.group("v"))
                and not _ATTACHED_P.search(lowered, user - _FLAG_WINDOW if user > _FLAG_WINDOW else 0, at)):
            yield Hit("password", *value_span(match, "v"), "password flag after a user flag")
    if may_hold(words, b"ssh-keygen") and b"ssh-keygen" in data:
        for at in offsets_of(data, " -n", len(text)) + offsets_of(data, " -p", len(text)):
            match = _PASSPHRASE_FLAG.match(text, at)
            if match and "ssh-keygen" in lowered[max(0, at - 200):at] and secret_argument(match.group("v")):
                yield Hit("password", *value_span(match, "v"), "ssh-keygen passphrase (-P / -N)")


def _flag_secret(value: str) -> bool:
    """A quoted value as any password; a bare word only when it looks like one (-p shop: a name)."""
    if value[:1] in "'\"" or value.startswith("$'"):
        return secret_argument(value)
    return secret_argument(value) and value_is_secret(value, Strength.PASSWORD, quoted=False, literal=False)


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
        for at in offsets_of(data, word, len(text)):
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
        for at in offsets_of(data, word, len(text), base):
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
                            r"|(?<![a-z])(?:auth|creds?|pass|pw)(?=[._-]|\s|\Z))"
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


def _announced_secret(value: str) -> bool:
    if is_placeholder(value) or value.startswith(("/", "http", "$", "-", "[", "(")) or value.endswith((".", ":")):
        return False
    return looks_random(value, 12) or value_is_secret(value, Strength.PASSWORD, quoted=False, literal=False) \
        and (any(c.isdigit() for c in value) and any(c.isalpha() for c in value) or mixed_case_random(value))


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
        elif pair_password(value):
            yield Hit("password", match.start("v"), match.end("v"), f"password of user:password after {flag}")


# A CLI's secret store given NAME then the value: dotnet user-secrets set "Smtp:Password" X,
# gh secret set NAME --body X, a vault's kv put NAME X; the name (its last part after a
# ':' or '__') says secret.
_SECRET_SET = re.compile(rf"""(?<![\w-])(?:secrets?|user-secrets|env|config|vars?|kv|parameter|param)[ \t]+(?:set|add|put)"""
                         rf"""(?:[ \t]+--?[\w-]{{1,32}}(?:=\S{{1,64}})?)*[ \t]+(?P<name>"[^"\n]{{1,128}}"|'[^'\n]{{1,128}}'|[^\s'"=]{{1,128}})"""
                         rf"""[ \t]+(?:(?:--body|-b|--value)(?:[ \t]+|=))?(?P<secret>{SHELL_WORD})""")


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
        if name_strength(name) in (Strength.PASSWORD, Strength.TOKEN) and secret_argument(value) and not plain_word(value):
            yield Hit("password", *value_span(match, "secret"), f"value stored as {name}")  # not: env add NAME production


# A here-string or a process substitution hands a value over as a file or standard input:
# `gh secret set NAME <<< X`, `passwd --stdin bob <<< X`, `--vault-password-file=<(echo X)`.
_HERE_STRING = re.compile(rf"""<<<[ \t]*(?P<secret>{SHELL_WORD})""")
_SUBSTITUTED = re.compile(rf"""--?[\w-]{{0,40}}(?:pass|secret|token|key|cred)[\w-]{{0,40}}(?:=|[ \t]{{1,4}})<\([ \t]{{0,4}}"""
                          rf"""(?:echo|printf)(?:[ \t]+-[neE]{{1,3}})?[ \t]+(?P<secret>{SHELL_WORD})[ \t]*\)""", re.IGNORECASE)
_ECHOED = re.compile(rf"""<\([ \t]{{0,4}}(?:echo|printf)(?:[ \t]+-[neE]{{1,3}})?[ \t]+(?P<secret>{SHELL_WORD})[ \t]*\)""")
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
    starts = pattern_starts(data, _FED_STARTS)
    for at in offsets_among(data, starts, "<<<", len(text)):
        match = _HERE_STRING.match(text, at)
        command = text[max(text.rfind("\n", 0, at) + 1, at - 300):at]
        if match and secret_argument(match.group("secret")) and (
                _READS_SECRET.search(command) or _stores_secret(command)
                or _SECRET_COMMAND.search(command) and not _NOT_READERS.match(command)
                and pair_password(match.group("secret").strip("'\"").split()[-1])):
            secret = value_span(match, "secret")
            value = text[secret[0]:secret[1]]
            if " " in value and "user" in value.lower():  # ftp's 'user bob PW'
                secret = (secret[0] + value.rindex(" ") + 1, secret[1])
            yield Hit("password", *secret, "a secret given by here-string")
    for at in offsets_among(data, starts, "<(", len(text)):
        match = _SUBSTITUTED.search(text, max(0, at - 90), at + 300)
        if match and match.start() <= at < match.end() and secret_argument(match.group("secret")):
            yield Hit("password", *value_span(match, "secret"), "a secret given by process substitution")
            continue
        echoed = _ECHOED.match(text, at)
        command = text[max(text.rfind("\n", 0, at) + 1, at - 300):at]
        if (echoed and _SECRET_COMMAND.search(command) and secret_argument(echoed.group("secret"))
                and pair_password(echoed.group("secret").strip("'\""))):  # gcloud secrets … --data-file=<(echo X)
            yield Hit("password", *value_span(echoed, "secret"), "a secret given by process substitution")


# A secret store's value flag (az keyvault secret set --value X, aws ssm put-parameter --value X,
# vault kv put … --value X) and Windows tools' /p: after a /u: (mstsc, net, runas-likes).
_VALUE_FLAG = re.compile(rf"""--(?:value|secret-value|secret-string|data)(?:=|[ \t]{{1,4}})(?P<secret>{SHELL_WORD})""")
_STORE_WORDS = re.compile(r"(?i)(?<![\w/.-])(?:secrets?|keyvault|ssm|put-parameter|parameter|vault|credentials?)(?![\w/.-])")
_SLASH_P = re.compile(rf"""/p(?:ass(?:word)?)?:(?P<secret>{SHELL_WORD})""", re.IGNORECASE)
_SLASH_USER = re.compile(r"(?i)(?<!\S)/u(?:ser)?:\S")


_VALUE_FLAG_STARTS = re.compile(rb"--(?=value|secret-value|secret-string|data)")


def store_flag_hits(text: str, data: bytes) -> Iterator[Hit]:
    """The value flag of a command that stores a secret; /p: after /u: on a command line."""
    starts = pattern_starts(data, _VALUE_FLAG_STARTS)
    for needle in ("--value", "--secret-value", "--secret-string", "--data"):
        for at in offsets_among(data, starts, needle, len(text)):
            match = _VALUE_FLAG.match(text, at)
            line = text[max(text.rfind("\n", 0, at) + 1, at - 300):at]
            if (match and _STORE_WORDS.search(line) and secret_argument(match.group("secret"))
                    and (pair_password(match.group("secret").strip("'\"")) or looks_random(match.group("secret"), 16))):
                yield Hit("password", *value_span(match, "secret"), f"the value of {needle} of a secret store")
    for at in offsets_of(data, " /p", len(text)) if b" /p" in data else ():
        match = _SLASH_P.match(text, at + 1)
        line = text[max(text.rfind("\n", 0, at) + 1, at - 300):at]
        if (match and _SLASH_USER.search(line) and secret_argument(match.group("secret"))
                and not match.group("secret").strip("'\"").isdigit()):  # robocopy's /p:8080 is no password
            yield Hit("password", *value_span(match, "secret"), "/p: after /u: on a command line")
