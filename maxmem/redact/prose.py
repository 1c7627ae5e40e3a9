"""Secrets given away by the words around them, in any language.

    my password is Hunter2Zebra!          Das Passwort für den Router lautet K8#mPq2vXz
    log in to the NAS as admin with Qx7!  服务器的密码是 Qf8#Lm2Zx7
    Unseal Key 1: 4XbJ2o9l…               here's the new api key for prod: 7fG2kLp9…

A context word (password, passphrase, PIN, "log in", key, token, secret and their
equivalents in some thirty languages) opens a short window on its line. Short words
may stand between it and the value ("for the staging box"), but the value must follow
the context word itself or a connector (is, :, =, lautet, est, é, 是, は, with, to …).
What stands there counts as a secret when it has the shape one: a password mixes
letters with digits or symbols (a PIN is digits), a key or token is random-looking
(character classes and Shannon entropy). A plain word, a path, a version, an address
or a placeholder is never one. A random value just before "is the api key" counts too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .assignments import grouped_password
from .precision import names_a_technology, reads_as_noise
from .shapes import Hit, words_within
from .values import (
    camel_words,
    find_words,
    is_placeholder,
    looks_random,
    mixed_case_random,
    present_words,
    word_index,
    wordy,
)

__all__ = ["LABEL_WORDS", "password_like", "prose_hits"]

# Getting in somewhere: the password follows "with" / "using" / ":" ("log in as admin with …").
_LOGINS = ("log in", "login", "logon", "sign in", "signin", "anmelden", "connexion", "log into", "log onto",
           "logged in", "sign into", "ssh in", "ssh into", "connect as", "authenticate as", "authenticate with",
           "einloggen", "se connecter", "iniciar sesión", "inicia sesión", "accedi", "logga in", "inloggen",
           "zaloguj", "войти", "ログイン", "登录", "登入", "로그인", "giriş yap", "kirjaudu", "přihlásit")
# One-time codes: digits that sign in for the next minutes.
_ONE_TIME = ("verification code", "otp", "login code", "mfa code", "auth code", "authentication code",
             "confirmation code", "sign-in code", "2fa-code", "totp code",
             # the same in other languages
             "code de confirmation", "code de vérification", "code de validation", "bestätigungscode",
             "verifizierungscode", "anmeldecode", "código de verificación", "código de confirmación",
             "codice di verifica", "codice di conferma", "código de verificação", "código de confirmação",
             "verificatiecode", "bevestigingscode", "kod weryfikacyjny", "kod potwierdzający", "код подтверждения",
             "verifieringskod", "bekræftelseskode", "vahvistuskoodi", "doğrulama kodu", "验证码", "認証コード", "인증 코드")
# "code" in other languages: what follows counts only when a lock is named (see _LOCKS).
_LOCK_CODES = ("code", "combination", "codice", "código", "codigo", "kod", "koden", "код", "koodi", "kode", "kód", "combinazione",
               "combinación", "combinaison", "kombination", "combinatie", "kombinacja", "комбинация", "шифр")
# "access code" in other languages: what follows is a PIN.
_ACCESS_CODES = ("zugangscode", "türcode", "torcode", "código de acceso", "codice di accesso", "toegangscode",
                 "kod dostępu", "код доступа", "accesskod", "pääsykoodi", "código de acesso",
                 # unlock codes, door codes
                 "codice di sblocco", "codice d'accesso", "código de desbloqueo", "code de déverrouillage", "entsperrcode",
                 "ontgrendelcode", "kod odblokowania", "upplåsningskod", "код разблокировки", "解锁码", "ロック解除コード",
                 "รหัสประตู", "รหัสเข้าบ้าน", "รหัสปลดล็อก", "门禁密码", "도어락 비밀번호")
# Words that make what follows a password (the value needs a password's shape).
_PASSWORD_WORDS = (
    "password", "passwort", "kennwort", "passphrase", "passcode", "pass phrase", "passwd", "mot de passe",
    "contraseña", "contrasena", "senha", "wachtwoord", "hasło", "haslo", "пароль", "密码", "密碼", "パスワード",
    "비밀번호", "암호", "lösenord", "losenord", "passord", "adgangskode", "kodeord", "salasana", "heslo", "jelszó",
    "jelszo", "şifre", "sifre", "parola", "kata sandi", "mật khẩu", "mat khau", "كلمة المرور", "كلمة السر", "סיסמה",
    "κωδικός", "पासवर्ड", "лозинка", "geslo", "lozinka", "slaptažodis", "parole", "credentials", "creds",
    "contrasenya", "pasahitza", "parool", "lykilorð", "kata laluan", "nenosiri", "รหัสผ่าน", "رمز عبور", "رمز",
    "گذرواژه", "পাসওয়ার্ড", "கடவுச்சொல்", "salasõna", "jelszava", "hasła", "пароля", "비번", "סיסמת", "พาสเวิร์ด",
    *_LOGINS,
    "wifi", "wi-fi", "wlan", "mdp", "clave", "hasłem", "паролем", "пароль от", "暗証番号", "口令",  # mot de passe; es: clave = password
    "pw", "pwd", "pass",  # only as a label: "pw: …", "pass = …"
    "alarm code", "door code", "access code", "unlock code", "pin code", "gate code", "entry code", "safe code",
    "pincode", "pin-code", "pin-kode", "puk", "пин", "пин-код", "暗証番号", "geheimzahl", "geheimnummer", "digicode",
    "পিন", "पिन", "핀", "密碼鎖",
    "code", "combination",  # "the code to the safe is 4821": only digits, only when a lock is named
    *_LOCK_CODES[2:],
    *_ACCESS_CODES,
    "backup code", "recovery code", "2fa code", "one-time code", "backup codes", "recovery codes", "2fa codes",
    *_ONE_TIME,
)
# A network named where its password is meant ("the guest wifi is …"); it does not end the
# window of a password word before it ("Lösenordet till wifi:t är …").
_NETWORKS = frozenset({"wifi", "wi-fi", "wlan"})
_NETWORK_NAMED = re.compile(r"[ \t]{1,3}(?:network|name|ssid|netzwerk|netz|réseau|nom|red|rete|netwerk|nätverk|sieć|"
                            r"сеть|rede|verkko|netværk|nettverk)(?![^\W\d_])")
# Lists of one-time codes: every code that follows goes.
_CODE_LISTS = frozenset({"backup code", "recovery code", "2fa code", "one-time code", "backup codes", "recovery codes",
                         "2fa codes"})
_LIST_JOINS = frozenset({"and", "or", "&", "und", "oder", "et", "ou", "y", "o", "e", "en", "of", "i", "и", "или", "och",
                         "eller", "ja", "tai", "ve", "veya", "és", "a", "oraz", "lub"})
_ONE_CODE = re.compile(r"[A-Za-z0-9]{3,8}(?:[- ][A-Za-z0-9]{3,8}){0,2}")
# Short words that count only as a label, followed by ":" / "=" / "is".
_LABELS = frozenset({"pw", "pwd", "pass"})
# English context words: an ending other than a plural makes another word (passwords is
# one, passwordless is not); in other languages an ending is grammar (passordet, hasła).
_ENGLISH = frozenset({"password", "passphrase", "passcode", "passwd", "credentials", "creds", "login", "logon",
                      "signin", "key", "token", "secret", "seed", "pin", "pw", "pwd", "pass"})
# What a bare "code" or "combination" must name before its digits count (not source code).
_LOCKS = re.compile(r"(?i)[ \t](?:to|for|of)[ \t](?:the[ \t]|my[ \t]|our[ \t]|your[ \t])?(?:front[ \t]|back[ \t]|main[ \t])?"
                    r"(?:safe|door|gate|garage|alarm|lock|locker|padlock|keypad|building|house|office|storage|"
                    r"lockbox|key[ \t]?box|bike[ \t]?lock|suitcase)\b"
                    # the same in other languages: "il codice del cancello", "el código de la puerta",
                    # "le code de la porte", "der Code für die Tür", "код от двери", "kod do drzwi"
                    r"|[ \t](?:del|della|dello|dell'|di|de|du|des|da|do|dos|das|für|fuer|zum|zur|van|voor|от|для|к|do|till|til|"
                    r"på|af|för|der|vom|від|до)[ \t]?(?:la[ \t]|le[ \t]|l'|el[ \t]|die[ \t]|der[ \t]|das[ \t]|den[ \t]|het[ \t]|de[ \t])?"
                    r"(?:ma[ \t]|mon[ \t]|mi[ \t]|mia[ \t]|mio[ \t]|minha[ \t]|meu[ \t]|meiner[ \t]|meine[ \t]|mijn[ \t]|"
                    r"mojej[ \t]|моей[ \t]|моего[ \t])?"
                    r"(?:cancello|portone|porta|cassaforte|allarme|lucchetto|garage|garaje|box|puerta|portón|porton|portal|"
                    r"alarma|caja[ \t]fuerte|candado|porte|portail|alarme|coffre|coffre-fort|cadenas|immeuble|bâtiment|"
                    r"tür|tuer|haustür|tor|tresor|safe|alarmanlage|schloss|deur|poort|kluis|alarm|slot|drzwi|bramy|sejfu|"
                    r"alarmu|kłódki|двери|ворот|сейфа|сигнализации|домофона|подъезда|замка|домофону|дверей|воріт|сейфу|під'їзду|portão|portao|cofre|cadeado|"
                    r"dörren|porten|kassaskåpet|larmet|døren|porten|oven|ovi|portti|kassakaappi|hälytin|"
                    # a card: its code is its PIN; Russian's genitive needs no preposition (код карты)
                    r"carte|carta|tarjeta|cartão|cartao|karte|bankkarte|kaart|karty|карты|карточки|kortet|kortin|bancomat)"
                    r"(?![^\W\d_])(?![ \t]{1,3}(?:gr[aá]fic|graphi|m[eè]re|madre|madri|r[eé]seau|de[ \t]red|de[ \t]rede|"
                    r"vid[eé]o|sd\b|son\b|sonido|audio|rete|di[ \t]rete))"  # a graphics or network card
                    r"|[ \t](?:карты|двери|ворот|сейфа|домофона|подъезда|сигнализации|замка)(?![^\W\d_])")
_CODES = frozenset({"pincode", "pin-code", "pin-kode", "puk", "пин", "пин-код", "暗証番号", "geheimzahl", "geheimnummer",
                    "digicode", "পিন", "पिन", "핀", "密碼鎖",
                    "alarm code", "door code", "access code", "unlock code", "pin code", "gate code", "entry code",
                    "safe code", "pin", "passcode", *_LOCK_CODES, *_ACCESS_CODES, *_ONE_TIME})
# Words that make what follows a key or token (the value must look random).
_KEY_WORDS = ("key", "token", "secret", "clé", "chave", "schlüssel", "sleutel", "klucz", "ключ", "токен",
              "密钥", "秘钥", "令牌", "金鑰", "密鑰", "私鑰", "秘鑰", "キー", "トークン", "토큰", "nyckel", "nøgle", "avain", "seed", "pin", "chiave",
              "anahtar", "키", "kulcs", "cheie", "kljuc", "ključ", "klíč", "raktas", "atslēga", "võti", "مفتاح",
              "מפתח", "κλειδί", "कुंजी", "khóa", "kunci", "cheia", "geheimnis", "secreto", "segreto", "sekret",
              "секрет", "秘密", "비밀", "gizli")
# English words that only count whole: "keyboard", "tokens per second", "spinner".
_WHOLE = frozenset({"key", "token", "secret", "pin", "seed", "login", "logon", "signin", "creds", "parola", "otp",
                    "mdp", "puk", "пин", "clave", "wifi", "wlan", *_LOCK_CODES,
                    "parole", "heslo", "geslo"})
_CONTEXT_WORDS = tuple(sorted((*_PASSWORD_WORDS, *_KEY_WORDS), key=len, reverse=True))
# The words that make a line's label name a secret (`labels.py`): passwords, PINs, keys;
# no login verb, no bare "code" (an exit code), no one-time code.
# Each word says what its value must look like: "key" (random), "pin" (digits) or "password".
LABEL_WORDS = {w: "key" if w in _KEY_WORDS and w not in ("pin", "seed") else "pin" if w in _CODES else "password"
               for w in _CONTEXT_WORDS if w not in _LOGINS and w not in _LOCK_CODES and w not in _ONE_TIME}
# Short words between a key word and its value; past _FEW of them ("my key for the weather
# api is …") only a random value after an explicit "is" / ":" / "=" counts.
_MAX_FILLERS = {"key": 5, "token": 5, "secret": 5}
_FEW = 3
_CONNECTORS = frozenset({
    "is", "was", "are", "be", "now", "=", ":", "-", "–", "—", "=>", "->", "ist", "lautet", "lauten", "war", "est",
    "es", "era", "é", "è", "e", "är", "var", "er", "on", "to", "jest", "je", "adalah", "là", "ialah", "это",
    "with", "using", "use", "mit", "avec", "con", "com", "met", "per", "als", "as:", "是", "为", "為", "は", "는",
    "은", "が", "です", "olarak", "ir", "yra", "este", "είναι", "היא", "הוא", "هي", "هو", "ni", "คือ", "/", "|",
    "c'est", "c’est", "type", "enter", "ul", "ay", "wa", "lautete", "és", "ez", "→", "⇒", "ялтай", "є", "jest:", "ist:", "adalah:", "med", "mittels", "है", "hai", ",", "auf", "zu", "naar", "till",
})
# Connectors that hand a value over: "is", ":", "=" (and the word itself: "key Rv7$…").
_PRIMARY = frozenset({"c'est", "c’est", "is", ":", "=", "context", "was", "are", "ist", "lautet", "est", "es", "é", "è", "är", "er",
                      "on", "jest", "je", "adalah", "là", "ialah", "este", "és", "είναι", "是", "は", "는", "은", "ni", "คือ"})
# Connectors after which only a strong password counts ("hashing with argon2id" is none).
_WEAK_CONNECTORS = frozenset({"after", "type", "enter", "with", "using", "use", "mit", "avec", "con", "com", "met", "per", "to", "als", "e", "med",
                              "mittels", "auf", "zu", "naar", "till"})
_TOKEN = re.compile(r"\S+")
_STRIP = "\"'`“”„«»‚‘’()[]<>{}"
_TRAILING = ".,;:)]}>\"'`”»"
_VERSION = re.compile(r"[vV]?\d+(?:[._-]\d+)+[A-Za-z]{0,8}\d*")
_FILE_LIKE = re.compile(r"[\w.-]+\.(?:[a-z]{1,5})")
# Names of algorithms, formats and versions: lower-case letters and digits (argon2id, utf8,
# x86_64) or capitals, digits and dashes (HKDF-SHA256, AES-256-GCM, PBKDF2), short.
_TECH_TERM = re.compile(r"[a-z]{1,8}\d{1,4}[a-z_\d]{0,6}|[A-Z][A-Z\d]{1,10}(?:[-_/][A-Z\d]{1,10}){0,3}")
_PATH_LINE = re.compile(r"\.[A-Za-z]{1,5}:\d")
_PIN = re.compile(r"(?:\d{4,12}(?:[- ]\d{2,8})?|[A-Z]\d{4,8}|\d{4,8}[A-Z]|\d{1,2}(?:-\d{1,2}){2,5})#?")
# a door code may carry a letter (8508B); a combination lock's numbers are dialled in turn (32-17-08, 1-9-8-4)
_NUMERIC_PASSWORD = re.compile(r"\d{4,12}[*#]?")
_WORD_AND_DIGITS = re.compile(r"[A-Za-z]{4,16}\d{2,8}[!.#*?$]?")
# Every value read here holds a digit, a symbol or a change of case (a plain word is no password).
_VALUE_HINT = re.compile(r"[\d!@#$%^&*+?~]|[a-z][A-Z]|[A-Z]{2}[a-z]")  # or letters of random case (pwGGspFumtAX)
_LABEL_IS = re.compile(r"[ \t]{1,3}(?:is|=|:)[ \t]")
# After a word in another script: its ending (şifresi) or glued grammar (是, は, คือ).
_GLUED_TAIL = re.compile(r"[^\W\d_]{1,8}(?<![^\x00-\x7f])(?=[\s:=])|[^\s!-~]{0,6}")
_EMAIL = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,4}")
_WORD_TAIL = re.compile(r"[^\W_]*")
_PUBLIC = ("public", "pub", "öffentlicher", "öffentliche", "publique", "pública", "publica", "pubblica", "公开", "公钥")
_CODE_BEFORE = frozenset("_.$-/\\@#")
_CODE_AFTER = frozenset("=),.]}\\;|<>")
# A context word glued to digits or symbols starts a value (Pw4!Tz8#Qm, Key9…), not a sentence.
_IN_VALUE = re.compile(r"[^\W_]{0,12}[\d!@#$%^&*+?~]")
_PIN_COMPOUND = re.compile(r"-(?:code|koden?|kod|kodu|koodi|nummer|number|numero|número|nr|код[а-я]{0,2})(?![^\W\d_])")
_AHEAD = re.compile(r"[ \t]{0,4}(.)")
# A key word followed by one of these names something else: "key fingerprint", "token count".
_NOT_VALUES = frozenset({"fingerprint", "fingerprints", "id", "ids", "type", "types", "size", "length", "name", "names",
                         "file", "files", "path", "format", "version", "hash", "usage", "rotation", "server", "store",
                         "ring", "count", "limit", "limits", "budget", "budgets", "bucket", "expiry", "expires",
                         "policy", "manager", "field", "column", "prefix", "reset", "hashing", "strength", "length:"})
_HASHED = re.compile(r"(?i)(?:sha\d*|md5|blake\w*|h1|xxh\w*)[:=-]")
_CODE = re.compile(r"[A-Za-z_][\w.]*\(|\w\.\w+\.|^\w+\.[a-z_]+$|^[a-z_]\w{0,30}=[\[{\"']")  # …, algorithms=["HS256"]
_WINDOW = 160
_HINT_WINDOW = 100  # the value starts this close to its word
_MAX_WORDS = 9
# Fillers between a word and its value: hyphenated and elided words (e-mail, Wi-Fi,
# l'ordinateur), abbreviations with a case ending after a colon (wifi:t, USB:n), user names
# (app_user, svc.backup).
_FILLER = re.compile(r"[^\W\d_]{1,24}(?:[-'’][^\W\d_]{1,24}){0,2}(?::[^\W\d_]{1,3})?[:,]?|[a-z][a-z0-9]{0,15}[_.][a-z0-9_.]{1,16}|\d{1,2}[:.)]?|\([^()\s]{1,20}\):?|#\d{1,3}:?", re.UNICODE)


def password_like(value: str, strong: bool = False) -> bool:
    """Mixes letters with digits or symbols the way a password does: Hunter2Zebra!,
    Qx7!vR2#pL9m, correct-Horse7-battery. `strong`: three character classes at least."""
    n = len(value)
    if n < 6 or n > 128 or "://" in value or value.startswith(("/", "~", "$", "%", "{", "<", "[", "\\", "#", "@")):
        return False
    if value.startswith("[REDACTED") or is_placeholder(value):
        return False
    upper = any(c.isupper() for c in value)
    lower = any(c.islower() for c in value)
    digit = any(c.isdigit() for c in value)
    symbol = any(not c.isalnum() for c in value)
    if not (upper or lower) or _VERSION.fullmatch(value) or "@" in value and "." in value.split("@")[-1]:
        return False
    if ((_FILE_LIKE.fullmatch(value) and not digit) or wordy(value) and not _random_letters(value)
            or _TECH_TERM.fullmatch(value)) and not reads_as_noise(value):
        return False  # config.yaml, created_at, argon2id, HKDF-SHA256 (not gvbkq430, NUNGEQJU57)
    if value.count("/") >= 2 or _PATH_LINE.search(value):
        return False  # web/src/api/auth.ts:103: a path, a grep hit
    classes = upper + lower + digit + symbol
    if strong:
        return (classes >= 3 and (digit or symbol) and n >= 8 or mixed_case_random(value) or _random_letters(value)
                or n >= 10 and reads_as_noise(value))
    return (classes >= 3 and (digit or symbol) or (classes == 2 and digit and n >= 8) or mixed_case_random(value)
            or _random_letters(value) or n >= 10 and reads_as_noise(value))


