"""The shape-split corpus of bench/redact_eval.py: secrets of shapes the rules were not
written from, and ordinary technical lines that hold none.

Secrets come from tests/data/secrets/shapes/{dev,heldout,unseen}.txt: one item a line,
`shape<TAB>template`, where ⟦…⟧ marks what must go, ⏎ is a line break and `{kind:n}`
is filled in here from a fixed seed (nothing real). The dev file is what the rules were
written from; the heldout file holds other vendors, languages, encodings and commands.
It was written before the rules that now read it and scored blind once (0.949); its
misses were then read and the mechanisms behind them written, so it is development data
now, kept apart only to show what it once measured. The unseen file was written without
reading the rules at all (more vendors, config formats, commands, connection strings,
prose in eleven languages, key material) and scored blind once, with its ordinary
lines (recall 0.794, 32.0 FP lines / 1k); its misses were then read, so it is
development data since. The blind file (blind.txt, with blind_ordinary.txt) is a second
such set written later by another hand without reading the rules, their tests, their
docs or the unseen files, scored blind once (recall 0.870, 26.7 FP lines / 1k); its
misses were then read, so it is development data since. blind3.txt, with
blind3_ordinary.txt, is a third, by yet another hand under the same rule (more vendors,
config formats, commands, languages and key material), scored blind once (recall 0.886,
20.0 FP lines / 1k) and development data since; blind4.txt, with blind4_ordinary.txt, a
fourth, scored blind once (recall 0.897, 17.8 FP lines / 1k) and development data since;
blind5.txt, with blind5_ordinary.txt, a fifth, written the same way, scored blind once
(recall 0.951, 22.4 FP lines / 1k) and development data since; blind6.txt, with blind6_ordinary.txt, is a sixth, by yet
another hand under the same rule (vendor and cloud keys, connection strings, passwords in
commands, config files, code, logs and prose in many languages, key material, cards and
recovery codes), scored blind once (recall 0.877, 8.8 FP lines / 1k) and only scored since;
blind7.txt, with blind7_ordinary.txt, is a seventh, by yet another hand under the same rule
(vendor and cloud keys in current and older formats, connection strings, passwords in
commands, config files, code, logs, cookies and prose in over thirty languages, key
material, cards, recovery codes, webhook and signed URLs), scored blind once (recall 0.917,
11.2 FP lines / 1k) and only scored since.

Ordinary lines (`ordinary_lines`) are what a coding agent's transcript is full of and a
redactor must leave: git SHAs, UUIDs, digests, lockfile hashes, base64 images, public
keys and certificates, addresses, ids, URLs without credentials, logs and prose about
passwords and keys; and harder ones: lockfile and Nix store hashes, image digests,
Kubernetes names, CSS colours, semver, paths, wallet addresses and signatures, IPFS ids,
JSON Web Keys, PEM public keys, known_hosts lines, age, WireGuard and Nostr public keys.
Their held-out counterpart (`ordinary_file_items`) is tests/data/secrets/shapes/
unseen_ordinary.txt, written with unseen.txt: `kind<TAB>line` (⏎ and `{kind:n}` as
above), adding placeholders, variable references, masked values, keys public by design
and lines about passwords in several languages.
"""

from __future__ import annotations

import base64
import hashlib
import random
import re
import string
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHAPES = ROOT / "tests" / "data" / "secrets" / "shapes"
SEED = 57

