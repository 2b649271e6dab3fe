"""Shared test settings, and the fixtures of tests/helpers.py made visible to every test module."""
import glob
import os
import signal
import tempfile

import pytest
from helpers import demo  # noqa: F401  (a fixture: pytest finds it in conftest's namespace)
from hypothesis import settings

try:
    import fcntl
except ImportError:                                 # Windows: each worker may count; the counts agree
    fcntl = None  # type: ignore[assignment]

# Property tests explore new random inputs on a developer's machine; in CI they replay a fixed
# sequence, so a landing never depends on the luck of the draw (failures found locally become tests).
# No per-example deadline anywhere: timings belong in benchmarks/, and on a loaded machine hypothesis's default
# 200 ms deadline failed a pure function's property test (DeadlineExceeded) that passed on every rerun.
settings.register_profile("dev", deadline=None)
settings.register_profile("ci", derandomize=True, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# A shell without job control starts a background command with SIGINT ignored (bash: "asynchronous commands ignore
# SIGINT and SIGQUIT"), as `.ci/run` starts its light sessions, and exec keeps an ignored signal ignored in every child:
# oomdoctor then leaves SIGINT alone on purpose (interrupts.install, run.runner: nohup's rule), and the tests that stop
# `oomdoctor run` with SIGINT hung 60 s and failed. Each test process takes the disposition a foreground command has.
if hasattr(signal, "SIGINT") and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# Likewise nohup's SIGHUP (the SIGHUP cases of test_run, test_crashlog_inputs and test_write_safety failed under
# `nohup pytest`): a handler that does nothing keeps this process alive through a hangup, as nohup meant, and exec
# resets a handled signal to its default in every child the tests start (POSIX execve), where an ignored one stays
# ignored.
if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
    signal.signal(signal.SIGHUP, lambda signum, frame: None)

# Counts transformers made on the meta device are kept in the user's cache directory (oomdoctor/metacount.py):
# a test run keeps its own, so it neither reads a developer's cache nor leaves files in it. xdist's workers
# inherit the controller's environment, so the whole session shares one (each count is one file, written whole).
CACHE_HOME = os.environ.get("OOMDOCTOR_TEST_CACHE_HOME") or tempfile.mkdtemp(prefix="oomdoctor-test-cache-")
os.environ["OOMDOCTOR_TEST_CACHE_HOME"] = os.environ["XDG_CACHE_HOME"] = CACHE_HOME
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


# Configs a test module counts through transformers besides the guessed ones: a module names them in a function
# META_COUNT_CONFIGS() (called when the warm-up runs), gathered at collection, and the warm-up's batch counts them too.
_COUNT_TOO: dict = {}


@pytest.fixture(scope="session")
def meta_counts_warm():
    """The session's count cache holds transformers' count of every config.json under tests/data that
    oomdoctor's own reading can only guess (the ones models._exact_or_warned sends to transformers), and the
    configs the collected test modules name in META_COUNT_CONFIGS, made by
    one batch child (metacount.meta_count_many: one import of transformers, not one per test). Each test still
    goes through the product's own lookup, and every count still comes from transformers; a config the batch
    could not count is counted by the test's own child, as without the warm-up. Under xdist one worker
    counts while the other waits on the lock, then reads the files."""
    from oomdoctor import metacount

    if not metacount.available():
        return
    from oomdoctor.archs import shape_from_config
    from oomdoctor.errors import InputError
    from oomdoctor.models import _load_config

    configs = []
    for path in sorted(glob.glob(os.path.join(DATA, "**", "config.json"), recursive=True)):
        try:
            cfg, text = _load_config(path)
            shape = shape_from_config(cfg, "warm", path, text=text, tolerate_unplaced=True)
        except InputError:
            continue
        if shape.shape_confidence == "guessed":
            configs.append(cfg)
    for module_configs in _COUNT_TOO.values():
        configs.extend(module_configs())
    folder = os.path.join(CACHE_HOME, "oomdoctor-test-warm")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "lock"), "a") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)        # released when the file is closed
        done = os.path.join(folder, "done")
        if not os.path.exists(done):
            metacount.meta_count_many(configs, timeout=600)     # a loaded machine must not time the batch out
            open(done, "w").close()


def _uses_module_fixture(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(defs and defs[-1].scope == "module" for defs in info.name2fixturedefs.values())


@pytest.hookimpl(tryfirst=True)                     # before xdist reads the groups (and before it renames the ids)
def pytest_collection_modifyitems(config, items):
    """OOMDOCTOR_TEST_SHARD=i/n[@salt] keeps the tests whose salted id hashes to i of n (zlib.crc32: the same on
    every CPython). `.ci/run` gives each CPython other than the default a share of the fast suite: every test
    runs on the default CPython, and an eighth of the fast suite, a different eighth for each commit, on one
    other, within the time CI allows on a 2-core machine.

    The simulate tests of one module join one xdist group (`--dist loadgroup`, noxfile.py): one worker runs
    them, so the traces they share (functools.cache, module fixtures) are made once. One group for all of them
    (as before) made them the longest path of `full`: test_grid alone is half of their ~400 s of CPU, so the
    modules now go to either worker, at the price of torch, transformers and peft imported by both (~11 s of
    CPU). Likewise the tests of one module that use a module fixture of it join a group of their own."""
    for item in items:
        count_too = getattr(getattr(item, "module", None), "META_COUNT_CONFIGS", None)
        if callable(count_too):
            _COUNT_TOO[item.module.__name__] = count_too
        if item.get_closest_marker("simulate"):
            item.add_marker(pytest.mark.xdist_group("simulate:" + item.nodeid.split("::", 1)[0]))
        elif not item.get_closest_marker("xdist_group") and _uses_module_fixture(item):
            # a module fixture (a scored table, a parsed corpus) is made once per worker that runs a test using
            # it: its tests join one group, so it is made once per session, not on both workers
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
    shard = os.environ.get("OOMDOCTOR_TEST_SHARD")
    if not shard:
        return
    import zlib

    shard, _, salt = shard.partition("@")          # i/n@salt: the salt (a commit) reshuffles which tests fall in i
    index, count = (int(part) for part in shard.split("/"))
    keep, dropped = [], []
    for item in items:
        (keep if zlib.crc32((salt + item.nodeid).encode("utf-8")) % count == index else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep
