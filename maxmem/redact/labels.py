"""Secrets given away by the structure that labels them, whatever the label's language.

    **Password:** `uoQgMaE2QXgRug`            senha do wi-fi: gpywua1141
    | env | user | password |                 user,password
    | prod | admin | COozvNK3Y1iFKw3g |        svc-backup,Kq7!vR2pLm
    process.env.SESSION_SECRET ?? "1a53…"     jdoe@acme.io / O8JvMTp1ycW5

Three structures say "this value is the secret" without a sentence around it:

- a label line: a short label that holds a secret word (any language of `LABEL_WORDS`),
  a colon, and one value that ends the line (a parenthesis after it is a comment);
- a table (Markdown, CSV, TSV) whose header names a column for a secret: that column's
  cell in every row below;
- a lookup of a secret-named variable with a literal fallback, in any language
  (`process.env.X ?? "…"`, `|| "…"`, `getenv("X") ?: "…"`, `ENV.fetch("X") { "…" }`,
  `${X:-…}`, `env("X", "…")`): the literal is the secret when the variable is unset;

and a user and password written as a pair (`jdoe@acme.io / pw`, `connecte-toi avec jdoe /
pw`, `use ops:pw for the login`), the password a strong one.

The value must still look like what the label promises (a password's shape, digits for
a PIN, a random token for a key), so a label followed by a word, a type, a path, a date or
a placeholder stays.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .precision import names_a_technology, reads_as_code, reads_as_noise
from .prose import LABEL_WORDS, password_like
from .shapes import Hit
from .values import (
    char_offsets,
    find_words,
    is_placeholder,
    looks_random,
    name_strength,
    present_words,
    scan,
    value_is_secret,
    word_index,
)

__all__ = [
    "declaration_hits",
    "element_hits",
    "fallback_hits",
    "identity_literal_hits",
    "label_hits",
    "link_hits",
    "login_pair_hits",
    "pair_hits",
    "replaced_hits",
    "table_hits",
]

# A lock's keypad labels its code alone ("garage keypad: 89156"), in a few languages.
_KINDS = {**LABEL_WORDS, **dict.fromkeys(("keypad", "intercom", "lockbox", "keysafe", "key safe", "tastenfeld",
                                           "gegensprechanlage", "interphone", "citofono", "portero", "домофон",
                                           "кодовый замок", "domofon"), "pin")}
_INDEX = word_index(tuple(_KINDS))
# Words that make a label name something else than the secret: "password policy:", "key ID:".
_NOT_SECRET = frozenset({
    "id", "ids", "fingerprint", "public", "pub", "type", "length", "size", "name", "file", "path", "format",
    "algorithm", "hash", "policy", "expiry", "expires", "expiration", "manager", "field", "prompt", "count",
    "server", "url", "host", "hint", "strength", "rotation", "version", "usage", "store", "vault", "location",
    "required", "requirements", "optional", "status", "changed", "updated", "created", "mode", "level", "limit",
    "timeout", "env", "variable", "var", "header", "parameter", "param", "option", "setting", "label",
    "hashing", "hashed", "encryption", "encrypted", "cipher", "scheme", "method", "storage", "salt",
    "idempotency", "request", "correlation", "cache", "sort", "partition", "primary", "foreign", "lookup",
})
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_CODE_BEFORE = frozenset("\"'_.$/\\[{(<")
_LABEL_REACH = 48  # the label's length before and after its secret word
_LABEL_START = re.compile(r"[ \t]*(?:[-*>#|]+[ \t]*)?(?:\*\*|__)?")
_LABEL_TEXT = re.compile(r"[^\W\d_][\w'’ ./-]{0,47}", re.UNICODE)
# the colon, the closing of a bold label, then the value (quoted or not) and the end of the line
_AFTER_LABEL = re.compile(r"[ \t]*(?:\*\*|__)?[ \t]*:(?:\*\*|__)?[ \t]+(?:\*\*|__)?")
_VALUE = re.compile(r"`([^`\s]{4,128})`|\"([^\"\s]{4,128})\"|'([^'\s]{4,128})'|([^\s`\"']{4,128})")
_QUOTED_PHRASE = re.compile(r"[\"“]([a-z]{3,10}(?: [a-z]{3,10}){3,11})[\"”]")  # a diceware passphrase, quoted
_LINE_REST = re.compile(r"(?:\*\*|__)?[.!;,]?[ \t]*(?:\([^()\n]{0,80}\)[.!]?[ \t]*)?(?=\r?\n|\\n|\Z)")
_DATE = re.compile(r"\d{4}-\d\d-\d\d.*|\d\d?[:.]\d\d(?:[:.]\d\d)?|\d{1,2}/\d{1,2}/\d{2,4}")
_PIN_VALUE = re.compile(r"\d{4,20}|\d{1,2}(?:-\d{1,2}){2,5}")
_PASSPHRASE = re.compile(r"[a-z]{3,10}(?:[-_.][a-z]{3,10}){2,7}(?:[-_.]\d{1,6})?")
_NETWORKS = ("wifi", "wi-fi", "wlan", "wpa", "wireless", "ssid", "network", "netzwerk", "réseau", "red", "rede", "rete")


def _value_fits(value: str, kind: str, label: str) -> bool:
    """Whether `value` looks like what a label of `kind` promises."""
    if is_placeholder(value) or _DATE.fullmatch(value) or "://" in value or value.startswith(("/", "~", "$", "%", "{", "<")):
        return False
    if "@" in value and "." in value.rsplit("@", 1)[-1] or "(" in value and ")" in value or reads_as_code(value):
        return False  # an address, a call (z.string().min(12)), a type (Optional[str])
    if kind == "pin":
        return bool(_PIN_VALUE.fullmatch(value)) and len(set(value)) >= 3 or password_like(value, strong=True)
    if kind == "key":
        if looks_random(value, 16) and not (label.endswith("key") and _UUID.fullmatch(value)):
            return True
        if any(n in label for n in _NETWORKS):  # a network's key is its password: WLAN-Schlüssel: 4401…
            return bool(_PIN_VALUE.fullmatch(value)) and len(value) >= 8 or password_like(value)
        return False
    if value.isdigit():
        return 4 <= len(value) <= 16 and len(set(value)) >= 3
    if (value.isalnum() and len(value) >= 8 and sum(c.isdigit() for c in value) >= 3 and not value.isdigit()
            and not names_a_technology(value)):
        return True  # senha do wi-fi: gpywua1141, a name and digits
    return password_like(value) or _PASSPHRASE.fullmatch(value) is not None and (
        any(c.isdigit() for c in value) or value.count("-") + value.count("_") + value.count(".") >= 3)


def label_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """The value of a label line: `WLAN-Schlüssel: 4401…`, `**Password:** \\`…\\``,
    `LUKS passphrase for /dev/nvme0n1p3: tango-violet-harbor-7623`."""
    present = present_words(words, _INDEX)
    if not present:
        return
    done = -1
    for at, word in find_words(lowered, data, present):
        if at < done or at and text[at - 1] in _CODE_BEFORE:
            continue  # "token":, api_key:, self.key: a name in code or JSON (named_hits reads those)
        colon = text.find(":", at + len(word), at + len(word) + _LABEL_REACH)
        if colon < 0:
            continue
        reach = max(0, at - _LABEL_REACH - 2)
        newline, escaped = text.rfind("\n", reach, at), text.rfind("\\n", reach, at)
        if newline < 0 and escaped < 0 and reach:
            continue  # the line starts too far before: no label
        line = max(newline + 1, escaped + 2 if escaped >= 0 else 0)
        if at and lowered[at - 1].isalnum() and word.isascii() and len(word) < 5:
            continue
        opening = _LABEL_START.match(text, line)
        start = opening.end() if opening else line
        label_end = len(text[start:colon].rstrip(" \t*_"))
        label = lowered[start:start + label_end]
        if (not _LABEL_TEXT.fullmatch(text, start, start + label_end) or "\n" in label
                or len(label.split()) > 6 or not _NOT_SECRET.isdisjoint(re.split(r"[\W_]+", label))):
            continue
        after = _AFTER_LABEL.match(text, start + label_end)
        if not after or after.end() <= colon:
            continue
        kind = _KINDS[word]
        phrase = _QUOTED_PHRASE.match(text, after.end()) if kind == "password" else None
        if phrase and _LINE_REST.match(text, phrase.end()):
            done = phrase.end()
            yield Hit("secret", phrase.start(1), phrase.end(1), f"value of a label line naming '{word}'")
            continue
        value = _VALUE.match(text, after.end())
        if not value or not _LINE_REST.match(text, value.end()):
            continue
        group = next(g for g in range(1, 5) if value.group(g) is not None)
        candidate = value.group(group).rstrip(".,;!") if group == 4 else value.group(group)
        if _value_fits(candidate, kind, label):
            done = value.end()
            yield Hit("secret", value.start(group),
                      value.start(group) + len(candidate), f"value of a label line naming '{word}'")


# -- tables: a header that names a column for a secret -------------------------------------
_TABLE_WORDS = re.compile(r"(?i)(?<![^\W_])(?:password|passwort|passphrase|passcode|passwd|pwd|pass|pw|pin|secret|"
                          r"token|api[ _-]?key|key|mot de passe|mdp|contraseña|senha|wachtwoord|hasło|heslo|пароль|"
                          r"密码|パスワード|비밀번호|lösenord|salasana|şifre|parola|kennwort|clave)(?![^\W_])")
_CELL_SPLIT = {"|": re.compile(r"[ \t]*\|[ \t]*"), ",": re.compile(r"[ \t]*,[ \t]*"), "\t": re.compile(r"\t")}
_RULE_ROW = re.compile(r"[ \t|:+-]*")
_HEADER_CELL = re.compile(r"[^\W\d_][\w .#/-]{0,29}", re.UNICODE)


def _cells(line: str, sep: str) -> list[tuple[int, str]]:
    """(offset, cell) of one row; a Markdown row's outer bars dropped."""
    first, last = 0, len(line)
    if sep == "|":
        first = len(line) - len(line.lstrip(" \t"))
        first += line.startswith("|", first)
        last = len(line.rstrip(" \t"))
        last -= last > first and line[last - 1] == "|"
    out, at = [], first
    for part in _CELL_SPLIT[sep].finditer(line, first, last):
        out.append((at, line[at:part.start()]))
        at = part.end()
    out.append((at, line[at:last]))
    return out


