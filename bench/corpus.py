"""A fixed corpus of ten voice-assistant replies, the texts every benchmark speaks."""

from __future__ import annotations

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
