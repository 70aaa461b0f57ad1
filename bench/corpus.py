"""The benchmarks' texts: ten fixed voice-assistant replies, and replies never said before."""

from __future__ import annotations

import random

REPLIES: tuple[str, ...] = (
    "Sure, I can help with that. Your next meeting is at 3:30 with the design team.",
    "Okay, I've set a timer for ten minutes.",
    "It's currently 68 degrees and sunny in Seattle. Later today, expect clouds and a light "
    "breeze from the west. You won't need an umbrella.",
    "I found three Italian restaurants near you. The closest one, Luigi's, is about half a mile "
    "away and opens at five. Would you like me to book a table?",
    "Done! I've added milk, eggs, and bread to your shopping list.",
    "Your flight to Chicago leaves tomorrow at 7:45 in the morning from gate B12. Traffic looks "
    "light, so leaving by six should be plenty. Do you want a reminder an hour before?",
    "Sorry, I didn't catch that. Could you say the name of the contact again?",
    "Here's what I found: the library is open until nine tonight, and it's closed on Sundays.",
    "Calling Mom now.",
    "You have two new messages. The first is from Alex, who says the package arrived. The second "
    "is from your bank, about a card payment of 42 dollars. Shall I read them in full?",
)
"""Agent replies of one to four sentences, in the order the benchmarks speak them."""

_NAMES = ("Hugo", "Helen", "Alice", "Omar", "Priya", "Jonas", "Mei", "Carlos", "Fatima", "Liam")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_THINGS = ("payment", "parcel", "appointment", "booking", "refund", "order", "subscription")
_TIMES = ("nine in the morning", "half past two", "a quarter to six", "noon", "seven tonight")
_AMOUNTS = ("thirty dollars and eleven cents", "forty two euros", "twelve pounds fifty")


def agent_reply(rng: random.Random) -> str:
    """A reply never spoken before, of one of the shapes language models write: a short opening
    clause then one long sentence ("Got it Hugo, I moved your payment to Thursday ..."), a long
    first sentence, or the corpus's own (short sentences), each with new names and figures."""
    name, day, thing = rng.choice(_NAMES), rng.choice(_DAYS), rng.choice(_THINGS)
    time_, amount, case = rng.choice(_TIMES), rng.choice(_AMOUNTS), rng.randrange(10**5)
    shape = rng.random()
    if shape < 0.5:
        opener = rng.choice(("Got it", "Right", "Sure", "Okay", "Perfect"))
        return (
            f"{opener} {name}, I moved your {thing} of {amount} to {day} at {time_}, and the "
            f"confirmation number for it is {case}, which I have also sent to your email. Is "
            "there anything else I can help you with today?"
        )
    if shape < 0.75:
        return (
            f"Your {thing} number {case} for {name} was approved on {day} at {time_} and will "
            f"be charged {amount} once the partner bank confirms the transfer, which usually "
            f"takes one or two working days. Do you want me to add {name} to the {thing} too?"
        )
    return f"{rng.choice(REPLIES)} Reference {case}, {name}."