def table_hits(text: str) -> Iterator[Hit]:
    """The cells of a table's secret column: `| env | user | password |` then its rows,
    `user,password` then `svc,Kq7!vR2pLm`."""
    lines = text.split("\n")
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line) + 1
    row = 0
    while row < len(lines) - 1:
        header = lines[row]
        row += 1
        if len(header) > 200 or "|" not in header and "," not in header and "\t" not in header \
                or not _TABLE_WORDS.search(header):
            continue
        sep = "|" if header.count("|") >= 2 else "\t" if "\t" in header else "," if "," in header else ""
        if not sep:
            continue
        names = [c.strip().strip("*").lower() for _, c in _cells(header, sep)]
        if not 2 <= len(names) <= 12 or not all(_HEADER_CELL.fullmatch(n) for n in names):
            continue  # a header is names, not code (`define('DB_PASSWORD', …)`, a struct's tags)
        columns = [i for i, n in enumerate(names)
                   if _TABLE_WORDS.search(n) and _NOT_SECRET.isdisjoint(re.split(r"[\W_]+", n))]
        if not columns:
            continue
        below = row
        if sep == "|" and below < len(lines) and _RULE_ROW.fullmatch(lines[below]):
            below += 1
        while below < len(lines):
            cells = _cells(lines[below], sep)
            if len(cells) != len(names) or not lines[below].strip():
                break
            for i in columns:
                offset, cell = cells[i]
                value = cell.strip().strip("`")
                kind = "pin" if names[i] == "pin" else "key" if "key" in names[i] or "token" in names[i] or "secret" in names[i] \
                    else "password"
                if _value_fits(value, kind, names[i]) or kind != "pin" and value and reads_as_noise(value):
                    start = offsets[below] + offset + cell.index(value)
                    yield Hit("secret", start, start + len(value),
                              f"cell of a table's '{names[i]}' column")
            below += 1
        row = below


