"""A conversation in LoCoMo-10's shape (two sessions, five turns) for the benchmarks' tests."""

from __future__ import annotations

import copy
from typing import Any

CONVERSATION: dict[str, Any] = {
    "speaker_a": "Ada", "speaker_b": "Ben",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ada", "dia_id": "D1:1", "text": "I adopted a grey cat called Pixel last week."},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! Does Pixel like the garden?"},
        {"speaker": "Ada", "dia_id": "D1:3", "text": "She sleeps under the tomato plants all day."},
    ],
    "session_2_date_time": "7:55 pm on 9 June, 2023",
    "session_2": [
        {"speaker": "Ben", "dia_id": "D2:1", "text": "I started rowing on the river on Saturdays."},
        {"speaker": "Ada", "dia_id": "D2:2", "text": "Rowing sounds hard on the arms!"},
    ],
}


def sample(sample_id: str, qa: list[dict[str, Any]]) -> dict[str, Any]:
    """One LoCoMo sample: the conversation above (a copy, free to change) and `qa`."""
    return {"sample_id": sample_id, "conversation": copy.deepcopy(CONVERSATION), "qa": qa}
