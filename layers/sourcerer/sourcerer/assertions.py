"""What asserts something: the sentences of an answer that are claims to check (`verify.split_claims`), and the
sentences an extractive answer may add after its first. Questions, headings, greetings, pleasantries and sentences
about the passage itself are none (`is_assertion`)."""

from __future__ import annotations

import re

from sourcerer.sentences import is_heading, is_question

_CHIT_CHAT = re.compile(
    r"^\W*(?:hi|hello|hey|thanks?(?: you)?|you'?re welcome|sure|of course|certainly|great question|good question|"
    r"(?:i )?hope (?:this|that|it) helps|let me know|feel free|glad to help|happy to help|bonjour|merci|hola|gracias|"
    r"hallo|danke|bitte)\b",
    re.IGNORECASE,
)
# a speaker's greeting, at any length: "Welcome to the review of the March failover drill." opens a recording
# and answered "How long did the failover take?" beside the 42 seconds, as a second sentence sharing "failover"
_GREETING = re.compile(
    r"^\W*(?:welcome (?:to|back|everyone|all)|good (?:morning|afternoon|evening)|"
    r"bienvenue (?:à|au|aux|dans)|willkommen (?:zu|zum|zur|bei|in)|bienvenid[oa]s? (?:a|al))\b",
    re.IGNORECASE,
)
_ABOUT_THE_TEXT = re.compile(
    r"^\W*(?:the|this|these|that) (?:passages?|texts?|sources?|documents?|articles?|excerpts?|context|paragraphs?) "
    r"(?:(?:mainly|mostly|also|primarily) )?(?:discuss(?:es)?|describes?|talks? about|is about|are about|covers?|"
    r"deals? with|focus(?:es)? on|concerns?|is concerned with|provides? (?:information|details) (?:about|on))\b",
    re.IGNORECASE,
)


def is_assertion(text: str) -> bool:
    """Whether a sentence asserts something the sources could support: questions, headings,
    greetings and pleasantries, and sentences about the passage itself ("The passage discusses...") are not
    claims (nor is a title, which only its place in the answer tells: `sentences.states_nothing`)."""
    if is_question(text) or is_heading(text) or _ABOUT_THE_TEXT.match(text):
        return False
    return not (_CHIT_CHAT.match(text) and len(text.split()) <= 8 or _GREETING.match(text))
