"""The triggers' rules: the patterns each trigger fires on, the excludes that overrule
them, and `load_rules`, which extends or replaces them from the config's `[triggers]`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from ..settings import SPEAKING_ROLES, TRIGGERS, TriggerSettings, TriggerTable
from .prefilter import ASCII_FOLD, needed_literals

# When one sentence fires several triggers, the first in this order wins: an explicit
# "remember" request beats everything, and preference patterns are the most generic.
PRIORITY = ("remember", "failure", "lesson", "decision", "milestone", "preference")

USER, ASSISTANT = SPEAKING_ROLES
DEFAULTS = TriggerSettings()

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


@dataclass(frozen=True)
class Rule:
    """One positive pattern of a trigger."""

    trigger: str
    name: str
    regex: re.Pattern[str]
    roles: tuple[str, ...]


@dataclass(frozen=True)
class Rules:
    """The compiled rules detection runs with; build them with `load_rules(config.triggers)`.

    `prefilter=False` tries every rule on every sentence: the slow reference the
    prefilter is tested against, with the same results.
    """

    patterns: tuple[Rule, ...]
    excludes: Mapping[str, tuple[re.Pattern[str], ...]]
    guards: tuple[re.Pattern[str], ...] = ()
    enabled: tuple[str, ...] = TRIGGERS
    min_words: int = DEFAULTS.min_words
    max_words: int = DEFAULTS.max_words
    prefilter: bool = True

    @cached_property
    def _by_role(self) -> dict[str, tuple[tuple[Rule, frozenset[str] | None], ...]]:
        # The rules each role may fire, in order, with the strings one of which a match needs.
        return {
            role: tuple(
                (rule, needed_literals(rule.regex.pattern, rule.regex.flags))
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
        folded = (masked if masked.isascii() else masked.translate(ASCII_FOLD)).lower()
        present = {lit for lit in self._literals[role] if lit in folded}
        return [rule for rule, needs in self._by_role[role] if needs is None or not needs.isdisjoint(present)]


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def load_rules(settings: TriggerSettings | None = None) -> Rules:
    """The built-in rules, extended or replaced by the config's `[triggers]` (its patterns
    were checked when the config was read).

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
    settings = settings or DEFAULTS
    patterns: list[Rule] = []
    excludes: dict[str, tuple[re.Pattern[str], ...]] = {}
    for trigger in TRIGGERS:
        own = settings.own.get(trigger) or TriggerTable()
        if not own.replace:
            for name, pattern, roles in DEFAULT_PATTERNS[trigger]:
                patterns.append(Rule(trigger, name, _compile(pattern), own.roles or roles))
        for i, pattern in enumerate(own.patterns):
            patterns.append(Rule(trigger, f"config-{i + 1}", _compile(pattern), own.roles or SPEAKING_ROLES))
        defaults = [] if own.replace else [_compile(p) for p in DEFAULT_EXCLUDES[trigger]]
        excludes[trigger] = tuple(defaults + [_compile(p) for p in own.exclude])
    return Rules(tuple(patterns), excludes, tuple(_compile(p) for p in settings.guards), settings.enabled,
                 settings.min_words, settings.max_words)


_DEFAULT_RULES: Rules | None = None


def default_rules() -> Rules:
    global _DEFAULT_RULES
    if _DEFAULT_RULES is None:
        _DEFAULT_RULES = load_rules(None)
    return _DEFAULT_RULES
