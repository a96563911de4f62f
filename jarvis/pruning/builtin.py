"""The built-in pruner: the lines of a tool's output that answer a question, offline and in milliseconds.

Each line is scored by BM25 relevance to the question (`bm25s`, lines as documents), plus what generic ranking misses
in tool output: error, failure and exit lines (weighing more when the question asks about a failure), test names,
`file:line` references, and the innermost stack frame in the project's own code. Frames and locations inside libraries
or the runtime, lines repeating an earlier one but for their numbers, and lines of punctuation only (`^^^^`, `_ _ _`)
weigh little or nothing; a line shares in the scores of its informative neighbours.

Output is cut into blocks at the headers tools print, by level: a pytest or unittest section, a TAP subtest, a cargo
test's output, a docker build step, a git commit, a compiler or linter diagnostic; then a file of a diff, a hunk, a
definition in a hunk. When the question names something (an identifier, a quoted phrase) that block headers carry,
only those blocks compete. The best blocks are kept: whole when short, else their header and key lines (errors,
locations in the project's code, pytest's `>` and argument lines, lines scoring near the block's best) with their
neighbours. Then the best single lines elsewhere (a summary line, a log line) within a budget, with a traceback that
follows a kept line. Lines naming an error the question asks about are always kept. The result keeps the original
order, drops blank lines and replaces each run of dropped lines with `(filtered N lines)`.
"""

from __future__ import annotations

import collections
import functools
import logging
import re
from collections.abc import Sequence

import bm25s
import numpy as np

logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build at DEBUG

# Outputs with this few informative lines are returned whole: nothing worth cutting.
SMALL_OUTPUT_LINES = 6
# Share of the output's characters the single-line pass may keep.
BUDGET_SHARE = 0.06
MIN_BUDGET_CHARS = 300  # ... but at least this much (or a quarter of a short output)
# A line is a candidate when its score reaches this share of the best line's score.
RELATIVE_THRESHOLD = 0.35
# A block is kept when its score reaches this share of the best block's; at most this many blocks.
BLOCK_THRESHOLD = 0.75
MAX_BLOCKS = 4
BLOCK_WHOLE_LINES = 24  # a kept block with this few informative lines is kept whole
TRACEBACK_SCORE = 0.6  # a traceback right after a line scoring this share of the best is kept whole
KEY_SHARE = 0.5  # in a longer block, lines scoring this share of its best (or errors) are kept with their neighbours
UBIQUITOUS_SHARE = 0.5  # a question word on more than this share of the lines does not score
# How much output structure adds to a line's relevance (BM25 scores are scaled to 0..1 first). A question about a
# failure ("why does it fail", "what error") is answered by error lines first, so they weigh more then.
ERROR_WEIGHT = 0.35
FAILURE_ERROR_WEIGHT = 1.0
LOCATION_WEIGHT = 0.15
TEST_WEIGHT = 0.1
# The innermost frame of a stack trace in the project's own code: where an error meets the code being worked on.
USER_FRAME_WEIGHT = 0.5
LIBRARY_SHARE = 0.3  # a stack frame or location inside a library or runtime keeps this share of its score
REPEAT_SHARE = 0.25  # a line repeating an earlier one (digits aside) keeps this share, unless it has a number asked
# A line inherits this share of its neighbours' scores (distance 1, 2 among informative lines): answers come in
# small clusters, and a blank or a `^^^^` line between an error and its source line does not part them.
NEIGHBOUR_DECAY = (0.6, 0.35)
LONG_LINE = 400  # characters scored per line: a minified blob must not dominate the budget

