"""The English text every tiny tokenizer is trained on: fixed paragraphs plus seeded template
sentences, so the same seed always gives the same vocabulary."""

from __future__ import annotations

import random

_BASE_TEXT = """\
You are a careful judge. Read the question, look at the evidence, and answer YES or NO.
The user asks whether the video shows a red car turning left at the crossing.
The assistant answers with a short verdict and a reason that cites the evidence.
A system message sets the rules: be strict, be brief, and never guess.
Listen to the audio clip and tell me if a dog is barking in the background.
Look at the image. Is there a person wearing a blue jacket near the window?
The answer must be a single word: YES or NO. Do not explain unless asked.
Evaluate the response on accuracy, relevance, completeness and clarity, from 1 to 5.
The model cited second 12.5 of the clip, where the speaker says "good morning".
Return JSON such as {"verdict": "YES", "score": 4, "reason": "the car turns left"}.
Frames are sampled at two frames per second; audio is mono at sixteen kilohertz.
Question: Does the narrator mention the weather? Answer: NO.
Question: Is the ball in the air at 00:07? Answer: YES.
The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs.
It was a bright cold day in April, and the clocks were striking thirteen.
Numbers: 0 1 2 3 4 5 6 7 8 9 10 11 12 16 24 30 60 100 128 256 512 1000 2024 16000.
Punctuation: commas, periods. Questions? Exclamations! Colons: semicolons; quotes "like this"
and 'like that', (parentheses), [brackets], {braces}, <angles>, slashes / \\ | dashes - _ +
Email the report to the team by Friday; include the table, the figure and the summary.
Is the claim supported by the transcript? The transcript says the meeting starts at noon.
"""

_SUBJECTS = [
    "the user",
    "the assistant",
    "the system",
    "the judge",
    "the model",
    "a speaker",
    "the narrator",
    "a woman",
    "a man",
    "the child",
    "the camera",
    "the video",
    "the image",
    "the audio",
    "the caption",
    "the answer",
    "the evidence",
    "the transcript",
    "the player",
    "the teacher",
    "a student",
    "the driver",
    "the dog",
    "a bird",
    "the crowd",
    "the reporter",
]
_VERBS = [
    "says",
    "shows",
    "asks",
    "answers",
    "describes",
    "mentions",
    "points at",
    "looks at",
    "listens to",
    "reads",
    "writes",
    "explains",
    "claims",
    "denies",
    "confirms",
    "repeats",
    "ignores",
    "compares",
    "counts",
    "names",
    "finds",
    "misses",
    "hears",
    "sees",
    "opens",
]
_OBJECTS = [
    "the red car",
    "a blue jacket",
    "the window",
    "a loud noise",
    "the second frame",
    "the first sentence",
    "a short clip",
    "the question",
    "the final score",
    "the weather",
    "a green light",
    "the crossing",
    "the kitchen table",
    "an open door",
    "the white board",
    "the correct answer",
    "a wrong number",
    "the main claim",
    "the last word",
    "the music",
    "a ringing phone",
    "the title",
    "a small box",
    "the river",
    "the mountain",
    "the street",
]
_TAILS = [
    "at the start",
    "near the end",
    "after ten seconds",
    "in the background",
    "very clearly",
    "without any doubt",
    "for a moment",
    "twice",
    "once again",
    "in the middle of the video",
    "before the music stops",
    "while the camera moves",
    "on the left side",
    "on the right side",
]
_COMMON_WORDS = """
time year people way day man woman child world life hand part place case week company system
program question work government number night point home water room mother area money story
fact month lot right study book eye job word business issue side kind head house service
friend father power hour game line end member law car city community name president team
minute idea kid body information back parent face others level office door health person art
war history party result change morning reason research girl guy moment air teacher force
education foot boy age policy process music market sense nation plan college interest death
experience effect use class control care field development role effort rate heart drug show
leader light voice wife police mind price report decision son view relationship town road arm
difference value building action model season society tax director position player record
paper space ground form event official matter center couple site project activity star table
need court oil situation cost industry figure street image phone data picture practice piece
land product doctor wall patient worker news test movie north love support technology step
baby computer type attention film tree source organization hair window evidence population
site camera sound speech clip frame second screen color shape speaker listener narrator video
audio transcript caption subtitle scene shot signal noise silence volume pitch tone language
accent sentence paragraph chapter title summary answer verdict score judge rubric criterion
accuracy relevance clarity completeness consistency honesty safety quality error mistake
claim statement argument premise conclusion support contradiction agreement comparison
be have do say go get make know think take see come want look use find give tell ask seem
feel try leave call keep let begin help talk turn start show hear play run move like live
believe hold bring happen write provide sit stand lose pay meet include continue set learn
lead understand watch follow stop create speak read allow add spend grow open walk win offer
remember consider appear buy wait serve die send expect build stay fall cut reach kill remain
suggest raise pass sell require decide return explain hope develop carry break receive agree
describe mention cite check verify count measure compare judge rate rank score label detect
good new first last long great little own other old big high different small large next
early young important few public bad same able late hard major better economic strong
possible whole free military true federal international full special easy clear recent
certain personal open red difficult available likely short single medical current wrong
private past foreign fine common poor natural significant similar hot dead central happy
serious ready simple left physical general environmental financial blue democratic dark
various entire close legal religious cold final main green nice huge popular traditional
cultural wide loud quiet bright slow fast careful correct incorrect partial relevant
about after again against all almost also always among another any around because before
behind below between both during each either enough even ever every except far from here
however inside instead into just later least less maybe more most much near never nothing
now often only onto outside over perhaps quite rather really since so something sometimes
soon still such than that then there these they this those though through today together
too toward under until upon usually very what when where whether which while who whose why
with within without yet you your we our us he she it his her its them their my me I
one two three four five six seven eight nine ten hundred thousand million half quarter
Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May
June July August September October November December spring summer autumn winter weather
rain snow wind sun cloud storm river mountain forest ocean island desert valley bridge
kitchen garden school hospital library station airport museum restaurant market street
dog cat bird horse fish cow sheep lion tiger bear mouse rabbit duck chicken insect
apple bread cheese coffee tea milk rice soup sugar salt egg meat fruit vegetable water
shirt jacket hat shoe dress coat glove bag box cup plate bottle chair desk bed lamp clock
"""
_SUFFIXES = ["", "", "", "s", "ed", "ing", "ly", "er", "ness", "ment"]
_VERDICTS = ["YES", "NO", "Yes", "No", "yes", "no", "true", "false", "unsure"]
ROLES = ["system", "user", "assistant"]


def corpus_lines(seed: int, n_generated: int = 6000) -> list[str]:
    """Deterministic English text: a fixed paragraph set plus template sentences."""
    rng = random.Random(seed)
    lines = [line for line in _BASE_TEXT.splitlines() if line.strip()]
    words = _COMMON_WORDS.split()
    for i in range(n_generated):
        sentence = (
            f"{rng.choice(_SUBJECTS).capitalize()} {rng.choice(_VERBS)} "
            f"{rng.choice(_OBJECTS)} {rng.choice(_TAILS)}."
        )
        kind = i % 6
        if kind == 0:
            sentence = f"{rng.choice(ROLES)}: {sentence}"
        elif kind == 1:
            sentence += f" Verdict: {rng.choice(_VERDICTS)}."
        elif kind == 2:
            minute, second = rng.randint(0, 59), rng.randint(0, 59)
            sentence += f" Score {rng.randint(1, 5)} of 5 at {minute:02d}:{second:02d}."
        elif kind == 3:
            sentence = f'{{"verdict": "{rng.choice(_VERDICTS[:2])}", "reason": "{sentence}"}}'
        lines.append(sentence)
        # A free-form line drawn from the word list, with a few inflections.
        picked = [rng.choice(words) + rng.choice(_SUFFIXES) for _ in range(rng.randint(6, 14))]
        lines.append(" ".join(picked).capitalize() + rng.choice([".", "?", "!", ",", ";", ":"]))
    # Multi-line paragraphs, so runs of newlines get their own merges.
    for start in range(0, 600, 6):
        block = lines[start : start + 6]
        lines.append("\n".join(block[:3]) + "\n\n" + "\n".join(block[3:]) + "\n\n\n")
    # The role names must become single tokens (the Qwen config refers to them by id).
    lines.extend(" ".join(ROLES) for _ in range(50))
    lines.extend("\n".join(ROLES) for _ in range(50))
    return lines