# -- a secret-named variable's literal fallback ----------------------------------------------
_LOOKUP = re.compile(
    r"(?:process\.env\.|import\.meta\.env\.|(?<![\w.])(?:os\.)?(?:getenv|Getenv|environ\.get|environ|env|ENV\.fetch|ENV)"
    r"[ \t]*[\[(][ \t]*|System\.getenv\([ \t]*|GetEnvironmentVariable\([ \t]*|Deno\.env\.get\([ \t]*)"
    r"(?P<qn>[\"'`]?)(?P<name>[A-Za-z_][A-Za-z0-9_]{2,63})(?P=qn)[ \t]*[)\]]?[ \t]*"
    r"(?:\?\?|\|\||\?:|or|,|\{|:)[ \t]*(?P<q>[\"'`])(?P<v>[^\"'`\s]{6,256})(?P=q)")
_SHELL_DEFAULT = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]{2,63}):?-(?P<v>[^}\s\"']{6,256})\}")


def fallback_hits(text: str, data: bytes) -> Iterator[Hit]:
    """`process.env.SESSION_SECRET ?? "…"`, `os.getenv("API_TOKEN") or "…"`,
    `System.getenv("DB_PASSWORD") ?: "…"`, `ENV.fetch("DB_PASSWORD") { "…" }`,
    `env('DB_PASSWORD', '…')`, `${DB_PASSWORD:-…}`: a secret-named lookup's literal default."""
    matches: list[re.Match[str] | None] = []
    places = char_offsets(data, scan(data, b"env")) if b"env" in data else []
    reach = -1
    for at in places:  # each lookup starts at most 24 characters before its "env" (process.env., GetEnvironmentVariable)
        if at < reach or not ("(" in text[at + 3:at + 9] or "[" in text[at + 3:at + 9] or text.startswith(".", at + 3)):
            continue  # getenv(, environ[, process.env.: a lookup; "environment", "envelope": words
        match = _LOOKUP.search(text, max(0, at - 24, reach), at + 400)
        if match and match.start() <= at:
            matches.append(match)
            reach = match.end()
    if b"${" in data:
        matches += (_SHELL_DEFAULT.match(text, at) for at in char_offsets(data, scan(data, b"${")))
    for match in filter(None, matches):
        name, value = match.group("name"), match.group("v")
        if name_strength(name) is None or is_placeholder(value) or value.startswith(("$", "{", "<", "/")):
            continue
        if password_like(value, strong=True) or looks_random(value, 16):
            yield Hit("secret", match.start("v"), match.end("v"), f"literal fallback of secret-named {name}")


