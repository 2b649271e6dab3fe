"""PEFT's adapter types other than plain LoRA, each estimated by what its layer keeps (peft/tuners/*/layer.py),
and checked against PEFT's own MetaMathQA method comparison (tests/data/reference/measured_peaks.yaml, rows
mmqa-07..25: Llama-3.2-3B, bf16 weights, fp32 adapters, batch 4 x 768)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

from oomdoctor.configs import load_config
from oomdoctor.facts import Hardware, ModelShape, TrainingSetup
from oomdoctor.memory import estimate, trainable_params
from oomdoctor.memory.activations import layer_bytes
from oomdoctor.memory.regime import regime_of

DATA = Path(__file__).parent / "data"
L40S = Hardware(gpu="L40S", gpu_gib=44.4, n_gpus=1)
# Llama-3.2-3B's config.json
LLAMA32_3B = ModelShape(name="meta-llama/Llama-3.2-3B", hidden_size=3072, intermediate_size=8192, num_layers=28,
                        num_heads=24, num_kv_heads=8, vocab_size=128256, tie_word_embeddings=True)


def setup(peft: str = "", targets=("q_proj", "v_proj"), rank: int = 32, **extras) -> TrainingSetup:
    """PEFT's method-comparison run: pure bf16 weights, fp32 adapters, batch 4 x 768, no checkpointing."""
    if peft:
        extras["peft_type"] = peft
    return TrainingSetup(framework="hf", method="lora", lora_rank=rank, lora_targets=targets, micro_batch=4,
                         seq_len=768, precision="bf16", pure_bf16=True, load_dtype="bf16", grad_ckpt=False,
                         extras=extras, use_dora=extras.pop("use_dora", False))


def saved_per_token(s: TrainingSetup) -> float:
    return layer_bytes(s, LLAMA32_3B, regime_of(s, LLAMA32_3B), s.seq_len, trains_weights=False).saved


def rows() -> dict:
    with open(DATA / "reference" / "measured_peaks.yaml") as fh:
        return {c["id"]: c for c in yaml.safe_load(fh) if c.get("calibration_set") == "peft-methods"}


@pytest.fixture(scope="module")
def accuracy():
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    import accuracy
    return accuracy


def test_modelled_types_count_the_parameters_peft_recorded(accuracy):
    # num_trainable_params of each results file, for every type whose own layout is modelled (LoHa, LoKr,
    # AdaLoRA, BD-LoRA, MiCA and LoRA-FA are estimated as plain LoRA and count otherwise)
    ref = accuracy._reference_shapes()
    checked = set()
    for cid, case in rows().items():
        if case.get("peft_type") not in ("IA3", "VERA", "PREFIX_TUNING", "PROMPT_TUNING", "P_TUNING") and \
                not case.get("use_dora"):
            continue
        s, shape, _ = accuracy.convert(case, ref)
        recorded = int(re.search(r"num_trainable_params = (\d+)", case["quote"]).group(1))
        assert trainable_params(s, shape) == recorded, cid
        checked.add(case.get("peft_type"))
    assert checked == {"LORA", "IA3", "VERA", "PREFIX_TUNING", "PROMPT_TUNING", "P_TUNING"}


def test_ia3_keeps_the_cast_input_of_feedforward_modules_and_the_output_of_the_others():
    base = saved_per_token(setup(targets=("nothing",)))
    ia3 = saved_per_token(setup("IA3", targets=("k_proj", "v_proj", "down_proj")))
    # k and v: their bf16 outputs (8 kv heads x 128); down_proj: its 8192-wide input cast to fp32
    assert ia3 - base == 2 * 1024 + 2 * 1024 + 4 * 8192
    lora = saved_per_token(setup(targets=("k_proj", "v_proj", "down_proj"), rank=8))
    assert ia3 < lora


def test_ia3_feedforward_modules_follow_the_config():
    default = saved_per_token(setup("IA3", targets=("up_proj",)))
    ff = saved_per_token(setup("IA3", targets=("up_proj",), feedforward_modules=["up_proj"]))
    assert ff - default == 4 * 3072 - 2 * 8192      # the fp32 input instead of the bf16 output


def test_vera_keeps_its_products_not_the_input():
    base = saved_per_token(setup(targets=("nothing",)))
    vera = saved_per_token(setup("VERA", rank=256))
    # per module: lambda_d's factor (r wide) and lambda_b's (out wide), fp32; A and B are frozen buffers
    assert vera - base == 4 * (256 + 3072) + 4 * (256 + 1024)


def test_dora_keeps_the_base_output_and_lora_output_of_every_module():
    lora = saved_per_token(setup())
    dora = saved_per_token(setup(use_dora=True))
    assert dora - lora == (2 + 4) * (3072 + 1024)


def test_prompt_tuning_lengthens_the_sequence_by_its_virtual_tokens():
    plain = estimate(setup(targets=("nothing",)), LLAMA32_3B, L40S)
    prompt = estimate(setup("PROMPT_TUNING", num_virtual_tokens=200), LLAMA32_3B, L40S)
    assert prompt.components["logits"] == pytest.approx(plain.components["logits"] * 968 / 768, rel=1e-6)
    assert prompt.allocated_gib > plain.allocated_gib