ALPHABETS = {
    "alnum": string.ascii_letters + string.digits,
    "hex": "0123456789abcdef",
    "HEX": "0123456789ABCDEF",
    "b64": string.ascii_letters + string.digits + "+/",
    "b64url": string.ascii_letters + string.digits + "-_",
    "digits": string.digits,
    "upper": string.ascii_uppercase + string.digits,
    "lower": string.ascii_lowercase,
    "lowernum": string.ascii_lowercase + string.digits,
    "b58": "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
}
# Words from the BIP-39 English list (a recovery phrase is made of them).
WORDS = ("abandon ability absorb abstract access accident acoustic acquire across actress adapt "
         "addict admit adult advance aerobic afford agent agree ahead alarm album alcohol alert "
         "alien alley almost alpha already amateur amazing among amount anchor ancient anger "
         "animal ankle annual antique anxiety apart april arctic arena argue armor army arrange "
         "arrow artist assault asset atom auction august aunt autumn avocado awake axis bacon "
         "badge bamboo banana barrel basket battle beach bean become beef believe bench bicycle "
         "bitter blanket blossom blue blur board bonus boost border bottom bounce bracket brave "
         "breeze brick bridge broccoli bronze bubble buddy budget buffalo cabbage cactus camera "
         "canal candy canvas carbon cargo carpet castle catalog cattle cement cereal chalk chapter "
         "cherry chimney chuckle cinnamon citizen civil clarify claw clever cliff clinic clog "
         "coconut coffee coil comic copper coral cotton couch cousin coyote cradle crater cricket "
         "crouch cruise crystal cube cupboard curtain cushion cycle daisy damp dawn debris decade "
         "denial desert dignity dinosaur dolphin donkey dragon drift drum dune eager eagle ecology "
         "elbow elephant embark emerge enact enlist entire envelope equip erode essay estate "
         "exhaust exotic fabric faculty falcon fancy fatigue fault feather fence fiber fiscal "
         "flamingo flavor fluid foam fossil fragile frequent frost fungus gadget galaxy garlic "
         "gasp gauge gesture giraffe glacier glimpse glove goose gorilla gossip gravity guitar").split()


def _luhn(rng: random.Random, n: int, first: str = "4") -> str:
    digits = [int(c) for c in first] + [rng.randrange(10) for _ in range(n - len(first) - 1)]
    total = 0
    for i, d in enumerate(reversed(digits)):
        total += sum(divmod(d * 2, 10)) if i % 2 == 0 else d
    return "".join(map(str, digits)) + str((10 - total % 10) % 10)


def _b58check(payload: bytes) -> str:
    data = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    number, out = int.from_bytes(data, "big"), ""
    while number:
        number, rem = divmod(number, 58)
        out = ALPHABETS["b58"][rem] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


# The first bytes of private keys in DER (PKCS#8, PKCS#1 RSA, SEC1 EC) and OpenSSH's format.
_DER_HEADS = {
    "pkcs8": bytes.fromhex("308204bd020100300d06092a864886f70d0101010500048204a7308204a30201000282010100"),
    "rsa": bytes.fromhex("308204a40201000282010100"),
    "ec": bytes.fromhex("30770201010420"),
    "openssh": b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none",
}


def _der(rng: random.Random, kind: str, newline: str) -> str:
    body = _DER_HEADS[kind] + rng.randbytes(1190 if kind in ("pkcs8", "rsa", "openssh") else 110)
    text = base64.b64encode(body).decode()
    return newline.join(text[i:i + 64] for i in range(0, len(text), 64))


def fill(kind: str, arg: str, rng: random.Random) -> str:
    n = int(arg) if arg.isdigit() else 0
    if kind in ALPHABETS:
        return "".join(rng.choice(ALPHABETS[kind]) for _ in range(n))
    if kind == "luhn":
        return _luhn(rng, n)
    if kind in ("card4", "carddash"):
        number = _luhn(rng, n, rng.choice(["4", "51", "55"]))
        return (" " if kind == "card4" else "-").join(number[i:i + 4] for i in range(0, n, 4))
    if kind == "amex":
        number = _luhn(rng, 15, "37")
        return f"{number[:4]} {number[4:10]} {number[10:]}"
    if kind == "uuid":
        return str(__import__("uuid").UUID(int=rng.getrandbits(128), version=4))
    if kind == "words":
        return " ".join(rng.choice(WORDS) for _ in range(n))
    if kind in ("der", "derj"):
        return _der(rng, arg, "\n" if kind == "der" else "\\n")
    if kind == "ppk":
        return "\n".join(fill("b64", "64", rng) for _ in range(n))
    if kind == "wif":
        return _b58check(b"\x80" + rng.randbytes(32) + b"\x01")
    if kind == "xprv":
        return _b58check(bytes.fromhex("0488ade4") + rng.randbytes(9) + rng.randbytes(32) + b"\0" + rng.randbytes(32))
    raise ValueError(f"unknown filler {{{kind}:{arg}}}")


