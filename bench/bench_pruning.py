"""How well `context_focus_question` pruning keeps the lines that answer the question, and at what cost.

    .venv/bin/python bench/bench_pruning.py [--cases] [--check]

For each case of bench/pruning/cases.json (a real output in bench/pruning/outputs/, a question, the hand-labelled
line numbers that answer it; an item that is a list means "any one of these lines"), and for each method:
- recall: share of answer items whose line survives (mean over cases; "all items" pools every item);
- tokens kept: tokens of the pruned text over tokens of the raw output (corpus total, and the mean over cases);
- ms per 1,000 lines: pruning time over the corpus's lines, as CPU time of this process (`time.process_time`: what
  pruning costs, the figure the target is judged on) and wall time (on a loaded machine it also measures the
  neighbours). The built-in pruner starts each case with an empty word cache, as a fresh question would. The one-off
  cost of its first question in a process (importing bm25s and numpy) is printed apart.
Methods: none (the raw output), bm25 (plain BM25 line ranking, kept to the built-in pruner's token count per case),
builtin (the built-in pruner) and http (JARVIS_PRUNER_URL, when set). Every third case is held out: the built-in
pruner was tuned on the others; figures are printed for both. Tokens are words and punctuation marks
(`\\w+|[^\\w\\s]`), a stand-in for a model's tokenizer. `--check` prints each case's labelled lines for review.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jarvis.pruning.builtin import _word_tokens, bm25_scores, prune_text, render  # noqa: E402
from jarvis.pruning.pruners import HttpPruner  # noqa: E402

CORPUS = ROOT / "bench" / "pruning"
TOKEN = re.compile(r"\w+|[^\w\s]")

Answer = int | list[int]


@dataclass
class Case:
    name: str
    question: str
    answers: list[Answer]
    text: str
    held_out: bool

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()


@dataclass
class Tally:
    recalls: list[float] = field(default_factory=list)
    items_kept: int = 0
    items: int = 0
    raw_tokens: int = 0
    kept_tokens: int = 0
    shares: list[float] = field(default_factory=list)
    lines: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    misses: list[str] = field(default_factory=list)

    def row(self, method: str) -> str:
        recall = sum(self.recalls) / len(self.recalls)
        share = self.kept_tokens / self.raw_tokens
        mean_share = sum(self.shares) / len(self.shares)
        wall = 1000 * 1000 * self.seconds / self.lines
        cpu = 1000 * 1000 * self.cpu_seconds / self.lines
        return (
            f"| {method} | {recall:.1%} | {self.items_kept}/{self.items} | {share:.1%} | {mean_share:.1%} "
            f"| {cpu:.1f} | {wall:.1f} |"
        )


def load_cases() -> list[Case]:
    listed = json.loads((CORPUS / "cases.json").read_text())
    return [
        Case(c["name"], c["question"], c["answers"], (CORPUS / "outputs" / f"{c['name']}.txt").read_text(), i % 3 == 2)
        for i, c in enumerate(listed)
    ]


def tokens(text: str) -> int:
    return len(TOKEN.findall(text))


def kept_items(case: Case, pruned: str) -> tuple[int, list[str]]:
    survived = {line.rstrip() for line in pruned.splitlines()}
    lines = case.lines
    kept, missed = 0, []
    for answer in case.answers:
        choices = answer if isinstance(answer, list) else [answer]
        if any(lines[n - 1].rstrip() in survived for n in choices):
            kept += 1
        else:
            missed.append(f"{case.name}:{choices[0]}: {lines[choices[0] - 1][:100]}")
    return kept, missed


def plain_bm25(case: Case, token_budget: int) -> str:
    """Lines by BM25 score alone, best first, until the budget; in their original order."""
    lines = case.lines
    scores = bm25_scores(lines, case.question)
    kept, spent = [], 0
    for index in sorted(range(len(lines)), key=lambda i: -scores[i]):
        if spent >= token_budget:
            break
        if lines[index].strip():
            kept.append(index)
            spent += tokens(lines[index])
    return render(lines, sorted(kept))


def measure(cases: list[Case], prune: Callable[[Case], str], tally: Tally) -> dict[str, str]:
    outputs = {}
    for case in cases:
        _word_tokens.cache_clear()
        started, cpu = time.perf_counter(), time.process_time()
        pruned = prune(case)
        tally.cpu_seconds += time.process_time() - cpu
        tally.seconds += time.perf_counter() - started
        outputs[case.name] = pruned
        kept, missed = kept_items(case, pruned)
        tally.recalls.append(kept / len(case.answers))
        tally.items_kept += kept
        tally.items += len(case.answers)
        tally.misses.extend(missed)
        raw, left = tokens(case.text), tokens(pruned)
        tally.raw_tokens += raw
        tally.kept_tokens += left
        tally.shares.append(left / raw)
        tally.lines += len(case.lines)
    return outputs


def run(cases: list[Case], show_misses: bool) -> None:
    methods: dict[str, Callable[[Case], str]] = {
        "none": lambda case: case.text,
        "builtin": lambda case: prune_text(case.text, case.question),
    }
    budgets = {c.name: tokens(prune_text(c.text, c.question)) for c in cases}
    methods["bm25"] = lambda case: plain_bm25(case, budgets[case.name])
    if os.environ.get("JARVIS_PRUNER_URL"):
        http = HttpPruner(os.environ["JARVIS_PRUNER_URL"], float(os.environ.get("JARVIS_PRUNER_TIMEOUT", "30")))
        methods["http"] = lambda case: http.prune(case.question, case.text)
    for title, subset in (
        ("tuning set", [c for c in cases if not c.held_out]),
        ("held-out set", [c for c in cases if c.held_out]),
        ("all cases", cases),
    ):
        lines = sum(len(c.lines) for c in subset)
        print(f"\n{title}: {len(subset)} cases, {lines:,} lines, {sum(len(c.answers) for c in subset)} answer items")
        print(
            "| method | recall (mean of cases) | answer items kept | tokens kept (total) | tokens kept (mean) "
            "| ms per 1,000 lines, CPU | ms per 1,000 lines, wall |"
        )
        print("|---|---|---|---|---|---|---|")
        for name in ("none", "bm25", "builtin", "http"):
            if name not in methods:
                continue
            tally = Tally()
            measure(subset, methods[name], tally)
            print(tally.row(name))
            if show_misses and name == "builtin" and tally.misses:
                print("  missed: " + "\n  missed: ".join(tally.misses))


def first_question_cost() -> str:
    """CPU and wall time of importing the built-in pruner in a fresh interpreter (Jarvis defers it to then)."""
    probe = (
        "import time; w, c = time.perf_counter(), time.process_time(); import jarvis.pruning.builtin; "
        "print(f'{1000 * (time.process_time() - c):.0f} ms CPU, {1000 * (time.perf_counter() - w):.0f} ms wall')"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    return done.stdout.strip()


def check(cases: list[Case]) -> None:
    for case in cases:
        print(f"== {case.name}{' (held out)' if case.held_out else ''}: {case.question}")
        for answer in case.answers:
            choices = answer if isinstance(answer, list) else [answer]
            print(f"  {choices[0]:>4}{'+' if len(choices) > 1 else ' '} {case.lines[choices[0] - 1][:140]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", action="store_true", help="list the answer lines the built-in pruner dropped")
    parser.add_argument("--check", action="store_true", help="print each case's labelled lines")
    args = parser.parse_args()
    cases = load_cases()
    if args.check:
        check(cases)
        return 0
    run(cases, args.cases)
    print(f"\nfirst question in a process (importing the built-in pruner): {first_question_cost()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
