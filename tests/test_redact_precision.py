"""The precision check: values the low-precision rules find in ordinary text (identifiers,
type annotations, values named as ids, digests or public keys) are left; secrets those
rules exist for are still found."""

from __future__ import annotations

import pytest

from maxmem.redact import Redactor, explain
from maxmem.redact.precision import named_as_identifier, plausible, reads_as_code, reads_as_identifier

# Lines of the kinds found in real ordinary text (a standard library's tests, a package's
# typed API, its install record, MIME boundaries) that the rules took for secrets.
ORDINARY = [
    "(Frozen_CaseSensitivityTestPEP302,",
    "        f = 'tokenize_tests-utf8-coding-cookie-and-no-utf8-bom-sig.txt'",
    "def direct_url_as_pep440_direct_reference(direct_url: DirectUrl, name: str) -> str:",
    '            "gpt-4o-mini-realtime-preview-2024-12-17",',
    "    key: Optional[bytes]",
    "    passphrase: Optional[str]",
    "    partitionKey: Optional[str]",
    "        username: Optional[str], password: Optional[HiddenText]",
    "        httpCredentials: Optional[Sequence[channels.HttpCredentials]],",
    "    a: MutableSequence[_T], x: _T, lo: int = 0, *, key: Callable[[_T], SupportsRichComparisonT]",
    'def get_preferred_scheme(key: Literal["prefix", "home", "user"]) -> LiteralString: ...',
    "Google Doc id 10KWiN8sCSL0NiqqPIQcpDVsI_0QD5JqhXnkhsfoVY6X",
    'kid: "kd8cVK3EVwbtTxCudTj-Hi5YQMHi9nfe0RWKIVbJOQg"',
    '"challenge": "9N7Ry53pk5gYh4kSkjKySIjgARFe3hlFDIpHCDNQsNz", "rpId": "acme.io"',
    "VAPID public key: ByZFsbNnfgkx8w6JtEB8ZtZWRKazBwLNUSQtgKw25BRAygtpnVzsYgtY_p4C-oIuGSzC5GWCy5MH9MT-Puj1HNi",
    "Monero address 4Kc1gwzHQSDVk1QFqu2hKZCxRAUEh3r6Q1uorNGDQdAqEDM1Fw8xA64g3EkNTnSm6haqm1XJQKSVTHni2LrnhGx2kMPLKBt",
]

# Secrets the same families are there for: bare vendor tokens, random keys in code.
SECRETS = [
    ("use dckr_pat__HwoxOXoJ_b6p4TP5zIAzh5TTPO for the registry", "dckr_pat__HwoxOXoJ_b6p4TP5zIAzh5TTPO"),
    ("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",
     "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"),
    ("sonar.login=squ_3ce944b1baf5d02bd97aaa2524d50024de19848d", "squ_3ce944b1baf5d02bd97aaa2524d50024de19848d"),
    ('co = cohere.ClientV2("QFPLyqcSlnbTcF29kqf9OTyylJOMoLxhcG3P0kt3")', "QFPLyqcSlnbTcF29kqf9OTyylJOMoLxhcG3P0kt3"),
    ("const token = jwt.sign({ sub: user.id }, 'P5WcUrJP0TS8x5yz9h3hINOowkvshfiIa8peodMi');",
     "P5WcUrJP0TS8x5yz9h3hINOowkvshfiIa8peodMi"),
    ('"bash", "-lc", "GL_TOKEN=glpat-G1Upm9psvalm47ld2XHA git push"', "glpat-G1Upm9psvalm47ld2XHA"),
    ("paste 5oeqAMSt7BxjoQDPqRnHTbSGZ4ExPHdoVLZR7vZO into the API key field",
     "5oeqAMSt7BxjoQDPqRnHTbSGZ4ExPHdoVLZR7vZO"),
    ("the db password: Tr0ub4dor&3x", "Tr0ub4dor&3x"),
]


@pytest.mark.parametrize("line", ORDINARY)
def test_ordinary_lines_keep_everything(line):
    assert explain(line) == []


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_secrets_of_the_judged_families_are_still_found(text, secret):
    redacted, count = Redactor(cache_size=0).redact(text)
    assert count >= 1 and secret not in redacted


@pytest.mark.parametrize("value", ["Frozen_CaseSensitivityTestPEP302", "tokenize_tests-utf8-coding-cookie",
                                   "gpt-4o-mini-realtime-preview-2024-12-17", "direct_url_as_pep440_direct_reference"])
def test_identifiers_read_as_identifiers(value):
    assert reads_as_identifier(value)


@pytest.mark.parametrize("value", ["glpat-G1Upm9psvalm47ld2XHA", "QFPLyqcSlnbTcF29kqf9OTyylJOMoLxhcG3P0kt3",
                                   "bkua_4dce8c3d0e1462d2b972534fefd0eedd2306d498",
                                   "rdme_apbvqv7ja8wsn83b6yqemf121qgm8rmmddfm6cm5mvhvamip0wh1px3cj7hjfkgtyt92rs"])
def test_random_tokens_do_not(value):
    assert not reads_as_identifier(value)


def test_code_is_told_from_a_password():
    assert reads_as_code("Optional[str") and reads_as_code("Callable[[_T") and reads_as_code("NDArray[_ScalarT_co")
    assert not reads_as_code("Tr0ub4dor(3x") and not reads_as_code("hunter2") and not reads_as_code("s3cr3t[x]")


def test_a_name_counts_only_when_it_stands_against_the_value():
    text = "const token = jwt.sign({ sub: user.id }, 'P5WcUrJP0TS8x5yz9h3hINOowkvshfiIa8peodMi');"
    assert not named_as_identifier(text, text.index("P5Wc"))
    text = "Google Doc id 10KWiN8sCSL0NiqqPIQcpDVsI_0QD5JqhXnkhsfoVY6X"
    assert named_as_identifier(text, text.index("10KW"))
    text = "session id Kq7Lm2Zx9Pt4Wn8Rb3Vc6Hy1Jd5Fg0Ss"  # a session's id is the secret itself
    assert not named_as_identifier(text, text.index("Kq7L"))


def test_other_families_are_not_judged():
    text = "AKIAIOSFODNN7EXAMPL1 Frozen_CaseSensitivityTestPEP302"
    assert plausible(text, 0, 20, "aws access key id") and plausible(text, 21, len(text), "value of secret-named x=")