_STOPWORD_TEXT = """a an and are as at be been but by can could did do does doing for from had has have how i if in into
is it its me my of on or our should so than that the their them then there these they this those to was we were what
when where which while who why will with would you your show tell give find see get list any all some only output
outputs log logs line lines happen happened happening"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_WORD = re.compile(r"[A-Za-z0-9_]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_SUFFIXES = ("ures", "ure", "ings", "ing", "ed", "es", "s")
_DIGITS = re.compile(r"\d+")

# Error, failure and exit lines: words matched in the lowercased text (a case-insensitive regex is several times
# slower), and marks whose case matters (errno names, pytest's `E` lines, `ReferenceError`) in the text as it is.
ERROR_WORDS = re.compile(
    r"\b(?:errors?|exception|traceback|fatal|panic(?:ked)?|fail(?:ed|ure|ures|s|ing)?|assert(?:ion)?\w*|"
    r"denied|refused|timed?\s?out|not found|no such|cannot|can't|couldn't|unable|invalid|segmentation|killed|"
    r"abort(?:ed)?|critical|crash\w*|exit(?:ed)? (?:code|status)|non-zero|oom)\b"
    r"|\bexited \([1-9]\d*\)"  # compose's `Exited (4)`
    r"|^\s*(?:✕|✗|×|not ok)\b|^npm (?:err!|error)",
    re.MULTILINE,
)
# A pattern that starts with a literal is searched for fast; `E(?<=\bE)` is `\bE` written so.
ERROR_MARKS = re.compile(r"E(?<=\bE)[A-Z]{3,}\b|^E\s|(?:Error|Exception)\b", re.MULTILINE)
# `path.py:12`, `File "path", line 12`, `(path:12:5)`; only which lines hold one matters, so no path is matched whole.
LOCATION = re.compile(r"\.\w{1,5}:\d+|File \"[^\"]+\", line \d+|:\d+:\d+\)")
# A location inside a library or the runtime: rarely where the fix goes, so a frame there weighs little.
LIBRARY = re.compile(
    r"site-packages/|dist-packages/|node_modules/|node:internal|/lib/python\d|\.pyenv/|/usr/lib/|<frozen |/rustc/"
)
TEST_NAME = re.compile(
    r"t(?<=\bt)est_?\w+|::\w+|T(?<=\bT)est[A-Z]\w*"
    r"|P(?<=\bP)ASS(?:ED)?\b|F(?<=\bF)AIL(?:ED)?\b|o(?<=\bo)k\b|n(?<=\bn)ot ok\b"
)
# Lines that open a block, by level: a block runs to the next header of the same or an outer level.
BLOCK_HEADERS = (
    re.compile(
        r"^_{3,} .+ _{3,}\s*$|^={3,}(?: .+ ={3,})?\s*$"  # pytest's sections and their headings, unittest's bars
        r"|^(?:FAIL|ERROR): "  # unittest
        r"|^-{4} .+ -{4}$"  # cargo test's captured output
        r"|^# Subtest: |^\s*● |^--- FAIL|^=== RUN"  # node's TAP, jest, go test
        r"|^Step \d+/\d+ :"  # docker build
        r"|^commit [0-9a-f]{7,}"  # git log
        r"|^(?:error|warning)(?:\[\w+\])?: |^[\w./-]+:\d+:\d+: (?:fatal error|error|warning): "  # compilers
        r"|^[A-Z]{1,4}\d{3,4} "  # linters
    ),
    re.compile(r"^diff --git "),
    re.compile(r"^@@ "),
    re.compile(r"^[+\- ]?\s*(?:(?:async )?def|class|(?:pub )?fn|func|function) \w"),  # a definition in a diff
)
HUNK, DEFINITION = 2, 3  # levels in BLOCK_HEADERS
# A stack frame line: node's `at f (path:1:2)` (innermost first), Python's `File "path", line 1` (innermost last).
NODE_FRAME = re.compile(r"^\W*at \S")
PYTHON_FRAME = re.compile(r'^\s*File "')
TRACEBACK_START = re.compile(r"^\s*Traceback \(most recent call last\):")
ERROR_NAME = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b|\bE[A-Z]{3,}\b|\b(?:exit code|status) \d+")
# Lines worth keeping inside a long block besides errors: pytest's current line (`>`) and a frame's arguments.
BLOCK_KEY_LINE = re.compile(r"^>\s|^[a-z_]\w* = \S")
# Question words asking about a failure, in their natural form (stemmed below, as `tokens` does).
_FAILURE_TEXT = "fail error wrong crash broken exit stopped panic problem cause missing refused died kill exception"
INFORMATIVE = re.compile(r"[A-Za-z0-9]")


def prune_text(text: str, question: str) -> str:
    lines = text.splitlines()
    return render(lines, select_lines(lines, question))


def tokens(text: str) -> list[str]:
    """Words, lowercased and lightly stemmed; identifiers also give their parts (`parse_date` -> parse, date)."""
    found: list[str] = []
    for word in _WORD.findall(text[:LONG_LINE]):
        found.extend(_word_tokens(word))
    return found


@functools.lru_cache(maxsize=65536)
def _word_tokens(word: str) -> tuple[str, ...]:
    parts = [word] if "_" not in word and not _has_inner_capital(word) else [word, *_split_identifier(word)]
    found = []
    for part in parts:
        lowered = part.lower()
        token = _stem(lowered)
        if len(token) > 1 and lowered not in STOPWORDS and token not in STOPWORDS:
            found.append(token)
    return tuple(found)


def bm25_scores(lines: Sequence[str], question: str) -> np.ndarray:
    """BM25 relevance of each line to the question, scaled so the best line scores 1 (all 0 when none match)."""
    query = set(tokens(question))
    scores = np.zeros(len(lines))
    if not query:
        return scores
    # Per line: its length in tokens and the question's words on it. The other words only count towards a line's
    # length, so they share one placeholder token and the index stays as small as the question's vocabulary.
    lengths: list[int] = []
    asked: list[list[str]] = []
    for line in lines:
        line_tokens = [t for word in _WORD.findall(line, 0, LONG_LINE) for t in _word_tokens(word)]
        lengths.append(len(line_tokens))
        asked.append([t for t in line_tokens if t in query])
    # A question word found on most lines tells no line from another (`step` in a build log): it does not count.
    spread = collections.Counter(t for words in asked for t in set(words))
    content = sum(1 for line in lines if line.strip())
    query = {t for t in query if spread[t] and spread[t] <= UBIQUITOUS_SHARE * content}
    matching = [i for i, words in enumerate(asked) if not query.isdisjoint(words)]
    if not matching:
        return scores
    corpus = []
    for i in matching:
        words = [t for t in asked[i] if t in query]
        corpus.append(words + [""] * (lengths[i] - len(words)))
    # Ranked among the lines holding a question word (the others score 0 anyway): the index's cost follows them.
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    scores[matching] = retriever.get_scores(sorted(query & set(retriever.vocab_dict)))
    best = scores.max()
    return scores / best if best > 0 else scores


def asks_about_failure(question: str) -> bool:
    return not _failure_words().isdisjoint(tokens(question)) or bool(ERROR_NAME.search(question))


@functools.cache
def _failure_words() -> frozenset[str]:
    return frozenset(token for word in _FAILURE_TEXT.split() for token in _word_tokens(word))


class _Text:
    """The lines (each cut at LONG_LINE) joined once, so each pattern is one pass over the whole output."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.count = len(lines)
        self.joined, self.starts = _joined(lines)
        self.lowered = self.joined.lower()

    def hits(self, pattern: re.Pattern[str], *, lowered: bool = False) -> np.ndarray:
        """Per line: whether `pattern` matches it."""
        hit = np.zeros(self.count, dtype=bool)
        found = [m.start() for m in pattern.finditer(self.lowered if lowered else self.joined)]
        hit[_line_of(self.starts, found)] = True
        return hit