def _random_letters(value: str) -> bool:
    """Letters only, capitals scattered through them the way no name has them: LqLfnNYDSKfv
    (not JavaScript, OpenStreetMap, HTTPServer)."""
    if len(value) < 10 or not value.isalpha() or not value.isascii() or camel_words(value[0].upper() + value[1:]):
        return False
    changes = sum(a.isupper() != b.isupper() for a, b in zip(value, value[1:]))
    return changes >= 5 and sum(c.isupper() for c in value) >= 3 and sum(c.islower() for c in value) >= 3


_GLUED_AFTER = re.compile(r"([!-~]{4,})[^\x00-\x7f][^A-Za-z0-9]{0,40}$")


def _candidate(token: str) -> tuple[str, int]:
    """The value a token may hold, and its offset in the token: quotes and the
    sentence's punctuation off, a CJK particle glued in front off."""
    start = 0
    while start < len(token) and (token[start] in _STRIP or token[start] in ":=" and start + 1 < len(token) and token[start + 1] in _STRIP):
        start += 1
    end = len(token)
    while end > start and token[end - 1] in _TRAILING:
        end -= 1
    value = token[start:end]
    if value and not value[0].isascii():
        glued = re.search(r"[!-~]{4,}$", value)
        if glued:
            start += glued.start()
            value = glued.group(0)
    if value and not value[-1].isascii() and value[0].isascii():
        glued = _GLUED_AFTER.match(value)
        if glued:  # 783862だよ, 4416입니다: a particle glued behind
            value = glued.group(1)
    return value, start


