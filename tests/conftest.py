"""Shared test settings."""
import os

from hypothesis import settings

# Property tests explore new random inputs on a developer's machine; in CI they replay a fixed
# sequence, so a landing never depends on the luck of the draw (failures found locally become tests).
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
