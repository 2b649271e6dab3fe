"""List every function the frameworks define in the modules oomdoctor/crashlog/taxonomy.py places.

The taxonomy's rows name module paths and classes of function names; this walks the frameworks' own source and
writes the functions of each module some row names to tests/data/callsites/inventory.tsv (a line per module,
with the version it was read from). tests/test_crashlog_taxonomy.py reads that file to measure how much of each module the
rows place and to check that no function lands in a phase its module does not run.

    python benchmarks/callsite_inventory.py --mirrors DIR [--out tests/data/callsites/inventory.tsv]

Installed packages are read where Python finds them (torch, transformers, accelerate, peft, safetensors); the
others from bare git checkouts under --mirrors (owner+name/repo, read at HEAD with `git show`).
"""
from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oomdoctor.crashlog.taxonomy import MODULES  # noqa: E402

INSTALLED = ("torch", "transformers", "accelerate", "peft", "safetensors")
# (mirror folder, folder inside the checkout that holds the top package, "" for the root)
MIRRORS = (
    ("microsoft+DeepSpeed", ""), ("huggingface+trl", ""), ("hiyouga+LLaMA-Factory", "src/"),
    ("modelscope+ms-swift", ""), ("pytorch+torchtune", ""), ("axolotl-ai-cloud+axolotl", "src/"),
    ("unslothai+unsloth", ""), ("OpenRLHF+OpenRLHF", ""), ("linkedin+Liger-Kernel", "src/"),
    ("Lightning-AI+litgpt", ""), ("bitsandbytes-foundation+bitsandbytes", ""), ("unslothai+unsloth-zoo", ""),
    ("Lightning-AI+pytorch-lightning", "src/"), ("Dao-AILab+flash-attention", ""), ("huggingface+diffusers", "src/"),
    ("NVIDIA+Megatron-LM", ""), ("hpcaitech+ColossalAI", ""), ("open-mmlab+mmengine", ""), ("keras-team+keras", ""),
    ("keras-team+tf-keras", ""), ("lllyasviel+stable-diffusion-webui-forge", ""), ("oobabooga+text-generation-webui", ""),
)
# transformers and diffusers ship a file per architecture or pipeline, Lightning and flash-attn many layers of
# their own; a few stand for the rest
MODEL_FAMILIES = re.compile(r"transformers/models/(?!(?:llama|qwen2|qwen3|mistral|mixtral|gemma2|phi3|blip_2)/)|"
                            r"diffusers/models/(?!(?:attention_processor|attention|modeling_utils|"
                            r"unets/unet_2d_condition|transformers/transformer_flux)\.py)|"
                            r"diffusers/pipelines/(?!(?:pipeline_utils|stable_diffusion/pipeline_stable_diffusion|"
                            r"flux/pipeline_flux)\.py)|"
                            r"lightning/(?!pytorch/(?:loops|strategies|trainer|core|plugins/precision)/)|"
                            r"flash_attn/(?!(?:flash_attn_interface|bert_padding|modules/mha)\.py)|"
                            r"megatron/core/(?:models|ssm|fusions|transformer/(?!transformer_block|transformer_layer|"
                            r"attention|module)\w*)/|megatron/core/inference/(?!engines/)|"
                            r"(?:keras/src|tf_keras)/layers/(?!core/)|\S+_test\.py$")
_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
# rows for any module (a finalizer) name no module of their own
_ROWS = [re.compile(p) for p, _f, _ph, _src in MODULES if p != r"\S+\.py"]


def named(module: str) -> bool:
    return module.endswith(".py") and not MODEL_FAMILIES.match(module) and any(r.match(module) for r in _ROWS)


def from_installed(name: str) -> tuple[str, list[tuple[str, str]]]:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return name, []
    root = Path(list(spec.submodule_search_locations)[0])
    mod = __import__(name)
    out = []
    for path in sorted(root.rglob("*.py")):
        module = f"{name}/{path.relative_to(root).as_posix()}"
        if named(module):
            out.append((module, path.read_text(encoding="utf-8", errors="replace")))
    return f"{name} {getattr(mod, '__version__', '?')}", out


def from_mirror(mirrors: Path, folder: str, prefix: str) -> tuple[str, list[tuple[str, str]]]:
    repo = next((mirrors / folder).glob("*/"), None)
    if repo is None:
        return folder, []
    git = ["git", "-C", str(repo)]
    head = subprocess.run(git + ["log", "-1", "--format=%h"], capture_output=True, text=True).stdout.strip()
    files = subprocess.run(git + ["ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True).stdout.split()
    out = []
    for f in files:
        if not f.startswith(prefix):
            continue
        module = f[len(prefix):]
        if named(module):
            text = subprocess.run(git + ["show", f"HEAD:{f}"], capture_output=True, text=True, errors="replace").stdout
            out.append((module, text))
    return f"{folder.replace('+', '/')}@{head}", out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", required=True, help="folder of bare git checkouts, owner+name/repo")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "tests/data/callsites/inventory.tsv"))
    args = ap.parse_args()
    sources = [from_installed(n) for n in INSTALLED]
    sources += [from_mirror(Path(args.mirrors), folder, prefix) for folder, prefix in MIRRORS]
    funcs: dict[str, dict[str, None]] = {}
    read_from: dict[str, str] = {}
    for version, files in sources:
        for module, text in files:
            read_from.setdefault(module, version)
            funcs.setdefault(module, {}).update(dict.fromkeys(_DEF.findall(text)))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write("# module\tread from\tevery function it defines (benchmarks/callsite_inventory.py)\n")
        for module in sorted(funcs):
            if funcs[module]:
                fh.write(f"{module}\t{read_from[module]}\t{' '.join(sorted(funcs[module]))}\n")
    total = sum(len(f) for f in funcs.values())
    print(f"{total} functions in {len(funcs)} modules -> {args.out}", file=sys.stderr)

if __name__ == "__main__":
    main()