def _user_password(value: str) -> tuple[str, int]:
    """admin:Gr4f!n4Adm1n -> the part after the user."""
    user, colon, rest = value.partition(":")
    if colon and user and re.fullmatch(r"[A-Za-z0-9_.@-]{1,64}", user) and rest:
        return rest, len(user) + 1
    return value, 0


def _is_secret(value: str, word: str, connector: str, fillers: int) -> bool:
    if _HASHED.match(value) or _CODE.search(value):
        return False
    if connector == "id":  # an id is a secret's half only when as random as one: mixed case and digits
        return (looks_random(value, 16) and any(c.isupper() for c in value) and any(c.islower() for c in value)
                and any(c.isdigit() for c in value))
    if word in _KEY_WORDS and word not in ("pin", "seed"):
        if fillers > _FEW:
            return connector in _PRIMARY and connector != "context" and looks_random(value, 16)
        return looks_random(value, 16) or (connector in _PRIMARY and password_like(value, strong=True)
                                           and (connector != "context" or word == "key" and not fillers))
    if word in _CODES and _PIN.fullmatch(value):
        return True
    if (word not in _KEY_WORDS and word not in _LABELS and word not in _LOGINS and connector in _PRIMARY
            and _NUMERIC_PASSWORD.fullmatch(value) and len(set(value)) >= 3):
        return True  # "WiFi密码：16150099", "senha do app: 149242": a password of digits only
    if (word not in _KEY_WORDS and word not in _LABELS and word not in _LOGINS and word not in _CODES
            and connector in _PRIMARY and connector not in ("context", ":", "=") and fillers <= _FEW
            and _WORD_AND_DIGITS.fullmatch(value) and not names_a_technology(value)):
        return True  # "Lösenordet … är Kanelbulle60": a word and its digits ("password: …" is named_hits')
    if word in _CODES and word != "passcode":
        return False
    if (word in _NETWORKS and connector in _PRIMARY and not fillers and len(value) >= 8 and value.isalnum() and not value.isdigit()
            and not value.isalpha() and not _VERSION.fullmatch(value) and not is_placeholder(value)):
        return True  # "the wifi key is sunny2024home": a network's password, letters and digits
    if word == "seed":
        return looks_random(value, 16)
    if word in _LOGINS:
        if connector == "context" and " " in word:
            return False  # "ssh into prod-db-01": the place, not the password
        return password_like(value, strong=True)
    return password_like(value, strong=connector in _WEAK_CONNECTORS)


