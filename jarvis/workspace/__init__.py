"""The code project an agent works in (`jarvis_project`): what it is made of, its diff, its DevOps files, its tests.

detect.py   manifests, languages, frameworks, test setups, compose services, CI: one `Workspace` model
git_diff.py git status and a bounded diff with a per-file summary
devops.py   pre-commit, .gitignore and CI workflow files for the detected languages; never overwrites silently
suites.py   the test suites (defaults, jarvis.toml overrides, auto-detection)
suite_run.py one suite in its own process group, with a timeout that kills the whole group
suite_output.py counts and failing tests parsed from pytest, go test, npm runners and TAP
"""
