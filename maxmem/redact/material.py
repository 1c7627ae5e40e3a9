"""Key material and card numbers recognised by their structure, not by a label.

- a private key's base64 body without its BEGIN line: the DER it decodes to starts as a
  private key does (a SEQUENCE whose first element is a small version INTEGER: PKCS#1,
  PKCS#8, SEC1, PKCS#12), or as OpenSSH's `openssh-key-v1`; a certificate or a public
  key starts with a SEQUENCE and stays;
- a PuTTY `.ppk` file's private lines and MAC;
- a JSON Web Key's private members (`d`, `p`, `q`, `dp`, `dq`, `qi`, and `k` of a
  symmetric key) when the object says `kty`;
- Bitcoin WIF keys and BIP-32 extended private keys (`xprv…`), by their base58check
  checksum;
- a recovery (seed) phrase: 12 to 24 short lower-case words in a row after a
  recovery/seed/mnemonic context (the BIP-39 list is not shipped; its words are
  3-8 letters, and prose of that length has "the", "and", "you" …);
- card numbers that pass the Luhn check near a card context (card, CVV, expiry …), and
  the CVV beside them. Test numbers (4242 4242 4242 4242) stay.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from .shapes import Hit, words_within
from .values import (
    char_offset,
    char_offsets,
    find_words,
    looks_random,
    present_words,
    scan,
    word_blob,
    word_index,
)

__all__ = ["card_hits", "der_hits", "grouped_key_hits", "jwk_hits", "key_material_hits", "numbered_phrase_hits",
           "phrase_hits", "putty_hits", "totp_hits"]

# A body: its first line, then whole lines of base64 (real or JSON-escaped line breaks).
_B64_BLOCK = re.compile(r"(?:M[A-Z]|b3Bl)[A-Za-z0-9+/]{38,}={0,2}"
                        r"(?:(?:\r?\n|\\r\\n|\\n)[ \t]{0,8}[A-Za-z0-9+/]{1,200}={0,2}(?=[\r\n\"'\\,]|\Z))*")
_OPENSSH = b"openssh-key-v1\x00"


def _der_private(head: bytes) -> bool:
    """DER of a private key: SEQUENCE, its length, then INTEGER 0-3 (the version)."""
    if len(head) < 8 or head[0] != 0x30:
        return False
    at = 2 + (head[1] & 0x7F if head[1] & 0x80 else 0)
    return head[at:at + 2] == b"\x02\x01" and head[at + 2] <= 3 and head[at + 3:at + 4] in (b"\x30", b"\x02", b"\x04")


# Long base64 runs are found as in shapes._candidate_runs: every base64 byte translated
# to "a", the rest to " ", then one bytes.find of 40 "a"s; only a run starting M… or
# b3Bl… (openssh-key-v1) is decoded.
_B64_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_B64_CLASSES = bytes(ord("a") if i in _B64_BYTES else ord(" ") for i in range(256))
_B64_RUN = b"a" * 40


def _base64_starts(text: str, data: bytes) -> Iterator[int]:
    """Offsets in `text` (`data` in UTF-8) of base64 runs of 40 or more that start like
    DER or OpenSSH."""
    classes = data.translate(_B64_CLASSES)
    same = len(data) == len(text)
    pos = classes.find(_B64_RUN)
    while pos >= 0:
        if data[pos] == 77 or data.startswith(b"b3Bl", pos):  # M
            yield pos if same else char_offset(data, pos)
        end = classes.find(b" ", pos + 40)
        if end < 0:
            return
        pos = classes.find(_B64_RUN, end)


def der_hits(text: str, data: bytes | None = None) -> Iterator[Hit]:
    """Base64 private-key bodies (PEM without its BEGIN line, a key pasted alone; `data`:
    `text` in UTF-8, when encoded already)."""
    if data is None:
        data = text.encode("utf-8", "surrogatepass")
    for at in _base64_starts(text, data):
        match = _B64_BLOCK.match(text, at)
        if not match or (at and text[at - 1] in "+/="):
            continue
        block = match.group(0)
        head = re.sub(r"\\[rn]|\s", "", block[:120])[:64]
        try:
            decoded = base64.b64decode(head[: len(head) // 4 * 4], validate=True)
        except (binascii.Error, ValueError):
            continue
        if decoded.startswith(_OPENSSH) or _der_private(decoded):
            yield Hit("private-key", match.start(), match.end(), "private key body (DER / OpenSSH by structure)")


_PPK_PRIVATE = re.compile(r"Private-Lines:[ \t]*(\d{1,3})[ \t]*\r?\n((?:[A-Za-z0-9+/=]{1,200}\r?\n?){1,200})")
_PPK_MAC = re.compile(r"Private-(?:MAC|Hash):[ \t]*([0-9a-fA-F]{20,128})")


def putty_hits(text: str) -> Iterator[Hit]:
    """A PuTTY .ppk file: its private lines and MAC."""
    for match in _PPK_PRIVATE.finditer(text):
        lines = match.group(2).splitlines(keepends=True)[: int(match.group(1))]
        body = "".join(lines).rstrip("\r\n")
        yield Hit("private-key", match.start(2), match.start(2) + len(body), "PuTTY private lines")
    for match in _PPK_MAC.finditer(text):
        yield Hit("private-key", match.start(1), match.end(1), "PuTTY private MAC")


_JWK_PRIVATE = re.compile(r"""(\\?["'])(?:d|p|q|dp|dq|qi|k)\1\s{0,4}:\s{0,4}\\?["']([A-Za-z0-9_-]{16,4096})\\?["']""")


def jwk_hits(text: str, lowered: str) -> Iterator[Hit]:
    """The private members of a JSON Web Key (the object names its key type)."""
    at = lowered.find("kty")
    while at >= 0:
        start = max(0, text.rfind("{", 0, at))
        close = text.find("}", at)
        end = len(text) if close < 0 else close
        for match in _JWK_PRIVATE.finditer(text, start, end):
            yield Hit("private-key", match.start(2), match.end(2), "private member of a JSON Web Key")
        at = lowered.find("kty", end)


_PHRASE_CONTEXT = ("seed", "recovery", "mnemonic", "phrase", "backup words", "secret words", "wallet",
                   "wiederherstellungsphrase", "frase", "palabras", "récupération", "recuperação", "herstelzin",
                   "odzyskiwania", "восстановления", "сид", "фраза", "助记词", "种子", "リカバリー", "복구", "words")
# "words" counts only after a phrase's length: "my 24 words:", "the 12-word backup"
_WORD_COUNT = re.compile(r"(?:12|15|18|21|24)[ -]\Z")
_PHRASE_INDEX = word_index(_PHRASE_CONTEXT)
_PHRASE_WORD = re.compile(r"[a-z]{3,8}")
_LINE_TOKENS = re.compile(r"[^\s\\]+")
_PHRASE_STRIP = "\"'`,.;:()[]：，"  # ASCII and full-width punctuation around a word
_WORD_LINES = re.compile(r"(?:[ \t]*[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){1,23}[ \t]*(?:\r?\n|\Z)){1,12}")
_SENTENCE_MARKS = frozenset(",.;!?")
_PHRASE_LENGTHS = (12, 15, 18, 21, 24)
_COPULAS = frozenset({"is", "are", "was", "were", "is:", "are:", "ist", "est", "es", "é", "是"})
_STOPWORDS = frozenset("the and you for are was with this that have not but from they will your our its his her "
                       "then when what which there their them been were has had can may into onto than".split())


def _phrase_after(text: str, at: int) -> Hit | None:
    """The 12-24 words that start among the first few tokens after `at`, on its line."""
    if text.count(" ", at, at + 400) + text.count("\n", at, at + 400) < 11:
        return None
    tokens = [m for m in _LINE_TOKENS.finditer(text, at, min(len(text), at + 400))]
    newline = text.find("\n", at, at + 400)
    if newline >= 0 and text[at:newline].strip(" \t:=\"'"):  # "seed:" alone on its line: the words are below
        newline2 = text.find("\n", newline + 1, at + 400)
        tokens = [m for m in tokens if m.start() < (newline if newline2 < 0 else newline)]
    elif newline >= 0:  # the words below, on one line or on several lines of words alone
        lines = _WORD_LINES.match(text, newline + 1)
        second = lines.end() if lines else text.find("\n", newline + 1, at + 400)
        tokens = [m for m in tokens if second < 0 or m.start() < second]
    for first in range(min(8, len(tokens))):
        run = marks = 0
        for m in tokens[first:first + 25]:
            word = m.group(0).strip(_PHRASE_STRIP)
            if not _PHRASE_WORD.fullmatch(word):
                break
            run += 1
            if m.group(0).rstrip("\"'`)")[-1:] in _SENTENCE_MARKS:
                if run in _PHRASE_LENGTHS and not marks:
                    break  # "… breeze acquire, can you check": the sentence goes on, the phrase ends
                marks += 1  # a list of words each with its comma goes on
        if run > 12 and first and tokens[first - 1].group(0).lower() in _COPULAS:
            run = max(n for n in (12, 15, 18, 21, 24) if n <= run)  # "is enact … annual keep it safe"
        if run in (12, 15, 18, 21, 24) and run == len(tokens[first:first + run]):
            words = [m.group(0).strip(_PHRASE_STRIP) for m in tokens[first:first + run]]
            if sum(w in _STOPWORDS for w in words) <= 1:
                start = tokens[first].start() + (len(tokens[first].group(0)) - len(tokens[first].group(0).lstrip("\"'`(：")))
                last = tokens[first + run - 1]
                end = last.end() - (len(last.group(0)) - len(last.group(0).rstrip("\"'`,.;:)]")))
                return Hit("private-key", start, end, "recovery phrase (12-24 words after 'seed/recovery')")
    return None


# A numbered list of 12-24 short words (1. crystal 2. fossil … 12. coyote): a recovery
# phrase as wallets show it, whatever the words around it.
_NUMBERED = re.compile(r"(?<![\w.])1[.)]\s{1,3}[a-z]{3,8}(?:\s{1,4}\d{1,2}[.)]\s{1,3}[a-z]{3,8}){11,23}(?![\w.])")
_TWELFTH = re.compile(r"12[.)] ")
_NUMBERED_BACK = 240  # eleven numbered words of up to 8 letters stand this far before "12."
_NUMBERED_WORD = re.compile(r"\d{1,2}[.)]\s{1,3}([a-z]{3,8})")


def numbered_phrase_hits(text: str) -> Iterator[Hit]:
    """Each word of a numbered list of 12, 15, 18, 21 or 24 short lower-case words."""
    done = 0
    for twelfth in _TWELFTH.finditer(text):  # a C-speed scan for "12. ", then a bounded look around it
        lo = max(done, twelfth.start() - _NUMBERED_BACK)
        match = _NUMBERED.search(text, lo, min(len(text), twelfth.end() + _NUMBERED_BACK))
        if match is None or match.start() > twelfth.start():
            continue
        done = match.end()
        words = list(_NUMBERED_WORD.finditer(text, match.start(), match.end()))
        numbers = [int(w.group(0).split(".")[0].split(")")[0]) for w in words]
        if len(words) in (12, 15, 18, 21, 24) and numbers == list(range(1, len(words) + 1)):
            for word in words:
                yield Hit("private-key", word.start(1), word.end(1), "a numbered recovery phrase (1. … 12. …)")


def phrase_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """12/15/18/21/24 short lower-case words after a recovery/seed-phrase context."""
    for at, word in find_words(lowered, data, present_words(words, _PHRASE_INDEX)):
        if word == "words" and not _WORD_COUNT.search(text, max(0, at - 3), at):
            continue
        hit = _phrase_after(text, at + len(word))
        if hit:
            yield hit


_CARD = re.compile(r"(?<![\d.-])(?<!\d,)(?:\d[ -]?){12,18}\d(?![\d])")  # a CSV field too (,4111…,)
_CARD_WORDS = {"card": b"card", "visa": b"visa", "mastercard": b"mastercard", "amex": b"amex", "cvv": b"cvv",
               "cvc": b"cvc", "cid": b"cid", "csc": b"csc", "expir": b"expiry", "expires": b"expires", "exp": b"exp",
               "karte": b"kreditkarte", "carte": b"carte", "tarjeta": b"tarjeta", "cartão": "cartão".encode(),
               "security code": b"code", "prüfnummer": "prüfnummer".encode(), "カード番号": "カード番号".encode(),
               "carta": b"carta", "karta": b"karta", "карта": "карта".encode(), "kaart": b"kaart"}
_CARD_ANCHORS = frozenset(a + e for a in _CARD_WORDS.values() for e in (b"", b"s"))
_NEAR_CARD = 150
_CVV = re.compile(r"(?i)(?:cvv2?|cvc2?|cid|csc|security code|prüfnummer|cryptogramme|código de seguridad|"
                  r"\b(?:c[óo]digo|codice|kod|code)\b|"
                  r"código de segurança|codice di sicurezza|kod zabezpieczający|код безопасности|セキュリティコード|安全码)"
                  r"(?:[_-]?(?:code|number|no))?[\"']?[\s:=#.-]{0,4}[\"']?(?:value=[\"']?)?(?:is[ \t]{1,3})?(\d{3,4})(?!\d)")
# A CSV header naming the code's column: the field at that place in the card's row.
_CSV_CODE = frozenset({"cvv", "cvc", "cvv2", "cvc2", "csc", "security_code", "security code"})
_TEST_CARDS = frozenset({"4242424242424242", "4111111111111111", "5555555555554444", "378282246310005",
                         "4000056655665556", "5105105105105100", "6011111111111117", "371449635398431",
                         "4012888888881881", "5200828282828210", "4000000000000002"})


def luhn(digits: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = ord(c) - 48
        total += (d * 2 - 9 if d > 4 else d * 2) if i % 2 else d
    return total % 10 == 0


# A word that starts with a card word is one too: Kartennummer, cardNumber, tarjetahabiente.
_CARD_STEM = re.compile(rb"(?:^| )(card|karte|carte|tarjeta|karta|kaart|carta)")


def _card_words(words: frozenset[bytes]) -> list[str]:
    present = [] if words.isdisjoint(_CARD_ANCHORS) else [
        w for w, anchor in _CARD_WORDS.items() if anchor in words or anchor + b"s" in words]
    if b"car" in word_blob(words) or b"kar" in word_blob(words) or b"tarjeta" in word_blob(words):
        stems = {m.group(1).decode() for m in _CARD_STEM.finditer(word_blob(words))}
        present += sorted(stems.difference(present))
    return present


def card_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """Card numbers (Luhn) near a card context, and the CVV beside one."""
    present = _card_words(words)
    if not present:
        return
    windows = [[max(0, at - _NEAR_CARD), min(len(text), at + _NEAR_CARD)] for at, _ in find_words(lowered, data, present)]
    merged: list[list[int]] = []
    for window in windows:
        if merged and window[0] <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], window[1])
        else:
            merged.append(window)
    seen = -1
    for start, end in merged:
        for match in _CARD.finditer(text, start, end):
            if match.start() > seen:
                seen = match.end()
                yield from _card(text, match)


_TEST_BEFORE = re.compile(r"(?i)\b(?:test|testing|sandbox|sample|example|dummy)\b[^\n\d]{0,40}\Z")


def _card_prefix(text: str, match: re.Match[str]) -> re.Match[str]:
    """The card number inside a run of digit groups that ran on into what follows it
    (`3732 889493 86080 12/28`: the expiry's month): the longest run of whole groups
    that passes the Luhn check, else the run as found."""
    if luhn(re.sub(r"\D", "", match.group(0))):
        return match
    ends = [m.start() for m in re.finditer(r"[ -]", match.group(0))]
    for end in reversed(ends):
        digits = re.sub(r"\D", "", match.group(0)[:end])
        if 13 <= len(digits) <= 19 and luhn(digits):
            return _CARD.match(text, match.start(), match.start() + end) or match
    return match


def _card(text: str, match: re.Match[str]) -> Iterator[Hit]:
    match = _card_prefix(text, match)
    digits = re.sub(r"\D", "", match.group(0))
    if _TEST_BEFORE.search(text, max(0, match.start() - 60), match.start()):
        return  # "Test card 4000 0000 0000 9995": a documented test number
    if 13 <= len(digits) <= 19 and luhn(digits) and digits not in _TEST_CARDS and len(set(digits)) > 3:
        yield Hit("card", match.start(), match.end(), "card number (Luhn) near a card context")
        for cvv in _CVV.finditer(text, max(0, match.start() - 120), min(len(text), match.end() + 120)):
            yield Hit("card", cvv.start(1), cvv.end(1), "card security code (CVV) beside a card number")
        yield from _csv_code(text, match.start())


def _csv_code(text: str, at: int) -> Iterator[Hit]:
    """The security code of a CSV row whose header (the line above) names its column."""
    row_start = text.rfind("\n", max(0, at - 300), at) + 1
    if row_start <= 0:
        return
    header = text[text.rfind("\n", max(0, row_start - 300), row_start - 1) + 1:row_start - 1].lower().split(",")
    column = next((i for i, name in enumerate(header) if name.strip(" \"'") in _CSV_CODE), None)
    row_end = text.find("\n", at, at + 300)
    fields = text[row_start:row_end if row_end >= 0 else min(len(text), at + 300)].split(",")
    if column is None or len(fields) != len(header) or not re.fullmatch(r"\d{3,4}", fields[column].strip()):
        return
    start = row_start + sum(len(f) + 1 for f in fields[:column])
    start += len(fields[column]) - len(fields[column].lstrip())
    yield Hit("card", start, start + len(fields[column].strip()), "card security code in its CSV column")


# -- key material by its structure or by the key beside it ------------------------------
# minisign / signify secret keys: base64 of "Ed", then the secret key's KDF tag ("Sc" and
# scrypt's "B2" or "\0\0": minisign; "BK", bcrypt: signify). A public key is "Ed" and its
# key id; a line below an `untrusted comment:` that says secret goes too.
_SIGN_KEY = re.compile(r"RWR(?:TY|CS)[A-Za-z0-9+/]{40,400}={0,2}")
_UNTRUSTED = re.compile(r"untrusted comment:[^\n]{0,200}\b(?:secret|private)\b[^\n]{0,200}\r?\n[ \t]*([A-Za-z0-9+/]{40,400}={0,2})")
# A JSON key whose type says private ({"type": "tendermint/PrivKeyEd25519", "value": "…"}).
_TYPED_KEY = re.compile(r"\"type\"\s{0,4}:\s{0,4}\"[^\"\n]{0,60}(?:[Pp]riv|[Ss]ecret)[^\"\n]{0,60}\"\s{0,4},\s{0,4}"
                        r"\"value\"\s{0,4}:\s{0,4}\"([A-Za-z0-9+/=_-]{32,4096})\"")
# A 32-byte key in base64 (WireGuard, X25519, Ed25519 seeds) on the line of a word that
# says private: `wg set wg0 private-key <(echo …)`, `PrivateKey: …`.
_KEY32 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=(?![A-Za-z0-9+/=])")
_PRIVATE_NEAR = 80
_HEX_KEY_AFTER = re.compile(r"(?i)[ _-]?key\b[^\n\w]{0,6}\s{0,4}[\"'\[]{0,2}"
                            r"(?P<v>(?:0x)?[0-9a-f]{64}|[0-9a-f]{32}\r?\n[0-9a-f]{32})(?![0-9a-f])")
# A Hardhat or Truffle network's accounts: the private keys it signs with.
_ACCOUNTS = re.compile(r"\baccounts[\"']?\s{0,4}:\s{0,4}\[\s{0,4}[\"'](0x[0-9a-fA-F]{64})[\"']")
_DIGEST_BETWEEN = re.compile(r"(?i)sha\d|hash|digest|fingerprint|checksum|public|pub\b")
# Bytes written as numbers: a Solana keypair file, a Uint8Array of a secret key.
_BYTE_ARRAY = re.compile(r"\[\s{0,4}((?:\d{1,3}\s{0,4},\s{0,4}){31,63}\d{1,3})\s{0,4}\]")
_ARRAY_CONTEXT = ("solana", "keypair", "secret", "private", "wallet", "seed", "signer", "secretkey", "privatekey")
_ARRAY_GATE = frozenset(w.encode() for w in _ARRAY_CONTEXT)
_ARRAY_BACK = 300
# A literal given to a call that decodes it into key bytes, or to one that makes a key or
# a wallet of it: bytes.fromhex("…"), Buffer.from("…", "hex"), hex.DecodeString("…"),
# new ethers.Wallet("0x…"), privateKeyToAccount('0x…'), Keypair.fromSecretKey(…).
_KEY_CALL = re.compile(r"(?P<callee>[A-Za-z_][\w.:]{0,60})\s{0,2}\(\s{0,4}[bB]?(?P<q>[\"'`])"
                       r"(?P<value>(?:0x)?[A-Za-z0-9+/_=-]{32,400})(?P=q)")
_OPEN_LITERAL = re.compile(r"\(\s{0,4}[bB]?[\"'`](?:0x)?[A-Za-z0-9+/_=-]{32}")
_DECODERS = ("fromhex", "unhexlify", "decodestring", "decodehex", "hextobytes", "hex::decode", "b64decode",
             "urlsafe_b64decode", "buffer.from", "atob", "base64.decode", "parsehex", "hexdecode", "frombase64string")
_KEY_MAKERS = ("wallet", "signer", "signingkey", "privatekey", "private_key", "fromkey", "from_key", "secretkey",
               "secret_key", "keypair", "fromseed", "from_seed", "stringsession", "session_string", "ecpair",
               "privkey", "hmac", "aes.new", "fernet", "secretbox", "cipher")
_KEY_CALL_GATE = frozenset(w.encode() for w in (
    "fromhex", "unhexlify", "decodestring", "decodehex", "hextobytes", "decode", "buffer", "atob", "parsehex",
    "hexdecode", "frombase", "wallet", "signer", "signingkey", "privatekey", "fromprivatekey", "privatekeytoaccount",
    "secretkey", "fromsecretkey", "keypair", "fromseed", "stringsession", "ecpair", "privkey", "fromkey", "account",
    "hmac", "aes", "fernet", "secretbox", "cipher", "newcipher"))
# What a decoded literal is for, said on its line before the call: a key, a secret, a cipher.
_KEY_USE = frozenset({"key", "keys", "secret", "cipher", "aes", "hmac", "sign", "signing", "signer", "priv", "private",
                      "privkey", "seckey", "seed", "master", "kek", "dek", "password", "passphrase", "token", "credential",
                      "credentials", "encryption", "decrypt", "encrypt", "fernet", "nacl", "ed25519", "secp256k1"})
_NAME_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+[a-z]\w*")
_NOT_KEY_USE = re.compile(r"(?i)(?:^|[^a-z])(?:iv|nonce|salt|digest|hash|checksum|expected|address|addr|pub\w*|tx\w*)"
                          r"\s{0,2}[=:(]\s{0,4}[\w.]{0,40}\s{0,2}\Z")


def key_material_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """Key material known by its structure or by the key-making code around it."""
    if b"rwr" in data:
        for match in _SIGN_KEY.finditer(text):
            if _sign_secret(match.group(0)):
                yield Hit("private-key", match.start(), match.end(), "minisign / signify secret key (Ed + its KDF)")
    if b"untrusted" in words:
        for match in _UNTRUSTED.finditer(text):
            yield Hit("private-key", match.start(1), match.end(1), "key below an untrusted comment that says secret")
    if b"private" in data:
        yield from _beside_private(text, lowered)
    if b"accounts" in words and b"0x" in data:
        for match in _ACCOUNTS.finditer(text):
            yield Hit("private-key", match.start(1), match.end(1), "a private key in a network's accounts list")
    if b"\"value\"" in data and (b"priv" in data or b"secret" in data):
        for match in _TYPED_KEY.finditer(text):
            yield Hit("private-key", match.start(1), match.end(1), "the value of a key whose type says private")
    if not words.isdisjoint(_ARRAY_GATE) and b"[" in data:
        yield from _byte_arrays(text, lowered)
    if not words.isdisjoint(_KEY_CALL_GATE) and b"(" in data:
        yield from _key_calls(text)


def _sign_secret(body: str) -> bool:
    head = body[:12]
    try:
        decoded = base64.b64decode(head[: len(head) // 4 * 4], validate=True)
    except (binascii.Error, ValueError):
        return False
    return decoded[:2] == b"Ed" and decoded[2:4] in (b"Sc", b"BK")


def _beside_private(text: str, lowered: str) -> Iterator[Hit]:
    """A 32-byte base64 key on the line of "private", after it; a 32-byte hex key just
    after "private key" (on its line or the lines below, one or two halves)."""
    at = lowered.find("private")
    while at >= 0:
        hexed = _HEX_KEY_AFTER.match(text, at + 7)
        if hexed and not _DIGEST_BETWEEN.search(text, at, hexed.start("v")):
            yield Hit("private-key", hexed.start("v"), hexed.end("v"), "32-byte hex key after 'private key'")
        line_end = text.find("\n", at, at + _PRIVATE_NEAR)
        end = line_end if line_end >= 0 else min(len(text), at + _PRIVATE_NEAR)
        for match in _KEY32.finditer(text, at, end):
            if looks_random(match.group(0)[:-1], 32) and not _DIGEST_BETWEEN.search(text, at, match.start()):
                yield Hit("private-key", match.start(), match.end(), "32-byte key beside 'private'")
        at = lowered.find("private", at + 7)


def _byte_arrays(text: str, lowered: str) -> Iterator[Hit]:
    """32 or 64 numbers 0-255 in brackets after a key context: a secret key's bytes."""
    for match in _BYTE_ARRAY.finditer(text):  # a C-speed scan for "[" and the numbers after it
        at = match.start()
        numbers = [int(n) for n in match.group(1).replace(" ", "").split(",")]
        window = lowered[max(0, at - _ARRAY_BACK):at]
        if (len(numbers) in (32, 64) and max(numbers) <= 255 and len(set(numbers)) >= 16
                and any(word in window for word in _ARRAY_CONTEXT)):
            yield Hit("private-key", match.start(), match.end(), "a key's bytes as numbers after a key context")


def _key_calls(text: str) -> Iterator[Hit]:
    for literal in _OPEN_LITERAL.finditer(text):  # a C-speed scan for `("` and a long literal
        at = literal.start()
        start = at
        while start > 0 and at - start < 61 and (text[start - 1].isalnum() or text[start - 1] in "_.:"):
            start -= 1
        match = _KEY_CALL.match(text, start) if start < at else None
        if match:
            hit = _key_call(text, match)
            if hit:
                yield hit


def _key_call(text: str, match: re.Match[str]) -> Hit | None:
    callee = match.group("callee").lower()
    value = match.group("value")
    body = value[2:] if value.startswith("0x") else value
    if not looks_random(body.replace("-", "").replace("_", ""), 32):
        return None
    if any(maker in callee for maker in _KEY_MAKERS):
        return Hit("private-key", match.start("value"), match.end("value"), f"key material given to {match.group('callee')}()")
    if not any(decoder in callee for decoder in _DECODERS):
        return None
    line_start = text.rfind("\n", 0, match.start()) + 1
    before = text[max(line_start, match.start() - 80):match.start()]
    if _KEY_USE.isdisjoint(p.lower() for p in _NAME_PARTS.findall(before)) or _NOT_KEY_USE.search(before):
        return None  # keyframe, tokenizer, monkey: no key named; an IV, a nonce, a digest
    return Hit("secret", match.start("value"), match.end("value"), f"key bytes decoded by {match.group('callee')}()")


# A TOTP seed where only a TOTP seed goes: an otpauth:// URI's secret (percent-encoded too,
# as a QR code's link carries it), the literal given to a TOTP or HOTP maker
# (pyotp.TOTP("…"), new OTPAuth.TOTP({secret: …}) aside: a name, found by the name rules).
_OTPAUTH_SECRET = re.compile(r"(?i)(?:[?&]|%3F|%26)secret(?:=|%3D)(?P<v>[A-Z0-9]{16,128})(?:={0,6}|(?:%3D){0,6})"
                             r"(?![A-Za-z0-9])")
_OTP_CALL = re.compile(r"\b[HT]OTP\(\s{0,4}[bB]?[\"'](?P<v>[A-Za-z0-9]{16,128}={0,6})[\"']")
_OTPAUTH_NEAR = 400


def totp_hits(text: str, lowered: str) -> Iterator[Hit]:
    """The seed in an otpauth:// URI (or its percent-encoded form) and in a TOTP(…) call."""
    at = lowered.find("otpauth")
    while at >= 0:
        for match in _OTPAUTH_SECRET.finditer(text, at, min(len(text), at + _OTPAUTH_NEAR)):
            yield Hit("secret", match.start("v"), match.end("v"), "TOTP seed in an otpauth URI")
        at = lowered.find("otpauth", at + 7)
    if "otp(" in lowered:
        for match in _OTP_CALL.finditer(text):
            if looks_random(match.group("v").rstrip("="), 16):
                yield Hit("secret", match.start("v"), match.end("v"), "TOTP seed given to a TOTP maker")


# A key shown in groups for people to copy: BitLocker's 8 × 6 digits, Signal's 6 × 5, a
# TOTP seed in groups of four base32 letters, a product or recovery key: four groups or
# more of one length (the last may be shorter), one separator, after a word that says
# what it is.
_GROUPS = re.compile(r"(?<![\w.:/+-])(?P<first>[A-Za-z0-9]{4,8})(?P<sep>[ -])[A-Za-z0-9]{4,8}"
                     r"(?:(?P=sep)[A-Za-z0-9]{2,8}){2,10}(?![\w.:/+-])")
# The words (runs of letters) that name what follows: "2FA" is "fa", "setup key" "setup".
_GROUP_CONTEXT = frozenset(
    b"recovery backup passphrase fa totp otp mfa authenticator setup secret seed bitlocker license licence product "
    b"activation unlock emergency factor verification pin password passwort codes".split())
# The words that count only inside their phrase.
_PHRASE_WORDS = {
    "setup": re.compile(r"setup[ -]key"), "license": re.compile(r"license[ -]key"),
    "licence": re.compile(r"licence[ -]key"), "product": re.compile(r"product[ -]key"),
    "emergency": re.compile(r"emergency kit"), "verification": re.compile(r"verification code"),
    "factor": re.compile(r"factor(?:(?<=two-factor)|(?<=2-factor))"), "fa": re.compile(r"fa(?<=2fa)")}
_GROUP_BACK = 60
_SEED_WORDS = ("setup", "authenticator", "totp", "otp", "mfa", "fa", "factor")  # what shows a TOTP seed in groups
# Read off the offsets of words found anyway (prose's code, the keywords' pass) or shared.
_GROUP_BASES = {"factor": "fa", "codes": "code", "password": "pass", "passphrase": "pass", "passwort": "pass"}


def grouped_key_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """A key written in equal groups after a recovery/backup/2FA context on its line."""
    done = 0
    present = words & _GROUP_CONTEXT  # a set operation in C: most texts name none of them
    if not present:
        return
    for at, word in _group_contexts(lowered, data, present):
        if word in _PHRASE_WORDS and not _PHRASE_WORDS[word].match(lowered, at):
            continue  # "setup" alone: only "setup key", "license key", "2FA", "two-factor" …
        line_end = text.find("\n", at, at + _GROUP_BACK + 120)
        end = line_end if line_end >= 0 else min(len(text), at + _GROUP_BACK + 120)
        match = _GROUPS.search(text, max(done, at + len(word)), end)
        if match and match.start() - (at + len(word)) <= _GROUP_BACK and _key_groups(match, word):
            done = match.end()
            yield Hit("private-key", match.start(), match.end(), f"key in groups after '{word}'")
        elif word == "codes":  # recovery codes, backup codes, "codes:"
            below = line_end >= 0 and _HEADING_REST.fullmatch(text, at + len(word), line_end) is not None
            if below:  # "BACKUP CODES" or recovery-codes.txt alone on its line: the list is below
                end = min(len(text), line_end + 600)
            for code in _code_list(text, max(done, at + len(word)), end, below):
                done = code.end()
                yield Hit("password", code.start(), code.end(), f"one of a list of codes after '{word}'")


def _group_contexts(lowered: str, data: bytes, present: frozenset[bytes]) -> list[tuple[int, str]]:
    """(offset, word) of each context word in `present`, in order; "fa" only where "2fa"
    stands (the only place it counts: "fa" alone is inside false, default …)."""
    found = words_within(lowered, data, [w.decode() for w in present if w != b"fa"], _GROUP_BASES)
    if b"fa" in present:
        places = [at + 1 for at in scan(data, b"2fa")]
        found += zip(places if len(data) == len(lowered) else char_offsets(data, places), ["fa"] * len(places))
        found.sort(key=lambda f: (f[0], -len(f[1])))
    return found


# Recovery codes as services list them: tokens of one shape (length, dash at one place),
# each with a digit, one after the other (b1fc9-10631 f1f76-9953b …; 4821 9307 …; Google's
# two groups of four digits, a comma between codes: 6511 9791, 3663 3331).
_CODE = re.compile(r"(?<![\w-])(?:\d{4} \d{4}(?=[,;]|\s*\Z|[ \t]{2,}|[ \t]*\n)|[A-Za-z0-9]{3,16}(?:-[A-Za-z0-9]{3,16})?)(?![\w-])")
_CODE_GAP = re.compile(r"[ \t]*[,;]?[ \t]+|[ \t]*[,;][ \t]*")
# A list below its heading: one code a line, or a few, numbered or not (1. 6511 9791   6. …).
_CODE_LINES_GAP = re.compile(r"[ \t]*[,;]?\s+(?:\d{1,2}[.)][ \t]+)?|[ \t]*[,;][ \t]*")
# What may follow "codes" on a heading line: a file's extension, a colon.
_HEADING_REST = re.compile(r"(?:\.[a-z]{2,4})?[ \t]*:?[ \t]*")


def _code_list(text: str, start: int, end: int, below: bool = False) -> list[re.Match[str]]:
    gap = _CODE_LINES_GAP if below else _CODE_GAP
    codes: list[re.Match[str]] = []
    pos = start
    for match in _CODE.finditer(text, start, end):
        if codes and not gap.fullmatch(text, pos, match.start()):
            break
        if not codes and match.start() - start > _GROUP_BACK:
            break
        token = match.group(0)
        if codes and _code_shape(token) != _code_shape(codes[0].group(0)):
            break
        if not codes and not any(c.isdigit() for c in token):
            pos = match.end()
            continue  # the words before the list: "in case I lose my phone:"
        codes.append(match)
        pos = match.end()
    flat = [c.group(0).replace("-", "").replace(" ", "") for c in codes]
    if len(codes) < 2 or not all(any(ch.isdigit() for ch in f) for f in flat) or len(flat[0]) < 6:
        return []
    if all(f.isdigit() for f in flat) and (len(flat[0]) < 8 or "-" in codes[0].group(0)):
        return []  # 2024 2025, ports, 0100-0500 0600-0900: not codes
    if len({f[:2] for f in flat}) == 1 or len({f[-2:] for f in flat}) == 1:
        return []  # db1-2024 db2-2024, ERR-10021 ERR-10022: a series, not random codes
    return codes


def _no_words(groups: list[str], allowed: int) -> bool:
    """At most `allowed` groups a common short word ("will", "work", "sent")."""
    return sum(g.lower() in _COMMON_SHORT for g in groups) <= allowed


# Words of prose that could stand as groups of four after "password" or "secret".
_COMMON_SHORT = _STOPWORDS | frozenset(
    "must have will work when sent used only also just here make sure each user name code more some time like once "
    "both does done same last next less very most over back down keep mode file line test true none null open read "
    "save sign into long safe main root home data text send mail auth type form page link list show help find give "
    "take look want need know good well even such much many what them your four five nine zero".split())


def _code_shape(token: str) -> tuple[int, int]:
    return len(token), token.find("-")


def _key_groups(match: re.Match[str], word: str) -> bool:
    groups = match.group(0).split(match.group("sep"))
    width = len(groups[0])
    if any(len(g) != width for g in groups[:-1]) or len(groups[-1]) > width or len(groups) * width < 16:
        return False
    flat = "".join(groups)
    four_by_four = len(groups) == 4 and width == 4 and flat.isalpha() and _no_words(groups, 0)
    if word in ("password", "passwort"):  # an app password: 4 × 4 small letters (kwcu ermw zogn kyvt)
        return four_by_four and flat.islower()
    if word in _SEED_WORDS and four_by_four and (flat.islower() or flat.isupper()):
        return True  # a TOTP seed of 80 bits as an authenticator's setup shows it
    if flat.isdigit():
        return len(set(flat)) >= 5
    if flat.isalpha():  # base32 letters in one case, six groups or more: no run of words
        return (flat.islower() or flat.isupper()) and len(groups) >= 6 and _no_words(groups, 1)
    return sum(c.isdigit() for c in flat) >= 2 and sum(c.isalpha() for c in flat) >= 2