def _line_end(text: str, at: int) -> int:
    end = min(len(text), at + _WINDOW)
    newline = text.find("\n", at, end)
    escaped = text.find("\\n", at, end)
    for stop in (newline, escaped):
        if stop >= 0:
            end = min(end, stop)
    return end


# Found from the keyword positions named_hits scans for anyway (pass, key, token, secret, cred).
_SHARED = {k: tuple(w for w in _CONTEXT_WORDS if w.startswith(k)) for k in ("pass", "key", "token", "secret", "cred", "pwd")}
_OWN = tuple(w for w in _CONTEXT_WORDS if not any(w.startswith(k) for k in _SHARED) and w != "mot de passe")
_OWN_INDEX = word_index(_OWN)
_OWN_BASES = {"login": "log", "logon": "log", "signin": "sign", "codes": "code", "kode": "kod", "koden": "kod"}


def _compound(lowered: str, at: int, word: str) -> bool:
    """A word of a language that joins words (Datenbankpasswort, routerwachtwoord,
    wifilösenord) ending in the context word: its own first part of three letters or more."""
    if word in _ENGLISH or word in _WHOLE or " " in word:
        return False
    first = at
    while first > 0 and at - first < 24 and lowered[first - 1].isalpha():
        first -= 1
    return at - first >= 3 and (first == 0 or not lowered[first - 1].isalnum() and lowered[first - 1] not in "_.$")