# -- a user and a password written as a pair ---------------------------------------------------
_PAIR_USER = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,4}|[a-z][a-z0-9_.-]{1,31}")
_PAIR_VALUE = re.compile(r"[ \t]{0,1}(?P<v>[^\s/:'\"`;=,]{8,64})(?=[ \t),.;]|\Z|\n)")
_COLON_PAIR = re.compile(r"(?<![\w@./:-])(?P<user>[a-z][a-z0-9_.-]{1,31}):(?P<v>[^\s/:'\"`;=,.]{8,64})(?=[ \t),;]|\Z|\n)")
# Words about getting in that make "user:password" on their line a pair.
_PAIR_WORDS = word_index(("login", "logon", "sign in", "signin", "creds", "credentials", "anmelden", "connexion",
                          "inloggen", "ssh", "vpn", "portal", "dashboard"))
_PAIR_REACH = 160  # how far the words about getting in may stand on the line


def _line_around(text: str, at: int) -> tuple[int, int]:
    start = text.rfind("\n", max(0, at - _PAIR_REACH), at) + 1 or max(0, at - _PAIR_REACH)
    end = text.find("\n", at, at + _PAIR_REACH)
    return start, end if end >= 0 else min(len(text), at + _PAIR_REACH)


def pair_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """`jdoe@acme.io / O8JvMTp1ycW5`, `connecte-toi avec jdoe / D4NhzO8S6l`, `use
    ops:eWB5fZ95vRe7Fy for the grafana login`: a strong, random password after its user,
    on a line about getting in (an address as the user is context enough)."""
    context = [at for at, _ in find_words(lowered, data, present_words(words, _PAIR_WORDS))]
    for slash in _finds(data, b" / "):
        before = text.rfind(" ", max(0, slash - 66), slash) + 1 or max(0, slash - 66)
        user = _PAIR_USER.fullmatch(text, before, slash)
        value = _PAIR_VALUE.match(text, slash + 3)
        if user and value and _strong(value.group("v").rstrip(".,;)")):
            start, end = _line_around(text, slash)
            if "@" in user.group(0) or any(start <= c < end for c in context):
                v = value.group("v").rstrip(".,;)")
                yield Hit("password", value.start("v"), value.start("v") + len(v), "password of a user / password pair")
    done = -1
    for at in context:
        if at < done:
            continue
        start, done = _line_around(text, at)
        for match in _COLON_PAIR.finditer(text, start, done):
            if match.group("user") not in ("http", "https", "ftp", "tcp", "udp") and _strong(match.group("v")):
                yield Hit("password", match.start("v"), match.end("v"), "password of a user / password pair")


