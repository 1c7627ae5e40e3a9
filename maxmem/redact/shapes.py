"""Secrets recognised by their own shape: provider keys, JWTs, PEM blocks, URL passwords.

Every provider key is a run of at least 16 token characters ([A-Za-z0-9_-]) that starts
with a fixed prefix (ghp_, sk-ant-, AKIA, hf_) or follows one that holds a dot or colon
(SG., ya29., hvs., a Telegram bot id). One regular expression finds the runs, a dict
on their first two characters finds the candidates, and only then is a provider's own
pattern tried, at that position. The text is scanned once whatever the number of
providers, so a transcript costs the same with 10 shapes or 60.

Some secrets have no shape of their own and are found from a neighbour: the AWS secret
access key (40 characters of base64) near its AKIA… id, the Twilio auth token (32 hex)
near its AC… account id.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .precision import SECRET_PREFIX_WORDS, names_an_object
from .values import char_offset, char_offsets, is_placeholder, looks_random, may_hold, scan, wallet_key

__all__ = ["PRIVATE", "Hit", "azure_hits", "key_block_hits", "pem_hits", "private_hits", "provider_hits", "scan_within",
           "url_hits", "webhook_hits", "words_within"]

PRIVATE = "private"  # the kind of a <private>…</private> span: removed without a mark


def scan_within(data: bytes, needle: bytes, base: bytes) -> list[int]:
    """`scan(data, needle)` read off the offsets of `base`, a part of `needle` the rules scan
    the text for anyway (or that stands for several needles): no pass over the text of its own."""
    k = needle.index(base)
    return [at - k for at in scan(data, base) if at >= k and data.startswith(needle, at - k)]


def words_within(lowered: str, data: bytes, words: list[str], bases: dict[str, str]) -> list[tuple[int, str]]:
    """`find_words` of single `words` (no space), each word with a base in `bases` read off
    that base's offsets (`scan_within`): the same (offset, word) pairs, in the same order."""
    found = []
    for word in words:
        needle = word.encode()
        base = bases.get(word)
        places = scan(data, needle) if base is None else scan_within(data, needle, base.encode())
        if len(needle) >= 2 and any(needle.startswith(needle[-k:]) for k in range(1, len(needle))):
            apart: list[int] = []
            for at in places:  # each one after the previous one ends, as scan_apart gives them
                if not apart or at >= apart[-1] + len(needle):
                    apart.append(at)
            places = apart
        found += [(at, word) for at in places]
    found.sort(key=lambda f: (f[0], -len(f[1])))
    if len(data) == len(lowered):
        return found
    return list(zip(char_offsets(data, [at for at, _ in found]), [word for _, word in found]))


@dataclass(frozen=True)
class Hit:
    """A secret found in the text: text[start:end] goes, replaced by [REDACTED:kind]."""

    kind: str
    start: int
    end: int
    rule: str


@dataclass(frozen=True)
class _Shape:
    kind: str
    prefix: str  # the literal the secret starts with
    pattern: re.Pattern[str]
    lead: int = 0  # characters of the prefix before the run of token characters (SG. = 3)


def _shape(kind: str, prefix: str, pattern: str, lead: int = 0) -> _Shape:
    return _Shape(kind, prefix, re.compile(pattern), lead)


