"""Write the synthetic checkpoints in this folder: safetensors files that hold only their header (the
tensor data is left out, so each file is a few KB), one folder per naming scheme, with a config.json and
`expected.json` giving the exact parameter count that follows from the tensors written here.

Run from the repository root: python tests/data/checkpoints/make_fixtures.py
The names and shapes follow the real checkpoints of each family (see tests/data/corpus/ for real indexes);
the sizes are small so the numbers are easy to check by hand.
"""
from __future__ import annotations

import json
import struct
from pathlib import Path

HERE = Path(__file__).parent
WIDTH = {"BF16": 2, "F16": 2, "F32": 4, "I32": 4, "U8": 1, "I8": 1, "F8_E4M3": 1, "BOOL": 1}


class Ckpt:
    def __init__(self, name: str, config: dict, dtype: str = "BF16") -> None:
        self.name, self.config, self.dtype = name, config, dtype
        self.tensors: list[tuple[str, str, list[int], bool]] = []   # name, dtype, shape, counts as parameters
        self.params = 0
        self.extra_expected: dict = {}

    def t(self, name: str, shape: list[int], dtype: str | None = None, param: bool = True, elems: int | None = None):
        self.tensors.append((name, dtype or self.dtype, shape, param))
        if param:
            n = 1
            for d in shape:
                n *= d
            self.params += n if elems is None else elems

    def write(self, shards: int = 1) -> None:
        folder = HERE / self.name
        folder.mkdir(exist_ok=True)
        (folder / "config.json").write_text(json.dumps(self.config, indent=2) + "\n", encoding="utf-8")
        groups = [self.tensors[i::shards] for i in range(shards)] if shards > 1 else [self.tensors]
        weight_map = {}
        total = 0
        for i, group in enumerate(groups):
            fname = "model.safetensors" if shards == 1 else f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
            header: dict = {"__metadata__": {"format": "pt"}}
            offset = 0
            for name, dtype, shape, _ in group:
                n = WIDTH[dtype]
                for d in shape:
                    n *= d
                header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
                offset += n
                weight_map[name] = fname
            total += offset
            raw = json.dumps(header, separators=(",", ":")).encode()
            raw += b" " * (-len(raw) % 8)
            # header only: the data section is left out (zero-length), which is all oomdoctor reads
            (folder / fname).write_bytes(struct.pack("<Q", len(raw)) + raw)
        if shards > 1:
            index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
            (folder / "model.safetensors.index.json").write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
        expected = {"params": self.params, **self.extra_expected}
        (folder / "expected.json").write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")


H, I, V, L, NH, KV = 64, 160, 512, 2, 4, 2          # hidden, MLP width, vocabulary, layers, heads, kv heads
D = H // NH