# -- a secret-named declaration in code: a type between the name and its literal ------------------
_DECLARATION = re.compile(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]{0,63})[\"']?[ \t]*"
    r"(?::[ \t]*(?P<type>&?(?:'static[ \t]+)?(?:[A-Za-z_][\w:.]{0,30}(?:<[\w, ]{1,30}>|\[[\w, ]{0,30}\])?|\[[\w; ]{1,20}\]))[ \t]*)?"
    r"(?P<op>=|:)[ \t]*(?:(?:new[ \t]+)?(?:String|str|Some|SecretStr|SecretString|Secret|SecureString|bytes|CString|"
    r"std::string|Buffer\.from|\[\]byte)(?:::from)?\([ \t]*)?"
    r"(?P<prefix>[bBrRuUfLNE@]{1,2})?(?P<q>[\"'])(?P<v>[^\"'\s\\]{6,256})(?P=q)")
# What must follow a name for _DECLARATION to match there: a quick test before the walk back to its start.
_DECLARED_AFTER = re.compile(r"[A-Za-z0-9_]{0,60}[\"']?[ \t]*[:=][^\n;{}]{0,80}?[bBrRuUfLNE@]{0,2}[\"']")
_PASSWORD_LABELS = frozenset({"pass", "pw", "pwd"})  # `pass: '…'` in an object (nodemailer's auth)


