"""Secrets found by their name or their command line.

    NAME=value  export NAME=value  "name": "value"  name: value  name = "value"
    --password x  --token=x  <password>x</password>  Authorization: Bearer x
    machine h login u password x (.netrc)  mysql -pX  curl -u user:x  sshpass -p x

Names are found from a few keywords outward (pass, pwd, secret, token, key, auth,
cred, sig): one `str.find` per keyword over the lower-cased text, which is far cheaper
than a regular expression tried at every word of a long tool output. Each name is
judged by `values.name_strength`, each value by `values.value_is_secret`.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

from .precision import reads_as_code
from .shapes import Hit
from .values import (
    FOREIGN_PASSWORDS,
    Strength,
    camel_words,
    find_words,
    is_placeholder,
    looks_random,
    mixed_case_random,
    name_strength,
    value_is_secret,
)

__all__ = ["KEYWORDS", "bearer_hits", "command_hits", "grouped_password", "keyword_positions", "named_hits", "plist_hits"]

KEYWORDS = ("pass", "pwd", "secret", "token", "key", "auth", "cred", "sig", "_pat", "pw", "mnemonic", "psk", "priv",
            *FOREIGN_PASSWORDS)

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_NAME_TAIL = re.compile(r"[A-Za-z0-9_.-]{0,65}")
_NAME_RUN = re.compile(r"[A-Za-z0-9_.-]*")
_MAX_NAME = 64

# After a name: its closing quote (JSON, dict keys, escaped in a transcript) or the ]
# of os.environ["X"], then = : := => ?= (not == != :: ://).
_SEP = re.compile(r"""(?P<close>\\{0,3}["'`])?\]?[ \t]{0,16}(?P<sep>:=|=>|\?=|\|\|=|\?\?=|=(?![=~])|:(?![:/=])|<-(?!-)"""
                  r"""|(?(close)(?<=[ \t])to(?=[ \t]{1,4}["'])|(?!)))[ \t]{0,16}""")  # Kotlin: "password" to "x"
_SPACES = re.compile(r"[ \t]{1,16}")
_CALL_END = re.compile(r"""\\{0,3}["'][ \t]{0,4}\)""")
_ARGUMENTS = re.compile(r"""\\{0,3}["'][ \t]{0,4},[ \t]{0,24}(?=\\{0,3}["'])""")  # wp-config aligns its values
_PROSE = re.compile(r"[ \t]{1,4}(?:is|was|are)[ \t]{1,4}", re.IGNORECASE)
_TO = re.compile(r"[ \t]{1,4}(?:to|with|as)[ \t]{1,4}", re.IGNORECASE)
_QUOTE = re.compile(r"(\\{0,3})([\"'`])")
# An unquoted value ends at a space, a quote, , ; | < > ( ) { } [ ], an escape (\n in a
# JSON-escaped transcript) or & starting the next query parameter.
_UNQUOTED = re.compile(
    r"""(?:[^\s"'`,;&|<>(){}\[\]\\]|&(?![A-Za-z0-9_.-]{1,64}=)|\\(?![nrt"'\\/u]))(?:[^\s"'`,;&|<>(){}\[\]\\]|&(?![A-Za-z0-9_.-]{1,64}=)|\\(?![nrt"'\\/u])"""
    r"""|\|(?=[A-Za-z0-9+/_-]{8})){0,511}"""  # prod:acme|3hIq…: a | glued inside a value joins its parts
)
_MAX_QUOTED = 1024
_BRACED = re.compile(r"""\{(?![{$])([^{}\n"' ]{1,256})\}(?=[;"'\n\r]|\Z)""")
_SCHEMES = {"bearer": "bearer", "token": "bearer", "basic": "basic-auth", "apikey": "bearer",
            "api-key": "bearer", "key": "bearer", "sso-key": "bearer", "bot": "bearer", "otp": "bearer",
            "jwt": "bearer", "digest": "", "negotiate": "bearer", "ntlm": "bearer"}
_AUTH_TUPLE = re.compile(r"""[(\[]\s{0,8}(["'])[^"'\n]{0,256}\1\s{0,8},\s{0,8}(["'])(?P<secret>[^"'\n]{1,256})\2\s{0,8}[)\]]""")
# Names whose value may be a (user, password) pair.
_PAIR_HEADS = frozenset({"auth", "credentials", "creds", "cred", "login"})
# .netrc: password follows machine HOST (or default) and its login/account/port tokens.
_NETRC_BEFORE = re.compile(r"(?:^|\s)(?:machine\s+\S+|default)(?:\s+(?:login|account|port)\s+\S+)*\s+$")
_AFTER_NAME = frozenset("=:\"'`\\]> \t?")
_WORD_EDGE = frozenset(" \t\n\"'(")
_SPACE_ASSIGNMENT = re.compile(
    r"(?:(?:^|\n)[ \t]*(?:ENV|ARG|setenv|set(?:[ \t]+-[gxUul]+)+)|\b(?i:config(?:ure)?)[ \t]+(?i:set)(?:[ \t]+--?\S+)*"
    r"|\benv:set|\bsecrets?[ \t]+set)[ \t]+\Z")  # netlify env:set NAME value, a CLI's secret set NAME value
_LINE_START = frozenset("\n;&|`'\"([{ \t")


@lru_cache(maxsize=4096)
def _head(name: str) -> str:
    """The last word of a name, lower-cased: db.password -> password, X-Auth-Token -> token."""
    return re.split(r"[_.-]", name.lower())[-1]


def keyword_positions(lowered: str, keywords: Iterable[str], data: bytes | None = None) -> list[tuple[int, int]]:
    """(offset, length) of each keyword in `lowered`, in order: one find per keyword, in
    `data` (`lowered` in UTF-8, when given: a byte scan, several times faster than one
    over a text that holds a character outside Latin-1)."""
    if data is None:
        data = lowered.encode("utf-8", "surrogatepass")
    return sorted((at, len(word)) for at, word in find_words(lowered, data, list(dict.fromkeys(keywords))))


def named_hits(text: str, lowered: str, secret_words: frozenset[str] = frozenset(),
               ignore_names: frozenset[str] = frozenset(),
               positions: list[tuple[int, int]] | None = None) -> Iterator[Hit]:
    """Values of secret-named assignments, flags, headers and .netrc entries (`positions`:
    `keyword_positions` of KEYWORDS and `secret_words`, when found already)."""
    skip = 0  # text[:skip] is done: a name inside a value found already is no name
    n = len(text)
    if positions is None:
        positions = keyword_positions(lowered, (*KEYWORDS, *secret_words))
    for at, length in positions:
        if at < skip:
            continue
        tail = _NAME_TAIL.match(text, at + length)
        end = tail.end() if tail else at + length
        after = text[end] if end < n else ""
        if after == "(" and text[end + 1:end + 2] in ("'", '"'):  # ds.setPassword("x"), .withApiKey("x"), .password("x")
            hit = _setter(text, at, end)
            if hit is not None:
                skip = hit.end
                yield hit
                continue
        if after not in _AFTER_NAME and after not in _PAIR_ENDS:
            skip = end  # token), key.method(: no value can follow
            continue
        if after in " \t" and length > 3 and text[at - 1:at] in _WORD_EDGE:
            # A word in prose ("the token is", "a key to"): only a password or a separator
            # further on (key = value) can make it a name.
            ahead = _SPACES.match(text, end)
            if (ahead and text[ahead.end():ahead.end() + 1] not in ("=", ":") and not lowered.startswith("pass", at)
                    and not _space_assignment_before(text, lowered, at)
                    and not _header_directive_before(text, lowered, at)
                    and not _STRUCTURED.search(text, max(0, at - 64), end)  # secret_access_key X: a name, not a word
                    and not _directive_at(text, at)):  # enable secret X
                skip = end
                continue
        start = at
        while start > 0 and text[start - 1] in _NAME_CHARS and at - start <= _MAX_NAME:
            start -= 1
        if at - start > _MAX_NAME or end - at - length > _MAX_NAME:
            run = _NAME_RUN.match(text, at)
            skip = run.end() if run else at + length  # a 1 MB "word" holds no name
            continue
        if start and text[start - 1] == "\\" and text[start] in "nrt":
            start += 1  # \nPASSWORD=… inside a JSON-escaped transcript
        raw = text[start:end]
        name = raw.strip("-.")
        if not name:
            continue
        name_start = start + raw.index(name[0])
        name_end = name_start + len(name)
        if not secret_words and name_strength(name, True, True) is None:
            skip = max(skip, name_end)  # passes, keys, token_id, auth.py: no secret's name
            continue
        hit = _judge(text, lowered, name, name_start, name_end, secret_words, ignore_names) \
            if after in _AFTER_NAME else None
        if hit is None and after in _PAIR_ENDS and text[name_start - 1:name_start] in " \"'=:":
            hit = _pair(text, name, name_start, name_end)
        elif hit is not None and not hit.kind and hit.end > hit.start and name.lower() == "key":
            # key="ApiKey" value="…": the value of "key" names the secret
            hit = _pair(text, text[hit.start:hit.end], hit.start, hit.end) or hit
        if hit is None:
            skip = max(skip, name_end)
            continue
        skip = max(name_end, hit.end)
        if hit.kind:
            yield hit


# the last of a setter's literals (keyring.set_password(service, user, pw))
_SETTER_LITERAL = re.compile(r"""\([ \t]{0,4}(?:["'][^"'\\\n]{0,128}["'][ \t]{0,4},[ \t]{0,4}){0,3}"""
                             r"""(?P<q>["'])(?P<v>[^"'\\\n]{1,256})(?P=q)[ \t]{0,4}\)""")
_SETTER_VERB = re.compile(r"(?:set|with|use|put|store|save|update|change)_?(?=[A-Z_])", re.IGNORECASE)


def _setter(text: str, at: int, end: int) -> Hit | None:
    """The literal given to a method that sets a secret: setPassword("x"), withApiKey("x"),
    set_token("x"), or a builder's .password("x")."""
    start = max(text.rfind(".", at, end) + 1, at)  # keyring.set_password: the method's own name
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_") and at - start <= _MAX_NAME:
        start -= 1
    name = text[start:end]
    verb = _SETTER_VERB.match(name)
    if verb is None and not (start and text[start - 1] == "." and name.lower() in ("password", "passwd", "secret",
                                                                                  "token", "apikey", "passphrase")):
        return None  # getPassword("user"), checkToken("x"): a lookup or a check, not a setting
    strength = name_strength(name[verb.end():] if verb else name)
    literal = _SETTER_LITERAL.match(text, end)
    if strength not in (Strength.PASSWORD, Strength.TOKEN) or literal is None:
        return None
    value = literal.group("v")
    if not value_is_secret(value, strength, quoted=True, literal=True) or is_placeholder(value):
        return None
    return Hit("secret", literal.start("v"), literal.end("v"), f"literal given to {name}(…)")


# - name: DB_PASSWORD / value: x (Kubernetes env), {"name": "API_KEY", "value": "x"},
# <add key="ApiKey" value="x" />: the name is one field's value, the secret the next field's.
_PAIR_ENDS = frozenset("\n\r,;}\"'")
_FIELD_BEFORE = re.compile(r"""(?i)(?<![A-Za-z0-9_])(?:name|key)\\?["']?[ \t]{0,4}[:=][ \t]{0,4}\\?["']?\Z""")
_VALUE_FIELD = re.compile(r"""(?i)(?<![A-Za-z0-9_])value\\?["']?[ \t]{0,4}[:=][ \t]{0,4}""")


# variable "db_password" { default = "x" } (HCL), a block named by the secret whose
# default or value field holds it.
_BLOCK_VALUE = re.compile(r"""\\?["']?[ \t]{0,8}\{[^{}]{0,200}?(?<![\w.])(?:default|value)[ \t]{0,4}[=:][ \t]{0,4}""")
# <entry key="password">x</entry> (Java's XML properties), <setting name="ApiKey">x</setting>
_ELEMENT_TEXT = re.compile(r"""\\?["'][ \t]{0,4}>""")


def _pair(text: str, name: str, start: int, end: int) -> Hit | None:
    block = _BLOCK_VALUE.match(text, end)
    if block and text[start - 1:start] in "\"'":
        strength = name_strength(name)
        return _value_at(text, name, strength, block.end(), True, f"default of the {name} block") if strength else None
    if not _FIELD_BEFORE.search(text, max(0, start - 24), start):
        return None
    strength = name_strength(name)
    element = _ELEMENT_TEXT.match(text, end)
    if strength and element:
        close = text.find("</", element.end(), element.end() + _MAX_QUOTED)
        if close > element.end() and "\n" not in text[element.end():close]:
            hit = _value_at(text, name, strength, element.end(), True, f"<… {name}> element", element=True)
            return Hit(hit.kind, hit.start, min(hit.end, close), hit.rule) if hit else None
    field = _VALUE_FIELD.search(text, end, min(len(text), end + 120)) if strength else None
    if strength is None or field is None or re.search(r"(?i)\b(?:name|key)\b", text[end:field.start()]):
        return None
    return _value_at(text, name, strength, field.end(), True, f"value of the {name} entry")


_LABEL_HEADS = frozenset({"key", "token", "secret", "pass", "pw", "pwd"})
# Words before "pass" that make it the verb: "all tests pass: …", "checks pass", "it should pass".
_PASS_NOT_LABEL = frozenset({"test", "tests", "check", "checks", "build", "builds", "ci", "all", "it", "they", "should",
                             "will", "must", "can", "to", "would", "both", "lint", "job", "jobs", "suite", "suites",
                             "specs", "spec", "cases", "assertions", "now", "still", "first", "second", "then", "and",
                             "does", "did", "didn", "doesn", "not", "might", "may", "hall", "boarding", "bus", "day",
                             "season", "free", "mountain", "single", "double", "multi", "two", "one"})


def _strength(text: str, name: str, start: int, flag: bool, query: bool,
              secret_words: frozenset[str]) -> Strength | None:
    if secret_words and (name.lower() in secret_words or _head(name) in secret_words):
        return Strength.PASSWORD
    if start > 1 and text[start - 1] == " " and len(name) <= 6 and name.lower() in _LABEL_HEADS:
        # "Secret access key: …", "API key: …", "sort key: …", "router admin pass = …": the
        # label's other words count.
        line_start = max(text.rfind("\n", 0, start), start - 40)
        words = re.findall(r"[A-Za-z]+", text[line_start + 1:start])[-2:]
        if words and re.fullmatch(r"[\s\-*#>|]*(?:[A-Za-z]+ ){1,2}", text[line_start + 1:start]):
            strength = name_strength("_".join([*words, name]), flag, query)
            # "pass" after words is a password only if the value looks like one ("tests pass: 12/12")
            if name.lower() in ("pass", "pw", "pwd"):
                return None if not strength or _PASS_NOT_LABEL & {w.lower() for w in words} else Strength.TOKEN
            return strength
    return name_strength(name, flag, query)


# $password = 'x'; (PHP, Perl, PowerShell), @token = "x" (Ruby): a variable given a literal.
_QUOTED_SET = re.compile(r"""\\{0,3}["']?[ \t]{0,8}(?::=|[:=])[ \t]{0,8}\\{0,3}["']""")
_VARIABLE_SET = re.compile(r"""[ \t]{0,8}=[ \t]{0,8}(?P<q>["'])[^"'\n]{1,256}(?P=q)""")


def _judge(text: str, lowered: str, name: str, start: int, end: int, secret_words: frozenset[str],
           ignore_names: frozenset[str]) -> Hit | None:
    """The hit for the name text[start:end], or None (not a secret name, or no value).
    A Hit with an empty kind means: a name with a value that is no secret (skip it)."""
    before = text[start - 1] if start else "\n"
    dashes = 0
    while start - dashes > 0 and text[start - dashes - 1] == "-":
        dashes += 1
    if dashes:
        before = text[start - dashes - 1] if start - dashes else "\n"
    if (before in "$%@" and not (before in "$@" and _VARIABLE_SET.match(text, end))) or (
            before == "{" and start >= 2 and text[start - 2] == "$"):
        return None  # $API_KEY, ${API_KEY}, %API_KEY%, @token_required: a reference
    if name.lower() in ignore_names:
        return None
    flag = dashes > 0 and before in " \t'\"=([\n"
    query = before in "?&"
    # ;Pwd=… in a connection string is as plain a password as --pwd
    strength = _strength(text, name, start, flag or before == ";", query, secret_words)
    if strength is None and name.lower() in ("pwd", "pw", "pass") and _QUOTED_SET.match(text, end):
        strength = Strength.TOKEN  # pwd = "x", "pw": "x", $pass = "x": a literal given to it is no working directory
    if strength is None and name.lower() in ("pwd", "pw", "pass"):
        bare = _BARE_VALUE.match(text, end)  # a log's user=bob pass=Hv4…: only a password's shape counts
        return Hit("secret", bare.start("v"), bare.end("v"), f"{name}= with a password's shape") \
            if bare and _strong(bare.group("v")) and not is_placeholder(bare.group("v")) else None
    if strength is None:
        return None
    if before == "<" and text.startswith(">", end):  # <password>x</password>
        close = text.find("</", end + 1, end + 1 + _MAX_QUOTED)
        if close < 0 or not text.startswith(name, close + 2) or "\n" in text[end + 1:close]:
            return None  # <password>@host, a template's <password>: no element
        return _value_at(text, name, strength, end + 1, True, f"<{name}> element", element=True)
    sep = _SEP.match(text, end)
    if sep:
        form = sep.group("sep")
        tight = sep.end() - sep.start() == len(form) + len(sep.group("close") or "")
        literal = (query or flag or ("-" in name and form == ":")
                   or (form == ":" and name.isupper() and "_" in name)  # compose/k8s env maps
                   or (form in ("=", "?=") and tight and (before in _LINE_START or name.isupper())
                       and before not in "(,"))
        return _value_at(text, name, strength, sep.end(), literal, f"{name}{form}", short_ok=query)
    pair = (_ARGUMENTS.match(text, end)
            if before in "\"'" and (text[max(0, start - 6):start - 1].rstrip(" \t").endswith("(")
                                    or _SECTION_BEFORE.search(text, max(0, start - 80), start)) else None)
    if pair:  # define('DB_PASSWORD', 'x'), os.Setenv("API_KEY", "x"), props.put("password", "x")
        hit = _value_at(text, name, strength, pair.end(), True, f"({name!r}, …)", quoted_only=True)
        closing = _CALL_END.match(text, hit.end) if hit else None
        return hit if hit and closing else None
    spaces = _SPACES.match(text, end)
    if not spaces:
        return None
    if flag:
        if _FLAG_IN_PROSE.match(text, spaces.end()):
            return Hit("", spaces.end(), spaces.end(), "")  # "Using --password via the CLI is insecure": prose
        return _value_at(text, name, strength, spaces.end(), True, f"flag {'-' * dashes}{name}")
    if _space_assignment_before(text, lowered, start):  # ENV NAME value, setenv NAME value
        return _value_at(text, name, strength, spaces.end(), True, f"{name} (ENV / setenv)")
    if _header_directive_before(text, lowered, start):  # nginx / Apache: a header and its value
        return _value_at(text, name, strength, spaces.end(), True, f"{name} in a header directive")
    config = _CONFIG_LINE.match(text, spaces.end()) or (  # requirepass "X": quoted alone on its line
        _QUOTED_CONFIG.match(text, spaces.end() + 1) if text[spaces.end():spaces.end() + 1] in ("'", '"') else None)
    directive = (before == "\n" or _INDENT.search(text, max(0, start - 16), start) is not None  # the line's first word
                 or config is not None and _DIRECTIVE_BEFORE.search(text, max(0, start - 120), start) is not None)
    word = _NEXT_WORD.match(text, spaces.end())
    if word and _STRUCTURED.search(name) and not _PAIR_LIKE.search(word.group(0)) \
            and (_strong(word.group(0)) or looks_random(word.group(0), 16)) \
            and _config_value(word.group(0)) \
            and not _git_signing_key(name, word.group(0)):  # nmcli … wifi-sec.psk X, rclone … secret_access_key X
        return Hit("secret", word.start(), word.end(), f"{name} then its value on a command line")
    if strength is not Strength.PASSWORD:
        if config and directive and _config_value(config.group(0)) and (
                looks_random(config.group(0), 16) or _strong(config.group(0))):
            return Hit("secret", config.start(), config.end(), f"{name} in a space-separated config line")  # masterauth X
        told = _TO.match(text, end) or _PROSE.match(text, end)
        word = _NEXT_WORD.match(text, told.end()) if told and _STRUCTURED.search(name) else None
        if word and looks_random(word.group(0).rstrip(".,;:!?)"), 16) and not _PAIR_LIKE.search(word.group(0)):
            value = word.group(0).rstrip(".,;:!?)")  # set GITHUB_TOKEN to X, the api_key is X
            return Hit("secret", word.start(), word.start() + len(value), f"{name} given a value in a sentence")
        return None
    if config and directive and _config_value(config.group(0)):  # msmtprc, muttrc: password X
        return Hit("secret", config.start(), config.end(), f"{name} in a space-separated config line")
    grouped = grouped_password(text, spaces.end())
    if grouped and before in "\n \t":  # password kwcu ermw zogn kyvt
        return Hit("secret", *grouped, f"{name} followed by an app password in groups")
    if name.lower() == "password" and _NETRC_BEFORE.search(lowered, max(0, start - 300), start):
        return _value_at(text, name, strength, spaces.end(), True, ".netrc password")
    quote = _QUOTE.match(text, spaces.end())
    if quote and quote.group(2) != "`" and _head(name) in ("password", "passwd", "passphrase"):
        # PASSWORD 'x' (SQL), password "x" (prose)
        return _value_at(text, name, strength, spaces.end(), True, f"{name} 'quoted'", quoted_only=True)
    prose = _PROSE.match(text, end) or (_TO.match(text, end) if _STRUCTURED.search(name) or "_" in name else None)
    if prose:  # the token is X; set GITHUB_TOKEN to X
        return _value_at(text, name, strength, prose.end(), False, f"{name} is …", strict=True)
    return None


# A flag named in a sentence: a lower-case word after it, then the sentence goes on.
_FLAG_IN_PROSE = re.compile(r"(?:via|on|in|is|as|from|with|flag|option|argument|parameter|instead|or|and|and/or)[ \t]+"
                            r"(?:the|a|an|is|are|was|be|to|of|on|in|for|with|instead|command|cli|line|shell|it|this)\b")
_HEADER_DIRECTIVE = re.compile(r"(?i)(?:(?:proxy_set|add|more_set_input|grpc_set)_headers?|(?:request)?header[ \t]{1,8}"
                               r"(?:set|append|add|merge)|--header|-H)[ \t]{1,8}[\"']?\Z")
_CONFIG_LINE = re.compile(r"[^\s\"'`]{8,128}(?=[ \t]*(?:\r?\n|\Z))")
_QUOTED_CONFIG = re.compile(r"[^\s\"'`]{8,128}(?=[\"'][ \t]*(?:\r?\n|\Z))")


# An app password as Google and Apple show it: groups of four letters or digits.
_GROUPED = re.compile(r"""(?<!\S)[a-z0-9]{4}(?:[ -][a-z0-9]{4}){3,5}(?=[ \t]*(?:\r?\n|\Z|[.,;"'\\]))""")


def grouped_password(text: str, at: int) -> tuple[int, int] | None:
    """The span of an app password written in groups at `at` (kwcu ermw zogn kyvt): random
    letters, too few vowels for words."""
    grouped = _GROUPED.match(text, at)
    if grouped is None:
        return None
    letters = [c for c in grouped.group(0) if c.isalpha()]
    return grouped.span() if letters and 10 * sum(c in "aeiou" for c in letters) <= 3 * len(letters) else None


# config.set('auth', 'password', 'x'), Configure::write('Smtp', 'password', 'x'): a section first
_SECTION_BEFORE = re.compile(r"""\([ \t]{0,4}["'][\w.:-]{1,64}["'][ \t]{0,4},[ \t]{0,4}["']\Z""")
_PAIR_LIKE = re.compile(r"[=:/@]|^[\d.]+$")  # the next key=value, a path, an address: not this name's value
_STRUCTURED = re.compile(r"[A-Za-z0-9][._-][A-Za-z]|[a-z][A-Z]")  # db_password, wifi-sec.psk, apiKey: no prose word
_INDENT = re.compile(r"(?:^|\n)[ \t]{1,12}\Z")
# A device's or a daemon's directive: lower-case words from the line's start (enable secret X,
# ppp chap-secret X, tacacs-server key X).
_DIRECTIVE_BEFORE = re.compile(r"(?:^|\n)[ \t]{0,12}(?:[a-z][a-z0-9-]{1,30}[ \t]{1,4}){1,3}\Z")
_BARE_VALUE = re.compile(r"""[ \t]{0,2}[=:][ \t]{0,2}(?P<v>[^\s"'`,;&|<>(){}\[\]]{10,128})(?=[\s,;&)\]}]|\Z)""")
_NEXT_WORD = re.compile(r"""[^\s"'`]{8,128}(?=[ \t]|\r?\n|\Z)""")


def _space_assignment_before(text: str, lowered: str, at: int) -> bool:
    """`_SPACE_ASSIGNMENT` ends at `at`: looked for only where the words it needs stand
    (set, ENV, ARG; ſet, which its case-blind set matches too), as most places have none."""
    near = lowered[max(0, at - 24):at]
    return (("set" in near or "env" in near or "arg" in near or "ſet" in near)
            and _SPACE_ASSIGNMENT.search(text, max(0, at - 24), at) is not None)


def _header_directive_before(text: str, lowered: str, at: int) -> bool:
    """`_HEADER_DIRECTIVE` ends at `at`: looked for only where header or -h stands."""
    near = lowered[max(0, at - 40):at]
    return ("header" in near or "-h" in near) and _HEADER_DIRECTIVE.search(text, max(0, at - 40), at) is not None


def _directive_at(text: str, at: int) -> bool:
    """text[at] follows a device's or a daemon's lower-case directive words from its line's start."""
    near = at < 48 or text.rfind("\n", at - 48, at) >= 0
    return near and _DIRECTIVE_BEFORE.search(text, max(0, at - 120), at) is not None


def _strong(value: str) -> bool:
    """Upper and lower case letters and digits, ten characters or more: a password's shape."""
    return (len(value) >= 10 and any(c.isupper() for c in value) and any(c.islower() for c in value)
            and any(c.isdigit() for c in value))


def _config_value(value: str) -> bool:
    """The one value after a password's name on a config line: a password's shape, or a
    long run of lower-case letters with too few vowels for a word (fzivkdldhwwnuwzv)."""
    if is_placeholder(value) or reads_as_code(value):
        return False  # prstoken BKI_LOOKUP(pg_proc);: a declaration's macro, not a value
    if not value.isalpha():
        return value_is_secret(value, Strength.PASSWORD, quoted=False, literal=False)
    vowels = sum(c in "aeiouy" for c in value)
    return mixed_case_random(value) or value.islower() and len(value) >= 12 and 4 * vowels < len(value)


def _read_value(text: str, pos: int) -> tuple[int, int, bool] | None:
    """The value starting at `pos`: (start, end, quoted)."""
    quote = _QUOTE.match(text, pos)
    if quote:
        escape, mark = quote.groups()
        start = quote.end()
        close = text.find(escape + mark, start, start + _MAX_QUOTED)
        newline = text.find("\n", start, close if close >= 0 else start + _MAX_QUOTED)
        if close >= 0 and newline < 0:
            end = close
            while end > start and text[end - 1] == "\\":
                end -= 1
            return (start, end, True) if end > start else None
        pos = start
    braced = _BRACED.match(text, pos)
    if braced:  # ODBC: Pwd={a;b} quotes a value in braces ({{ and ${ are templates)
        return braced.start(1), braced.end(1), True
    match = _UNQUOTED.match(text, pos)
    return (pos, match.end(), False) if match else None


# git's (and gpg's) signingkey names the public key that signs: a key id or fingerprint
# (hex), the path of a public key, or the public key itself (key::ssh-ed25519 AAAA…).
_GIT_SIGNING_KEY = re.compile(r"(?:[0-9A-Fa-f]{8}|[0-9A-Fa-f]{16}|[0-9A-Fa-f]{40})!?|[~./][^\s]*|[^\s]*\.pub|(?:key::)?ssh-[a-z0-9-]+")


_EXPORT = re.compile(r"[ \t]*export[ \t]+[A-Za-z_]\w*=\Z")
_PATH_START = re.compile(r"""['"]?(?:[/~$.%\\]|[A-Za-z]:[\\/])""")


def _git_signing_key(name: str, value: str) -> bool:
    """`user.signingkey D7CB511C707D3D9C`, `signingkey = ~/.ssh/id_ed25519.pub`: public."""
    return name.endswith("signingkey") and _GIT_SIGNING_KEY.fullmatch(value.strip("'\"")) is not None


def _value_at(text: str, name: str, strength: Strength, pos: int, literal: bool, form: str,
              strict: bool = False, quoted_only: bool = False, short_ok: bool = False,
              element: bool = False) -> Hit | None:
    head = _head(name)
    if head in _PAIR_HEADS and text.startswith(("(", "["), pos):  # requests: auth=("user", "password")
        pair = _AUTH_TUPLE.match(text, pos)
        if pair and value_is_secret(pair.group("secret"), Strength.PASSWORD, quoted=True, literal=True):
            return Hit("secret", pair.start("secret"), pair.end("secret"), f"password in {name}=(user, …)")
        return Hit("", pos, pos, "")
    span = _read_value(text, pos)
    if span is None:
        return Hit("", pos, pos, "")
    start, end, quoted = span
    if quoted_only and not quoted:
        return None
    value = text[start:end]
    if not quoted and not element and text[end:end + 1] in ("(", "[", "<"):
        return Hit("", start, end, "")  # getpass(), os.environ["X"], Option<String>: code
    if head in ("authorization", "auth") or name.lower().endswith("authorization"):
        return _scheme(text, start, end, quoted, f"{form} header", strength)
    if literal and not quoted and value.isalpha() and value.isupper() and len(value) <= 16:
        return Hit("", start, end, "")  # --password PASSWORD: a metavar in help text
    if strict:  # prose: "the password is X." — the sentence's punctuation is not the password's
        stripped = value.rstrip(".,:;!?)")
        end -= len(value) - len(stripped)
        value = stripped
    if _git_signing_key(name, value):
        return Hit("", start, end, "")
    if head == "pwd" and strength is Strength.WEAK and not _PATH_START.match(value):
        strength = Strength.PASSWORD  # the shell's PWD is a path: PWD=vqQkVYHyX2! (ODBC) is a password
    secret = value_is_secret(value, strength, quoted=quoted, literal=literal)
    if (not secret and not quoted and any(c.isdigit() for c in value) and camel_words(value)
            and _EXPORT.match(text, text.rfind("\n", 0, pos) + 1, pos)):
        secret = not is_placeholder(value)  # export PGPASSWORD=OhjHegdytqC4: a shell names a variable $X, not X
    if secret and strict:
        secret = not value.isalpha()
    if not secret and short_ok and strength is Strength.TOKEN:  # ?access_token=zz9
        secret = (len(value) >= 3 and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
                  and not is_placeholder(value))
    return Hit("secret" if secret else "", start, end, f"value of secret-named {form}")


def _scheme(text: str, start: int, end: int, quoted: bool, rule: str, strength: Strength) -> Hit:
    """Authorization: Bearer x / Basic x / token x / x."""
    value = text[start:end]
    word, token_start, token_end = "", start, end
    if quoted:
        first, space, rest = value.partition(" ")
        if space and (first.lower() in _SCHEMES or _scheme_word(first)):
            word, token_start = first, start + len(first) + 1 + (len(rest) - len(rest.lstrip()))
    elif value.lower() not in _SCHEMES and _auth_params_after(text, end):
        return Hit("", start, end, "")  # AWS4-HMAC-SHA256 Credential=…, Signature=…: a scheme; its params are named
    elif value.lower() in _SCHEMES or (_scheme_word(value) and _SPACES.match(text, end)):
        spaces = _SPACES.match(text, end)  # Bearer x, SSWS x, Negotiate x: a scheme, then the token
        span = _read_value(text, spaces.end()) if spaces else None
        if span is None:
            return Hit("", start, end, "")
        word, token_start, token_end = value, span[0], span[1]
    token = text[token_start:token_end]
    kind = _SCHEMES.get(word.lower(), "bearer") if word else ("basic-auth" if _is_basic(token) else "bearer")
    # After a scheme word the token is a credential; bare, it is as weak as the name.
    if not kind or not _token_like(token, kind, Strength.TOKEN if word else strength, quoted or bool(word)):
        return Hit("", start, max(end, token_end), "")
    return Hit(kind, token_start, token_end, f"{word or 'bare'} credential in an {rule}")


# An auth-param after a scheme (RFC 9110): Credential=…, keyId="…", signature="…"
_AUTH_PARAM = re.compile(r"[ \t]{1,4}[A-Za-z][\w-]{0,40}=")


def _auth_params_after(text: str, end: int) -> bool:
    return _AUTH_PARAM.match(text, end) is not None


# A scheme is a word or a few joined by dashes: Bearer, SSWS, Zoho-oauthtoken, DeepL-Auth-Key.
_SCHEME_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{0,23}(?:-[A-Za-z0-9]{1,16}){0,3}")


def _scheme_word(value: str) -> bool:
    return bool(_SCHEME_WORD.fullmatch(value)) and len(value) <= 40 and not looks_random(value.replace("-", ""), 12)


def _is_basic(token: str) -> bool:
    """base64 of user:password (a Basic header, a docker config.json "auth")."""
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and all(32 <= byte < 127 for byte in decoded)


def _token_like(token: str, kind: str, strength: Strength = Strength.TOKEN, quoted: bool = True) -> bool:
    if len(token) < 8 or is_placeholder(token) or token.startswith("[REDACTED"):
        return False
    if kind == "basic-auth":
        return _is_basic(token) or looks_random(token, 12)
    return value_is_secret(token, strength, quoted=quoted, literal=True)


def bearer_hits(text: str, lowered: str) -> Iterator[Hit]:
    """`Bearer <token>` wherever it stands (a header split from its name, a log line)."""
    at = lowered.find("bearer")
    while at >= 0:
        if at == 0 or not text[at - 1].isalnum():
            spaces = _SPACES.match(text, at + 7 if text.startswith(":", at + 6) else at + 6)  # Bearer: x
            if spaces:
                span = _read_value(text, spaces.end())
                if span and _token_like(text[span[0]:span[1]], "bearer"):
                    yield Hit("bearer", span[0], span[1], "Bearer token")
        at = lowered.find("bearer", at + 6)


# -- command lines ---------------------------------------------------------------------
# Each rule: the command's word, and its password flag, matched at the space before the
# flag. Flags are found first (" -p", " -u", … : one fast scan), then the command word
# is looked for earlier on the same line.
_VALUE = r"""(?P<q>['"])?(?P<secret>(?(q)[^'"\n]{1,256}|[^\s'"`;|&)]{1,256}))(?(q)(?P=q))"""
_USER = r"""(?:\s{1,4}|=)?['"]?[^\s:'"]{0,128}:"""
_COMMANDS: dict[str, re.Pattern[str]] = {
    word: re.compile(pattern) for word, pattern in {
        "mysql": r"\s-p" + _VALUE,  # mysql, mysqldump, mysqladmin: -pPASS, never a space
        "mariadb": r"\s-p" + _VALUE,
        "sshpass": r"\s-p\s{0,4}" + _VALUE,
        "login": r"\s-p(?:\s{1,4}|=)" + _VALUE,  # docker/podman/helm registry login -p
        "redis-cli": r"\s-a\s{1,4}" + _VALUE,
        "mongo": r"\s-p\s{1,4}" + _VALUE,
        "sqlcmd": r"\s-P\s{0,4}" + _VALUE,
        "ldap": r"\s-w\s{1,4}" + _VALUE,
        "openssl": r"\s-(?:k|pass|passin|passout)\s{1,4}(?:pass:)?" + _VALUE,
        "zip": r"\s-P\s{1,4}" + _VALUE,
        "7z": r"\s-p" + _VALUE,
        "rar": r"\s-h?p(?!\s)" + _VALUE,  # rar a -hpPASS, unrar x -pPASS: attached
        "valkey-cli": r"\s-a\s{1,4}" + _VALUE,  # Redis's forks take its -a
        "keydb-cli": r"\s-a\s{1,4}" + _VALUE,
        "smbclient": r"""\s(?:-U|--user)[\s=]{0,4}['"]?[^\s%'"]{1,128}%""" + _VALUE,
        "curl": r"\s(?:-u|--user|-U|--proxy-user)" + _USER + _VALUE,
        "wget": r"\s(?:--user|--http-user)" + _USER + _VALUE,
        "oathtool": r"\s-b\s{1,4}(?:-[-\w=]+\s{1,4}){0,3}" + _VALUE,  # oathtool --totp -b BASE32SECRET
        "snmp": r"\s-[cAX]\s{1,4}" + _VALUE,  # net-snmp: -c community, -A auth and -X privacy passphrases
    }.items()
}
_FLAG = re.compile(r" -(?:[pPuUawkcAXb]|hp|-(?:http-|proxy-)?user)")
_COMMAND_WORD = re.compile(r"(?:(?<![a-z0-9])|(?<=\\[nrt]))(mysql|mariadb|sshpass|login|redis-cli|mongo|sqlcmd|ldap|openssl|"
                           r"(?:un)?zip|7z|(?:un)?rar|valkey-cli|keydb-cli|smbclient|curl|wget|snmp|oathtool)")
# `<tool> login -u USER -p PASSWORD`: docker, podman, helm registry, oc, az, cf, argocd …
# (any tool word before "login"; login(1) itself, run alone or by sudo, takes no password).
_LOGIN_TOOLS = re.compile(r"(?<![\w-])(?!sudo\b|exec\b|su\b|doas\b)[a-z][a-z0-9_.-]{0,30}(?: registry| auth)?\s+$")


def command_hits(text: str, lowered: str) -> Iterator[Hit]:
    """Passwords given on a command line: mysql -pX, curl -u u:X, sshpass -p X, …"""
    scanned, words = 0, set[str]()  # lowered[:scanned] is searched for command words of this line
    for flag in _FLAG.finditer(text):
        at = flag.start()
        real, escaped = text.rfind("\n", scanned, at), text.rfind("\\n", scanned, at)
        line_start = max(real + 1 if real >= 0 else -1, escaped + 2 if escaped >= 0 else -1)
        if line_start >= 0:  # a new line since the last flag: its own commands
            scanned, words = line_start, set[str]()
        for found in _COMMAND_WORD.finditer(lowered, scanned, at):
            word = found.group(1).removeprefix("un")
            if word != "login" or _LOGIN_TOOLS.search(lowered, max(0, found.start() - 24), found.start()):
                words.add(word)
        scanned = max(scanned, at)
        for word in words:
            match = _COMMANDS[word].match(text, at)
            if match and _command_secret(match.group("secret")):
                yield Hit("password", match.start("secret"), match.end("secret"), f"password on a {word} command line")
                break


_IDENTIFIED_BY = re.compile(r"""identified\s{1,4}(?:with\s{1,4}\S{1,64}\s{1,4})?by\s{1,4}(?P<q>\\{0,3}['"])(?P<secret>[^'"\n]{1,256})(?P=q)""",
                            re.IGNORECASE)


_SQL_ACCOUNT = re.compile(r"\b(?:user|role|login|grant|to)\b")


def sql_hits(text: str, lowered: str) -> Iterator[Hit]:
    """CREATE USER … IDENTIFIED BY 'x' (MySQL, Oracle)."""
    at = lowered.find("identified")
    while at >= 0:
        match = _IDENTIFIED_BY.match(text, at)
        if match and _SQL_ACCOUNT.search(lowered, max(0, at - 160), at) and _command_secret(match.group("secret")):
            yield Hit("password", match.start("secret"), match.end("secret"), "password in IDENTIFIED BY '…'")
        at = lowered.find("identified", at + 10)


def _command_secret(value: str) -> bool:
    if value.startswith(("-", "$", "[REDACTED", "<")) or is_placeholder(value):
        return False
    return value_is_secret(value, Strength.PASSWORD, quoted=True, literal=True)


# A property list (macOS, iOS): <key>APIKey</key> then <string>value</string>.
_PLIST_PAIR = re.compile(r"<key>(?P<name>[^<>\n]{1,64})</key>\s{0,64}<string>(?P<value>[^<\n]{1,1024})</string>")


def plist_hits(text: str) -> Iterator[Hit]:
    """The string of a property list entry whose key names a secret."""
    at = text.find("<key>")
    while at >= 0:
        pair = _PLIST_PAIR.match(text, at)
        if pair:
            strength = name_strength(pair.group("name"))
            if strength and value_is_secret(pair.group("value"), strength, quoted=True, literal=True):
                yield Hit("secret", pair.start("value"), pair.end("value"), f"<key>{pair.group('name')}</key> value")
        at = text.find("<key>", at + 5)