def test_prefix_tuning_lengthens_only_the_keys_and_values():
    none = setup("PREFIX_TUNING", num_virtual_tokens=0)
    prefix = setup("PREFIX_TUNING", num_virtual_tokens=200)
    # per token of the batch: k and v repeated to 24 heads (a padded batch under SDPA) over 968 positions instead
    # of 768, and the float mask 200 columns wider
    assert saved_per_token(prefix) - saved_per_token(none) == pytest.approx(2 * 2 * 3072 * 200 / 768 + 2 * 200)
    assert saved_per_token(none) < saved_per_token(setup())         # no LoRA tensors in the layers
    assert estimate(prefix, LLAMA32_3B, L40S).components["logits"] == \
        estimate(none, LLAMA32_3B, L40S).components["logits"]


def test_chatglm_yaml_names_prefix_tuning_and_the_estimate_uses_it():
    s = load_config(str(DATA / "real-configs" / "chatglm" / "chatglm3_ptuning_v2.yaml"))
    assert s.mechanisms.peft_type == "PREFIX_TUNING" and s.mechanisms.virtual_tokens == 64


def test_a_type_estimated_as_plain_lora_says_so(tmp_path):
    text = (DATA / "real-configs" / "chatglm" / "chatglm3_lora.yaml").read_text()
    assert "peft_type: LORA" in text
    path = tmp_path / "loha.yaml"
    path.write_text(text.replace("peft_type: LORA", "peft_type: LOHA"))
    s = load_config(str(path))
    assert s.method == "lora" and not s.mechanisms.peft_type
    assert any(getattr(w, "code", "") == "config.peft_as_lora" for w in s.warnings)
    plain = load_config(str(DATA / "real-configs" / "chatglm" / "chatglm3_lora.yaml"))
    assert not any(getattr(w, "code", "") == "config.peft_as_lora" for w in plain.warnings)


SCRIPT = '''from peft import {cls}, get_peft_model
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-3B", torch_dtype="bfloat16")
model = get_peft_model(model, {cls}(task_type="CAUSAL_LM", {args}))
args = TrainingArguments(output_dir="out", per_device_train_batch_size=4, bf16=True)
Trainer(model=model, args=args).train()
'''


def _script(tmp_path, cls: str, args: str) -> TrainingSetup:
    path = tmp_path / "train.py"
    path.write_text(SCRIPT.format(cls=cls, args=args))
    return load_config(str(path))


def test_a_script_names_its_peft_type_and_its_keys(tmp_path):
    ia3 = _script(tmp_path, "IA3Config", 'target_modules=["k_proj", "v_proj", "down_proj"], '
                                         'feedforward_modules=["down_proj"]')
    assert ia3.method == "lora" and ia3.lora_targets == ("k_proj", "v_proj", "down_proj")
    assert (ia3.mechanisms.peft_type, ia3.mechanisms.ia3_feedforward) == ("IA3", ("down_proj",))
    prompt = _script(tmp_path, "PromptTuningConfig", "num_virtual_tokens=200")
    assert (prompt.mechanisms.peft_type, prompt.mechanisms.virtual_tokens) == ("PROMPT_TUNING", 200)
    assert any(getattr(w, "code", "") == "config.ptuning_yaml" for w in prompt.warnings)
    lora = _script(tmp_path, "LoraConfig", 'r=16, target_modules=["q_proj", "v_proj"]')
    assert not lora.mechanisms.peft_type and lora.lora_rank == 16


def test_a_script_with_a_type_estimated_as_plain_lora_says_so(tmp_path):
    loha = _script(tmp_path, "LoHaConfig", 'r=32, target_modules=["q_proj", "v_proj"]')
    assert loha.method == "lora" and loha.lora_rank == 32
    assert any(getattr(w, "code", "") == "config.peft_as_lora" for w in loha.warnings)


def test_the_setup_line_names_a_modelled_peft_type(tmp_path):
    from oomdoctor.views.describe import setup_line

    prompt = _script(tmp_path, "PromptTuningConfig", "num_virtual_tokens=200")
    assert setup_line(prompt).startswith("PROMPT_TUNING (200 virtual tokens),")
    assert "虚拟 token" in setup_line(prompt, "zh")
    assert setup_line(_script(tmp_path, "IA3Config", 'target_modules=["k_proj"], feedforward_modules=[]')) \
        .startswith("IA3,")
    assert setup_line(_script(tmp_path, "LoHaConfig", "r=32")).startswith("LoRA r=32,")   # said in a note


def test_a_swift_train_type_estimated_as_plain_lora_says_so(tmp_path):
    script = ("CUDA_VISIBLE_DEVICES=0 swift sft \\\n    --model Qwen/Qwen2.5-7B-Instruct \\\n    --train_type {} \\\n"
              "    --dataset AI-ModelScope/alpaca-gpt4-data-en \\\n    --max_length 2048\n")
    for word, said in (("vera", True), ("adalora", True), ("lora", False), ("pissa", False)):
        path = tmp_path / f"{word}.sh"
        path.write_text(script.format(word))
        s = load_config(str(path))
        assert s.method == "lora", word
        assert any(getattr(w, "code", "") == "config.peft_as_lora" for w in s.warnings) == said, word
