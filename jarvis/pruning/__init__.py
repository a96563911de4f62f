"""Output pruning for `context_focus_question`: the request pipeline and its pruners (seed 004).

`pipeline.focus` runs one tool call through validate -> execute -> prune check -> pruner -> answer;
`pruners` holds the built-in (offline BM25 + structure) and HTTP (swe-pruner contract) pruners;
`http_server` serves the built-in pruner over that contract (`jarvis pruner serve`).
"""

from jarvis.pruning.pipeline import FocusQuestion, Request, ToolOutput, focus

__all__ = ["FocusQuestion", "Request", "ToolOutput", "focus"]