def declaration_hits(text: str, positions: list[tuple[int, int]]) -> Iterator[Hit]:
    """`const API_KEY: &str = "…"`, `val apiToken: String = "…"`, `API_KEY: Final[str] = "…"`,
    `SIGNING_KEY = b"…"`, `string ApiKey = @"…"`, `auth: { user: …, pass: '…' }`: a literal
    given to a secret-named name across a type, a string prefix or a constructor
    (`positions`: where a secret word stands, `keyword_positions`)."""
    done = -1
    for at, _ in positions:
        if at < done or not _DECLARED_AFTER.match(text, at):
            continue
        start = at
        while start > 0 and at - start < 64 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        if start < done or start and text[start - 1] in ".$>\"'":
            continue  # self.key, $token, obj->key, "key": an expression or a quoted key (assignments read those)
        match = _DECLARATION.match(text, start)
        if not match or not (match.group("type") or match.group("prefix") or match.group("op") == ":"
                             or match.group(0).find("(") >= 0):
            continue  # a plain NAME = "…" is named_hits'
        name, value = match.group("name"), match.group("v")
        strength = name_strength(name)
        if strength is None and name.lower() in _PASSWORD_LABELS:
            if password_like(value, strong=True) or reads_as_noise(value):
                yield Hit("password", match.start("v"), match.end("v"), f"literal of {name} in an object")
                done = match.end()
            continue
        if strength is not None and value_is_secret(value, strength, quoted=True, literal=True):
            yield Hit("secret", match.start("v"), match.end("v"), f"literal declared as secret-named {name}")
            done = match.end()


# -- a user, then a password with no connector: "user admin pass X", "root@host pw X" ---------------
_PASSWORD_LABEL_WORDS = word_index(("pass", "password", "pw", "pwd", "passwort", "kennwort", "mdp", "senha",
                                    "contraseña", "clave", "wachtwoord", "hasło", "heslo", "parola", "пароль",
                                    "lösenord", "salasana"))
_USER_BEFORE = re.compile(
    r"(?i)(?:(?<![\w-])(?:user(?:name)?|login|benutzer(?:name)?|utilisateur|usuario|usuário|gebruiker|utente|"
    r"użytkownik|пользователь|логин)[ \t]*[:=]?[ \t]+[\w.@\\-]{1,64}[ \t]*[,;/]?|[\w.-]{1,32}@[\w.-]{1,64})[ \t]+\Z")
_PASSWORD_AFTER = re.compile(r"[ \t]*[:=]?[ \t]+(?P<v>[^\s\"'`]{6,64})")
# getting in "as" or "with" a user, then "and" / "with" the password, in several languages
_LOGIN_VERBS = word_index(("log in", "login", "logged in", "sign in", "signin", "melde", "anmelden", "einloggen",
                           "connecte", "connectez", "se connecter", "inicia sesión", "iniciar sesión", "accedi",
                           "inloggen", "logga in", "zaloguj"))
_LOGIN_AS = re.compile(
    r"(?i)(?:log(?:ged)?[ \t]?in(?:to)?|sign[ \t]?in|connect|ssh|melde[ \t]dich|anmelden|einloggen|"
    r"connecte[sz]?-(?:toi|vous)|connectez-vous|se[ \t]connecter|inicia[ \t]sesión|iniciar[ \t]sesión|entra|accedi|"
    r"inloggen|logga[ \t]in|zaloguj[ \t]się)(?:[ \t]+\S+){0,3}?[ \t]+"
    r"(?:with|as|als|como|comme|avec|con|mit|met|som|jako)[ \t]+(?P<u>[\w.@\\-]{2,64})[ \t]+"
    r"(?:and|und|y|et|e|en|och|i|mit|with|con|avec|met|med|z|/|,)[ \t]+(?P<v>[^\s\"'`]{8,64})")


def login_pair_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """`router admin: … user admin pass PRX6PBH6TJ`, `root@10.0.0.5 pw giHKiOT7S8`, `login
    with svc-backup and KI5t…`, `Melde dich als admin mit o9u2qkzk0wqm an`."""
    for at, word in find_words(lowered, data, present_words(words, _PASSWORD_LABEL_WORDS)):
        end = at + len(word)
        if at == 0 or text[at - 1] not in " \t" or end < len(text) and text[end].isalnum():
            continue
        after = _PASSWORD_AFTER.match(text, end)
        if not after:
            continue
        value = after.group("v").rstrip(".,;:)!")
        if not any(c.isdigit() or c.isupper() for c in value[1:]):
            continue  # "password manager", "pass the test": a word, no password
        if not (_strong(value) or password_like(value) and not value.isalpha()):
            continue
        line = text.rfind("\n", max(0, at - 140), at) + 1 or max(0, at - 140)
        if _USER_BEFORE.search(text, line, at):
            yield Hit("password", after.start("v"), after.start("v") + len(value), "password after its user")
    for at, _ in find_words(lowered, data, present_words(words, _LOGIN_VERBS)):
        match = _LOGIN_AS.match(text, at)
        if match:
            value = match.group("v").rstrip(".,;:)!")
            if _strong(value):
                yield Hit("password", match.start("v"), match.start("v") + len(value), "password after its user")


