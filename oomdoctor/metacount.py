"""An exact parameter count from transformers' own model class, built on the meta device (no weights, no
memory), in a child process bounded in time.

Used for a model_type oomdoctor has no reading of its own: when transformers (with torch) is importable and
knows the type — or, with OOMDOCTOR_TRUST_REMOTE_CODE=1, when the model's own code sits beside its config.json
(`auto_map`) — the child builds `AutoModelForCausalLM.from_config` (else the image-text-to-text or base class)
under `torch.device("meta")` and sums `numel()` of its parameters (tied weights once). Nothing is downloaded:
the child runs with HF_HUB_OFFLINE=1. OOMDOCTOR_NO_TRANSFORMERS=1 turns the path off; OOMDOCTOR_META_TIMEOUT
bounds it (seconds, default 60).

A count is kept on disk (`$XDG_CACHE_HOME/oomdoctor/metacount/`, else `~/.cache/oomdoctor/metacount/`, one small
JSON file per count) keyed by the SHA-256 of the config as sent to the child and transformers' version, so the
~6 s import of transformers runs once per config and version, not on every report. Only answers that cannot
change for that key are kept (a count, or "transformers does not know this type"); never a timeout or error,
never a count that ran the model's own code. Nothing is written when the directory cannot be made, and never
anywhere but the user's cache directory.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

_CHILD = r"""
import json, sys, warnings, logging
warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
job = json.loads(sys.stdin.read())
try:
    import torch, transformers
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
except Exception as err:
    print(json.dumps({"error": "import: %s" % type(err).__name__})); sys.exit(0)
cfg = job["config"]
remote = job.get("remote_dir")
try:
    if remote:
        conf = AutoConfig.from_pretrained(remote, trust_remote_code=True, local_files_only=True)
    elif cfg.get("model_type") in CONFIG_MAPPING:
        conf = CONFIG_MAPPING[cfg["model_type"]].from_dict(cfg)
    else:
        print(json.dumps({"unknown": True, "version": transformers.__version__})); sys.exit(0)
except Exception as err:
    print(json.dumps({"error": "config: %s: %s" % (type(err).__name__, str(err)[:160])})); sys.exit(0)
classes = [AutoModelForCausalLM]
try:
    from transformers import AutoModelForImageTextToText
    classes.append(AutoModelForImageTextToText)
except ImportError:
    pass
classes.append(AutoModel)
last = "none"
for cls in classes:
    try:
        with torch.device("meta"):
            model = cls.from_config(conf, trust_remote_code=bool(remote))
    except Exception as err:
        last = "%s: %s" % (type(err).__name__, str(err)[:160])
        continue
    n = sum(p.numel() for p in model.parameters())
    print(json.dumps({"params": int(n), "class": type(model).__name__, "version": transformers.__version__}))
    sys.exit(0)
print(json.dumps({"error": "build: " + last}))
"""


@dataclass(frozen=True)
class MetaCount:
    params: int | None              # None: not counted (see unknown / error)
    version: str = ""               # transformers' version
    cls: str = ""                   # the model class that was built
    unknown: bool = False           # transformers is there but does not know the model_type
    error: str = ""                 # why the count failed (import, config, build, timeout): technical, not prose
    seconds: float = 0.0            # the time limit, when it ran out


_cache: dict[str, MetaCount] = {}


def available() -> bool:
    """Whether the path may run here: not turned off, and transformers and torch importable (not imported)."""
    if os.environ.get("OOMDOCTOR_NO_TRANSFORMERS"):
        return False
    try:
        return importlib.util.find_spec("transformers") is not None and importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def _transformers_version() -> str | None:
    """The installed transformers' version from its package metadata (transformers itself is not imported)."""
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:                             # pragma: no cover - CPython 3.8 and later have it
        return None
    try:
        return version("transformers")
    except (PackageNotFoundError, ValueError):
        return None


