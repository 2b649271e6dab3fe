"""Shared test settings, and the fixtures of tests/helpers.py made visible to every test module."""
import os
import tempfile

from helpers import demo  # noqa: F401  (a fixture: pytest finds it in conftest's namespace)
from hypothesis import settings

# Property tests explore new random inputs on a developer's machine; in CI they replay a fixed
# sequence, so a landing never depends on the luck of the draw (failures found locally become tests).
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Counts transformers made on the meta device are kept in the user's cache directory (oomdoctor/metacount.py):
# a test run keeps its own, so it neither reads a developer's cache nor leaves files in it.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="oomdoctor-test-cache-")


def pytest_collection_modifyitems(config, items):
    """OOMDOCTOR_TEST_SHARD=i/n keeps the tests whose id hashes to i of n (zlib.crc32: the same on every
    CPython). `.ci/run` gives each CPython other than the default a share of the fast suite, so that on a
    2-core machine every test still runs on the default CPython and on one other within the time CI allows."""
    shard = os.environ.get("OOMDOCTOR_TEST_SHARD")
    if not shard:
        return
    import zlib

    index, count = (int(part) for part in shard.split("/"))
    keep, dropped = [], []
    for item in items:
        (keep if zlib.crc32(item.nodeid.encode("utf-8")) % count == index else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep
