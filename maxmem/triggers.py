"""The six mandatory commit triggers: find them in conversation text, commit them to core.

A trigger is a sentence that carries durable knowledge: a **decision** (what was
decided and why), a **milestone** (something shipped, finished, reached), a
**preference** (how the user wants things), a **failure** (what broke, the cause,
the fix), a **lesson** (what to do differently next time), or an explicit
**remember** request.

Detection is rule based and sentence level, and it is built for precision: a core
full of chatter is worse than none. Each trigger has positive patterns written
around first-person subjects ("we decided", "I prefer"), and every sentence must
also pass the negative guards: questions, hypotheticals and conditions ("if we
decide..."), speculation, quoted text and code (masked before matching), reported
speech and third parties ("my sister decided..."), negations and plans ("we
haven't decided", "we plan to launch"). Patterns and guards can be extended or
replaced from the `[triggers]` section of the config.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

from .clock import iso, parse_since, parse_time
from .envelopes import strip as strip_envelopes
from .errors import ConfigError, InvalidInput
from .memory import Memory

if TYPE_CHECKING:  # pragma: no cover
    from .brain import Brain, Stored

TRIGGERS = ("decision", "milestone", "preference", "failure", "lesson", "remember")

# When one sentence fires several triggers, the first in this order wins: an explicit
# "remember" request beats everything, and preference patterns are the most generic.
PRIORITY = ("remember", "failure", "lesson", "decision", "milestone", "preference")

USER, ASSISTANT = "user", "assistant"
SPEAKING_ROLES = (USER, ASSISTANT)

MIN_WORDS = 3
MAX_WORDS = 80
# Trigger memories are what must not be lost: they rank high in the boot context.
IMPORTANCE = 0.9

# --- patterns --------------------------------------------------------------------
# Written for re.IGNORECASE against a "masked" sentence: code and quoted text are
# blanked out and curly apostrophes are straightened before matching.

_WE = r"(?:i|we|the team|our team|we all|my wife and i|my husband and i|my partner and i)(?:'ve|'d)?"
_ADV = r"(?:(?:have|has|had|'ve|'d|just|finally|now|already|all|officially|eventually|also|then)\s+)*"
_LABEL_END = r"\s*(?::|—|–|-\s)"

# Each entry: (rule name, regex, roles it applies to).
_BOTH = SPEAKING_ROLES
_USER = (USER,)
_ASSIST = (ASSISTANT,)

DEFAULT_PATTERNS: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    "decision": [
        ("we-decided", rf"\b{_WE}\s+{_ADV}(?:decided|agreed|settled|chose|chosen|opted|picked|committed)\b", _USER),
        ("we-decided", rf"\bwe(?:'ve)?\s+{_ADV}(?:decided|agreed|settled|chose|chosen|opted|picked)\b", _ASSIST),
        ("as-agreed", r"^\W*as (?:we )?agreed\b", _BOTH),
        ("label", rf"^\W*(?:ok(?:ay)?\W+|so\W+)?(?:the\s+)?(?:final\s+)?(?:decision|verdict|call)(?:\s+(?:made|taken))?{_LABEL_END}", _BOTH),
        ("agreed-label", rf"^\W*(?:the\s+)?(?:team|we|we all|everyone|all of us)\s+(?:have\s+)?agreed{_LABEL_END}", _BOTH),
        ("label", r"^\W*(?:ok(?:ay)?\W+|so\W+)?(?:final(?:ly)?\s+)?decided\b", _BOTH),
        ("the-decision-is", r"\b(?:the|my|our)\s+(?:final\s+)?(?:decision|call|verdict)\s+(?:is|was)\b\s*(?:to\b|that\b|:|—|–)", _BOTH),
        ("my-decision", r"\b(?:my|our)\s+(?:final\s+)?decision\s*:", _BOTH),
        ("going-with", r"\b(?:we're|we are|i'm|i am|we'll|i'll|we will|i will)\s+(?:going|gonna go|go)\s+with\b(?!\s+(?:you|him|her|them|me|us)\b)", _USER),
        ("going-with", r"\b(?:we're|we are|we'll|we will)\s+(?:going|go)\s+with\b(?!\s+(?:you|him|her|them|me|us)\b)", _ASSIST),
        ("going-with", r"\blet(?:'s| us)\s+go\s+with\b(?!\s+(?:you|him|her|them|me|us)\b)", _USER),
        ("going-with", rf"\b{_WE}\s+{_ADV}went\s+with\b(?!\s+(?:you|him|her|them|me|us)\b)", _USER),
        ("going-forward-we", r"\b(?:going forward|from now on),?\s+(?:we(?:'re| are|'ll| will)|all (?:new )?\w+ (?:are|will))\b", _BOTH),
        ("made-up-mind", r"\b(?:i've|i have|we've|we have)\s+made up (?:my|our) minds?\b", _USER),
    ],
    "milestone": [
        ("we-shipped", rf"\b{_WE}\s+{_ADV}(?:shipped|launched|released|deployed|published|completed|finished|defended|submitted|paid off|closed|passed|signed|reached|hit|crossed|got (?:approved|accepted|promoted|married|hired))\b"
         r"(?!\s+(?:reading|editing|looking|writing the test|with)\b)", _USER),
        ("now-done", r"\b(?:is|are|has been|have been|was|were)\s+(?:now\s+|finally\s+|officially\s+|fully\s+|successfully\s+)*(?:complete|completed|done|finished|live|released|shipped|launched|deployed|published|approved|generally available|out)\b(?!\s+(?:of|for|with|in|by|via|through|using|on|at)\b)", _USER),
        ("the-x-launched", r"\b(?:the|our|my)\s+(?:[\w'.-]+\s+){0,4}(?:just\s+|finally\s+|officially\s+)?(?:launched|went live|closed|got approved|got accepted|got published|passed|crossed|sold out|broke even)\b", _USER),
        ("version-released", r"\bv?\d+\.\d+(?:\.\d+)?\b[^.;!?]{0,40}\b(?:is|was|has been|have been)\s+(?:now\s+)?(?:released|shipped|published|out|live|tagged)\b", _BOTH),
        ("released-version", rf"\b(?:we|i)\s+{_ADV}(?:released|shipped|published|tagged)\s+(?:version\s+)?v?\d+(?:\.\d+)+", _BOTH),
        ("its-out", r"\bit'?s\s+(?:finally\s+)?(?:out|live)\b", _USER),
        ("label", rf"^\W*milestone{_LABEL_END}", _BOTH),
        ("my-first", r"\b(?:i|we)\s+(?:just\s+|finally\s+)?(?:ran|did|finished|completed|won|sold|published|launched|shipped|closed|signed|landed|made)\s+(?:my|our)\s+(?:very\s+)?first\b", _USER),
        ("got-my", r"\b(?:i|we)\s+(?:just\s+|finally\s+)?(?:got|received|earned|passed)\s+(?:my|our|the)\s+(?:[\w-]+\s+){0,2}(?:permit|visa|licen[cs]e|degree|diploma|certificate|certification|promotion|approval|green card|citizenship|funding)\b", _USER),
        ("migrated", rf"\b{_WE}\s+{_ADV}migrated\s+(?:the\s+)?(?:last|all|every|everything|everyone)\b", _USER),
        ("signed-it", r"\b(?:signed|accepted)\s+(?:it|the (?:offer|contract|lease|deal))\b", _USER),
        ("our-first", r"\bour first\b[^.;!?]{0,40}\b(?:signed|paid|joined|bought|went live|launched)\b", _USER),
    ],
    "preference": [
        ("i-prefer", r"\bi\s+(?:really\s+|strongly\s+|much\s+|generally\s+|always\s+)?prefer\b", _USER),
        ("id-rather", r"\bi(?:'d| would)\s+(?:much\s+|really\s+)?(?:rather|prefer)\b", _USER),
        ("my-preference", r"\bmy\s+(?:strong\s+|general\s+)?preference\s+(?:is|:)", _USER),
        ("my-favourite", r"\bmy\s+(?:favou?rite|preferred|go-to)\s+\w+", _USER),
        ("i-like-it-when", r"\bi\s+(?:really\s+)?(?:like|love|hate|dislike|don't like|do not like|can't stand|cannot stand)\s+it\s+when\b", _USER),
        ("i-like-my", r"\bi\s+(?:really\s+)?(?:like|love|hate|dislike|don't like|do not like|can't stand|cannot stand)\s+(?:my|all|long|short|[\w-]+ing)\b", _USER),
        ("i-cant-stand", r"\bi\s+(?:can't|cannot)\s+stand\b", _USER),
        ("always-do", r"^\W*(?:please\s+)?(?:always|never|don't ever|do not ever|don't|do not)\s+(?:\w+\s+){0,1}(?:use|write|answer|reply|respond|show|give|format|include|send|schedule|put|call|suggest|add|keep|wrap|ask|book|make|run|commit|push)\b[^.!?]*\b(?:me|my|i)\b", _USER),
        ("always-do", r"^\W*(?:please\s+)?(?:always|never)\s+(?:\w+\s+){0,1}(?:use|write|answer|reply|respond|show|give|format|include|send|schedule|suggest|add|keep|ask)\b", _USER),
        ("always-my", r"^\W*(?:please\s+)?(?:always|never)\s+[\w-]+\b[^.!?]*\b(?:me|my)\b", _USER),
        ("for-x-i-like", r"^\W*for\s+[\w\s-]{2,30},\s*i\s+(?:really\s+)?(?:like|prefer|want|need|love)\b", _USER),
        ("when-you-talk-to-me", r"^\W*(?:please\s+)?(?:always\s+)?(?:use|write|reply|answer|respond|speak|talk|format)\b[^.!?]*\bwhen\s+(?:you\s+)?(?:talk|write|reply|speak|respond|answer)(?:ing)?\s+to\s+me\b", _USER),
        ("in-future-please", r"^\W*(?:in (?:the )?future|from now on|going forward|by default),?\s+please\b", _USER),
        ("should-always", r"\b(?:should|must)\s+always\s+be\b[^.!?]*\bfor me\b", _USER),
        ("stop-doing", r"^\W*(?:please\s+)?stop\s+\w+ing\b[^.!?]*\b(?:me|my|i)\b", _USER),
        ("from-now-on", r"^\W*(?:and\s+)?(?:from now on|by default|in future)\b,?\s+(?:please\s+)?(?:always\s+|never\s+)?(?:use|write|answer|reply|respond|show|give|format|include|keep|call|address|put|don't|do not)\b", _USER),
        ("call-me", r"^\W*(?:please\s+)?(?:call|address)\s+me\b", _USER),
        ("use-not", r"^\W*(?:please\s+)?(?:use|write|give me|show me)\s+[^.!?]{1,40}\b(?:not|instead of|rather than|over)\b[^.!?]*\b(?:my|me)\b", _USER),
        ("i-want", r"\bi\s+(?:always\s+)?(?:want|'d like|would like|need)\b[^.!?]*\b(?:always|never|instead of|rather than|by default|from now on)\b", _USER),
        ("i-want", r"\bi\s+(?:want|'d like|would like)\s+(?:all\s+)?(?:[\w-]+\s+){0,3}(?:to be|shown|written|formatted|in)\b[^.!?]*,\s*not\b", _USER),
        ("i-want-all", r"\bi(?:'d like| would like| want)\s+all\s+", _USER),
        ("i-always-want", r"\bi\s+always\s+(?:want|use|like|need|prefer)\b", _USER),
        ("keep-responses", r"^\W*(?:please\s+)?keep\s+(?:your\s+)?(?:responses|answers|replies|messages|summaries|it)\s+(?:under|below|short|brief|concise|to)\b", _USER),
        ("diet", r"\bi(?:'m| am)\s+(?:a\s+)?(?:vegetarian|vegan|pescatarian|teetotal|teetotaller|gluten-free|lactose intolerant|kosher|halal)\b", _USER),
        ("you-prefer", r"\byou(?:\s+prefer|\s+like|\s+want|'d rather|\s+would rather|'d prefer|\s+would prefer)\b", _ASSIST),
        ("you-prefer", r"\byour\s+preference\b", _ASSIST),
        ("no-x", r"^\W*no\s+\w+\s+in\s+anything\b", _USER),
    ],
    "failure": [
        ("label", rf"^\W*(?:root cause|postmortem|post-mortem|incident|what broke|failure|outage|bug){_LABEL_END}", _BOTH),
        ("root-cause-of", r"^\W*(?:the\s+)?root cause\s+of\s+[^:.!?]{1,60}:\s*\S", _BOTH),
        ("errors-caused-by", r"\b(?:\d{3}s|errors?|crash(?:es)?|timeouts?|failures?|outages?|bugs?|leaks?|downtime|slowdowns?|exceptions?)\s+(?:were|was)\s+(?:all\s+)?caused\s+by\b", _BOTH),
        ("x-failed-because",
         r"\b(?:failed|fails|broke|(?:was|were|is|are|got|been) broken|(?:was|were|kept) (?:failing|crashing|breaking|hanging|timing out)|crashed|crashes|went down|was down|died|leaked|leaks|corrupted|bounced|timed out|stopped working|wouldn't start|won't start|didn't work|ran late|lost|kept (?:timing out|dropping|failing|crashing|breaking|restarting))\b"
         r"[^.!?]*?\b(?:because|due to|caused by|since the|the cause|root cause|culprit|turned out|came from|fixed (?:it|by|in|with)|the fix)\b", _BOTH),
        ("the-x-was-caused",
         r"\b(?:the|a|an|our|my|this)\s+(?:[\w-]+\s+){0,2}(?:failure|crash|outage|bug|regression|incident|leak|error|downtime|problem|issue|breakage)\s+"
         r"(?:was|were|is|turned out|came|happened|had been)\s+(?:(?:caused|due|because|from|to be|an?|the)\b)", _BOTH),
        ("found-it", r"^\W*found it\W+[^.!?]*\b(?:caused by|because|due to)\b", _BOTH),
        ("root-cause-was", r"\b(?:the|its|our)\s+(?:root\s+)?cause\s+(?:was|turned out to be)\b", _BOTH),
    ],
    "lesson": [
        ("lessons-learned", r"\blessons?\s+(?:learned|learnt)\b", _BOTH),
        ("label", rf"^\W*(?:(?:key|main|big|the|one|important|retro)\s+)?(?:lesson|takeaway)s?\b(?:\s+(?:for next time|from (?:the|this|that)\s+\w+))?{_LABEL_END}", _BOTH),
        ("takeaway-is", r"\b(?:the|my|our|key|retro)\s+takeaway\s*(?:is|was|:|for next time)", _BOTH),
        ("note-to-self", r"^\W*note to (?:self|future me|my future self)\s*(?::|—|–|-)\s*(?:\S+\s+){3,}", _USER),
        ("next-time-i", r"\bnext time\b(?:[^.?!,]{0,40},)?\s*(?:i|we)(?:'ll| will| should| must| need to| have to|'d| would| am going to| are going to)\b", _BOTH),
        ("should-have", r"\b(?:i|we)\s+(?:should|shouldn't|should not)\s*(?:have|'ve)\s+(?:[\w-]+ed|been|done|known|read|told|taken|written|run|built|gone|seen|kept|made|set|put|got|gotten|begun|bought|paid|sent|asked|thought|spoken|checked)\b", _BOTH),
        ("i-learned", r"\b(?:i|we)\s+(?:have\s+|'ve\s+)?(?:learned|learnt|realized|realised)\s+(?:that|to|the hard way|(?:that\s+)?(?:i|we)\s+(?:need|should|must|have to))\b", _BOTH),
        ("the-hard-way", r"\b(?:i|we)\s+(?:found out|discovered|learned|learnt)\s+the hard way\b", _BOTH),
        ("in-the-future-we", r"\bin (?:the )?future,?\s+(?:i|we)\s+(?:need|should|must|will|'ll|have to|want to)\b", _BOTH),
        ("never-again", r"\bnever again\b", _USER),
        ("what-i-learned", r"^\W*what\s+(?:i|we)\s+(?:have\s+|'ve\s+)?(?:learned|learnt)(?:\s+from\s+[^:.!?]{1,40})?\s*:", _BOTH),
        ("do-differently", r"\bwhat (?:i|we)(?:'d| would)\s+do differently\b", _BOTH),
        ("mistake", r"\b(?:mistake|error)s?\s+(?:i|we)\s+(?:won't|will not|will never)\s+(?:repeat|make)\b", _BOTH),
        ("mistake", r"\b(?:i|we)\s+(?:won't|will not|will never)\s+(?:make|repeat)\s+(?:that|this|the same)\s+mistake\b", _BOTH),
        ("going-forward-always", r"\bgoing forward,?\s+(?:always|never|make sure|double-check)\b", _BOTH),
    ],
    "remember": [
        ("remember-that", r"^\W*(?:(?:please|and|also|oh|so|ok|okay)\W+){0,2}(?:remember|memori[sz]e)\b(?:\s*[:,—–]|\s+(?:that|this|these|for|my|our|i\b|i'm|we|we're|how|where|which|the fact))(?!\W*remember\b)", _USER),
        ("please-remember", r"\b(?:please|i want you to|i need you to|make sure (?:you|to)|you should|can you|could you|you must|always)\s+(?:always\s+)?(?:remember|memori[sz]e)\b(?!\s+to\b)", _USER),
        ("dont-forget", r"^\W*(?:please\s+)?(?:don't|do not|never)\s+forget\b(?:\s+(?:that|this|these)\b|\s*[:,—–])", _USER),
        ("keep-in-mind", r"^\W*(?:please\s+)?(?:always\s+)?keep in mind\b", _USER),
        ("make-a-note", r"\b(?:make|take)\s+a\s+note\b(?!\s+of\s+(?:the time|it for today))", _USER),
        ("note-for-later", r"\bnote\s+(?:this\s+|that\s+)?(?:down\s+)?for\s+(?:later|the future|future|next time)\b", _USER),
        ("for-future-reference", r"\b(?:for future reference|for the record)\b", _USER),
        ("save-to-memory", r"\b(?:save|store|add|put|write|commit|keep|file)\s+(?:this|that|it|these)?\s*(?:down\s+)?(?:to|in|into)\s+(?:your\s+)?(?:long-term\s+|core\s+|permanent\s+)?(?:memory|memories|notes)\b", _USER),
        ("write-down", r"\bwrite\s+(?:this|that|it)\s+down\b", _USER),
    ],
}

# Negative patterns per trigger: a sentence matching one is not that trigger.
DEFAULT_EXCLUDES: dict[str, list[str]] = {
    "decision": [
        r"\b(?:need|needs|have|has|got|going|want|wants|plan|planning|try|trying|yet)\s+to\s+(?:decide|choose|pick|agree|settle)\b",
        r"\b(?:can't|cannot|couldn't|can not|could not)\s+(?:decide|choose|pick|agree)\b",
        r"\b(?:haven't|hasn't|hadn't|have not|has not|not|never|didn't|did not|yet to|nothing)\b[^.!?]{0,20}\b(?:decided|agreed|chosen|settled|picked)\b",
        r"\b(?:undecided|tbd|to be decided|torn between)\b",
        r"\b(?:were|was)\s+going\s+to\b",
        r"\bdecided\s+(?:to\s+)?(?:get|grab|order|have)\s+(?:pizza|lunch|dinner|breakfast|coffee|sushi|takeout|drinks)\b",
    ],
    "milestone": [
        r"\b(?:will|'ll|going to|gonna|plan(?:ning)? to|planned to|about to|aim(?:ing)? to|hope|hopefully|almost|nearly|not yet|once|until|by the end|supposed to|should be|expected to|scheduled)\b",
        r"\b(?:haven't|hasn't|hadn't|have not|has not|didn't|did not|never|isn't|aren't|wasn't|weren't|not)\b",
        r"\b(?:tests?|checks?)\s+(?:passed|pass)\b|\b\d+\s+passed\b",
        r"\b(?:i'm|i am)\s+done\b",
    ],
    "preference": [
        r"\b(?:whichever|whatever)\s+you\b",
        r"\bnever\s+mind\b",
        r"\b(?:tonight|right now|for now|this time|just this once|for today)\b",
        r"\b(?:don't|do not)\s+have\s+a\s+(?:strong\s+)?preference\b",
    ],
    "failure": [
        r"\b(?:will|'ll|would|could|should|going to)\s+(?:fail|break|crash)\b",
        r"\b(?:will|'ll)\s+fail\b",
        r"\bthat's expected\b|\bexpected\b",
        r"\bcould (?:be|have been)\b",
        r"\bcause\s+(?:is|was)\s+(?:still\s+)?(?:unknown|unclear|a mystery|not (?:yet\s+)?(?:known|clear))\b",
    ],
    "lesson": [
        r"\bnext time (?:you|is|we meet|you're)\b",
    ],
    "remember": [
        r"\bremember\s+(?:to|when)\b",
        r"\bremind me\b",
    ],
}

# Guards for every trigger.
_QUESTION_START = re.compile(
    r"^\W*(?:(?:so|and|but|ok|okay|hey|also|then|wait)\W+)?"
    r"(?:(?:do|does|did|should|shall|can|could|would|will|is|are|was|were|have|has|had|am|may|must)(?:n't)?\s+"
    r"(?:i|we|you|they|it|he|she|the|this|that|there|anyone|anything|our|my|your)\b"
    r"|(?:what|why|how|when|where|which|who|whom|whose)\b(?![^:]{0,40}:))",
    re.IGNORECASE,
)
_CONDITION = re.compile(
    r"\b(?:if|when|whenever|once|unless|whether|in case|suppose|supposing|assuming|imagine|"
    r"hypothetically|what if|let's say|as soon as|until|in order to|as if)\b",
    re.IGNORECASE,
)
_SPECULATION = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|might|hopefully|not sure|i think|i guess|i suppose|"
    r"unsure|wondering|i wonder|presumably|apparently|seems like|seems to)\b",
    re.IGNORECASE,
)
_SPECULATION_APPLIES = frozenset({"decision", "milestone", "failure"})
_REPORTED = re.compile(
    r"\b(?:according to|reportedly|allegedly|(?:he|she|they|someone|somebody|everyone|everybody|people|"
    r"the article|the report|the news|the paper|the post|tom|anna)\s+(?:said|says|told|wrote|writes|"
    r"claims?|claimed|thinks?|thought|reckons?|tweeted|posted|announced|mentioned))\b",
    re.IGNORECASE,
)
_THIRD_PARTY_SUBJECT = re.compile(
    r"^\W*(?:(?:my|his|her|their|our|a)\s+(?:best\s+)?(?:friend|friends|sister|brother|mom|mum|mother|dad|"
    r"father|parents|neighbou?r|neighbou?rs|colleague|colleagues|coworker|coworkers|co-worker|boss|"
    r"manager|cousin|uncle|aunt|son|daughter|wife|husband|partner|kids?|competitors?|rivals?|"
    r"landlord|roommate|teacher|doctor)(?:'s)?\b|(?:he|she|they|someone|somebody|everyone|people|most people|"
    r"some people|users|customers)\b)",
    re.IGNORECASE,
)
_THIRD_PARTY_APPLIES = frozenset({"decision", "milestone", "preference", "failure", "lesson"})
_LOG_LINE = re.compile(
    r"^\W*(?:FAILED|PASSED|ERROR|Traceback|E\s{2,}|\$\s|>>>|at\s+\S+\(|\d+\s+(?:failed|passed)\b|"
    r"[\w./-]+\.(?:py|rs|js|ts|go|java|rb|c|cpp|h)(?::\d+|::))",
)

_FENCE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|„[^“”\n]*[“”]|«[^»\n]*»")
_QUOTE_LINE = re.compile(r"^[ \t]*>.*$", re.MULTILINE)
_INDENTED_CODE = re.compile(r"^(?: {4}|\t).*$", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n\s*\n|\n(?=\s*(?:[-*•]\s|\d+[.)]\s))|\n")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_WORD = re.compile(r"[A-Za-zÀ-ÿ0-9']+")
_ASCII_LETTERS_AND_SPACES = {c: None for c in range(128) if chr(c).isalpha() or chr(c).isspace()}


@dataclass(frozen=True)
class Rule:
    """One positive pattern of a trigger."""

    trigger: str
    name: str
    regex: re.Pattern[str]
    roles: tuple[str, ...]


@dataclass(frozen=True)
class Rules:
    """The compiled rules detection runs with; build them with `load_rules(config)`.

    `prefilter=False` tries every rule on every sentence: the slow reference the
    prefilter is tested against, with the same results.
    """

    patterns: tuple[Rule, ...]
    excludes: Mapping[str, tuple[re.Pattern[str], ...]]
    guards: tuple[re.Pattern[str], ...] = ()
    enabled: tuple[str, ...] = TRIGGERS
    min_words: int = MIN_WORDS
    max_words: int = MAX_WORDS
    prefilter: bool = True

    @cached_property
    def _by_role(self) -> dict[str, tuple[tuple[Rule, frozenset[str] | None], ...]]:
        # The rules each role may fire, in order, with the strings one of which a match needs.
        return {
            role: tuple(
                (rule, _needed_literals(rule.regex.pattern, rule.regex.flags))
                for rule in self.patterns
                if rule.trigger in self.enabled and role in rule.roles
            )
            for role in SPEAKING_ROLES
        }

    @cached_property
    def _literals(self) -> dict[str, frozenset[str]]:
        return {
            role: frozenset(lit for _, needs in rules for lit in needs or ())
            for role, rules in self._by_role.items()
        }

    def candidates(self, masked: str, role: str) -> list[Rule]:
        """The rules, in order, that may match a masked sentence said by `role`."""
        if not self.prefilter:
            return [rule for rule, _ in self._by_role[role]]
        folded = (masked if masked.isascii() else masked.translate(_ASCII_FOLD)).lower()
        present = {lit for lit in self._literals[role] if lit in folded}
        return [rule for rule, needs in self._by_role[role] if needs is None or not needs.isdisjoint(present)]


# --- prefilter --------------------------------------------------------------------
# Most sentences can match no rule. Each rule's regex is read once, with the stdlib's
# own parser, for literal strings one of which every match must contain; a rule is
# tried only when one of them is in the sentence. A pattern (or part of one) the
# reader cannot vouch for promises nothing, and such a rule is tried on every sentence.

# Under re.IGNORECASE these four non-ASCII letters match ASCII ones (a test checks this
# against every code point); they are folded before the case-insensitive substring test.
_ASCII_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})  # İ ı ſ, Kelvin sign


@lru_cache(maxsize=1024)
def _needed_literals(pattern: str, flags: int) -> frozenset[str] | None:
    """Lowercase ASCII strings one of which every match of the pattern contains, or None."""
    try:
        from re import _constants, _parser  # type: ignore[attr-defined]

        return _needs(_parser.parse(pattern, flags), _constants)
    except Exception:  # a parser that changed shape: no prefilter, never a wrong one
        return None


def _needs(items: Any, ops: Any) -> frozenset[str] | None:
    # Every item of a sequence must match, so any one item's promise holds for the whole:
    # keep the rarest. A run of ASCII literals is one string (zero-width items end a run).
    options: list[frozenset[str]] = []
    run: list[str] = []
    for op, arg in items:
        if op is ops.LITERAL and arg < 128:
            run.append(chr(arg).lower())
            continue
        if run:
            options.append(frozenset({"".join(run)}))
            run = []
        inner: frozenset[str] | None = None
        if op is ops.SUBPATTERN:
            inner = _needs(arg[-1], ops)
        elif op is ops.ATOMIC_GROUP:
            inner = _needs(arg, ops)
        elif op in (ops.MAX_REPEAT, ops.MIN_REPEAT, ops.POSSESSIVE_REPEAT) and arg[0] >= 1:
            inner = _needs(arg[2], ops)
        elif op is ops.BRANCH:
            branches = [_needs(branch, ops) for branch in arg[1]]
            if all(branch is not None for branch in branches):
                inner = frozenset().union(*branches)  # type: ignore[arg-type]
        if inner is not None:
            options.append(inner)
    if run:
        options.append(frozenset({"".join(run)}))
    # A string of n letters is about 10^n times rarer than one letter.
    return min(options, key=lambda needs: sum(0.1 ** len(lit) for lit in needs), default=None)


@dataclass(frozen=True)
class Detection:
    """A sentence that fired a trigger, with where it came from."""

    trigger: str
    text: str
    rule: str
    role: str | None = None
    turn_index: int | None = None
    source_turns: tuple[Any, ...] = ()
    session_id: str | None = None
    agent: str | None = None
    at: str | None = None
    context: str = ""
    also: tuple[str, ...] = field(default=())


def _compile(pattern: str, where: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.IGNORECASE)
    except (re.error, TypeError) as exc:
        raise ConfigError(f"{where}: invalid regular expression {pattern!r} ({exc})") from None


def _string_list(value: Any, where: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ConfigError(f"{where} must be a list of strings")
    if not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where} must be a list of strings")
    return list(value)


def load_rules(config: Any = None) -> Rules:
    """Default rules, extended or replaced by the config's `[triggers]` section.

    ```toml
    [triggers]
    enabled = ["decision", "failure"]     # default: all six
    guards = ["\\\\bjust kidding\\\\b"]      # extra negatives for every trigger
    [triggers.decision]
    patterns = ["\\\\bwe locked in\\\\b"]    # extra positives
    exclude = ["\\\\blunch\\\\b"]            # extra negatives
    replace = false                       # true: only the patterns listed here
    roles = ["user"]                      # who may say them (user, assistant)
    ```
    """
    section: Mapping[str, Any] = {}
    if config is not None:
        section = config.section("triggers") if hasattr(config, "section") else config
    if not isinstance(section, Mapping):
        raise ConfigError("[triggers] must be a table")
    known = {"enabled", "guards", "min_words", "max_words", "importance", "capture", *TRIGGERS}
    for key in section:
        if key not in known:
            raise ConfigError(f"[triggers]: unknown setting {key!r} (known: {', '.join(sorted(known))})")
    enabled = tuple(_string_list(section.get("enabled", list(TRIGGERS)), "[triggers] enabled"))
    for name in enabled:
        if name not in TRIGGERS:
            raise ConfigError(f"[triggers] enabled: unknown trigger {name!r} (use {', '.join(TRIGGERS)})")
    guards = tuple(_compile(p, "[triggers] guards") for p in _string_list(section.get("guards", []), "[triggers] guards"))
    try:
        min_words = int(section.get("min_words", MIN_WORDS))
        max_words = int(section.get("max_words", MAX_WORDS))
    except (TypeError, ValueError):
        raise ConfigError("[triggers] min_words and max_words must be integers") from None

    patterns: list[Rule] = []
    excludes: dict[str, tuple[re.Pattern[str], ...]] = {}
    for trigger in TRIGGERS:
        own = section.get(trigger, {})
        where = f"[triggers.{trigger}]"
        if not isinstance(own, Mapping):
            raise ConfigError(f"{where} must be a table")
        for key in own:
            if key not in ("patterns", "exclude", "replace", "roles"):
                raise ConfigError(f"{where}: unknown setting {key!r} (known: patterns, exclude, replace, roles)")
        roles_override = None
        if "roles" in own:
            roles_override = tuple(_string_list(own["roles"], f"{where} roles"))
            for role in roles_override:
                if role not in SPEAKING_ROLES:
                    raise ConfigError(f"{where} roles: {role!r} is not one of user, assistant")
        if not own.get("replace", False):
            for name, pattern, roles in DEFAULT_PATTERNS[trigger]:
                patterns.append(Rule(trigger, name, re.compile(pattern, re.IGNORECASE), roles_override or roles))
        for i, pattern in enumerate(_string_list(own.get("patterns", []), f"{where} patterns")):
            patterns.append(Rule(trigger, f"config-{i + 1}", _compile(pattern, f"{where} patterns"), roles_override or SPEAKING_ROLES))
        extra = [_compile(p, f"{where} exclude") for p in _string_list(own.get("exclude", []), f"{where} exclude")]
        defaults = [] if own.get("replace", False) else [re.compile(p, re.IGNORECASE) for p in DEFAULT_EXCLUDES[trigger]]
        excludes[trigger] = tuple(defaults + extra)
    return Rules(tuple(patterns), excludes, guards, enabled, min_words, max_words)


_DEFAULT_RULES: Rules | None = None


def default_rules() -> Rules:
    global _DEFAULT_RULES
    if _DEFAULT_RULES is None:
        _DEFAULT_RULES = load_rules(None)
    return _DEFAULT_RULES


# --- sentences --------------------------------------------------------------------


def _blank(match: re.Match[str]) -> str:
    # Same length, newlines kept, so spans in the masked text are spans in the original.
    return "".join("\n" if ch == "\n" else " " for ch in match.group(0))


def mask(text: str) -> str:
    """Blank out code and quoted text (same length) and straighten apostrophes."""
    masked = text.replace("’", "'").replace("‘", "'")
    for pattern in (_FENCE, _INDENTED_CODE, _QUOTE_LINE, _INLINE_CODE, _QUOTED):
        masked = pattern.sub(_blank, masked)
    return masked


def sentences(text: str) -> list[tuple[str, str]]:
    """Split text into (original sentence, masked sentence) pairs."""
    masked = mask(text)
    out: list[tuple[str, str]] = []
    start = 0
    for boundary in list(_SENTENCE_END.finditer(masked)) + [None]:
        end = boundary.start() if boundary else len(masked)
        if boundary is not None and boundary.end() <= start:
            continue
        piece_masked = masked[start:end]
        piece = text[start:end]
        start = boundary.end() if boundary else len(masked)
        bullet = _BULLET.match(piece_masked)
        if bullet:
            piece_masked, piece = piece_masked[bullet.end():], piece[bullet.end():]
        if piece_masked.strip():
            out.append((piece.strip(), piece_masked.strip()))
    return out


def _is_question(masked: str) -> bool:
    stripped = masked.rstrip(" \t\"')]}*_")
    return stripped.endswith("?") or bool(_QUESTION_START.match(masked))


def _looks_like_code(original: str, masked: str) -> bool:
    if _LOG_LINE.match(original):
        return True
    # Dropping ASCII letters and spaces in C first leaves few characters to count in Python.
    rest = masked.translate(_ASCII_LETTERS_AND_SPACES)
    letters = len(masked) - len(rest) + sum(ch.isalpha() or ch.isspace() for ch in rest)
    return letters < 0.75 * len(masked)


def classify(text: str, role: str | None = USER, rules: Rules | None = None) -> list[tuple[str, str]]:
    """The triggers a text fires, best first, as (trigger, rule name) pairs."""
    rules = rules or default_rules()
    role = USER if role is None else role
    if role not in SPEAKING_ROLES:
        return []
    found: list[tuple[str, str]] = []
    for original, masked in sentences(strip_envelopes(text).text):
        found.extend(_classify_masked(original, masked, role, rules))
    return _ordered(found)


def _ordered(found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for trigger, rule in found:
        seen.setdefault(trigger, rule)
    return sorted(seen.items(), key=lambda item: PRIORITY.index(item[0]))


def _classify_masked(original: str, masked: str, role: str, rules: Rules) -> list[tuple[str, str]]:
    candidates = rules.candidates(masked, role)
    if not candidates:  # the checks below only ever reject a hit; with no rule to try there is none
        return []
    words = _WORD.findall(masked)
    if not (rules.min_words <= len(words) <= rules.max_words):
        return []
    if _is_question(masked) or _looks_like_code(original, masked):
        return []
    if any(guard.search(masked) for guard in rules.guards):
        return []
    hits: list[tuple[str, str]] = []
    for rule in candidates:
        match = rule.regex.search(masked)
        if not match:
            continue
        # Most sentences match nothing, so the guards below run only for a match.
        if _REPORTED.search(masked) or _CONDITION.search(masked[: match.start()]):
            continue
        if rule.trigger in _THIRD_PARTY_APPLIES and _THIRD_PARTY_SUBJECT.match(masked):
            continue
        if rule.trigger in _SPECULATION_APPLIES and _SPECULATION.search(masked):
            continue
        if any(ex.search(masked) for ex in rules.excludes.get(rule.trigger, ())):
            continue
        hits.append((rule.trigger, rule.name))
    return hits


# --- turns ------------------------------------------------------------------------


def _field(turn: Any, *names: str) -> Any:
    for name in names:
        if isinstance(turn, Mapping):
            if turn.get(name) is not None:
                return turn[name]
        elif getattr(turn, name, None) is not None:
            return getattr(turn, name)
    return None


def detect(text: str, role: str | None = USER, rules: Rules | None = None) -> list[Detection]:
    """Every trigger sentence in one text said by one role."""
    return detect_triggers([{"role": role or USER, "content": text}], rules=rules)


def detect_triggers(turns: Iterable[Any], rules: Rules | None = None) -> list[Detection]:
    """Scan conversation turns (dicts or objects with role and content/text) for triggers.

    Only user and assistant turns are read; tool output, system prompts and the like
    never make a trigger. A harness's envelope (OpenClaw's timestamp prefix, channel
    metadata, Claude Code's system reminders) is taken off first. Each detection keeps
    the id of the turn it came from.
    """
    rules = rules or default_rules()
    detections: list[Detection] = []
    for index, turn in enumerate(turns):
        role = _field(turn, "role")
        role = USER if role is None else str(role).lower()
        if role not in SPEAKING_ROLES:
            continue
        text = _field(turn, "content", "text")
        if not isinstance(text, str) or not text.strip():
            continue
        text = strip_envelopes(text).text  # "[Sat 2026-11-28 19:00 GMT+1] remember that …"
        turn_id = _field(turn, "id", "uid", "turn_id", "key")
        parts = sentences(text)
        for position, (original, masked) in enumerate(parts):
            found = _ordered(_classify_masked(original, masked, role, rules))
            if not found:
                continue
            trigger, rule = found[0]
            detections.append(
                Detection(
                    trigger=trigger,
                    text=original,
                    rule=rule,
                    role=role,
                    turn_index=index,
                    source_turns=(turn_id,) if turn_id is not None else (),
                    session_id=_field(turn, "session_id"),
                    agent=_field(turn, "agent"),
                    at=_iso_or_none(_field(turn, "created_at", "at", "ts", "timestamp")),
                    context=_context(parts, position),
                    also=tuple(t for t, _ in found[1:]),
                )
            )
    return detections


def _iso_or_none(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else str(value)


def _context(parts: list[tuple[str, str]], position: int, limit: int = 400) -> str:
    """The sentence, followed by the next ones when it is a bare label ("What broke: X.")."""
    text = parts[position][0]
    following = parts[position + 1 :]
    while following and len(_WORD.findall(text)) < 12 and len(text) < limit:
        text = f"{text} {following[0][0]}"
        following = following[1:]
    return text[:limit]


# --- committing -------------------------------------------------------------------


def check_trigger(trigger: Any) -> str:
    if trigger not in TRIGGERS:
        raise InvalidInput(f"unknown trigger {trigger!r}: use one of {', '.join(TRIGGERS)}")
    return str(trigger)


def _importance(brain: Brain, importance: float | None) -> float:
    if importance is not None:
        return importance
    section = brain.config.section("triggers")
    value = section.get("importance", IMPORTANCE)
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"[triggers] importance = {value!r} must be a number from 0 to 1") from None
    if not 0 <= value <= 1:
        raise ConfigError(f"[triggers] importance = {value!r} must be a number from 0 to 1")
    return value


def commit(
    brain: Brain,
    trigger: str,
    text: str,
    title: str | None = None,
    tags: Sequence[str] | None = None,
    importance: float | None = None,
    project: str | None = None,
    session_id: str | None = None,
    agent: str | None = None,
    source_turns: Sequence[Any] | None = None,
    at: Any = None,
    rule: str | None = None,
) -> Stored:
    """Write a trigger to core: kind = the trigger, high importance, provenance, never expiring.

    A near-identical core memory (the same fact restated, see curation) is updated
    instead of duplicated: tags and source turns are merged, importance kept at the
    higher, and the count of restatements goes up. Returns what `Brain.store` did:
    "added", "updated", or "unchanged" (the same text, already committed with as much).
    """
    trigger = check_trigger(trigger)
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("the text to commit is empty: say what was decided, learned, …")
    if project is not None and (not isinstance(project, str) or not project.strip()):
        raise InvalidInput("project must be a non-empty name")
    metadata: dict[str, Any] = {"trigger": trigger}
    if project:
        metadata["project"] = project.strip()
    if source_turns:
        metadata["source_turns"] = [str(t) for t in source_turns]
    if rule:
        metadata["rule"] = rule
    item: dict[str, Any] = {
        "content": text,
        "category": "core",
        "kind": trigger,
        "title": title,
        "tags": [] if tags is None else tags,
        "importance": _importance(brain, importance),
        "metadata": metadata,
        "source": "trigger",
        "agent": agent,
        "session_id": session_id,
        "created_at": iso(parse_time(at)) if at is not None else None,
    }
    return brain.store({k: v for k, v in item.items() if v is not None}, merge_exact=True, near=True)


def commit_detections(brain: Brain, detections: Iterable[Detection]) -> dict[str, Any]:
    """Commit each detection to core; returns counts and the memories touched."""
    counts = {"added": 0, "updated": 0, "unchanged": 0}
    memories: list[Memory] = []
    for detection in detections:
        result = commit(
            brain,
            detection.trigger,
            detection.context or detection.text,
            session_id=detection.session_id,
            agent=detection.agent,
            source_turns=detection.source_turns,
            at=detection.at,
            rule=detection.rule,
        )
        counts[result.action] += 1
        memories.append(result.memory)
    return {**counts, "memories": memories}


def commit_new_turns(brain: Brain, turns: Iterable[Any]) -> dict[str, Any]:
    """Capture's hook: commit the triggers found in turns it has just stored.

    `[triggers] capture = false` turns it off. Call it after the turns' transaction
    (commit embeds, and an API call must not hold the write lock).
    """
    if not brain.config.section("triggers").get("capture", True):
        return {"detections": 0, "added": 0, "updated": 0, "unchanged": 0, "memories": []}
    detections = detect_triggers(turns, rules=load_rules(brain.config))
    return {"detections": len(detections), **commit_detections(brain, detections)}


# --- sweeping conversation memories -------------------------------------------------

# The chunker renders each turn as "role: text" (or "role (speaker): text"); tool
# results as "tool name(args): ..." and an assistant's calls as "→ name(args)" lines.
_ROLE_LINE = re.compile(
    r"^(?:(user|assistant|summary|system)(?: \([^)\n]*\))?|(tool)(?: [^\n]*?)?):(?:[ \t]|$)", re.MULTILINE
)


def turns_of(content: str) -> list[dict[str, str]]:
    """Split a conversation memory back into its turns (role and text)."""
    marks = list(_ROLE_LINE.finditer(content))
    if not marks:
        return [{"role": USER, "content": content}]
    turns = []
    for mark, following in zip(marks, marks[1:] + [None]):
        end = following.start() if following else len(content)
        text = content[mark.end() : end]
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("→"))
        turns.append({"role": mark.group(1) or mark.group(2), "content": text.strip()})
    return turns


SWEEP_SQL = """
SELECT * FROM memories
WHERE category = 'conversation' AND created_at >= ? AND id > ?
ORDER BY id
LIMIT ?
"""


def sweep(brain: Brain, since: Any = "1d", rules: Rules | None = None, batch: int = 200) -> dict[str, Any]:
    """Scan conversation memories created since `since` ("1d", "12h", or a time) and
    commit the triggers found in them. Running it twice adds nothing new."""
    rules = rules or load_rules(brain.config)
    start = parse_since(since, brain.clock.now())
    scanned, found = 0, 0
    totals = {"added": 0, "updated": 0, "unchanged": 0}
    last_id = 0
    while True:
        rows = brain.db.rows(SWEEP_SQL, (iso(start), last_id, batch))
        if not rows:
            break
        last_id = rows[-1]["id"]
        for row in rows:
            memory = Memory.from_row(row)
            scanned += 1
            turns = [
                {**t, "id": memory.uid, "session_id": memory.session_id, "agent": memory.agent, "at": memory.created_at}
                for t in turns_of(memory.content)
            ]
            detections = detect_triggers(turns, rules=rules)
            found += len(detections)
            result = commit_detections(brain, detections)
            for key in totals:
                totals[key] += result[key]
    return {"since": iso(start), "scanned": scanned, "detections": found, **totals}