def _contexts(text: str, lowered: str, data: bytes, words: frozenset[bytes],
              shared: list[tuple[int, int]]) -> list[tuple[int, str]]:
    """(offset, word) of every context word, in order."""
    out = []
    for at, length in shared:
        inside = at and lowered[at - 1].isalpha() and not (text[at].isupper() and text[at - 1].islower())
        keyword = lowered[at:at + length]
        if keyword == "pass" and lowered.startswith("mot de passe", at - 7):
            out.append((at - 7, "mot de passe"))
            continue
        for word in _SHARED.get(keyword, ()):
            if word == keyword or lowered.startswith(word, at):
                if not inside or _compound(lowered, at, word):  # monkey, keykey: inside a word
                    out.append((at, word))
                break
    present = present_words(words, _OWN_INDEX)
    # the phrases first (they scan log, sign …), then the single words, some read off those offsets
    own = find_words(lowered, data, [w for w in present if " " in w]) + words_within(
        lowered, data, [w for w in present if " " not in w], _OWN_BASES)
    own.sort(key=lambda f: (f[0], -len(f[1])))
    if own:
        out += own
        out.sort(key=lambda f: (f[0], -len(f[1])))
    return out


def prose_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes],
               shared: list[tuple[int, int]]) -> Iterator[Hit]:
    """Passwords, PINs, keys and tokens named by the words before (or just after) them.
    `data`: `lowered` in UTF-8; `words`: the text's words (`text_words`); `shared`: the
    offsets of pass, key, token, secret and cred (`keyword_positions`, as named_hits
    uses them)."""
    skip = 0
    contexts = _contexts(text, lowered, data, words, shared)
    for number, (start, word) in enumerate(contexts):
        end = start + len(word)
        if start < skip:
            continue
        before = text[start - 1] if start else " "
        if (before.isalpha() and word.isascii() and not (text[start].isupper() and before.islower())
                and not _compound(lowered, start, word)):
            continue  # monkey, bypassword: inside another word (AccessKey is two, Datenbankpasswort one)
        if (before in _CODE_BEFORE and not (before == "-" and (word not in _ENGLISH or word == "pin" and start >= 2
                                                               and text[start - 2].isalpha()))
                and not (before == "." and word == "key" and text.startswith(":", end))):  # jwt.key: … is a label
            continue  # self.key, api_key, $TOKEN: code
        if word in _KEY_WORDS and lowered[max(0, start - 14):start].rstrip(" -").endswith(_PUBLIC):
            continue  # a public key is no secret
        if word in _LOGINS:  # "admin / X でログイン", "admin/X ile giriş yap": the pair before the verb
            pair = _PAIR_BEFORE.search(text, max(0, start - 200), start)
            if pair and "\n" not in pair.group(0) and password_like(pair.group("v"), strong=True):
                yield Hit("password", pair.start("v"), pair.end("v"), f"password of the user / password pair before '{word}'")
        if word == "key" and _NETWORK_BEFORE.search(lowered, max(0, lowered.rfind("\n", 0, start) + 1, start - 120), start):
            word = "wifi"  # "the wifi at the cabin is X and the key is Y": a network's key is its password
        glued = word.isascii() and end < len(lowered) and not lowered[end].isascii() and lowered[end].isalpha()
        tail = (_WORD_TAIL if word.isascii() and not glued else _GLUED_TAIL).match(lowered, end, end + 20)
        rest = tail.group(0) if tail else ""
        if glued and rest and len(rest) <= 4 and _PARTICLE.fullmatch(rest):
            rest, glued = rest, True  # PINは3917です, PIN은: a particle of the sentence's language, not a longer word
        else:
            glued = False
        compound = _PIN_COMPOUND.match(lowered, end) if word in ("pin", "пин") and not rest else None
        if compound:  # PIN-Code, PIN-koden, PIN-Nummer: one word
            word, rest = "pin code", compound.group(0)
        elif rest and not word.isascii() and _glued_connector(_glued_run(lowered, end)):
            rest = _glued_run(lowered, end)  # รหัสผ่านเข้าระบบคือ: "password to log in is", one run
        elif rest and not glued and (word in _WHOLE or (rest != "s" if word in _ENGLISH else len(rest) > 4)):
            continue  # keyboard, tokenizer, passwordless; passordet, hasła are the word itself
        if word in _NETWORKS and _NETWORK_NAMED.match(lowered, end + len(rest)):
            continue  # "Wi-Fi network: Office-5G", "wifi SSID": the network's name, not its password
        if word in _LOCK_CODES and not _LOCKS.match(text, end + len(rest)) \
                and not _LOCK_BEFORE.search(lowered, max(0, start - 30), start):
            continue  # source code, a status code: a code counts when it opens a lock
        after = text[end + len(rest):end + len(rest) + 1]
        if after in "\"'" and word in _LABELS and text.startswith(":", end + len(rest) + 1):
            after = ":"  # "pass": "…", 'pwd': '…'
        if word in _LABELS and not (after in ":=" or _LABEL_IS.match(lowered, end + len(rest))):
            continue  # "pass the test", "pwd" the command: a label only when a value is given
        # "here's the token, X": a comma and a space hand a random value over as well
        comma = (after == "," and text[end + len(rest) + 1:end + len(rest) + 2] == " "
                 and (word in _KEY_WORDS or word in _BEFORE_PASSWORDS  # "the vault password, X, is …": X itself
                      and password_like(_candidate(_next_word(text, end + len(rest) + 1, end + len(rest) + 140))[0],
                                        strong=True)))
        # a word at a line's end is a label (its value below) only when the line holds nothing else
        label = after == "\n" and _LABEL_LINE.fullmatch(text, _line_start(text, start), end + len(rest)) is not None
        if after and not (after in " \t:" or label or not after.isascii() or not word.isascii() or glued):
            if word in _BEFORE_WORDS and after in _SENTENCE_ENDS and not rest:  # "use ab12… as the token."
                earlier = _before(text, start, word)
                if earlier is not None:
                    yield earlier
            if not comma:
                continue  # login?next=, password+reset, token.py, "token": a name in code, a URL, JSON
        ahead = _AHEAD.match(text, end + len(rest))
        if (ahead and ahead.group(1) in _CODE_AFTER and not comma
                and not (word in _LABELS and ahead.group(1) == "=" and not text.startswith("==", ahead.start(1)))):
            continue  # (pw = …, a label given a value, reads on: code is no password's shape)  # token = …, key.get(…), key, value: code (assignments are named_hits')
        # The window ends where the next context word starts: that one reads its own value.
        hint = (_VALUE_HINT.search(text, end + len(rest), end + len(rest) + _HINT_WINDOW)
                or _GROUPS_HINT.search(text, end + len(rest), end + len(rest) + _HINT_WINDOW))
        following = len(text)
        if hint:
            following = next((c for c, w in contexts[number + 1:number + 4]
                              if c >= end and text[c - 1] in " \t\n" and not _IN_VALUE.match(text, c + len(w))
                              and not (w in _WHOLE and lowered[c + len(w):c + len(w) + 1].isalpha())  # keypad
                              and w not in _NETWORKS),
                             following)
            hint = hint if hint.start() < following else None
        if word in _CODE_LISTS:
            codes = list(_code_list(text, end + len(rest), word))
            if codes:
                skip = codes[-1].end
                yield from codes
                continue
        if word in _BEFORE_WORDS:  # "ab12… is the api key": also when a value follows too
            earlier = _before(text, start, word)
            if earlier is not None:
                yield earlier
        hit = _after(text, end + len(rest), word, following) if hint else None
        if hit is not None:
            skip = hit.end
            yield hit


