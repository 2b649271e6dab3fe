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

meta_count_many counts many configs with one child process (one import of transformers) under one time limit:
each answer is written as soon as it is known, a config that fails answers its own error, and a child that dies
leaves only the config it was on uncounted.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

_CHILD = r"""
import json, sys, warnings, logging
warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
jobs = json.loads(sys.stdin.read())
def answer(i, doc):
    doc["i"] = i
    sys.stdout.write(json.dumps(doc) + "\n")
    sys.stdout.flush()                  # each answer as soon as it is known: a time limit keeps those before it
try:
    import torch, transformers
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
except Exception as err:
    for i in range(len(jobs)):
        answer(i, {"error": "import: %s" % type(err).__name__})
    sys.exit(0)
classes = [AutoModelForCausalLM]
try:
    from transformers import AutoModelForImageTextToText
    classes.append(AutoModelForImageTextToText)
except ImportError:
    pass
classes.append(AutoModel)
def count(job):
    cfg = job["config"]
    remote = job.get("remote_dir")
    named = ""
    try:
        if remote:
            conf = AutoConfig.from_pretrained(remote, trust_remote_code=True, local_files_only=True)
        elif cfg.get("model_type") in CONFIG_MAPPING:
            arch = cfg.get("architectures")
            named = arch[0] if isinstance(arch, list) and arch and isinstance(arch[0], str) else ""
            if named and not hasattr(transformers, named):
                # the class the config names is not transformers' own (LISA's LISAForCausalLM under
                # model_type "llava"): what the type maps to would be another model, its count not this one's
                return {"unknown": True, "version": transformers.__version__, "class": named}
            conf = CONFIG_MAPPING[cfg["model_type"]].from_dict(cfg)
        else:
            return {"unknown": True, "version": transformers.__version__}
    except Exception as err:
        return {"error": "config: %s: %s" % (type(err).__name__, str(err)[:160])}
    order = list(classes)
    if not remote and named:
        # the config's own class first: AutoModelForCausalLM maps an encoder-decoder or multimodal type to its
        # decoder alone (bart -> BartForCausalLM, mllama -> MllamaForCausalLM), a count of part of the model
        order.insert(0, getattr(transformers, named))
    elif getattr(conf, "is_encoder_decoder", False):
        from transformers import AutoModelForSeq2SeqLM
        order.insert(0, AutoModelForSeq2SeqLM)
    last = "none"
    for cls in order:
        try:
            with torch.device("meta"):
                if hasattr(cls, "from_config"):
                    model = cls.from_config(conf, trust_remote_code=bool(remote))
                else:
                    model = cls(conf)
        except Exception as err:
            last = "%s: %s" % (type(err).__name__, str(err)[:160])
            continue
        n = sum(p.numel() for p in model.parameters())
        return {"params": int(n), "class": type(model).__name__, "version": transformers.__version__}
    return {"error": "build: " + last}
for i, job in enumerate(jobs):
    try:
        doc = count(job)
    except Exception as err:            # one config that breaks the model code does not sink the others
        doc = {"error": "count: %s: %s" % (type(err).__name__, str(err)[:160])}
    answer(i, doc)
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


def _job(cfg: dict[str, Any], directory: str | None) -> tuple[str, bool]:
    """The request sent to the child (also the cache key's text) and whether it runs the model's own code."""
    clean = {k: v for k, v in cfg.items() if k != "quantization_config"}
    remote = _remote_dir(cfg, directory)
    # "checks": the child's rules, in the cache key's text so that answers kept under older rules are not reused
    # (2: a config naming a class transformers lacks is not counted as the type's class)
    return json.dumps({"config": clean, "remote_dir": remote, "checks": 3}, sort_keys=True, default=str), \
        remote is not None


def _timeout(timeout: float | None) -> float:
    if timeout is not None:
        return timeout
    try:
        return float(os.environ.get("OOMDOCTOR_META_TIMEOUT", "60"))
    except ValueError:
        return 60.0


def _answers(stdout: str | bytes | None, count: int) -> dict[int, dict[str, Any]]:
    """The child's answers by job index: one JSON object a line; anything else the model code printed is
    passed over. A lone job's answer may come without its index."""
    if isinstance(stdout, bytes):
        stdout = stdout.decode("utf-8", "replace")
    found: dict[int, dict[str, Any]] = {}
    for line in (stdout or "").splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if not isinstance(doc, dict):
            continue
        index = doc.pop("i", 0 if count == 1 else None)
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < count:
            found[index] = doc
    return found


def _ask(jobs: list[str], timeout: float) -> list[dict[str, Any]]:
    """One answer for each job, from as few child processes as it takes: the jobs share one child (one import
    of transformers) and one time limit; a child that dies leaves the job it was on with the error, and the
    jobs after it go to a new child within what is left of the time."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TRANSFORMERS_VERBOSITY="error",
               TOKENIZERS_PARALLELISM="false", CUDA_VISIBLE_DEVICES="")
    answers: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while len(answers) < len(jobs):
        todo = jobs[len(answers):]
        left = deadline - time.monotonic()
        failure: dict[str, Any] = {"error": "timeout", "seconds": timeout}
        stdout: str | bytes | None = None
        if left > 0:
            try:
                done = subprocess.run([sys.executable, "-c", _CHILD], input="[%s]" % ",".join(todo),
                                      capture_output=True, text=True, timeout=left, env=env, check=False)
                stdout, failure = done.stdout, {"error": "exit %s" % done.returncode}
            except subprocess.TimeoutExpired as err:
                stdout = err.stdout
            except (OSError, ValueError) as err:
                stdout, failure = None, {"error": type(err).__name__}
        got = _answers(stdout, len(todo))
        for index in range(len(todo)):
            if index not in got:
                break
            answers.append(got[index])
        if len(answers) < len(jobs):
            answers.append(failure)             # the job the child was on when it stopped
            if failure.get("error") == "timeout" or left <= 0:
                answers.extend(dict(failure) for _ in range(len(jobs) - len(answers)))
    return answers


def _settled(job: str, key: str | None, answer: dict[str, Any]) -> MetaCount:
    result = MetaCount(answer.get("params"), str(answer.get("version", "")), str(answer.get("class", "")),
                       bool(answer.get("unknown")), str(answer.get("error", "")), float(answer.get("seconds", 0.0)))
    if result.params is None and not result.unknown and not result.error:
        result = MetaCount(None, error="no answer")
    _cache[job] = result
    if key is not None and not result.error and (result.params or result.unknown):
        _disk_write(key, result)
    return result


def _kept(job: str, key: str | None) -> MetaCount | None:
    if job in _cache:
        return _cache[job]
    kept = _disk_read(key) if key is not None else None
    if kept is not None:
        _cache[job] = kept
    return kept


def meta_count(cfg: dict[str, Any], directory: str | None = None, timeout: float | None = None) -> MetaCount:
    """transformers' own count of the model `cfg` describes (see the module docstring); never raises."""
    if not available():
        return MetaCount(None, error="unavailable")
    job, remote = _job(cfg, directory)
    # a count that ran the model's own code depends on that code, not only on the config: not kept on disk
    version = None if remote else _transformers_version()
    key = _disk_key(job, version) if version else None
    kept = _kept(job, key)
    if kept is not None:
        return kept
    return _settled(job, key, _ask([job], _timeout(timeout))[0])


def meta_count_many(configs: list[dict[str, Any]], timeout: float | None = None) -> list[MetaCount]:
    """meta_count for each config, in order, with one child process (one import of transformers) for all the
    configs neither kept in memory nor on disk; `timeout` bounds that child (the configs it did not reach
    answer "timeout"), a config that fails answers its own error and the others are still counted. The model's
    own code is never run here (no directory): each count is kept on disk as meta_count keeps it, so a later
    meta_count of the same config reads it there."""
    if not available():
        return [MetaCount(None, error="unavailable") for _ in configs]
    version = _transformers_version()
    jobs = [_job(cfg, None)[0] for cfg in configs]
    keys = {job: (_disk_key(job, version) if version else None) for job in jobs}
    results = {job: kept for job in keys for kept in [_kept(job, keys[job])] if kept is not None}
    todo = [job for job in keys if job not in results]
    if todo:
        for job, answer in zip(todo, _ask(todo, _timeout(timeout))):
            results[job] = _settled(job, keys[job], answer)
    return [results[job] for job in jobs]