def llama(name: str = "llama-tied", tied: bool = True) -> Ckpt:
    c = Ckpt(name, {"model_type": "llama", "hidden_size": H, "intermediate_size": I, "num_hidden_layers": L,
                    "num_attention_heads": NH, "num_key_value_heads": KV, "vocab_size": V,
                    "tie_word_embeddings": tied, "torch_dtype": "bfloat16"})
    c.t("model.embed_tokens.weight", [V, H])
    for i in range(L):
        p = f"model.layers.{i}."
        c.t(p + "self_attn.q_proj.weight", [NH * D, H])
        c.t(p + "self_attn.k_proj.weight", [KV * D, H])
        c.t(p + "self_attn.v_proj.weight", [KV * D, H])
        c.t(p + "self_attn.o_proj.weight", [H, NH * D])
        c.t(p + "self_attn.rotary_emb.inv_freq", [D // 2], "F32", param=False)
        c.t(p + "mlp.gate_proj.weight", [I, H])
        c.t(p + "mlp.up_proj.weight", [I, H])
        c.t(p + "mlp.down_proj.weight", [H, I])
        c.t(p + "input_layernorm.weight", [H])
        c.t(p + "post_attention_layernorm.weight", [H])
    c.t("model.norm.weight", [H])
    if not tied:
        c.t("lm_head.weight", [V, H])
    c.extra_expected = {"tied": tied, "vocab": V}
    return c


def qwen1() -> Ckpt:
    c = Ckpt("qwen1-c_attn", {"model_type": "qwen", "hidden_size": H, "intermediate_size": 2 * I,
                              "num_hidden_layers": L, "num_attention_heads": NH, "kv_channels": D, "vocab_size": V,
                              "no_bias": True, "tie_word_embeddings": False})
    c.t("transformer.wte.weight", [V, H])
    for i in range(L):
        p = f"transformer.h.{i}."
        c.t(p + "ln_1.weight", [H])
        c.t(p + "attn.c_attn.weight", [3 * H, H])
        c.t(p + "attn.c_attn.bias", [3 * H])
        c.t(p + "attn.c_proj.weight", [H, H])
        c.t(p + "ln_2.weight", [H])
        c.t(p + "mlp.w1.weight", [I, H])
        c.t(p + "mlp.w2.weight", [I, H])
        c.t(p + "mlp.c_proj.weight", [H, I])
    c.t("transformer.ln_f.weight", [H])
    c.t("lm_head.weight", [V, H])
    return c


def baichuan() -> Ckpt:
    c = Ckpt("baichuan-w_pack", {"model_type": "baichuan", "hidden_size": H, "intermediate_size": I,
                                 "num_hidden_layers": L, "num_attention_heads": NH, "vocab_size": V,
                                 "tie_word_embeddings": False, "torch_dtype": "bfloat16"})
    c.t("model.embed_tokens.weight", [V, H])
    for i in range(L):
        p = f"model.layers.{i}."
        c.t(p + "self_attn.W_pack.weight", [3 * H, H])
        c.t(p + "self_attn.o_proj.weight", [H, H])
        c.t(p + "mlp.gate_proj.weight", [I, H])
        c.t(p + "mlp.up_proj.weight", [I, H])
        c.t(p + "mlp.down_proj.weight", [H, I])
        c.t(p + "input_layernorm.weight", [H])
        c.t(p + "post_attention_layernorm.weight", [H])
    c.t("model.norm.weight", [H])
    c.t("lm_head.weight", [V, H])
    return c


def falcon() -> Ckpt:
    """Falcon-7B naming: one multi-query query_key_value, one LayerNorm, lm_head stored but tied."""
    c = Ckpt("falcon-query_key_value", {"model_type": "falcon", "hidden_size": H, "num_hidden_layers": L,
                                        "num_attention_heads": NH, "multi_query": True, "parallel_attn": True,
                                        "new_decoder_architecture": False, "bias": False, "vocab_size": V,
                                        "torch_dtype": "bfloat16"})
    c.t("transformer.word_embeddings.weight", [V, H])
    for i in range(L):
        p = f"transformer.h.{i}."
        c.t(p + "input_layernorm.weight", [H])
        c.t(p + "input_layernorm.bias", [H])
        c.t(p + "self_attention.query_key_value.weight", [H + 2 * D, H])
        c.t(p + "self_attention.dense.weight", [H, H])
        c.t(p + "mlp.dense_h_to_4h.weight", [4 * H, H])
        c.t(p + "mlp.dense_4h_to_h.weight", [H, 4 * H])
    c.t("transformer.ln_f.weight", [H])
    c.t("transformer.ln_f.bias", [H])
    c.t("lm_head.weight", [V, H], param=False)        # the same matrix as word_embeddings once tied
    c.extra_expected = {"tied": True}
    return c


def internlm2() -> Ckpt:
    c = Ckpt("internlm2-wqkv", {"model_type": "internlm2", "hidden_size": H, "intermediate_size": I,
                                "num_hidden_layers": L, "num_attention_heads": NH, "num_key_value_heads": KV,
                                "vocab_size": V, "bias": False, "tie_word_embeddings": False,
                                "torch_dtype": "bfloat16"})
    c.t("model.tok_embeddings.weight", [V, H])
    for i in range(L):
        p = f"model.layers.{i}."
        c.t(p + "attention.wqkv.weight", [(NH + 2 * KV) * D, H])
        c.t(p + "attention.wo.weight", [H, NH * D])
        c.t(p + "feed_forward.w1.weight", [I, H])
        c.t(p + "feed_forward.w3.weight", [I, H])
        c.t(p + "feed_forward.w2.weight", [H, I])
        c.t(p + "attention_norm.weight", [H])
        c.t(p + "ffn_norm.weight", [H])
    c.t("model.norm.weight", [H])
    c.t("output.weight", [V, H])
    return c


def gpt2() -> Ckpt:
    """GPT-2: Conv1D weights stored [in, out], learned positions, causal-mask buffers in the file."""
    c = Ckpt("gpt2-conv1d", {"model_type": "gpt2", "n_embd": H, "n_layer": L, "n_head": NH, "n_positions": 128,
                             "vocab_size": V}, dtype="F32")
    c.t("wte.weight", [V, H])
    c.t("wpe.weight", [128, H])
    for i in range(L):
        p = f"h.{i}."
        c.t(p + "ln_1.weight", [H])
        c.t(p + "ln_1.bias", [H])
        c.t(p + "attn.bias", [1, 1, 128, 128], param=False)
        c.t(p + "attn.masked_bias", [], param=False)
        c.t(p + "attn.c_attn.weight", [H, 3 * H])
        c.t(p + "attn.c_attn.bias", [3 * H])
        c.t(p + "attn.c_proj.weight", [H, H])
        c.t(p + "attn.c_proj.bias", [H])
        c.t(p + "ln_2.weight", [H])
        c.t(p + "ln_2.bias", [H])
        c.t(p + "mlp.c_fc.weight", [H, 4 * H])
        c.t(p + "mlp.c_fc.bias", [4 * H])
        c.t(p + "mlp.c_proj.weight", [4 * H, H])
        c.t(p + "mlp.c_proj.bias", [H])
    c.t("ln_f.weight", [H])
    c.t("ln_f.bias", [H])
    return c


def chatglm() -> Ckpt:
    c = Ckpt("chatglm-query_key_value", {"model_type": "chatglm", "hidden_size": H, "num_layers": L,
                                         "num_attention_heads": NH, "kv_channels": D, "multi_query_attention": True,
                                         "multi_query_group_num": KV, "ffn_hidden_size": I, "padded_vocab_size": V,
                                         "add_qkv_bias": True, "add_bias_linear": False, "rmsnorm": True,
                                         "post_layer_norm": True, "tie_word_embeddings": False,
                                         "torch_dtype": "bfloat16"})
    c.t("transformer.embedding.word_embeddings.weight", [V, H])
    c.t("transformer.rotary_pos_emb.inv_freq", [D // 4], param=False)
    for i in range(L):
        p = f"transformer.encoder.layers.{i}."
        c.t(p + "input_layernorm.weight", [H])
        c.t(p + "self_attention.query_key_value.weight", [(NH + 2 * KV) * D, H])
        c.t(p + "self_attention.query_key_value.bias", [(NH + 2 * KV) * D])
        c.t(p + "self_attention.dense.weight", [H, NH * D])
        c.t(p + "post_attention_layernorm.weight", [H])
        c.t(p + "mlp.dense_h_to_4h.weight", [2 * I, H])
        c.t(p + "mlp.dense_4h_to_h.weight", [H, I])
    c.t("transformer.encoder.final_layernorm.weight", [H])
    c.t("transformer.output_layer.weight", [V, H])
    return c


def mixtral() -> Ckpt:
    E = 4
    c = Ckpt("mixtral-experts", {"model_type": "mixtral", "hidden_size": H, "intermediate_size": I,
                                 "num_hidden_layers": L, "num_attention_heads": NH, "num_key_value_heads": KV,
                                 "num_local_experts": E, "num_experts_per_tok": 2, "vocab_size": V,
                                 "tie_word_embeddings": False, "torch_dtype": "bfloat16"})
    c.t("model.embed_tokens.weight", [V, H])
    for i in range(L):
        p = f"model.layers.{i}."
        c.t(p + "self_attn.q_proj.weight", [NH * D, H])
        c.t(p + "self_attn.k_proj.weight", [KV * D, H])
        c.t(p + "self_attn.v_proj.weight", [KV * D, H])
        c.t(p + "self_attn.o_proj.weight", [H, NH * D])
        c.t(p + "block_sparse_moe.gate.weight", [E, H])
        for e in range(E):
            q = p + f"block_sparse_moe.experts.{e}."
            c.t(q + "w1.weight", [I, H])
            c.t(q + "w3.weight", [I, H])
            c.t(q + "w2.weight", [H, I])
        c.t(p + "input_layernorm.weight", [H])
        c.t(p + "post_attention_layernorm.weight", [H])
    c.t("model.norm.weight", [H])
    c.t("lm_head.weight", [V, H])
    c.extra_expected = {"experts": E}
    return c


def gptq() -> Ckpt:
    """GPTQ 4-bit: qweight int32 [in/8, out], qzeros, fp16 scales [in/group, out], g_idx [in]."""
    c = llama("llama-gptq-4bit", tied=False)
    c.config["quantization_config"] = {"quant_method": "gptq", "bits": 4, "group_size": 32, "desc_act": False}
    c.config["torch_dtype"] = "float16"
    quantized: list[tuple[str, str, list[int], bool]] = []
    params = 0
    for name, dtype, shape, param in c.tensors:
        if ".layers." in name and name.endswith("proj.weight"):
            out_f, in_f = shape
            base = name[: -len(".weight")]
            quantized += [(base + ".qweight", "I32", [in_f // 8, out_f], True),
                          (base + ".qzeros", "I32", [in_f // 32, out_f // 8], False),
                          (base + ".scales", "F16", [in_f // 32, out_f], False),
                          (base + ".g_idx", "I32", [in_f], False)]
            params += in_f * out_f
        else:
            quantized.append((name, "F16" if dtype == "BF16" else dtype, shape, param))
            if param:
                n = 1
                for d in shape:
                    n *= d
                params += n
    c.tensors, c.params = quantized, params
    c.extra_expected = {"quant": "gptq", "bits": 4, "tied": False}
    return c


def awq() -> Ckpt:
    """AWQ 4-bit (GEMM): qweight int32 [in, out/8], qzeros [in/group, out/8], scales [in/group, out]."""
    c = llama("llama-awq-4bit", tied=False)
    c.config["quantization_config"] = {"quant_method": "awq", "bits": 4, "group_size": 32, "version": "gemm"}
    c.config["torch_dtype"] = "float16"
    out: list[tuple[str, str, list[int], bool]] = []
    for name, dtype, shape, param in c.tensors:
        if ".layers." in name and name.endswith("proj.weight"):
            out_f, in_f = shape
            base = name[: -len(".weight")]
            out += [(base + ".qweight", "I32", [in_f, out_f // 8], True),
                    (base + ".qzeros", "I32", [in_f // 32, out_f // 8], False),
                    (base + ".scales", "F16", [in_f // 32, out_f], False)]
        else:
            out.append((name, "F16" if dtype == "BF16" else dtype, shape, param))
    c.tensors = out
    c.extra_expected = {"quant": "awq", "bits": 4, "tied": False}
    return c


def bnb4() -> Ckpt:
    """bitsandbytes NF4: uint8 [(n+1)//2, 1] with absmax, quant_map and a quant_state blob per weight."""
    c = llama("llama-bnb-nf4", tied=False)
    c.config["quantization_config"] = {"quant_method": "bitsandbytes", "load_in_4bit": True,
                                       "bnb_4bit_quant_type": "nf4"}
    out: list[tuple[str, str, list[int], bool]] = []
    for name, dtype, shape, param in c.tensors:
        if ".layers." in name and name.endswith("proj.weight"):
            n = shape[0] * shape[1]
            out += [(name, "U8", [(n + 1) // 2, 1], True),
                    (name + ".absmax", "F32", [n // 64], False),
                    (name + ".quant_map", "F32", [16], False),
                    (name + ".quant_state.bitsandbytes__nf4", "U8", [120], False)]
        else:
            out.append((name, dtype, shape, param))
    c.tensors = out
    c.extra_expected = {"quant": "bitsandbytes", "bits": 4, "tied": False}
    return c


def bnb8() -> Ckpt:
    c = llama("llama-bnb-int8", tied=False)
    c.config["quantization_config"] = {"quant_method": "bitsandbytes", "load_in_8bit": True}
    out: list[tuple[str, str, list[int], bool]] = []
    for name, dtype, shape, param in c.tensors:
        if ".layers." in name and name.endswith("proj.weight"):
            out += [(name, "I8", shape, True), (name[: -len(".weight")] + ".SCB", "F32", [shape[0]], False),
                    (name[: -len(".weight")] + ".weight_format", "U8", [1], False)]
        else:
            out.append((name, dtype, shape, param))
    c.tensors = out
    c.extra_expected = {"quant": "bitsandbytes", "bits": 8, "tied": False}
    return c


def fp8() -> Ckpt:
    """FP8 with 128x128 block scales (weight_scale_inv), as DeepSeek-V3 and Qwen3-FP8 store it."""
    c = llama("llama-fp8-block", tied=False)
    c.config["quantization_config"] = {"quant_method": "fp8", "weight_block_size": [32, 32]}
    out: list[tuple[str, str, list[int], bool]] = []
    for name, dtype, shape, param in c.tensors:
        if ".layers." in name and name.endswith("proj.weight"):
            out += [(name, "F8_E4M3", shape, True),
                    (name + "_scale_inv", "F32", [-(-shape[0] // 32), -(-shape[1] // 32)], False)]
        else:
            out.append((name, dtype, shape, param))
    c.tensors = out
    c.extra_expected = {"quant": "fp8", "bits": 8, "tied": False}
    return c


def gpt_oss() -> Ckpt:
    """GPT-OSS: MXFP4 experts (blocks [E, out, in/32, 16] uint8 + scales), bf16 biases, attention sinks."""
    E, W = 4, 64                                      # experts, expert width (in/32 must be whole)
    c = Ckpt("gpt-oss-mxfp4", {"model_type": "gpt_oss", "hidden_size": H, "intermediate_size": W,
                               "num_hidden_layers": L, "num_attention_heads": NH, "num_key_value_heads": KV,
                               "head_dim": D, "num_local_experts": E, "num_experts_per_tok": 2, "vocab_size": V,
                               "attention_bias": True, "tie_word_embeddings": False,
                               "quantization_config": {"quant_method": "mxfp4"}})
    c.t("model.embed_tokens.weight", [V, H])
    for i in range(L):
        p = f"model.layers.{i}."
        for proj, rows in (("q_proj", NH * D), ("k_proj", KV * D), ("v_proj", KV * D)):
            c.t(p + f"self_attn.{proj}.weight", [rows, H])
            c.t(p + f"self_attn.{proj}.bias", [rows])
        c.t(p + "self_attn.o_proj.weight", [H, NH * D])
        c.t(p + "self_attn.o_proj.bias", [H])
        c.t(p + "self_attn.sinks", [NH], "F32")
        c.t(p + "mlp.router.weight", [E, H])
        c.t(p + "mlp.router.bias", [E])
        c.t(p + "mlp.experts.gate_up_proj_blocks", [E, 2 * W, H // 32, 16], "U8", elems=E * 2 * W * H)
        c.t(p + "mlp.experts.gate_up_proj_scales", [E, 2 * W, H // 32], "U8", param=False)
        c.t(p + "mlp.experts.gate_up_proj_bias", [E, 2 * W])
        c.t(p + "mlp.experts.down_proj_blocks", [E, H, W // 32, 16], "U8", elems=E * H * W)
        c.t(p + "mlp.experts.down_proj_scales", [E, H, W // 32], "U8", param=False)
        c.t(p + "mlp.experts.down_proj_bias", [E, H])
        c.t(p + "input_layernorm.weight", [H])
        c.t(p + "post_attention_layernorm.weight", [H])
    c.t("model.norm.weight", [H])
    c.t("lm_head.weight", [V, H])
    c.extra_expected = {"quant": "mxfp4", "bits": 4, "experts": E}
    return c


def sharded() -> Ckpt:
    c = llama("llama-sharded-untied", tied=False)
    return c


def resized_vocab() -> Ckpt:
    """A fine-tune that added tokens: the stored embedding (V + 8 rows) wins over config.json's vocab_size."""
    c = llama("llama-resized-vocab", tied=False)
    c.tensors = [(n, d, [V + 8, H] if n in ("model.embed_tokens.weight", "lm_head.weight") else s, p)
                 for n, d, s, p in c.tensors]
    c.params += 2 * 8 * H
    c.extra_expected = {"tied": False, "vocab": V + 8}
    return c


if __name__ == "__main__":
    for make in (llama, qwen1, baichuan, falcon, internlm2, gpt2, chatglm, mixtral, gptq, awq, bnb4, bnb8, fp8, gpt_oss,
                 resized_vocab):
        make().write()
    sharded().write(shards=3)
    print("written")