_ENDS_CLAUSE = re.compile(r"[.,;!)]?[ \t]*(?:\r?\n|\\n|\Z)|[,;][ \t]")
_MORE_FILLERS = 3  # "A senha do banco de dados de produção é X": more words, then "is"
# Verbs after the value in languages that put them last (Persian, Korean, Japanese, Hindi, Turkish).
_COPULA_AFTER = re.compile(r"است|هست|می‌باشد|입니다|이에요|예요|이다|です|だ|だよ|है|हैं|dir|dır|dur|dür|tir|tır|হয়")
# "is" glued at the end of a word in scripts written without spaces (Thai, Chinese); not a
# topic particle (Korean 은/는, Japanese は), which any noun takes.
_GLUED_CONNECTORS = ("คือ", "是", "为", "為")
# user / password, then a particle or a short verb: "admin / X でログイン", "admin/X로 로그인"
_PAIR_BEFORE = re.compile(r"(?<![^\s(\"'])[\w.@-]{1,64}[ \t]{0,2}/[ \t]{0,2}(?P<v>[^\s/]{6,128}?)[\"')]?[ \t]{0,3}"
                          r"(?:で|에서|로|으로|ile|と|with|to|を使って|使って|用)?"
                          r"[ \t]{0,3}(?:[^\x00-\x7f\s]{1,12}[ \t]{0,2})?\Z")  # でサーバーにログイン: a place glued between