# Sources: each provider's documentation of its key format (and gitleaks' rules for
# the ones that do not document it). Bounded repetitions keep every match linear.
_SHAPES = [
    _shape("anthropic", "sk-ant-", r"sk-ant-[A-Za-z0-9_-]{20,300}"),
    _shape("openrouter", "sk-or-", r"sk-or-v1-[A-Za-z0-9]{32,100}"),
    _shape("openai", "sk-", r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,300}"),
    _shape("github", "gh", r"gh[pousr]_[A-Za-z0-9]{30,255}"),
    _shape("github", "github_pat_", r"github_pat_[A-Za-z0-9_]{30,255}"),
    _shape("gitlab", "gl", r"gl(?:pat|dt|rt|ptt|soat|cbt|oas|ft|imt|agent|wt)-[A-Za-z0-9_-]{20,100}"),
    _shape("gitlab", "GR1348941", r"GR1348941[A-Za-z0-9_-]{20,60}"),
    _shape("slack", "xox", r"xox[abposrce](?:\.[a-z]+)?-[A-Za-z0-9-]{10,250}"),
    _shape("google", "AIza", r"AIza[0-9A-Za-z_-]{35}"),
    _shape("google", "GOCSPX-", r"GOCSPX-[0-9A-Za-z_-]{20,60}"),
    _shape("google", "ya29.", r"ya29\.[0-9A-Za-z_-]{20,2000}", lead=5),
    _shape("google", "1//", r"1//0[0-9A-Za-z_-]{30,500}", lead=3),
    _shape("stripe", "sk_", r"sk_(?:live|test)_[0-9A-Za-z]{16,255}"),
    _shape("stripe", "rk_", r"rk_(?:live|test)_[0-9A-Za-z]{16,255}"),
    _shape("stripe", "whsec_", r"whsec_[0-9A-Za-z+/=]{24,100}"),
    _shape("huggingface", "hf_", r"hf_[A-Za-z0-9]{30,60}"),
    _shape("huggingface", "api_org_", r"api_org_[A-Za-z0-9]{30,60}"),
    _shape("pypi", "pypi-AgE", r"pypi-AgE[A-Za-z0-9_-]{40,1000}"),
    _shape("npm", "npm_", r"npm_[A-Za-z0-9]{36}"),
    _shape("sendgrid", "SG.", r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}", lead=3),
    _shape("twilio", "SK", r"SK[0-9a-fA-F]{32}"),
    _shape("digitalocean", "do", r"do[opr]_v1_[a-f0-9]{64}"),
    _shape("shopify", "shp", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    _shape("mailgun", "key-", r"key-[0-9a-f]{32}"),
    _shape("vault", "hvs.", r"hv[sbr]\.[A-Za-z0-9_-]{24,200}", lead=4),
    _shape("databricks", "dapi", r"dapi[a-f0-9]{32}(?:-\d)?"),
    _shape("linear", "lin_api_", r"lin_api_[A-Za-z0-9]{40}"),
    _shape("notion", "ntn_", r"ntn_[A-Za-z0-9]{40,50}"),
    _shape("notion", "secret_", r"secret_[A-Za-z0-9]{43}"),
    _shape("age", "AGE-SECRET-KEY-1", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    _shape("groq", "gsk_", r"gsk_[A-Za-z0-9]{48,60}"),
    _shape("replicate", "r8_", r"r8_[A-Za-z0-9]{37,40}"),
    _shape("perplexity", "pplx-", r"pplx-[A-Za-z0-9]{40,60}"),
    _shape("xai", "xai-", r"xai-[A-Za-z0-9]{60,100}"),
    _shape("tavily", "tvly-", r"tvly-[A-Za-z0-9_-]{24,60}"),
    _shape("langsmith", "lsv2_", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    _shape("atlassian", "AT", r"AT(?:ATT|CTT)3[A-Za-z0-9_=-]{100,300}"),
    _shape("postman", "PMAK-", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    _shape("grafana", "glsa_", r"glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}"),
    _shape("grafana", "glc_", r"glc_[A-Za-z0-9+/]{32,400}={0,2}"),
    _shape("newrelic", "NRAK-", r"NRAK-[A-Z0-9]{27}"),
    _shape("square", "sq0", r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}"),
    _shape("square", "EAAA", r"EAAA[0-9A-Za-z_-]{60}"),
    _shape("facebook", "EAA", r"EAA[A-Za-z0-9]{90,400}"),
    _shape("sentry", "sntry", r"sntry[su]_[A-Za-z0-9_=-]{60,300}"),
    _shape("pulumi", "pul-", r"pul-[a-f0-9]{40}"),
    _shape("supabase", "sbp_", r"sbp_[a-f0-9]{40}"),
    _shape("doppler", "dp.st.", r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,44}", lead=6),
    _shape("dropbox", "sl.", r"sl\.[A-Za-z0-9_-]{130,300}", lead=3),
    _shape("telegram", ":AA", r"\d{8,10}:AA[0-9A-Za-z_-]{33}", lead=11),
    _shape("firebase", ":APA91b", r"AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{130,140}", lead=12),
    _shape("aws", "IQoJb3JpZ2lu", r"IQoJb3JpZ2lu[A-Za-z0-9+/=]{80,4000}"),
    _shape("aws", "FwoGZXIvYXdz", r"FwoGZXIvYXdz[A-Za-z0-9+/=]{80,4000}"),
    _shape("aws", "FQoGZXIvYXdz", r"FQoGZXIvYXdz[A-Za-z0-9+/=]{80,4000}"),  # the older STS session token
    _shape("aws", "FQoDYXdz", r"FQoDYXdz[A-Za-z0-9+/=]{80,4000}"),
    _shape("aws", "AgoJb3JpZ2lu", r"AgoJb3JpZ2lu[A-Za-z0-9+/=]{80,4000}"),
    _shape("private-key", "LS0tLS1CRUdJTi", r"LS0tLS1CRUdJTi[A-Za-z0-9+/=]{20,20000}"),
    # base64 of files that hold secret keys and say so in their first bytes: a Tor onion
    # service's "== ed25519v1-secret: type0 ==", a Kerberos keytab (05 02, then its entries)
    _shape("private-key", "PT0gZWQyNTUxOXYxLXNlY3JldDog", r"PT0gZWQyNTUxOXYxLXNlY3JldDog[A-Za-z0-9+/=]{40,400}"),
    _shape("private-key", "BQIAAA", r"BQIAAA[A-Za-z0-9+/=]{60,20000}"),
    _shape("jwt", "eyJ", r"eyJ[A-Za-z0-9_-]{8,2000}\.eyJ[A-Za-z0-9_-]{8,8000}\.[A-Za-z0-9_-]{8,2000}"),
]
# Access keys only: AIDA…, AROA…, ANPA… name users, roles and policies (aws sts
# get-caller-identity prints them) and are no secret.
_AWS_ID = re.compile(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])")
_TWILIO_SID = re.compile(r"AC[0-9a-f]{32}(?![A-Za-z0-9])")
_DISCORD = re.compile(r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}")
_TERRAFORM = re.compile(r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}")
_MAILCHIMP = re.compile(r"[0-9a-f]{32}-us\d{1,2}(?![A-Za-z0-9])")

_BY_START: dict[str, list[_Shape]] = {}
_BY_LEAD: dict[str, list[_Shape]] = {}  # keyed by the character just before the run
for _s in _SHAPES:
    if _s.lead:
        _BY_LEAD.setdefault(_s.prefix[_s.lead - 1] if _s.prefix[0] != ":" else ":", []).append(_s)
    else:
        _BY_START.setdefault(_s.prefix[:2], []).append(_s)
_ESCAPES = frozenset("nrtbf")  # \n in a JSON-escaped transcript glues an n to the next word

# Runs are found in the UTF-8 bytes with every token byte translated to "a" and every
# other byte to " ": then a run of 16 is one bytes.find, several times faster than a
# regular expression over the text. Only runs that may start a key are looked at.
_RUN_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_CLASSES = bytes(ord("a") if i in _RUN_BYTES else ord(" ") for i in range(256))
_MIN_RUN = 16
_NEEDLE = b"a" * _MIN_RUN
_STARTS = frozenset(k.encode() for k in _BY_START)
_LEADS = frozenset(ord(k) for k in _BY_LEAD)
_CONTEXT_FIRST = frozenset(b"AS")  # AKIA…/ASIA… (AWS), AC…/SK… (Twilio)
_ESCAPE_BYTES = frozenset(b"nrtbf")


def _candidate_runs(text: str, data: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) in `text` (`data` in UTF-8) of the token runs worth a look, in order."""
    classes = data.translate(_CLASSES)
    n = len(data)
    same = n == len(text)  # ASCII: byte offsets are character offsets
    find = classes.find
    pos = find(_NEEDLE)
    while pos >= 0:
        end = find(b" ", pos + _MIN_RUN)
        if end < 0:
            end = n
        first = data[pos]
        before = data[pos - 1] if pos else 32
        if (data[pos:pos + 2] in _STARTS or before in _LEADS or first in _CONTEXT_FIRST
                or (end < n and data[end] == 46)  # a dotted token: discord, terraform
                or (end - pos in (36, 37) and data[pos + 32] == 45)  # mailchimp …-usN
                or end - pos in (51, 52, 111)  # a WIF key, an xprv
                or (before == 46 and end - pos >= 20 and not data[pos:end].translate(None, b"_-").isalpha())  # sl.…
                or (end - pos >= 24 and first > 64 and (45 in data[pos + 2:pos + 14] or 95 in data[pos + 2:pos + 14])
                    and not (end - pos == 36 and data[pos + 8] == 45 and data[pos + 13] == 45)  # a UUID
                    and not data[pos:end].translate(None, b"_-").isalpha()  # prefix-/prefix_ and a body with digits
                    and data[pos:_first_break(data, pos)].lower() not in _ID_PREFIX_BYTES)  # msg_01…: an id
                or (before == 92 and first in _ESCAPE_BYTES)):
            if same:
                yield pos, end
            else:
                at = char_offset(data, pos)
                yield at, at + end - pos  # a run is ASCII: as many characters as bytes
        pos = find(_NEEDLE, end)


def _first_break(data: bytes, pos: int) -> int:
    """Where the first - or _ from `pos` stands (there is one in its first 14 bytes)."""
    dash, underscore = data.find(b"-", pos, pos + 14), data.find(b"_", pos, pos + 14)
    return underscore if dash < 0 or 0 <= underscore < dash else dash


def _placeholder_body(token: str, prefix: str) -> bool:
    """ghp_xxxxxxxx, sk-your-key-here, AKIAXXXXXXXXXXXXXXXX: the shape, but no secret."""
    body = token[len(prefix):]
    lowered = body.lower()
    if "xxxx" in lowered or "...." in lowered or "0000000" in lowered:
        return True
    stripped = re.sub(r"your|here|example|sample|placeholder|redacted|dummy|fake|test|key|token|api|"
                      r"secret|[_\-.]", "", lowered)
    return len(stripped) < 8 or len(set(stripped)) < 6


def provider_hits(text: str, data: bytes | None = None) -> Iterator[Hit]:
    """Provider keys and tokens, and the secrets found beside AWS and Twilio ids (`data`:
    `text` in UTF-8, when encoded already)."""
    n = len(text)
    by_start, by_lead = _BY_START, _BY_LEAD
    if data is None:
        data = text.encode("utf-8", "surrogatepass")
    for start, end in _candidate_runs(text, data):
        before = text[start - 1] if start else ""
        if before == "\\" and text[start] in _ESCAPES:
            start += 1
            before = ""
        candidates = by_start.get(text[start:start + 2])
        if candidates:
            yield from _try(text, start, candidates, (0,))
        if before in by_lead:
            yield from _try(text, start, by_lead[before], None)
        if end < n and text[end] == ".":
            for kind, pattern in (("discord", _DISCORD), ("terraform", _TERRAFORM)):
                match = pattern.match(text, start)
                if match and looks_random(match.group(0).replace(".", "")):
                    yield Hit(kind, match.start(), match.end(), f"{kind} token (three dotted parts)")
        first = text[start]
        if first == "A" or first == "S" or (end - start in (36, 37) and text[start + 32] == "-"):
            yield from _neighbours(text, start, end)
        if before == "." and end - start >= 20:
            hit = _dotted(text, start, end)
            if hit:
                yield hit
        if end - start in (51, 52, 111) and wallet_key(text[start:end]):
            yield Hit("private-key", start, end, "wallet private key (WIF / xprv, base58check)")
        elif end - start >= 24 and first.isalpha() and ("-" in text[start + 2:start + 14] or "_" in text[start + 2:start + 14]):
            hit = _prefixed(text, start, end, before)
            if hit:
                yield hit


# Vendors' own prefix before a random body: tskey-auth-…, dckr_pat_…, xapp-1-…, figd_…,
# pscale_tkn_…. Object ids (msg_01…, cus_…, chatcmpl-…) have short bodies or are named.
# The vendor's word: lower-case letters (a digit or two at its end: fo1_, y0_) or four capitals
# or more (CFPAT-); a random base64url string that merely holds a dash early (t5v-…, PW_…)
# has neither.
_PREFIXED = re.compile(r"(?P<prefix>(?:[a-z]{2,10}[0-9]{0,2}|[a-z][0-9]{1,2}|[A-Z]{4,10}[0-9]{0,2})(?:[-_][a-zA-Z0-9]{1,12}){0,3}?[-_])"
                       r"(?P<body>[A-Za-z0-9][A-Za-z0-9_-]{19,})")
_ID_PREFIXES = frozenset({"dpl", "prj", "sha1", "sha224", "sha256", "sha384", "sha512", "md5", "blake2b", "blake3", "commit", "git", "rev",
                          "build", "tx", "block", "trace", "span", "req", "request", "msg", "toolu", "chatcmpl", "resp",
                          "batch", "file", "msgbatch", "run", "job", "thread", "asst", "call", "step", "cs", "evt",
                          "event", "id", "uuid", "nonce", "hash", "digest", "pk", "pub", "public", "org", "user",
                          "cus", "price", "prod", "sub", "pi", "pm", "ch", "in", "acct", "po", "data", "test", "img",
                          "operation", "seti", "setatt", "txn", "ipi", "trr", "pyr", "iauth"})
# Payment objects' ids (Stripe's refund re_, webhook endpoint we_, transfer tr_ …): one run after
# the word; a key of the same word holds a second part (Resend's re_<id>_<secret>).
_ONE_RUN_ID_PREFIXES = frozenset({"re", "we", "si", "ii", "il", "tr", "py", "src", "du", "dp", "card", "ba", "fee"})
_ID_PREFIX_BYTES = frozenset(p.encode() for p in _ID_PREFIXES)
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9+/=_-]*")
_BASE64_TAIL = re.compile(r"[A-Za-z0-9+/=_-]{0,400}")  # bounded: a long base64 text holds many runs
# One more word of a vendor prefix: a short lower-case word, or letters with a digit (na1, v1), then - or _.
_PREFIX_WORD = re.compile(r"(?:[a-z]{1,5}|[a-z]{1,3}[0-9])[-_]")


def _three_classes(body: str) -> bool:
    return (sum(c.isupper() for c in body) >= 3 and sum(c.islower() for c in body) >= 3
            and sum(c.isdigit() for c in body) >= 3)


def _prefixed(text: str, start: int, end: int, before: str) -> Hit | None:
    if before and before not in " \t\n\r\"'`:=(,>[{|":
        return None  # inside a path or a longer word
    match = _PREFIXED.fullmatch(text, start, end)
    first = match.group("prefix").split("-")[0].split("_")[0].lower() if match else ""
    if not match or first in _ID_PREFIXES:
        return None
    if first in _ONE_RUN_ID_PREFIXES and re.fullmatch(r"[A-Za-z0-9]+", text[start + len(first) + 1:end]):
        return None  # re_3CyH11YX9U3vnAv0wqZlIVfX: a refund's id
    prefix, body = match.group("prefix"), match.group("body")
    more = _PREFIX_WORD.match(body)
    while more and len(body) - more.end() >= 16 and prefix.count("_") + prefix.count("-") < 4:
        prefix, body = prefix + more.group(0), body[more.end():]  # dckr_ pat_ …: the prefix's own words
        more = _PREFIX_WORD.match(body)
    segments = len(re.findall(r"[-_]", prefix))
    flat = body.replace("-", "").replace("_", "")
    if text[end:end + 1] in ("+", "/"):  # fm2_lJPE…+…/…: a base64 body runs on past the run
        tail = _BASE64_TAIL.match(text, end)
        flat += re.sub(r"[^A-Za-z0-9]", "", tail.group(0)) if tail else ""
    words = set(re.split(r"[-_]", prefix.lower()))
    path = _BASE64_TAIL.match(text, end) if text[end:end + 1] == "/" else None
    whole = body + (path.group(0) if path else "")
    if _is_uuid_body(body) or names_an_object(prefix + whole, one_word=True):
        # pat-na1-<uuid>, sk-lf-<uuid>: a UUID or a hex digest is a secret only when the prefix
        # says so; behind other words it names a cache entry, an operation, an asset, a pod
        if words.isdisjoint(SECRET_PREFIX_WORDS):
            return None
        return Hit("token", start, end, f"token with a vendor prefix ({prefix}…)")
    # A prefix word that says secret (pat, sk, key, token) vouches for a shorter body.
    shortest = 16 if not words.isdisjoint(SECRET_PREFIX_WORDS) else 20 if segments >= 2 else 28
    if 20 <= len(flat) < shortest and _three_classes(flat):
        shortest = 20  # fly_…, rnd_…: a short body, but capitals, small letters and digits all mixed
    if len(flat) < shortest or not looks_random(flat, min(shortest, 20)):
        return None
    if not any(c.isdigit() for c in flat) or not any(c.isalpha() for c in flat):
        return None
    tail = _TOKEN_TAIL.match(text, end)
    return Hit("token", start, tail.end() if tail else end, f"token with a vendor prefix ({prefix}…)")


_DOT_PREFIX = re.compile(r"(?<![\w.])[a-z][a-z0-9]{1,9}(?:\.[a-z]{1,4})?\.\Z")
# More dotted parts after the first: dt0c01.<id>.<secret>, st.<uuid>.<hex>.<hex>, sk.eyJ….<sig>
_DOTTED_TAIL = re.compile(r"(?:\.[A-Za-z0-9_-]{8,300}){0,4}")


def _dotted(text: str, start: int, end: int) -> Hit | None:
    """sl.u.AbC…, sk.eyJ…: a short lower-case prefix, a dot, a random body."""
    prefix = _DOT_PREFIX.search(text, max(0, start - 16), start)
    if not prefix:
        return _random_pair(text, start, end)
    if prefix.group(0).split(".")[0] in _ID_PREFIXES or names_an_object(text[prefix.start():end]):
        return None  # operations/acf.p2-<number>-<uuid>: an operation's name
    flat = text[start:end].replace("-", "").replace("_", "")
    if not looks_random(flat, 20) or not looks_random(text[start:end], 20) or not any(c.isdigit() for c in flat):
        return None  # apsw.FTS5_TOKENIZE_DOCUMENT: a constant's name, words once its _ are seen
    tail = _DOTTED_TAIL.match(text, end)
    return Hit("token", prefix.start(), tail.end() if tail else end, f"token with a vendor prefix ({prefix.group(0)}…)")


# <random id>.<random secret>: an id of mixed case and digits, a dot, a long random body.
_PAIR_HEAD = re.compile(r"(?<![\w.-])[A-Za-z0-9]{12,40}\.\Z")


def _random_pair(text: str, start: int, end: int) -> Hit | None:
    head = _PAIR_HEAD.search(text, max(0, start - 41), start)
    if not head or end - start < 32:
        return None
    first, body = head.group(0)[:-1], text[start:end]
    if not (any(c.isupper() for c in first) and any(c.islower() for c in first) and any(c.isdigit() for c in first)):
        return None
    if not looks_random(first, 12) or not looks_random(body.replace("-", "").replace("_", ""), 32):
        return None
    tail = _DOTTED_TAIL.match(text, end)  # a third part: header.payload.signature
    return Hit("token", head.start(), tail.end() if tail else end, "token of a random id and a random secret (…….……)")


def _is_uuid_body(body: str) -> bool:
    return bool(re.fullmatch(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", body))


def _try(text: str, start: int, shapes: list[_Shape], offsets: tuple[int, ...] | None) -> Iterator[Hit]:
    for shape in shapes:
        for offset in offsets or (range(11, 8, -1) if shape.kind == "telegram" else (shape.lead,)):
            if offset > start or not offset and not text.startswith(shape.prefix, start):
                continue
            match = shape.pattern.match(text, start - offset)
            if match and _usable(text, match, shape):
                yield Hit(shape.kind, match.start(), match.end(), f"{shape.kind} key ({shape.prefix}…)")
                return


def _usable(text: str, match: re.Match[str], shape: _Shape) -> bool:
    token = match.group(0)
    after = text[match.end():match.end() + 1]
    if after.isalnum() and shape.kind not in ("jwt", "private-key"):
        return False  # a longer word that merely starts like a key
    if shape.prefix == "LS0tLS1CRUdJTi":
        return _is_base64_private_key(token)
    return not _placeholder_body(token, shape.prefix)


def _is_base64_private_key(token: str) -> bool:
    """LS0tLS1CRUdJTi… is base64 of -----BEGIN: a secret only if what begins is a private key
    (kubeconfig's client-key-data), not a certificate."""
    head = token[:64]
    try:
        decoded = base64.b64decode(head[: len(head) // 4 * 4] + "==", validate=False)
    except (binascii.Error, ValueError):
        return False
    return b"PRIVATE KEY" in decoded


# An AWS secret access key is 40 characters of base64 with no prefix: it counts only
# near its access key id (the next line of a credentials file, the same CSV row).
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_HEX32 = re.compile(r"(?<![A-Za-z0-9])[0-9a-f]{32}(?![A-Za-z0-9])")
_ALNUM32 = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]{32}(?![A-Za-z0-9])")
_NEAR = 400


def _aws_secret(secret: str) -> bool:
    return (any(c.islower() for c in secret) and any(c.isupper() for c in secret)
            and looks_random(secret) and not is_placeholder(secret))


def _neighbours(text: str, start: int, end: int) -> Iterator[Hit]:
    aws = _AWS_ID.match(text, start)
    if aws:
        # The key id names the key (an identifier); it goes only with the secret beside it.
        secrets = [Hit("aws", match.start(), match.end(), "aws secret access key near its key id")
                   for match in _AWS_SECRET.finditer(text, max(0, start - _NEAR), min(len(text), end + _NEAR))
                   if _aws_secret(match.group(0))]
        if secrets and not _placeholder_body(aws.group(0), aws.group(0)[:4]):
            yield Hit("aws", aws.start(), aws.end(), "aws access key id (AKIA…) beside its secret")
        yield from secrets
        return
    if _TWILIO_SID.match(text, start):
        sid = text[start + 2:start + 34]
        for match in _HEX32.finditer(text, max(0, start - _NEAR), min(len(text), end + _NEAR)):
            if match.group(0) != sid and looks_random(match.group(0)):
                yield Hit("twilio", match.start(), match.end(), "twilio auth token near its account sid (AC…)")
        return
    if text.startswith("SK", start) and end - start == 34:
        for match in _ALNUM32.finditer(text, max(0, start - _NEAR), min(len(text), end + _NEAR)):
            token = match.group(0)
            if token != text[start + 2:start + 34] and looks_random(token) and not token.isdigit():
                yield Hit("twilio", match.start(), match.end(), "twilio api key secret near its sid (SK…)")
        return
    mailchimp = _MAILCHIMP.match(text, start)
    if mailchimp and looks_random(mailchimp.group(0)[:32]):
        yield Hit("mailchimp", mailchimp.start(), mailchimp.end(), "mailchimp key (…-usN)")


# -- blocks ----------------------------------------------------------------------------
_PEM_BODY = re.compile(r"[A-Za-z0-9+/=]{4}")
_PEM_PLACEHOLDER = re.compile(r"(?:\\n|\s)*(?:<[^<>]{1,80}>|\[[^\]]{1,80}\]|\{\{?[^{}]{1,80}\}\}?|\.\.\.|…)(?:\\n|\s)*")
# After an unterminated BEGIN: line breaks (real or escaped), RFC 1421 headers, base64.
_PEM_TAIL = re.compile(r"(?:(?:\\r|\\n|\r|\n)+|[A-Za-z0-9+/=]{1,100}|[A-Za-z-]{1,40}: [^\n\\]{0,200})*")
_PEM_BEGIN = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ ){0,4})PRIVATE KEY( BLOCK)?-----")


def pem_hits(text: str) -> Iterator[Hit]:
    """PEM private keys (RSA, EC, OPENSSH, ENCRYPTED, PGP …), also with \\n escaped in
    JSON; an unterminated block (a cut tool output) is removed to the end."""
    next_end: dict[str, int] = {}  # END marker -> where it next occurs (-1: nowhere): one scan each
    at = text.find("-----BEGIN ")
    while at >= 0:
        match = _PEM_BEGIN.match(text, at)
        if match is None:
            at = text.find("-----BEGIN ", at + 11)
            continue
        end_marker = f"-----END {match.group(1)}PRIVATE KEY{match.group(2) or ''}-----"
        close = next_end.get(end_marker, match.end() - 1)
        if 0 <= close < match.end():
            close = next_end[end_marker] = text.find(end_marker, match.end())
        if close < 0:
            # Cut short (a truncated tool output): the base64 lines that follow go; a
            # marker with no body after it is code or docs talking about keys.
            tail = _PEM_TAIL.match(text, match.end(), match.end() + 20000)
            if tail and sum(c.isalnum() for c in tail.group(0)) >= 40:
                yield Hit("private-key", at, tail.end(), "PEM private key block (cut short)")
                at = text.find("-----BEGIN ", tail.end())
            else:
                at = text.find("-----BEGIN ", match.end())
            continue
        if (not _PEM_BODY.search(text, match.end(), close)  # the markers alone: no key
                or _PEM_PLACEHOLDER.fullmatch(text, match.end(), close)):  # <contents of your private key>
            at = text.find("-----BEGIN ", close)
            continue
        stop = close + len(end_marker)
        if text.startswith("\\n", stop) and text[stop + 2:stop + 3] in ("\"", "'"):
            stop += 2  # "private_key": "-----BEGIN …-----END PRIVATE KEY-----\n": the string's last line
        yield Hit("private-key", at, stop, "PEM private key block")
        at = text.find("-----BEGIN ", close + len(end_marker))


# Any other armoured block whose label names a key and not a public one: OpenVPN static
# keys, SSH2 (RFC 4716) private keys, TSIG keys. Its body goes; headers (Comment: …) stay.
_KEY_BLOCK = re.compile(r"(?P<dashes>-{4,5}) ?BEGIN (?P<label>[A-Za-z0-9 ]{1,60}?) ?-{4,5}")
_BLOCK_BODY = re.compile(r"(?:[ \t]*(?:\r?\n|\\n)(?:[A-Za-z-]{1,40}: [^\n\\]{0,200}|[ \t]*(?P<line>[A-Za-z0-9+/=]{2,200})))+")


def key_block_hits(text: str) -> Iterator[Hit]:
    """The body of an armoured block (BEGIN … KEY …) that holds no public key or certificate."""
    at = text.find("BEGIN ")
    while at >= 0:
        match = _KEY_BLOCK.match(text, max(0, at - 6)) or _KEY_BLOCK.match(text, max(0, at - 5))
        at = text.find("BEGIN ", at + 6)
        if not match:
            continue
        label = match.group("label").upper()
        if "KEY" not in label or "PUBLIC" in label or ("PRIVATE KEY" in label and match.group("dashes") == "-----"):
            continue  # PEM private keys are pem_hits'
        body = _BLOCK_BODY.match(text, match.end())
        if not body:
            continue
        lines = [m for m in re.finditer(r"(?m)^[ \t]*([A-Za-z0-9+/=]{2,200})[ \t]*\r?$", text[match.end():body.end()])]
        if sum(len(m.group(1)) for m in lines) < 32:
            continue
        first, last = lines[0], lines[-1]
        yield Hit("private-key", match.end() + first.start(1), match.end() + last.end(1), f"{label.lower()} block body")


# "<private> tags", "`<private>`": the tag talked about (docs, maxmem's own messages), not used.
_MENTION = re.compile(r"[`'\"]|s? (?:tags?|spans?|parts?|blocks?|sections?|markers?)\b")


# A code comment on the tag's line (the line may be JSON-escaped: "\\n" ends it too).
_COMMENT = re.compile(r"(?:^|\s)(?:#|//|--|/\*|;;)\s")


def _in_comment(text: str, at: int) -> bool:
    """Whether the tag at `at` sits in a code comment: code talking about the tag, whose
    missing closing tag must not hide the rest of the text."""
    start = max(text.rfind("\n", 0, at), text.rfind("\\n", 0, at) + 1, 0)
    return bool(_COMMENT.search(text, start, at))


def private_hits(text: str, lowered: str) -> Iterator[Hit]:
    """<private>…</private> spans (an unclosed one runs to the end): removed entirely."""
    at = lowered.find("<private>")
    while at >= 0:
        close = lowered.find("</private>", at + 9)
        if (at and text[at - 1] in "`'\"") or (close < 0 and (
                _MENTION.match(lowered, at + 9) or _in_comment(text, at))):
            at = lowered.find("<private>", at + 9)
            continue
        if close < 0:
            yield Hit(PRIVATE, at, len(text), "<private> span (unclosed: to the end)")
            return
        yield Hit(PRIVATE, at, close + 10, "<private> span")
        at = lowered.find("<private>", close + 10)


# scheme://user:password@host — the user may be empty (redis://:pw@host), the password
# may hold / @ ? # (unencoded): it runs to the last @ that a host follows.
_URL_CREDENTIALS = re.compile(r"://(?P<user>[^\s:/?#@\"'<>\\]{0,256}):(?P<secret>[^\s\"'<>\\]{1,256}?)@"
                              r"(?P<host>[A-Za-z0-9\[][A-Za-z0-9.\-\[\]:%]{0,255})(?=[/?#\s\"'<>\\;,)]|\Z)")
# smtps://me@example.com:pw@smtp.example.com (muttrc, msmtp, some SMTP URLs): an address as the user.
_URL_EMAIL_USER = re.compile(r"://(?P<user>[\w.+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,6}\.[A-Za-z]{2,24})"
                             r":(?P<secret>[^\s\"'<>\\/@]{1,256})@(?P<host>[A-Za-z0-9\[][A-Za-z0-9.\-\[\]:%]{0,255})"
                             r"(?=[/?#\s\"'<>\\;,)]|\Z)")
_URL_CREDENTIALS_WIDE = re.compile(_URL_CREDENTIALS.pattern.replace("{1,256}?)@", "{1,256})@"))
# https://<token>@github.com/…: a random user with no password is a token (git, npm, pip).
_URL_TOKEN_USER = re.compile(r"://(?P<secret>[A-Za-z0-9_.~%-]{20,256})@[A-Za-z0-9\[]")
_PORT = re.compile(r"\d{1,5}(?:[/?#]|\Z)")
_URL_PLACEHOLDERS = frozenset({"password", "pass", "passwd", "pwd", "secret", "pw", "p", "x", "token",
                               "mypassword", "yourpassword", "pass123", "changeme"})


def _last_at(text: str, match: re.Match[str]) -> re.Match[str]:
    """The same credentials run to a later @ of the URL when a host follows it
    (p@ss/w0rd#1@db): what stood between was the password's, unless it reads as the
    URL's query (?next=a@b.com)."""
    wider = _URL_CREDENTIALS_WIDE.match(text, match.start())
    if wider is None or wider.end("secret") <= match.end("secret"):
        return match
    between = text[match.end("secret"):wider.end("secret")]
    return match if "=" in between or "&" in between else wider


def _places(text: str, needle: str, data: bytes | None) -> Iterator[int]:
    """Offsets in `text` of `needle` (ASCII), found in `data` (`text` or its lower-cased
    form in UTF-8) when given: a scan of bytes, not of a text four bytes a character."""
    if data is None or len(data) == len(text):
        at = text.find(needle)
        while at >= 0:
            yield at
            at = text.find(needle, at + len(needle))
        return
    encoded = needle.encode()
    at = data.find(encoded)
    while at >= 0:
        yield char_offset(data, at)
        at = data.find(encoded, at + len(encoded))


def url_hits(text: str, data: bytes | None = None) -> Iterator[Hit]:
    """Passwords in URLs and DSNs (postgres://app:pw@db/x; `data`: the text in UTF-8,
    lower-cased or not)."""
    for at in _places(text, "://", data):
        at_sign = text.find("@", at, at + 600)
        match = _URL_CREDENTIALS.match(text, at) or _URL_EMAIL_USER.match(text, at) if at_sign >= 0 else None
        if match:
            match = _last_at(text, match)
            secret = match.group("secret")
            if not (secret.startswith(("[REDACTED", "$")) or is_placeholder(secret) or _PORT.match(secret)
                    or match.group("user").startswith("[REDACTED")
                    or secret.lower() in _URL_PLACEHOLDERS):
                yield Hit("url-password", match.start("secret"), match.end("secret"), "password in a URL (://user:…@)")
        elif at_sign >= 0:
            token = _URL_TOKEN_USER.match(text, at)
            if token and looks_random(token.group("secret"), 20) and not is_placeholder(token.group("secret")):
                yield Hit("url-password", token.start("secret"), token.end("secret"), "token as a URL's user (://…@)")


# Incoming-webhook URLs: whoever holds one can post as the app, so the path after the
# host is the secret. Found by the host wherever it is (with or without a scheme) and
# with the slashes as they may be written: "/", JSON's "\/", or percent-encoded "%2F".
_SEP = r"(?:/|\\/|%2[Ff])"
_HOOK_PART = r"[A-Za-z0-9_-]"
_WEBHOOKS = {
    "slack": re.compile(rf"hooks\.slack\.com{_SEP}(?:services|workflows|triggers){_SEP}"
                        rf"(?P<secret>{_HOOK_PART}{{2,40}}(?:{_SEP}{_HOOK_PART}{{2,80}}){{1,4}})"),
    "discord": re.compile(rf"discord(?:app)?\.com{_SEP}api{_SEP}(?:v\d{{1,2}}{_SEP})?webhooks{_SEP}"
                          rf"(?P<secret>\d{{5,30}}{_SEP}{_HOOK_PART}{{30,100}})"),
    "teams": re.compile(rf"(?:webhook\.office\.com{_SEP}webhookb2|outlook\.office(?:365)?\.com{_SEP}webhook){_SEP}"
                        rf"(?P<secret>[0-9A-Fa-f-]{{36}}@[0-9A-Fa-f-]{{36}}{_SEP}IncomingWebhook"
                        rf"(?:{_SEP}{_HOOK_PART}{{8,200}}){{1,4}})"),
}
_WEBHOOK_KINDS = {"hooks.slack.com": "slack", "discord.com": "discord", "discordapp.com": "discord",
                  "webhook.office.com": "teams", "outlook.office.com": "teams", "outlook.office365.com": "teams"}


def _real_hook(path: str) -> bool:
    """Not a documentation example: long enough, its last part no placeholder (XXXX…)."""
    return len(path) >= 12 and not is_placeholder(re.split(_SEP, path)[-1])


def webhook_hits(text: str, lowered: str, data: bytes | None = None,
                 words: frozenset[bytes] | None = None) -> Iterator[Hit]:
    """Slack, Discord and Microsoft Teams incoming-webhook URLs: the path after the host
    (`lowered`: the text lowercased, where the hosts are looked for; `data`: it in UTF-8;
    `words`: its words)."""
    for host, kind in _WEBHOOK_KINDS.items():
        if words is not None and not may_hold(words, host.encode()):
            continue  # slack, discord, office: a look at the text's words, not at the text
        if data is not None and host.encode() not in data:
            continue  # a scan of bytes, not of a text four bytes a character
        at = lowered.find(host)
        while at >= 0:
            match = _WEBHOOKS[kind].match(text, at)
            if match and _real_hook(match.group("secret")):
                yield Hit(kind, match.start("secret"), match.end("secret"), f"{kind} webhook URL")
            at = lowered.find(host, at + len(host))


_AZURE_AD_SECRET = re.compile(r"[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])")


def azure_hits(text: str) -> Iterator[Hit]:
    """Entra ID (Azure AD) client secrets: three characters, a digit, Q~, then 31-34."""
    at = text.find("Q~")
    while at >= 0:
        if at >= 4:
            match = _AZURE_AD_SECRET.match(text, at - 4)
            if match and (at < 5 or not (text[at - 5].isalnum() or text[at - 5] in "_~.-")):
                yield Hit("azure", match.start(), match.end(), "azure client secret (…Q~…)")
        at = text.find("Q~", at + 2)