def error_lines(text: _Text) -> np.ndarray:
    hits: np.ndarray = text.hits(ERROR_WORDS, lowered=True) | text.hits(ERROR_MARKS)
    return hits


def structure_prior(text: _Text, errors: np.ndarray, error_weight: float = ERROR_WEIGHT) -> np.ndarray:
    """Per line: what error, location and test-name patterns add to its relevance."""
    return error_weight * errors + LOCATION_WEIGHT * text.hits(LOCATION) + TEST_WEIGHT * text.hits(TEST_NAME)


def _joined(lines: Sequence[str]) -> tuple[str, np.ndarray]:
    """The lines (each cut at LONG_LINE) as one text, and where each line starts in it."""
    clipped = [line[:LONG_LINE] for line in lines]
    starts = np.cumsum([0, *(len(line) + 1 for line in clipped[:-1])]) if clipped else np.zeros(0, dtype=int)
    return "\n".join(clipped), starts


def _line_of(starts: np.ndarray, positions: list[int]) -> np.ndarray:
    return np.searchsorted(starts, np.asarray(positions, dtype=int), side="right") - 1


def _smoothed(raw: np.ndarray, informative: np.ndarray) -> np.ndarray:
    """Each informative line takes a share of its informative neighbours' scores; the other lines score 0."""
    where = np.flatnonzero(informative)
    dense = raw[where]
    smoothed = dense.copy()
    for distance, decay in enumerate(NEIGHBOUR_DECAY, start=1):
        if distance >= len(dense):
            break
        smoothed[distance:] = np.maximum(smoothed[distance:], decay * dense[:-distance])
        smoothed[:-distance] = np.maximum(smoothed[:-distance], decay * dense[distance:])
    scores = np.zeros(len(raw))
    scores[where] = smoothed
    return scores