def _strong(value: str) -> bool:
    """A password no one would write in prose for anything else: strong, and random."""
    return password_like(value, strong=True) and (reads_as_noise(value) or (
        sum(c.isupper() for c in value) >= 2 and sum(c.isdigit() for c in value) >= 1 and len(value) >= 10))


# -- a literal after a literal that names a user: the call's password ------------------------------
_IDENTITY = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,4}|(?:cn|uid)=[^\"'\n]{1,120}")
_CLOSING = re.compile(r"([\"'])(?=[ \t]*,)|[\s\"']")  # the end of the literal, if a comma follows it
_NEXT_LITERAL = re.compile(r"[ \t]*,[ \t]*(?P<q>[\"'])(?P<v>[^\"'\s\\]{6,128})(?P=q)")


def identity_literal_hits(text: str, data: bytes) -> Iterator[Hit]:
    """`smtp.start('acme.io', 'noreply@acme.io', 'l82n…', :login)`, `Connection(server,
    "cn=svc,ou=apps,dc=acme,dc=io", "NEqO…")`: the literal right after an address or a
    directory name is that user's password."""
    done = -1
    for mark in (b"@", b"cn=", b"uid="):
        for at in _finds(data, mark):
            if at < done:
                continue
            close = _CLOSING.search(text, at, at + 130)
            if not close or close.group(1) is None:
                continue  # the literal ends with no comma after it, or this is no literal
            quote = close.group(1)
            opening = text.rfind(quote, max(0, at - 130), at)
            after = _NEXT_LITERAL.match(text, close.end()) if opening >= 0 else None
            if not after or not _IDENTITY.fullmatch(text, opening + 1, close.start()):
                continue
            value = after.group("v")
            done = after.end()
            if "@" not in value and "=" not in value and not is_placeholder(value) and (
                    password_like(value, strong=True) or reads_as_noise(value) or looks_random(value, 16)):
                yield Hit("password", after.start("v"), after.end("v"), "password literal after its user's identity")


# -- a placeholder replaced by the value: sed 's/CHANGE_ME/…/', .replace("YOUR_TOKEN", "…") -----------
_REPLACED = re.compile(
    r"(?<![\w])s(?P<d>[/|#,])(?P<old>[A-Za-z_<>{}$%-]{4,40})(?P=d)(?P<v>[^\s/|#,\\]{8,128})(?P=d)"
    r"|replace(?:All)?\([ \t]*(?P<q>[\"'])(?P<old2>[A-Za-z_<>{}$%-]{4,40})(?P=q)[ \t]*,[ \t]*"
    r"(?P<q2>[\"'])(?P<v2>[^\"'\s\\]{8,128})(?P=q2)")


_SED = re.compile(r"(?<![\w-])sed[ \t]+(?:-[a-zA-Z]{1,3}[ \t]+|-e[ \t]+|--in-place[ \t]+)*[\"']?")


def _finds(data: bytes, needle: bytes) -> list[int]:
    """Every offset (in characters) of `needle` in the text whose lowered UTF-8 is `data`."""
    return char_offsets(data, scan(data, needle)) if needle in data else []