_SLOT = re.compile(r"\{(\w+)(?::(\w+))?\}")
# The fillers `fill` knows: an ordinary line fills only these and leaves other braces
# (`${API_KEY}`, `{{vault_db_password}}`) as they are.
FILLERS = frozenset({*ALPHABETS, "luhn", "card4", "carddash", "amex", "uuid", "words", "der", "derj", "ppk",
                     "wif", "xprv"})


def shape_items(split: str, folder: Path = SHAPES) -> list[dict]:
    """The labelled items of tests/data/secrets/shapes/<split>.txt, filled in."""
    rng = random.Random(f"{SEED}-{split}")
    items = []
    for number, line in enumerate((folder / f"{split}.txt").read_text(encoding="utf-8").splitlines()):
        if not line.strip() or line.startswith("#"):
            continue
        shape, template = line.split("\t", 1)
        template = template.replace("⏎", "\n")
        template = _SLOT.sub(lambda m: fill(m.group(1), m.group(2) or "", rng), template)
        text, spans = "", []
        for part in re.split(r"(⟦[^⟧]*⟧)", template):
            if part.startswith("⟦"):
                spans.append([len(text), len(text) + len(part) - 2, shape])
                part = part[1:-1]
            text += part
        items.append({"id": f"shape-{split}-{number}", "split": split, "label": "secret", "shape": shape,
                      "context": "shape", "text": text, "spans": spans})
    return items


def ordinary_file_items(split: str, folder: Path = SHAPES) -> list[dict]:
    """The ordinary lines of tests/data/secrets/shapes/<split>_ordinary.txt, filled in:
    negatives, nothing in them to remove."""
    rng = random.Random(f"{SEED}-{split}-ordinary")
    path = folder / f"{split}_ordinary.txt"

    def slot(match: re.Match) -> str:
        kind, arg = match.group(1), match.group(2) or ""
        return fill(kind, arg, rng) if kind in FILLERS else match.group(0)

    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip() or line.startswith("#"):
            continue
        kind, template = line.split("\t", 1)
        if "⟦" in template or "⟧" in template:
            raise ValueError(f"{path.name}:{number + 1}: an ordinary line marks nothing to remove")
        text = _SLOT.sub(slot, template.replace("⏎", "\n"))
        items.append({"id": f"ordinary-{split}-{number}", "split": f"ordinary-{split}", "label": "negative",
                      "shape": kind, "context": "line", "text": text, "spans": []})
    return items


# -- ordinary technical lines -------------------------------------------------------------------
def _r(rng: random.Random, kind: str, n: int) -> str:
    return fill(kind, str(n), rng)


def _uuid(rng: random.Random) -> str:
    return fill("uuid", "", rng)


def _ordinary_line(family: int, rng: random.Random) -> str:
    h, u, a = (lambda n: _r(rng, "hex", n)), (lambda: _uuid(rng)), (lambda n: _r(rng, "alnum", n))
    b64 = lambda n: _r(rng, "b64", n)  # noqa: E731
    ip = ".".join(str(rng.randrange(1, 255)) for _ in range(4))
    pkg = rng.choice(["requests", "urllib3", "numpy", "pydantic", "fastapi", "httpx", "click", "rich", "attrs"])
    version = f"{rng.randrange(0, 5)}.{rng.randrange(0, 30)}.{rng.randrange(0, 20)}"
    lines = [
        f"commit {h(40)}",
        f"{h(7)} Merge pull request #{rng.randrange(100, 9999)} from acme/fix-token-refresh",
        f"Author: Dana Ortiz <dana.ortiz@example.com>  Date: Tue Mar {rng.randrange(1, 28)} "
        f"10:{rng.randrange(10, 59)}:02 2025 +0100",
        f"{pkg}=={version} \\\n    --hash=sha256:{h(64)}",
        f'  "integrity": "sha512-{b64(86)}==",',
        f"github.com/{rng.choice(['spf13/cobra', 'stretchr/testify', 'google/uuid'])} v{version} h1:{b64(43)}=",
        f'checksum = "{h(64)}"',
        f'  resolved "https://registry.yarnpkg.com/{pkg}/-/{pkg}-{version}.tgz#{h(40)}"',
        f"docker pull ghcr.io/acme/api@sha256:{h(64)}",
        f"Digest: sha256:{h(64)}",
        f"{h(64)}  dist/{pkg}-{version}.tar.gz",
        f"{h(32)}  backup-{rng.randrange(2019, 2026)}.tar",
        f'{{"request_id": "{u()}", "status": 200, "duration_ms": {rng.randrange(1, 900)}}}',
        f"2025-04-0{rng.randrange(1, 9)}T12:{rng.randrange(10, 59)}:11.{rng.randrange(100, 999)}Z INFO "
        f"trace_id={h(32)} span_id={h(16)} GET /api/v1/orders 200",
        f"traceparent: 00-{h(32)}-{h(16)}-01",
        f'<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{b64(120)}=" alt="logo">',
        f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b64(43)} dana@laptop",
        f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC{b64(180)} deploy@ci",
        f"MIID{b64(60)}",  # a certificate's body line
        f"{b64(64)}",  # a base64 body line (certificate, image)
        f"SHA256:{b64(43)} dana@laptop (ED25519)",
        f"The key fingerprint is SHA256:{b64(43)}.",
        f"wallet address 0x{h(40)} received 0.5 ETH",
        f"send to bc1q{_r(rng, 'lowernum', 38)}",
        f"inet {ip}/24 brd {ip} scope global eth0",
        f"link/ether {':'.join(h(2) for _ in range(6))} brd ff:ff:ff:ff:ff:ff",
        f"inet6 fe80::{h(4)}:{h(4)}:{h(4)}:{h(4)}/64 scope link",
        f"curl -s https://api.example.com/v2/search?q={rng.choice(['token+bucket', 'password+reset', 'rust'])}"
        f"&page={rng.randrange(1, 9)}&per_page=50",
        f"https://github.com/acme/{pkg}/blob/{h(40)}/src/{pkg}/auth.py#L{rng.randrange(1, 400)}",
        f"https://www.youtube.com/watch?v={_r(rng, 'b64url', 11)}&t={rng.randrange(10, 900)}s",
        f"https://docs.google.com/document/d/{_r(rng, 'b64url', 44)}/edit",
        f"s3://acme-artifacts/builds/{h(40)}/app.zip",
        f"arn:aws:iam::{_r(rng, 'digits', 12)}:role/deploy-{a(6)}",
        f"i-0{h(16)}  running  t3.medium  {ip}",
        f"pod/api-{h(10)}-{_r(rng, 'lowernum', 5)}   1/1   Running   0   {rng.randrange(1, 59)}m",
        f"Successfully built {h(12)}",
        f"{h(12)}   ghcr.io/acme/api:{version}   \"python -m api\"   Up {rng.randrange(1, 9)} hours",
        f'"id": "chatcmpl-{a(29)}", "object": "chat.completion"',
        f'{{"id": "msg_01{a(22)}", "type": "message", "role": "assistant"}}',
        f'"tool_use_id": "toolu_01{a(22)}"',
        f"request-id: req_{a(24)}",
        f'customer = "cus_{a(14)}"; price = "price_1{a(23)}"',
        f'"stripe_charge": "ch_3{a(23)}"',
        f"Sentry event {h(32)} captured",
        f"ETag: W/\"{h(40)}\"",
        f"X-Request-Id: {u()}",
        f"session {u()} resumed after {rng.randrange(2, 90)}s",
        f"CREATE TABLE users (id uuid PRIMARY KEY DEFAULT '{u()}', "
        "password_hash text NOT NULL);",
        "Password hashing uses argon2id with a 16-byte salt; see docs/security.md.",
        "Reset your password from the account page; the link expires after 30 minutes.",
        f"the token bucket refills at {rng.randrange(5, 50)} tokens per second",
        "ALTER TABLE orders ADD CONSTRAINT fk_customer FOREIGN KEY (customer_id) REFERENCES customers(id);",
        f"color: #{h(6)}; background: rgba(0, 0, 0, 0.{rng.randrange(1, 9)});",
        f"  File \"/usr/lib/python3.12/site-packages/{pkg}/sessions.py\", line {rng.randrange(10, 900)}, in send",
        f"src/auth/token.py:{rng.randrange(1, 300)}:    def refresh_token(self, session_id: str) -> str:",
        f"test_login_with_wrong_password PASSED [{rng.randrange(1, 99)}%]",
        "+    password = getpass.getpass(\"Password for {user}: \")",
        "export AWS_PROFILE=staging AWS_REGION=eu-west-1",
        f"export PATH=\"$HOME/.local/bin:$PATH\"  # added by installer {version}",
        f"{pkg} {version} has requirement idna<4,>=2.5, but you have idna 3.{rng.randrange(1, 9)}.",
        f"gpg: key {_r(rng, 'HEX', 16)}: public key \"Dana Ortiz <dana@example.com>\" imported",
        f"pub   ed25519 2024-01-0{rng.randrange(1, 9)} [SC]\n      {_r(rng, 'HEX', 40)}",
        f"Fingerprint: {' '.join(_r(rng, 'HEX', 4) for _ in range(10))}",
        f"nonce-{b64(22)}==",
        f"Content-Security-Policy: script-src 'self' 'nonce-{b64(22)}=='",
        f"at Object.<anonymous> (/app/node_modules/{pkg}/dist/index.js:{rng.randrange(1, 999)}:{rng.randrange(1, 80)})",
        f"Build {rng.randrange(1000, 9999)} finished in {rng.randrange(1, 59)}m{rng.randrange(1, 59)}s, "
        f"artifact {h(40)}.zip",
        f"Phone: +1 (555) {rng.randrange(100, 999)}-{rng.randrange(1000, 9999)}, order #{_r(rng, 'digits', 12)}",
        f"timestamp={_r(rng, 'digits', 13)} count={rng.randrange(1, 999)} ms",
        f"The API key is read from the KEYRING at startup (see {pkg}/config.py:{rng.randrange(1, 99)}).",
        "Use test card 4242 4242 4242 4242 with any CVC and a future expiry date.",
        f"UPDATE users SET last_login = now() WHERE id = '{u()}';",
        f"GET /static/app.{h(8)}.js HTTP/1.1\" 200 {rng.randrange(1000, 99999)} \"-\" \"Mozilla/5.0\"",
        f"Downloading {pkg}-{version}-py3-none-any.whl ({rng.randrange(10, 900)} kB)",
        f"lockfileVersion: '6.0'\n  /{pkg}@{version}:\n    resolution: {{integrity: sha512-{b64(86)}==}}",
        f"model: claude-{rng.choice(['sonnet', 'opus'])}-4-{rng.randrange(20250101, 20251231)}, "
        f"tokens: {rng.randrange(100, 9999)}",
        f"key_id: {h(40)}  (the private key stays in the HSM)",
        f"AWS account {_r(rng, 'digits', 12)}, user AIDA{_r(rng, 'upper', 16)}",
        f"Wi-Fi network: Office-5G, channel {rng.randrange(1, 165)}, security WPA3",
        f"mnemonic of the instruction: MOV r{rng.randrange(0, 15)}, #{rng.randrange(0, 255)}",
        "The recovery phrase is shown once after you create the wallet; write it down.",
        f"Login page: https://auth.example.com/login?next=%2Fdashboard&client_id={a(20)}",
        f"client_id={h(20)}.apps.googleusercontent.com",
        f"Set-Cookie: theme=dark; Path=/; Max-Age={rng.randrange(1000, 99999)}",
        f"npm notice integrity: sha512-{b64(20)}[...]{b64(12)}==",
        f"tx {h(64)} confirmed in block {rng.randrange(800000, 900000)}",
        f"{rng.choice(['ubuntu', 'debian'])}:{version} sha256:{h(64)}",
        f"pip install {pkg} numpy scipy pandas matplotlib seaborn requests flask django pytest black ruff",
        # harder negatives: identifiers, digests and public material that look random
        f"git log --oneline -1 {h(40)}  # HEAD -> main, origin/main",
        f"Merge: {h(7)} {h(7)}",
        f"{pkg}@{version}: sha512-{b64(86)}==",
        f'[[package]]\nname = "{pkg}"\nversion = "{version}"\nchecksum = "{h(64)}"',
        f'{pkg} = {{version = "{version}", hash = "sha256:{h(64)}"}}',
        f"/nix/store/{_r(rng, 'lowernum', 32)}-python3-{version}/bin/python3",
        f"oid sha256:{h(64)}\nsize {rng.randrange(1000, 999999)}",
        f"image: ghcr.io/acme/{pkg}:{version}@sha256:{h(64)}",
        f"replicaset.apps/api-{_r(rng, 'lowernum', 10)}   3   3   3   {rng.randrange(1, 59)}d",
        f"deployment.apps/{pkg}-worker configured (generation {rng.randrange(1, 99)}, uid {u()})",
        f"--primary: #{h(6)}; --accent: #{h(3)}; --radius: {rng.randrange(2, 12)}px;",
        f"Bumped {pkg} from {version} to {version}-rc.{rng.randrange(1, 9)}",
        f"src/components/{a(6).lower()}/{pkg}_handler.test.tsx",
        f"<script src=\"/assets/index-{_r(rng, 'b64url', 8)}.js\" integrity=\"sha384-{b64(64)}\"></script>",
        f"url(data:font/woff2;base64,d09GMgABAAAAA{b64(140)}) format('woff2')",
        f"age1{_r(rng, 'lowernum', 58)}",
        f"PublicKey = {b64(43)}=",
        f"npub1{_r(rng, 'lowernum', 58)}",
        f"Solana address {_r(rng, 'b58', 44)}, balance 1.2 SOL",
        f"tx signature {_r(rng, 'b58', 88)} finalized",
        f"ipfs://Qm{_r(rng, 'b58', 44)}/metadata.json",
        f"Bitcoin address 1{_r(rng, 'b58', 33)}",
        f'{{"kty": "RSA", "kid": "{a(20)}", "n": "{_r(rng, "b64url", 342)}", "e": "AQAB"}}',
        f"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE{b64(52)}\n{b64(36)}==\n"
        "-----END PUBLIC KEY-----",
        f"|1|{b64(27)}=|{b64(27)}= ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAI{b64(100)}=",
        f"/subscriptions/{u()}/resourceGroups/rg-prod/providers/Microsoft.Web/sites/{pkg}-api",
        f"https://drive.google.com/file/d/{_r(rng, 'b64url', 33)}/view?usp=sharing",
        f"CF-Ray: {h(16)}-FRA",
        f"container {h(64)} exited with code {rng.randrange(0, 2)}",
        f"Step 5/9 : RUN pip install -r requirements.txt\n ---> Using cache\n ---> {h(12)}",
        f"Resolved {pkg} to commit {h(40)} (tag v{version})",
        f"version: {version}+build.{rng.randrange(1, 999)} ({h(7)})",
    ]
    return lines[family % len(lines)]


def ordinary_lines(count: int = 1200, seed: int = SEED) -> list[str]:
    """`count` ordinary technical lines (a few hold two lines), none with a secret."""
    rng = random.Random(seed)
    return [_ordinary_line(i, rng) for i in range(count)]