def _user_frames(lines: Sequence[str], library: np.ndarray) -> np.ndarray:
    """In each run of stack frames, the innermost one outside libraries and the runtime."""
    found = np.zeros(len(lines), dtype=bool)
    index = 0
    while index < len(lines):
        pattern = next((p for p in (NODE_FRAME, PYTHON_FRAME) if p.search(lines[index])), None)
        if pattern is None:
            index += 1
            continue
        frames = []
        while index < len(lines) and (
            pattern.search(lines[index]) or (pattern is PYTHON_FRAME and lines[index][:1] == " ")
        ):
            if pattern.search(lines[index]) and not library[index]:
                frames.append(index)
            index += 1
        if frames:
            found[frames[0] if pattern is NODE_FRAME else frames[-1]] = True
    return found


def _repeats(lines: Sequence[str], question: str) -> np.ndarray:
    """Lines that repeat an earlier line but for their numbers (a retry loop, a progress log), unless they carry a
    number the question asks about."""
    asked = [word for word in _WORD.findall(question) if any(c.isdigit() for c in word)]
    seen: set[str] = set()
    repeated = np.zeros(len(lines), dtype=bool)
    for index, line in enumerate(lines):
        shape = _DIGITS.sub("0", line[:LONG_LINE].strip())
        if shape in seen and not any(word in line for word in asked):
            repeated[index] = True
        seen.add(shape)
    return repeated


def select_lines(lines: Sequence[str], question: str) -> list[int]:
    """Indices of the lines to keep, in order."""
    informative = np.array([bool(INFORMATIVE.search(line)) for line in lines], dtype=bool)
    content = [i for i, line in enumerate(lines) if line.strip()]
    if informative.sum() <= SMALL_OUTPUT_LINES:
        return content
    relevance = bm25_scores(lines, question)
    error_weight = FAILURE_ERROR_WEIGHT if asks_about_failure(question) else ERROR_WEIGHT
    text = _Text(lines)
    errors = error_lines(text)
    prior = structure_prior(text, errors, error_weight)
    raw = relevance + prior
    library = text.hits(LIBRARY)
    raw[library] *= LIBRARY_SHARE
    raw[_user_frames(lines, library)] += USER_FRAME_WEIGHT
    repeated = _repeats(lines, question)
    raw[repeated] *= REPEAT_SHARE
    raw[~informative] = 0.0
    scores = _smoothed(raw, informative)
    best = scores.max()
    if best <= 0:
        return content[:SMALL_OUTPUT_LINES]
    # Key lines of a long block: errors, and locations in the project's own code.
    key = (errors | (text.hits(LOCATION) & ~library)) & ~repeated
    kept, named = _best_blocks(lines, question, relevance, key, scores, informative)
    size = sum(min(len(lines[i]), LONG_LINE) + 1 for i in content)
    budget = max(BUDGET_SHARE * size, min(MIN_BUDGET_CHARS, size / 4))
    spent = 0
    for index in np.argsort(-scores, kind="stable"):
        if scores[index] < RELATIVE_THRESHOLD * best or spent >= budget:
            break
        # Once the blocks of what the question names are kept, only lines that mention it may join them.
        if int(index) not in kept and (not named or relevance[index] > 0):
            kept.add(int(index))
            spent += min(len(lines[index]), LONG_LINE) + 1
    kept |= _asked_errors(lines, question)
    kept |= _tracebacks_after(lines, {i for i in kept if scores[i] >= TRACEBACK_SCORE * best})
    return sorted(i for i in kept if informative[i])


def blocks(lines: Sequence[str]) -> list[range]:
    """From each block header to the next header of the same or an outer level (text before the first header is no
    block: the line pass covers it)."""
    headers: list[tuple[int, int]] = []  # (line, level)
    in_hunk = False
    for index, line in enumerate(lines):
        level = next((level for level, pattern in enumerate(BLOCK_HEADERS) if pattern.search(line)), None)
        in_hunk = level == HUNK or (in_hunk and level != 0)
        if level is not None and (level != DEFINITION or in_hunk):  # pytest shows source code with `def` too
            headers.append((index, level))
    stops: dict[int, int] = {}
    open_blocks: list[tuple[int, int]] = []  # (line, level), outer levels first
    for index, level in headers:
        while open_blocks and open_blocks[-1][1] >= level:
            stops[open_blocks.pop()[0]] = index
        open_blocks.append((index, level))
    return [range(start, stops.get(start, len(lines))) for start, _ in headers]


