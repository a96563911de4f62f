"""A tool's answer: the dense markdown an agent reads, optionally carrying the same result as data.

Handlers return `str`. One that has typed data to give programs (`JARVIS_OUTPUT=json`) returns an `Answer`:
still that `str`, so every caller and test that reads the text is unchanged, with `data` beside it. String
operations (`answer + "more"`) return a plain `str` and drop the data: append before wrapping.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class Answer(str):
    data: Mapping[str, Any]

    def __new__(cls, text: str, data: Mapping[str, Any]) -> Answer:
        answer = super().__new__(cls, text)
        answer.data = data
        return answer


def data_of(text: str) -> Mapping[str, Any]:
    """The answer's data, or the text itself for an answer that has no other shape."""
    return text.data if isinstance(text, Answer) else {"text": str(text)}
