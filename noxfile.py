"""The sessions CI runs (`.ci/run` on the project's machine, `.github/workflows/ci.yml` on GitHub):

    nox -s full            # the whole suite with the [simulate] extras (torch CPU, transformers, peft)
    nox -s tests-3.12      # the fast suite (no [simulate], no slow tier) on one CPython; tests lists 3.9-3.13
    nox -s lint types      # ruff and mypy, as configured in pyproject.toml

Each session makes its own virtual environment; `nox -s tests` runs every CPython nox finds on PATH.
`.ci/run` builds all the environments at once (`nox --install-only`, one process per session: pip mostly
waits on the index), then runs the sessions one after another on them (`nox -R`), `full` last while its
environment (torch) is still being built.
"""
from __future__ import annotations

import os

import nox

nox.options.sessions = ["lint", "types", "full", "tests"]
nox.options.reuse_existing_virtualenvs = True

PYTHONS = ["3.9", "3.10", "3.11", "3.12", "3.13"]
PYTEST = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
# Two workers: the Pilot tests of the app wait on timers, so two processes overlap well even on two cores.
# loadgroup: tests marked xdist_group("name") run on one worker, so the traces and counts they share are made
# once per session, not once on each worker (the others are balanced one by one, as with `load`).
XDIST = ["-n", "2", "--dist", "loadgroup"]
# torch is pinned to its CPU build: an unpinned torch pulls a multi-GB CUDA build.
TORCH = "torch==2.13.0"
# pip compiles every module it installs (pip's --no-compile: "Do not compile Python source files to bytecode");
# the suite imports about a third of them (3322 of torch, transformers, sympy and the rest's 10812 files: 22 s of
# CPU to compile, against 60 s for all), and each is compiled on its first import instead (`.ci/run` lets
# Python write the bytecode, so the later imports read it).
NO_COMPILE = "--no-compile"


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """The fast suite: everything but the [simulate] tests (they skip without torch) and the slow tier."""
    session.install(NO_COMPILE, "-e", ".[test]")
    env = {}
    # `.ci/run` on a 2-core machine: OOMDOCTOR_CI_SHARE lists the CPythons that share an eighth of the fast
    # suite (the default one runs all of it in `full`); each takes the part tests/conftest.py hashes to it, the
    # hash salted with OOMDOCTOR_CI_SALT (the commit), so that the eighth changes from one commit to the next.
    # A share runs in one process: its ~200 tests cost less than a second worker's own collection of the whole
    # suite (each xdist worker imports every test module and collects all ~6900 tests), and `.ci/run` runs the
    # shares side by side.
    share = [v for v in os.environ.get("OOMDOCTOR_CI_SHARE", "").split(",") if v]
    workers = XDIST
    if session.python in share:
        salt = os.environ.get("OOMDOCTOR_CI_SALT", "")
        env["OOMDOCTOR_TEST_SHARD"] = f"{share.index(session.python)}/{8 * len(share)}" + (f"@{salt}" if salt else "")
        # Plain asserts: pytest rewrites every test module it imports, a share's ~150 tests or not (8.5 s of a
        # share's ~35 s of CPU on a clean clone: `pytest --collect-only` on 3.12, 13-15 s rewriting against 5-6 s
        # plain); a failing assert still fails, with its line and message, and `full` runs the same test with
        # rewriting (`nox -s tests-3.X -- <test>` shows the values on that CPython)
        workers = ["--assert=plain"]
    _compile(session)
    session.run(*PYTEST, *workers, "-m", "not slow", *session.posargs, env=env)


def _compile(session: nox.Session) -> None:
    """Every module compiles on this CPython (a share of the fast suite may not import them all), and its
    bytecode is written once, for every CLI process the tests start (compileall writes it even where
    PYTHONDONTWRITEBYTECODE is set)."""
    session.run("python", "-m", "compileall", "-q", "oomdoctor")


@nox.session
def full(session: nox.Session) -> None:
    """The whole suite, the slow tier and the fake-tensor tests included."""
    # one pip run: one resolution against the package index instead of two (the index is most of the wait)
    session.install(NO_COMPILE, TORCH, "-e", ".[simulate,test]")
    _compile(session)
    # the slowest tests in CI's output, to keep `.ci/run` under its ten minutes
    session.run(*PYTEST, *XDIST, "--durations=25", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    session.install(NO_COMPILE, "ruff==0.17.6")        # pinned: a new release may add checks
    session.run("ruff", "check", ".")


@nox.session
def types(session: nox.Session) -> None:
    session.install(NO_COMPILE, "mypy==2.4.1", "types-PyYAML==6.0.12.20261122", "-e", ".[test]")
    session.run("mypy")