def replaced_hits(text: str, data: bytes) -> Iterator[Hit]:
    """The value put where a placeholder stood: `sed -i 's/CHANGE_ME/t9Pt…/' .env`,
    `conf.replace("YOUR_API_KEY", "…")`, `s|__DB_PASSWORD__|…|`."""
    starts = [at + 1 for at in _finds(data, b".replace")]
    starts += [m.end() for m in filter(None, (_SED.match(text, at) for at in _finds(data, b"sed ")))]
    for match in filter(None, (_REPLACED.match(text, at) for at in sorted(starts))):
        old = match.group("old") or match.group("old2")
        group = "v" if match.group("v") else "v2"
        value = match.group(group)
        if not (is_placeholder(old) or name_strength(old.strip("_<>{}$%-")) is not None):
            continue
        if password_like(value, strong=True) or looks_random(value, 16) or reads_as_noise(value):
            yield Hit("secret", match.start(group), match.end(group), f"value put in place of {old}")


# -- an element named by the secret, with attributes: <Pass encoding="base64">…</Pass> ------------
_ELEMENT = re.compile(r"<(?P<tag>[A-Za-z][\w:.-]{1,40})[ \t][^<>\n]{0,160}>(?P<v>[^<>\s]{4,256})</(?P=tag)>")


_ELEMENT_TAIL = re.compile(r"[\w:.-]{0,40}[ \t][^<>\n]{0,160}>[^<>\s]{4,256}</")


def element_hits(text: str, positions: list[tuple[int, int]]) -> Iterator[Hit]:
    """The text of an element whose tag names a secret and that carries attributes
    (FileZilla's `<Pass encoding="base64">…</Pass>`, `<Password type="clear">…`,
    `<apiKey env="prod">…`); the element without attributes is named_hits'."""
    for at, _ in positions:
        if not _ELEMENT_TAIL.match(text, at):
            continue
        start = at
        while start > 0 and at - start < 40 and (text[start - 1].isalnum() or text[start - 1] in "_:.-"):
            start -= 1
        if not start or text[start - 1] != "<":
            continue
        match = _ELEMENT.match(text, start - 1)
        if not match:
            continue
        tag, value = match.group("tag"), match.group("v")
        strength = name_strength(tag.rsplit(":", 1)[-1], flag=True)
        if strength is not None and value_is_secret(value, strength, quoted=True, literal=True):
            yield Hit("secret", match.start("v"), match.end("v"), f"text of a <{tag}> element")


# -- a one-time link: its token signs in whoever follows it ------------------------------------------
_LINK_WORDS = (r"reset[-_]?password|password[-_]?reset|reset|invite|invitation|verify|verification|confirm|"
               r"confirmation|activate|activation|magic[-_]?link|magic|unlock|accept|passwordless|sign[-_]?in|login")
_LINK = re.compile(r"(?i)/(?:" + _LINK_WORDS + r")(?:/[\w.-]{1,40})*?(?:/(?P<seg>[A-Za-z0-9_-]{20,256})(?=[\s\"'<>)#?]|$)"
                   r"|[^\s\"'<>?#]{0,80}\?(?:[^\s\"'<>#]{0,200}&)?(?:code|token|t|key|k|otp|ticket|invite)=(?P<q>[A-Za-z0-9_.-]{20,256}))")


_URL_REST = re.compile(r"[^\s\"'<>`]{0,600}")


def link_hits(text: str, data: bytes) -> Iterator[Hit]:
    """The token of a password-reset, invitation, verification or magic sign-in link:
    `/reset-password/903c…`, `/invite/accept?code=vzDs…`, `/magic-link?token=…`."""
    end = -1
    for at in char_offsets(data, scan(data, b"://")):
        if at < end:
            continue  # inside the URL read already (a URL in another's query)
        rest = _URL_REST.match(text, at + 3)
        end = rest.end() if rest else at + 3
        for match in _LINK.finditer(text, at + 3, end):
            group = "seg" if match.group("seg") else "q"
            value = match.group(group)
            if looks_random(value, 20) or len(value) >= 32 and all(c in "0123456789abcdefABCDEF" for c in value):
                yield Hit("token", match.start(group), match.end(group), "token of a one-time link")