def cache_dir() -> str | None:
    """The directory counts are kept in: the XDG user cache directory (an absolute $XDG_CACHE_HOME, else
    ~/.cache; the XDG Base Directory spec ignores a relative one), never the working directory; None: no home."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "oomdoctor", "metacount")


def _disk_key(job: str, version: str) -> str:
    return hashlib.sha256(("%s\n%s" % (version, job)).encode("utf-8")).hexdigest()


def _disk_read(key: str) -> MetaCount | None:
    folder = cache_dir()
    if folder is None:
        return None
    try:
        with open(os.path.join(folder, key + ".json"), encoding="utf-8") as fh:
            kept = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict):
        return None
    params, unknown = kept.get("params"), kept.get("unknown") is True
    if not (isinstance(params, int) and not isinstance(params, bool) and params > 0) and not unknown:
        return None                                 # a damaged or foreign file: count again
    return MetaCount(params if not unknown else None, str(kept.get("version", "")), str(kept.get("class", "")),
                     unknown)


def _disk_write(key: str, result: MetaCount) -> None:
    """Keep a lasting answer; any failure (no home, read-only, full disk) leaves nothing behind and is silent."""
    folder = cache_dir()
    if folder is None:
        return
    tmp = ""
    try:
        os.makedirs(folder, exist_ok=True)
        body = json.dumps({"params": result.params, "unknown": result.unknown, "version": result.version,
                           "class": result.cls})
        tmp = os.path.join(folder, "%s.%d.tmp" % (key, os.getpid()))
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(body)
        os.replace(tmp, os.path.join(folder, key + ".json"))     # whole or absent: never a half-written file
    except OSError:
        if tmp:
            try:
                os.remove(tmp)
            except OSError:
                pass


def _remote_dir(cfg: dict[str, Any], directory: str | None) -> str | None:
    """The directory whose own modeling code may be run: only when asked for, and only when the file is there."""
    if not directory or os.environ.get("OOMDOCTOR_TRUST_REMOTE_CODE") != "1":
        return None
    auto = cfg.get("auto_map")
    target = auto.get("AutoModelForCausalLM") if isinstance(auto, dict) else None
    if not isinstance(target, str) or "--" in target:
        return None                                 # "repo--module.Class" would fetch code from the hub
    module = target.rsplit(".", 1)[0]
    return directory if os.path.isfile(os.path.join(directory, module + ".py")) else None


def meta_count(cfg: dict[str, Any], directory: str | None = None, timeout: float | None = None) -> MetaCount:
    """transformers' own count of the model `cfg` describes (see the module docstring); never raises."""
    if not available():
        return MetaCount(None, error="unavailable")
    clean = {k: v for k, v in cfg.items() if k != "quantization_config"}
    remote = _remote_dir(cfg, directory)
    job = json.dumps({"config": clean, "remote_dir": remote}, sort_keys=True, default=str)
    if job in _cache:
        return _cache[job]
    # a count that ran the model's own code depends on that code, not only on the config: not kept on disk
    version = None if remote else _transformers_version()
    key = _disk_key(job, version) if version else None
    if key is not None:
        kept = _disk_read(key)
        if kept is not None:
            _cache[job] = kept
            return kept
    if timeout is None:
        try:
            timeout = float(os.environ.get("OOMDOCTOR_META_TIMEOUT", "60"))
        except ValueError:
            timeout = 60.0
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TRANSFORMERS_VERBOSITY="error",
               TOKENIZERS_PARALLELISM="false", CUDA_VISIBLE_DEVICES="")
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD], input=job, capture_output=True, text=True,
                              timeout=timeout, env=env, check=False)
        line = (done.stdout.strip().splitlines() or ["{}"])[-1]
        answer = json.loads(line)
    except subprocess.TimeoutExpired:
        answer = {"error": "timeout", "seconds": timeout}
    except (OSError, ValueError) as err:
        answer = {"error": type(err).__name__}
    result = MetaCount(answer.get("params"), str(answer.get("version", "")), str(answer.get("class", "")),
                       bool(answer.get("unknown")), str(answer.get("error", "")), float(answer.get("seconds", 0.0)))
    if result.params is None and not result.unknown and not result.error:
        result = MetaCount(None, error="no answer")
    _cache[job] = result
    if key is not None and not result.error and (result.params or result.unknown):
        _disk_write(key, result)
    return result