_LOCK_BEFORE = re.compile(r"(?<![\w-])(?:safe|door|gate|garage|alarm|lock|locker|padlock|keypad|lockbox|suitcase|"
                          r"cancello|porta|portone|cassaforte|puerta|caja fuerte|candado|porte|portail|coffre|cadenas|"
                          r"tür|tor|tresor|deur|kluis|sejf|drzwi)(?:[ \t]{1,3}(?:opener|remote|keypad|entry|lock))?[ \t]{1,3}\Z")
_GROUPS_HINT = re.compile(r"(?<![a-z])[a-z]{4} [a-z]{4} [a-z]{4} [a-z]{4}(?![a-z])")  # an app password in groups
_NETWORK_BEFORE = re.compile(r"(?<![\w-])(?:wi-?fi|wlan|wpa2?|wpa3|ssid|wireless|hotspot)(?![\w-])")
_PARTICLE = re.compile(r"は|が|を|の|で|는|은|이|가|를|을|의|코드|码|碼|是|为|為|คือ|：")
_GLUED_RUN = re.compile(r"[^\s!-~]{0,24}")
_WORD_AFTER = re.compile(r"[ \t]{1,4}(\S{1,12})")


def _glued_run(lowered: str, at: int) -> str:
    """The letters glued after a context word in a script written without spaces."""
    run = _GLUED_RUN.match(lowered, at)
    return run.group(0) if run else ""


def _glued_connector(low: str) -> str:
    """The connector glued at the end of a word in a script written without spaces (คือ, 是, は)."""
    if low.isascii() or len(low) < 2 or any(c.isascii() and c.isalnum() for c in low):
        return ""  # KeCFVD1f7rwtです: a value with its particle, not a word
    return next((c for c in _GLUED_CONNECTORS if low.endswith(c) and len(low) > len(c)), "")


def _next_word(text: str, at: int, stop: int) -> str:
    after = _WORD_AFTER.match(text, at, stop)
    return after.group(1).rstrip(".,;!") if after else ""


def _code_list(text: str, at: int, word: str) -> Iterator[Hit]:
    """The codes after 'backup codes:' (on its line and the lines below), each with a digit."""
    started = False
    colon = text.find(":", at, _line_end(text, at))
    if 0 <= colon - at <= 80:  # "recovery codes in case I lose my phone: …": the list follows the colon
        at = colon + 1
    for number, token in enumerate(_TOKEN.finditer(text, at, min(len(text), at + 800))):
        raw = token.group(0).strip(",;")
        if _ONE_CODE.fullmatch(raw) and any(c.isdigit() for c in raw) and len(raw) >= 6:
            started = True
            yield Hit("password", token.start(), token.start() + len(raw), f"one of the {word} listed")
        elif started and raw.lower() in _LIST_JOINS:
            continue  # "…, 14311413 and 60843912": the list's last code follows its conjunction
        elif started or number > 4:
            return


# A label line: the context word with a word or two before it and nothing else ("Access token").
_LABEL_LINE = re.compile(r"[ \t#*>-]{0,6}(?:[^\W\d_]{1,16}[ \t]){0,2}[^\W\d_][^\s]{0,30}[ \t]*", re.UNICODE)


def _line_start(text: str, at: int) -> int:
    return max(text.rfind("\n", 0, at) + 1, at - 80, 0)


# An SSH public key's type (what follows it is public) and a value named as an id.
_KEY_TYPE = re.compile(r"(?:key::)?(?:sk-)?(?:ssh-(?:ed25519|ed448|rsa|dss)|ecdsa-sha2-nistp\d{3})(?:@openssh\.com)?")
_NAMED_ID = re.compile(r"(?:kid|key_?id|key-id|fingerprint)[=:]")


def _after(text: str, at: int, word: str, limit: int) -> Hit | None:
    stop = min(_line_end(text, at), limit)
    alone = not text[at:stop].strip(" \t") and stop < limit and _LABEL_LINE.fullmatch(text, _line_start(text, at), at)
    if alone or text[at:stop].strip(" \t") in (":", "=") and stop < limit and word not in _KEY_WORDS:  # "Password:" alone
        below = stop + (2 if text.startswith("\\n", stop) else 1)
        stop = min(_line_end(text, below), limit)
        at = below
    connector = "context"  # the context word itself may be followed by the value
    fillers = 0
    for number, token in enumerate(_TOKEN.finditer(text, at, stop)):
        if number >= _MAX_WORDS or fillers > _MAX_FILLERS.get(word, 5) + _MORE_FILLERS:
            return None
        raw = token.group(0)
        if len(raw) > 600 or "[REDACTED" in raw:
            return None  # a blob, not a sentence's word; a secret taken out already
        low = raw.lower()
        if low.rstrip(":=") == "id" and word in _KEY_WORDS and connector:
            connector = "id"  # "AccessKey ID LTAI…": a key's id, half of the credential
            continue
        if number == 0 and low == "type" and word not in _KEY_WORDS:
            connector = "type"  # "…the sudo password type X": the verb, not a kind of password
            continue
        if number == 0 and low.strip(":=,.") in _NOT_VALUES:
            return None
        if low in _CONNECTORS or low.rstrip(":=") in _CONNECTORS and low[-1:] in ":=":
            connector = connector if connector == "id" else low.rstrip(":=") or low
            continue
        glued = _glued_connector(low)
        if glued and connector != "id":  # เข้าระบบคือ: a word of a script without spaces, "is" glued at its end
            connector = glued
            continue
        if word in _KEY_WORDS and (_KEY_TYPE.fullmatch(low.strip(".,;:")) or _NAMED_ID.match(low)):
            return None  # "key: ssh-ed25519 AAAA…" a public key; "signing key kid=773d…" a key's id
        value, offset = _candidate(raw)
        if connector == "id" and (value != raw.rstrip(".,;") or not value.replace("-", "").replace("_", "").isalnum()):
            return None  # SHA256:…, (…): a fingerprint or a note, not a bare id
        if not connector and value and _COPULA_AFTER.fullmatch(_next_word(text, token.end(), stop)):
            connector = "is"  # "رمز عبور سرور X است", "X 입니다": the verb after the value
        if (not connector and word in _CODES and word not in _ENGLISH and word not in ("code", "combination")
                and fillers <= _FEW and _PIN.fullmatch(value)):
            connector = "context"  # "пин-код от карты 9310": the digits after a few words
        if fillers > _MAX_FILLERS.get(word, 5) and connector not in _PRIMARY:
            connector = ""  # past the usual few words only "is" / ":" / "=" hands a value over
        if (not connector and fillers and fillers <= _FEW and value and word not in _KEY_WORDS and word not in _CODES
                and _ENDS_CLAUSE.match(text, token.end()) and "@" not in value and "/" not in value
                and (password_like(value, strong=True) or looks_random(value, 12))):
            connector = "after"  # "пароль от вайфая X", "password for the NAS X": the value ends the clause
        grouped = grouped_password(text, token.start()) if connector in _PRIMARY and word not in _KEY_WORDS else None
        if grouped:  # "the app password is kwcu ermw zogn kyvt": one password in groups
            return Hit("password", *grouped, f"app password after '{word}' in prose")
        if connector and value and not raw.endswith(":"):
            value2, offset2 = _user_password(value)
            for candidate, shift in ((value, 0), (value2, offset2)) if offset2 else ((value, 0),):
                if _is_secret(candidate, word, connector, fillers):
                    begin = token.start() + offset + shift
                    return Hit("password" if word not in _KEY_WORDS or word in _CODES else "secret", begin,
                               begin + len(candidate), f"value after '{word}' in prose")
        if (raw.endswith((":", "=")) and _FILLER.fullmatch(raw[:-1] + ":") or raw.strip("\"'`") in (":", "=")
                or raw.endswith(("':", '":')) and len(raw) <= 120):  # Password for 'https://bob@host': …
            connector = ":"  # "for the wifi:", "(hex):", "1:"
            continue
        if not _FILLER.fullmatch(raw) and not _EMAIL.fullmatch(value):
            return None  # a sentence that talks about the word, not a value (an address is the user's)
        connector = ""
        fillers += 1
    return None


# "ab12… is the api key", "nutze X als Passwort", "utilise X comme mot de passe", "usa X come password"
_BEFORE = re.compile(r"(\S{6,200})[ \t]{1,4}(?:is|was|as|=|als|ist|comme|est|como|es|come|è|jako|som|är|olarak)[ \t]{1,4}"
                     r"(?:(?:the|my|our|your|an?|new|old|das|dein|mein|le|la|mon|el|mi|il|het|de|mijn)[ \t]{1,4}){0,2}"
                     r"(?:[\w-]{1,20}[ \t]{1,4}){0,2}\Z")


_BEFORE_PASSWORDS = frozenset({"password", "passphrase", "passwort", "kennwort", "mot de passe", "contraseña", "senha",
                               "wachtwoord", "hasło", "haslo", "пароль", "lösenord", "passord", "parola", "heslo", "şifre"})
_BEFORE_WORDS = frozenset({"key", "token", "secret", *_BEFORE_PASSWORDS})
_SENTENCE_ENDS = frozenset(".,;!?)\n\r\"'`\\")  # what may end the sentence after its word (\ of an escaped \n)
_BEFORE_HINT = re.compile(r"\s(?:is|was|as|=|als|ist|comme|est|como|es|come|è|jako|som|är|olarak)\s")


_RUN = re.compile(r"\S+")


def _before_match(text: str, line: int, start: int) -> re.Match[str] | None:
    """`_BEFORE.search(text, line, start)` in linear time: its value ends where a run of
    non-spaces ends, so only the first place each run's value may start is tried (a
    search would try every character of a long JSON line, each to the run's end)."""
    for run in _RUN.finditer(text, line, start):
        first = max(run.start(), run.end() - 200)
        if run.end() - first >= 6:
            match = _BEFORE.match(text, first, start)
            if match:
                return match
    return None


def _before(text: str, start: int, word: str) -> Hit | None:
    """ab12…yz is the api key: a random value just before 'is the … key'."""
    if not _BEFORE_HINT.search(text, max(0, start - 60), start):
        return None
    line = max(text.rfind("\n", 0, start) + 1, start - 260)
    match = _before_match(text, line, start)
    if not match:
        return None
    value, offset = _candidate(match.group(1))
    if is_placeholder(value) or not (looks_random(value, 16) or word in _BEFORE_PASSWORDS
                                     and password_like(value, strong=True)):
        return None
    begin = match.start(1) + offset
    return Hit("secret", begin, begin + len(value), f"value before 'is the … {word}' in prose")
