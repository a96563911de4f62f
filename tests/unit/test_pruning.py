"""The pruning pipeline (reasons, metadata line, log events), the HTTP pruner against a real stub endpoint with every
failure mode, and the built-in pruner on recorded outputs of real tools (bench/pruning/outputs)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from jarvis.errors import JarvisError
from jarvis.pruning import ToolOutput, focus
from jarvis.pruning.builtin import prune_text, render, select_lines
from jarvis.pruning.pruners import BuiltinPruner, HttpPruner, PrunerFailed, configured_pruner
from jarvis.settings import Settings, load_settings
from tests.servers.loopback import free_port
from tests.servers.stub_pruner import stub_pruner

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "pruning"
LONG_OUTPUT = "\n".join(
    [*(f"step {n}: compiled module_{n}.o" for n in range(200)), "ld: cannot find -lqueue", "exit code 2"]
)


def settings(tmp_path: Path, **values: object) -> Settings:
    return Settings(project_dir=tmp_path, **values)


def run(output: str | ToolOutput, question: str | None, config: Settings, **kwargs: object) -> str:
    return focus(question, config, tool="test", execute=lambda: output, **kwargs)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the prune check and the metadata line


def test_without_a_question_the_output_is_returned_byte_for_byte(tmp_path: Path) -> None:
    raw = LONG_OUTPUT + "\n\n  trailing spaces  \n"
    assert run(raw, None, settings(tmp_path)) == raw
    assert run(raw, "", settings(tmp_path)) == raw


def test_builtin_pruning_keeps_the_answer_and_ends_with_one_metadata_line(tmp_path: Path) -> None:
    answer = run(LONG_OUTPUT, "why does the link step fail?", settings(tmp_path))
    *body, note = answer.splitlines()
    assert "ld: cannot find -lqueue" in body
    assert "(filtered" in answer
    assert note.startswith("[pruned by bm25: 202 -> ")
    assert note.endswith("% fewer bytes]")
    assert sum(line.startswith("[pruned") for line in answer.splitlines()) == 1


@pytest.mark.parametrize(
    ("values", "note"),
    [
        ({"pruner": "off"}, "[not pruned: pruning is off (JARVIS_PRUNER=off), full output]"),
        ({"pruner": "http"}, "[not pruned: JARVIS_PRUNER=http needs JARVIS_PRUNER_URL, full output]"),
        ({"prune_max_input_bytes": 100}, "[not pruned: output 6.1 KB is over JARVIS_PRUNE_MAX_INPUT_BYTES (100 bytes)"),
    ],
)
def test_skipped_pruning_returns_the_raw_output_and_says_why(tmp_path: Path, values: dict, note: str) -> None:
    answer = run(LONG_OUTPUT, "why does it fail?", settings(tmp_path, **values))
    assert answer.startswith(LONG_OUTPUT + "\n")
    assert answer.splitlines()[-1].startswith(note)


@pytest.mark.parametrize("nothing", ["(no output)", "(no matches found)", "", "   "])
def test_empty_and_no_match_answers_are_never_pruned(tmp_path: Path, nothing: str) -> None:
    assert run(nothing, "anything?", settings(tmp_path)) == nothing


def test_errors_are_never_pruned_and_are_raised_unchanged(tmp_path: Path) -> None:
    def failing() -> str:
        raise JarvisError("the file is missing")

    with pytest.raises(JarvisError, match="the file is missing"):
        focus("why?", settings(tmp_path), tool="test", execute=failing)


def test_a_status_line_survives_pruning_whole(tmp_path: Path) -> None:
    answer = run(ToolOutput(LONG_OUTPUT, "[exit code: 2]"), "link error?", settings(tmp_path))
    assert answer.splitlines()[-2:][0] == "[exit code: 2]"


def test_each_step_is_one_stderr_log_line_with_the_request_id(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="jarvis.pruning"):
        run(LONG_OUTPUT, "link error?", settings(tmp_path))
    events = [record.getMessage() for record in caplog.records if record.name == "jarvis.pruning"]
    assert [e.split()[0] for e in events] == [
        "tool.request_received",
        "tool.exec_ok",
        "pruner.call_start",
        "pruner.call_ok",
        "tool.respond_ok",
    ]
    request_ids = {e.split("request_id=")[1].split()[0] for e in events}
    assert len(request_ids) == 1
    assert "mode=pruned" in events[-1]
    assert all("\n" not in e for e in events)


def test_the_setting_chooses_the_pruner(tmp_path: Path) -> None:
    assert isinstance(configured_pruner(settings(tmp_path)), BuiltinPruner)
    assert isinstance(configured_pruner(settings(tmp_path, pruner_url="http://127.0.0.1:1/prune")), HttpPruner)
    url_but_builtin = settings(tmp_path, pruner="builtin", pruner_url="http://127.0.0.1:1/prune")
    assert isinstance(configured_pruner(url_but_builtin), BuiltinPruner)
    assert configured_pruner(settings(tmp_path, pruner="off")) is None
    assert configured_pruner(settings(tmp_path, pruner="http")) is None


def test_pruner_settings_come_from_the_environment(tmp_path: Path) -> None:
    environ = {
        "JARVIS_PRUNER": "http",
        "JARVIS_PRUNER_URL": "http://127.0.0.1:9/prune",
        "JARVIS_PRUNER_TIMEOUT": "2.5",
        "JARVIS_PRUNE_MAX_INPUT_BYTES": "4096",
        "JARVIS_FILES_ROOT": "sub",
    }
    loaded = load_settings(environ=environ, cwd=tmp_path)
    assert (loaded.effective_pruner, loaded.pruner_url) == ("http", environ["JARVIS_PRUNER_URL"])
    assert loaded.pruner_timeout == 2.5
    assert loaded.prune_max_input_bytes == 4096
    assert loaded.files_root == (tmp_path / "sub").resolve()


@pytest.mark.parametrize(("key", "value"), [("JARVIS_PRUNER", "magic"), ("JARVIS_PRUNER_URL", "ftp://x/prune")])
def test_bad_pruner_settings_stop_start_up_naming_the_key(tmp_path: Path, key: str, value: str) -> None:
    with pytest.raises(JarvisError, match=key):
        load_settings(environ={key: value}, cwd=tmp_path)


# ---------------------------------------------------------------- the HTTP pruner against a real stub endpoint


def test_http_pruner_sends_query_and_code_and_uses_pruned_code(tmp_path: Path) -> None:
    with stub_pruner() as stub:
        config = settings(tmp_path, pruner_url=f"http://127.0.0.1:{stub.server_port}/ok")
        answer = run(LONG_OUTPUT, "ld: what is missing?", config)
        assert stub.requests == [{"path": "/ok", "query": "ld: what is missing?", "code": LONG_OUTPUT}]
    assert answer.splitlines()[0] == "ld: cannot find -lqueue"
    assert answer.splitlines()[-1].startswith("[pruned by http: 202 -> 1 lines, ")


@pytest.mark.parametrize(("path", "text"), [("/content", "pruned via content"), ("/text", "pruned via text")])
def test_http_pruner_falls_back_to_content_then_text(tmp_path: Path, path: str, text: str) -> None:
    with stub_pruner() as stub:
        pruner = HttpPruner(f"http://127.0.0.1:{stub.server_port}{path}", timeout=5)
        assert pruner.prune("q", LONG_OUTPUT) == text


@pytest.mark.parametrize(
    ("path", "reason", "note"),
    [
        ("/slow", "timeout", "[not pruned: pruner timeout after 0.5 s, full output]"),
        # About 120 bytes 0.05 s apart: no single read waits long, so only a bound on the whole call ends it.
        ("/trickle", "timeout", "[not pruned: pruner timeout after 0.5 s, full output]"),
        ("/error", "http_error", "[not pruned: pruner answered HTTP 500, full output]"),
        ("/badjson", "invalid_response", "[not pruned: pruner answer is not JSON, full output]"),
        ("/notext", "invalid_response", "[not pruned: pruner answer has no pruned_code/content/text, full output]"),
    ],
)
def test_every_pruner_failure_returns_the_raw_output_with_the_reason(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, path: str, reason: str, note: str
) -> None:
    with stub_pruner() as stub, caplog.at_level(logging.INFO, logger="jarvis.pruning"):
        config = settings(tmp_path, pruner_url=f"http://127.0.0.1:{stub.server_port}{path}", pruner_timeout=0.5)
        answer = run(LONG_OUTPUT, "why?", config)
    assert answer == f"{LONG_OUTPUT}\n{note}"
    failed = [r.getMessage() for r in caplog.records if r.getMessage().startswith("pruner.call_failed")]
    assert len(failed) == 1
    assert f"reason={reason}" in failed[0]


def test_connection_refused_is_an_http_error_and_the_raw_output(tmp_path: Path) -> None:
    config = settings(tmp_path, pruner_url=f"http://127.0.0.1:{free_port()}/prune")
    answer = run(LONG_OUTPUT, "why?", config)
    assert answer == f"{LONG_OUTPUT}\n[not pruned: pruner unreachable (ConnectError), full output]"
    with pytest.raises(PrunerFailed) as failure:
        HttpPruner(config.pruner_url or "", timeout=1).prune("q", "code")
    assert failure.value.reason == "http_error"


# ---------------------------------------------------------------- the built-in pruner on recorded outputs


def _case(name: str) -> tuple[list[str], str, list[int]]:
    cases = {c["name"]: c for c in json.loads((CORPUS / "cases.json").read_text())}
    lines = (CORPUS / "outputs" / f"{name}.txt").read_text().splitlines()
    answers = [a if isinstance(a, int) else a[0] for a in cases[name]["answers"] if isinstance(a, int)]
    return lines, cases[name]["question"], answers


@pytest.mark.parametrize(
    "name",
    [
        "pytest_shop_verbose",
        "pytest_collection_error",
        "python_service_crash",
        "python_service_long_log",
        "npm_test_many_passing_one_failing",
        "cargo_test_panics",
        "git_diff_atomic",
        "grep_raise",
        "docker_build_long_fails",
        # Missed before the second round: a unittest section's traceback, pytest's argument and `>` lines, the first
        # project frame of a node stack, a failing docker build step among steps that mention the question's topic,
        # compose's `Exited (4)`, an error among many warnings.
        "unittest_failures",
        "pytest_fixture_error",
        "pytest_warnings_and_one_failure",
        "npm_test_missing_module",
        "compose_build_run_fails",
        "compose_up_one_service_exits",
    ],
)
def test_the_lines_that_answer_survive_and_most_of_the_rest_goes(name: str) -> None:
    lines, question, answers = _case(name)
    kept = select_lines(lines, question)
    assert {n - 1 for n in answers} <= set(kept)
    content = len([line for line in lines if line.strip()])
    assert len(kept) < (0.5 * content if content > 100 else content)


def test_a_retry_loop_does_not_crowd_out_the_other_lines() -> None:
    lines = ["worker booting", *(f"attempt {n}: connection refused (10.0.0.7:5432)" for n in range(1, 40))]
    lines += [f"job {n} queued" for n in range(40)] + ["config: database host is db.internal, port 5432"]
    kept = {lines[i] for i in select_lines(lines, "Which database host and port does it fail to reach?")}
    assert "config: database host is db.internal, port 5432" in kept
    assert "attempt 1: connection refused (10.0.0.7:5432)" in kept
    assert sum(line.startswith("attempt") for line in kept) <= 3


def test_the_section_of_the_test_the_question_names_is_kept_and_the_others_go() -> None:
    sections = []
    for name in ("test_alpha", "test_beta", "test_gamma"):
        sections += [f"{'_' * 20} {name} {'_' * 20}", "", f"    def {name}():", f">       assert run('{name}')"]
        sections += [f"E       AssertionError: {name} broke", "", f"tests/test_x.py:{len(sections)}: AssertionError"]
    kept = {sections[i] for i in select_lines(sections, "Why does test_beta fail?")}
    assert "E       AssertionError: test_beta broke" in kept
    assert ">       assert run('test_beta')" in kept
    assert not any("alpha" in line or "gamma" in line for line in kept)


def test_an_error_the_question_names_is_never_dropped() -> None:
    lines = [f"request {n} served in {n % 7} ms" for n in range(300)]
    lines[137] = "worker 3: ECONNRESET while reading the body"
    pruned = prune_text("\n".join(lines), "where did ECONNRESET happen?")
    assert "worker 3: ECONNRESET while reading the body" in pruned.splitlines()


def test_render_keeps_order_drops_blank_lines_and_counts_each_dropped_run() -> None:
    lines = ["keep one", "", "drop a long line of text here", "drop another long line here", "keep two", "x", ""]
    assert render(lines, [0, 4]) == "keep one\n(filtered 2 lines)\nkeep two\nx"
    # A run shorter than its marker is shown as it is ("x" above); blank lines never count.


def test_short_outputs_are_kept_whole_without_blank_lines() -> None:
    text = "line one\n\nline two\nline three"
    assert prune_text(text, "anything") == "line one\nline two\nline three"


# ---------------------------------------------------------------- start time: ranking libraries load at the first quest


def test_jarvis_starts_without_loading_the_ranking_libraries(tmp_path: Path) -> None:
    heavy = ("bm25s", "numpy", "scipy")
    listing = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "jarvis", "tools"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    imported = {line.split("|")[-1].strip().split(".")[0] for line in listing.stderr.splitlines() if "|" in line}
    assert imported.isdisjoint(heavy)
    modules = "jarvis.mcp_server, jarvis.files_server.files_mcp_server, jarvis.pruning"
    probe = f"import sys, {modules}; print(*sorted(sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert set(loaded).isdisjoint(heavy)
    asked = "import sys; from jarvis.pruning.pruners import BuiltinPruner; BuiltinPruner().prune('q', 'x')\n"
    asked += "print(*sys.modules)"
    assert "bm25s" in subprocess.run([sys.executable, "-c", asked], capture_output=True, text=True).stdout.split()