def render(lines: Sequence[str], kept: Sequence[int]) -> str:
    """Kept lines in order; each run of dropped non-blank lines becomes `(filtered N lines)` when that is shorter
    than the run's text."""
    out: list[str] = []
    dropped: list[str] = []
    keep = set(kept)

    def flush() -> None:
        marker = f"(filtered {len(dropped)} line{'s' if len(dropped) != 1 else ''})"
        # Indentation costs a reader little: a marker replaces only runs with more text than itself.
        out.extend([marker] if len(marker) < sum(len(d.strip()) + 1 for d in dropped) else dropped)
        dropped.clear()

    for index, line in enumerate(lines):
        if not line.strip():
            continue
        if index in keep:
            if dropped:
                flush()
            out.append(line)
        else:
            dropped.append(line)
    if dropped:
        flush()
    return "\n".join(out)


def _asked_errors(lines: Sequence[str], question: str) -> set[int]:
    """Lines carrying an error the question names (`KeyError`, `ECONNREFUSED`, `exit code 137`): never dropped."""
    names = {name.lower() for name in ERROR_NAME.findall(question)}
    if not names:
        return set()
    return {i for i, line in enumerate(lines) if any(name in line.lower() for name in names)}


def _best_blocks(
    lines: Sequence[str],
    question: str,
    relevance: np.ndarray,
    key: np.ndarray,
    scores: np.ndarray,
    informative: np.ndarray,
) -> tuple[set[int], bool]:
    """The blocks that answer best: whole when short, else header and key lines with their neighbours. When the
    question names something (an identifier or a quoted phrase) that block headers carry (a test, a function),
    only those blocks compete. Also says whether they did."""
    found = [b for b in blocks(lines) if len(b) < len(lines)]
    if not found:
        return set(), False
    names = _names(question)
    named = [b for b in found if any(name in lines[b.start].lower() for name in names)]
    found = named or found
    # A block is as good as its best line, and better when its header itself matches the question.
    merit = [scores[b.start : b.stop].max() + 0.5 * relevance[b.start] for b in found]
    best = max(merit)
    if best <= 0:
        return set(), False
    ranked = [k for k in sorted(range(len(found)), key=lambda k: -merit[k]) if merit[k] >= BLOCK_THRESHOLD * best]
    if len(ranked) > MAX_BLOCKS:
        # Many blocks answer alike ("which tests were added"): their headers are the answer, not their bodies.
        return {found[k].start for k in ranked}, bool(named)
    kept: set[int] = set()
    for k in ranked:
        block = found[k]
        content = [i for i in block if informative[i]]
        if len(content) <= BLOCK_WHOLE_LINES:
            kept.update(content)
            continue
        kept.add(block.start)
        if any(other.start > block.start and other.stop <= block.stop for other in found):
            continue  # a commit or a file of a diff: the blocks inside it compete on their own
        top = max(scores[i] for i in content)
        for position, i in enumerate(content):
            if scores[i] >= KEY_SHARE * top or key[i] or BLOCK_KEY_LINE.search(lines[i]):
                kept.update(content[max(0, position - 1) : position + 2])
    return kept, bool(named)


def _names(question: str) -> set[str]:
    """What the question names: identifiers (`test_even`, `writersLock`, `E0308`) and quoted phrases, lowercased."""
    quoted = re.findall(r"'([^']+)'|\"([^\"]+)\"|`([^`]+)`", question)
    phrases = {part.lower() for group in quoted for part in group if part}
    words = _WORD.findall(question)
    return phrases | {
        w.lower()
        for w in words
        if "_" in w or _has_inner_capital(w) or (w[0].isalpha() and any(c.isdigit() for c in w))
    }


def _tracebacks_after(lines: Sequence[str], kept: set[int]) -> set[int]:
    """A Python traceback that starts on or right after a kept line, up to its exception line."""
    extra: set[int] = set()
    for index in sorted(kept):
        start = next((j for j in (index, index + 1) if j < len(lines) and TRACEBACK_START.search(lines[j])), None)
        if start is None:
            continue
        end = start + 1
        while end < len(lines) and (not lines[end] or lines[end][0].isspace() or lines[end].startswith("During")):
            end += 1
        extra.update(range(start, min(end + 1, len(lines))))
    return extra


def _has_inner_capital(word: str) -> bool:
    return any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)


def _split_identifier(word: str) -> list[str]:
    return [part for chunk in word.split("_") for part in _CAMEL.findall(chunk)]


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    # `require` and `required`, `module` and `modules` meet at `requir`, `modul`.
    return word[:-1] if word.endswith("e") and len(word) > 4 else word
