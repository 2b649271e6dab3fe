"""config.json -> ModelShape, per model_type: what each architecture's keys mean and which modules it builds.

Each builder reads the keys its config class reads (names, defaults and `tie_word_embeddings` default as in
transformers' configuration_<type>.py, or the model's own remote code for qwen, chatglm, baichuan, internlm,
internlm2), and lists one decoder layer's linear modules under the names the model code gives them, so LoRA
targets match the way PEFT matches them. A model_type not listed here is counted as a Llama-style decoder and
the shape says so (`llama_style_guess`, a note).

Every number passes through oomdoctor/values.py: a bad value is an InputError naming the file and line.
"""
from __future__ import annotations

import json
import math
from typing import Any, Callable, overload

from oomdoctor.errors import InputError
from oomdoctor.facts import Linear, ModelShape, Msg, msg
from oomdoctor.lined import locate
from oomdoctor.values import BadValue, as_float, as_int

_DTYPES = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32",
           "fp16": "fp16", "bf16": "bf16", "fp32": "fp32"}
# Larger than any real dimension or vocabulary (1M-token vocabularies exist); a layer count of a few
# thousand would already be absurd. Bounds keep a typo from turning into petabytes.
_MAX_DIM = 1 << 24
_MAX_LAYERS = 10_000


class Cfg:
    """A config.json mapping with typed, validated reads that name the file and line on a bad value."""

    def __init__(self, data: dict[str, Any], path: str | None, text: str | None = None,
                 parent: Cfg | None = None, at: tuple[str, ...] = ()) -> None:
        self.data, self.path, self.text, self.parent = data, path, text, parent
        self.at = at                          # the keys from the file's top mapping down to this one
        self.asked: set[str] = set()          # every key a builder looked at (unread structural keys are listed)

    def has(self, *keys: str) -> bool:
        self.asked.update(keys)
        return any(self.data.get(k) is not None for k in keys)

    def raw(self, *keys: str, default: Any = None) -> Any:
        self.asked.update(keys)
        for k in keys:
            if self.data.get(k) is not None:
                return self.data[k]
        return default

    def _line(self, key: str) -> int | None:
        """The line of `key` in the file, from the composed nodes' exact marks (oomdoctor/bounded.py compose_yaml:
        JSON is YAML's flow style): looked up where this mapping sits, then where each parent sits (a text_config
        takes some keys from the top), then first anywhere; None for text without lines or that YAML cannot
        compose."""
        cfg: Cfg | None = self
        scopes: list[tuple[str, ...]] = []
        text = None
        while cfg is not None:
            scopes.append(cfg.at)
            text = text or cfg.text
            cfg = cfg.parent
        read = locate(text, self.path or "") if text else None
        if read is None:
            return None
        for scope in scopes:
            line = read.key_line(".".join(scope + (key,)))
            if line is not None:
                return line
        tail = "." + key
        found = next((p for p, (k, _) in read.nodes.items() if k is not None and (p == key or p.endswith(tail))),
                     None)
        return read.key_line(found) if found is not None else None

    def fail(self, key: str, message: Msg) -> InputError:
        return InputError(message, self.path, self._line(key))

    @overload
    def get_int(self, *keys: str, default: int, minimum: int = ..., maximum: int = ...) -> int: ...

    @overload
    def get_int(self, *keys: str, default: None = ..., minimum: int = ..., maximum: int = ...) -> int | None: ...

    def get_int(self, *keys: str, default: int | None = None, minimum: int = 1, maximum: int = _MAX_DIM) -> int | None:
        self.asked.update(keys)
        for k in keys:
            value = self.data.get(k)
            if value is None:
                continue
            try:
                return as_int(value, k, minimum=minimum, maximum=maximum)
            except BadValue as err:
                raise self.fail(k, err.message) from None
        return default

    def need(self, *keys: str, minimum: int = 1, maximum: int = _MAX_DIM) -> int:
        value = self.get_int(*keys, minimum=minimum, maximum=maximum)
        if value is None:
            raise InputError(msg("model.config.missing_key", keys=" / ".join(keys)), self.path)
        return value

    def get_float(self, key: str, default: float, minimum: float = 0.0, maximum: float = 1e6) -> float:
        self.asked.add(key)
        value = self.data.get(key)
        if value is None:
            return default
        try:
            return as_float(value, key, minimum=minimum, maximum=maximum)
        except BadValue as err:
            raise self.fail(key, err.message) from None

    def flag(self, key: str, default: bool) -> bool:
        self.asked.add(key)
        value = self.data.get(key)
        return default if value is None else bool(value)

    def sub(self, key: str) -> Cfg | None:
        self.asked.add(key)
        value = self.data.get(key)
        return Cfg(value, self.path, None, self, self.at + (key,)) if isinstance(value, dict) else None


class _Build:
    """What a builder decides; turned into a ModelShape by `finish`."""

    def __init__(self, c: Cfg, model_type: str, tie_default: bool) -> None:
        self.c = c
        self.model_type = model_type
        self.hidden = 0
        self.layers = 0
        self.heads = 0
        self.kv = 0
        self.head_dim: int | None = None
        self.vocab = 0
        self.inter = 0                      # the MLP width activations see (a dense layer's)
        self.gated = True
        self.tied = c.flag("tie_word_embeddings", tie_default)
        self.dense: list[Linear] = []
        self.moe: list[Linear] = []
        self.layer_other: int | None = None
        self.final_norm: int | None = None
        self.extra = 0
        self.experts = 0
        self.experts_per_token = 0
        self.moe_inter: int | None = None
        self.shared = 0
        self.shared_inter: int | None = None
        self.first_dense = 0
        self.moe_layers: int | None = None
        self.notes: list[Msg] = []
        self.guess = False
        self.linear_attn: list[Linear] = []     # hybrids: a linear-attention layer's token mixer
        self.linear_attn_layers = 0
        self.linear_attn_other: int | None = None
        self.pure_ssm = False                   # every layer a state-space mixer (Mamba): no attention, no MLP
        self.assumed: list[Msg] = []            # what a reading from features alone assumed
        self.blocks: Any = None                 # features.Blocks: layers that are single blocks (Nemotron-H)
        self.head_counted = False               # the builder counted the class's own head (_task_head skips)


def _attn(b: _Build, *, prefix: str = "self_attn", names: tuple[str, str, str, str] = ("q_proj", "k_proj", "v_proj", "o_proj"),
          qkv_bias: bool = False, o_bias: bool = False) -> list[Linear]:
    d = b.head_dim or b.hidden // b.heads
    q, kv = b.heads * d, b.kv * d
    return [Linear(f"{prefix}.{names[0]}", b.hidden, q, qkv_bias, role="q"),
            Linear(f"{prefix}.{names[1]}", b.hidden, kv, qkv_bias, role="k"),
            Linear(f"{prefix}.{names[2]}", b.hidden, kv, qkv_bias, role="v"),
            Linear(f"{prefix}.{names[3]}", q, b.hidden, o_bias, role="o")]


def _fused_attn(b: _Build, qkv: str, o: str, *, qkv_bias: bool = False, o_bias: bool = False) -> list[Linear]:
    d = b.head_dim or b.hidden // b.heads
    return [Linear(qkv, b.hidden, (b.heads + 2 * b.kv) * d, qkv_bias, role="qkv"),
            Linear(o, b.heads * d, b.hidden, o_bias, role="o")]


def _mlp(h: int, inter: int, *, prefix: str = "mlp", names: tuple[str, ...] = ("gate_proj", "up_proj", "down_proj"),
         bias: bool = False, copies: int = 1, peft: bool = True) -> list[Linear]:
    if len(names) == 3:
        return [Linear(f"{prefix}.{names[0]}", h, inter, bias, copies, "gate", peft),
                Linear(f"{prefix}.{names[1]}", h, inter, bias, copies, "up", peft),
                Linear(f"{prefix}.{names[2]}", inter, h, bias, copies, "down", peft)]
    return [Linear(f"{prefix}.{names[0]}", h, inter, bias, copies, "up", peft),
            Linear(f"{prefix}.{names[1]}", inter, h, bias, copies, "down", peft)]


def _common(b: _Build, *, head_dim_key: bool = True, gqa: bool = True, layers: int | None = None) -> None:
    """The keys every family shares; `gqa=False` for config classes that have no num_key_value_heads; `layers`
    when the layer count comes from a per-layer list rather than a key."""
    c = b.c
    b.hidden = c.need("hidden_size", "n_embd", "n_embed", "d_model")
    b.layers = layers if layers is not None else c.need("num_hidden_layers", "num_layers", "n_layer", "n_layers",
                                                        maximum=_MAX_LAYERS)
    b.heads = c.need("num_attention_heads", "n_head", "n_heads", "num_heads")
    b.kv = c.get_int("num_key_value_heads", default=b.heads) if gqa else b.heads
    if b.kv > b.heads or b.heads % b.kv:
        raise c.fail("num_key_value_heads", msg("model.config.bad_kv_heads", kv=b.kv, heads=b.heads))
    if head_dim_key:
        b.head_dim = c.get_int("head_dim")
    if b.head_dim is None and b.hidden % b.heads:
        raise c.fail("num_attention_heads", msg("model.config.bad_heads", hidden=b.hidden, heads=b.heads))
    b.vocab = c.need("vocab_size", "padded_vocab_size")
    b.inter = c.get_int("intermediate_size", "n_inner", "ffn_hidden_size", default=4 * b.hidden)


# ---------------------------------------------------------------- Llama-style families

def _llama(b: _Build, *, qkv_bias: bool | None = None, o_bias: bool | None = None) -> None:
    """LlamaAttention: q/k/v/o all biased by `attention_bias`; LlamaMLP: `mlp_bias`; two RMSNorms."""
    _common(b)
    ab = b.c.flag("attention_bias", False)
    mb = b.c.flag("mlp_bias", False)
    b.dense = _attn(b, qkv_bias=ab if qkv_bias is None else qkv_bias, o_bias=ab if o_bias is None else o_bias)
    b.dense += _mlp(b.hidden, b.inter, bias=mb)


def _qwen2(b: _Build) -> None:
    # Qwen2Attention: q/k/v always biased, o never (transformers models/qwen2/modeling_qwen2.py)
    _llama(b, qkv_bias=True, o_bias=False)


def _qk_norm(b: _Build) -> int:
    return 2 * (b.head_dim or b.hidden // b.heads)


def _qwen3(b: _Build) -> None:
    _llama(b)
    b.layer_other = 2 * b.hidden + _qk_norm(b)           # q_norm and k_norm over head_dim


def _moe_layer_ids(b: _Build, is_moe: Callable[[int], bool]) -> None:
    ids = [i for i in range(b.layers) if is_moe(i)]
    b.moe_layers = len(ids)
    b.first_dense = 0
    for i in range(b.layers):
        if i in ids:
            break
        b.first_dense += 1


def _qwen_moe(b: _Build, *, qk_norm: bool, shared: bool) -> None:
    c = b.c
    _common(b)
    b.experts = c.need("num_experts")
    b.experts_per_token = c.get_int("num_experts_per_tok", default=1)
    b.moe_inter = c.need("moe_intermediate_size")
    qkv_bias = True if not qk_norm else c.flag("attention_bias", False)
    attn = _attn(b, qkv_bias=qkv_bias, o_bias=False if not qk_norm else c.flag("attention_bias", False))
    b.dense = attn + _mlp(b.hidden, b.inter)
    b.moe = attn + [Linear("mlp.gate", b.hidden, b.experts, role="router")]
    b.moe += _mlp(b.hidden, b.moe_inter, prefix="mlp.experts.*", copies=b.experts)
    if shared:
        b.shared_inter = c.get_int("shared_expert_intermediate_size")
        if b.shared_inter:
            b.shared = 1
            b.moe += _mlp(b.hidden, b.shared_inter, prefix="mlp.shared_expert")
            b.moe.append(Linear("mlp.shared_expert_gate", b.hidden, 1, role="router"))
    if qk_norm:
        b.layer_other = 2 * b.hidden + _qk_norm(b)
    step = c.get_int("decoder_sparse_step", default=1)
    listed = c.raw("mlp_only_layers", default=[])
    only_mlp = {i for i in listed if isinstance(i, int) and not isinstance(i, bool)} if isinstance(listed, list) else set()
    _moe_layer_ids(b, lambda i: i not in only_mlp and (i + 1) % step == 0)


def _mixtral(b: _Build) -> None:
    c = b.c
    _common(b)
    b.experts = c.need("num_local_experts")
    b.experts_per_token = c.get_int("num_experts_per_tok", default=2)
    b.moe_inter = b.inter
    # transformers 4.x MixtralSparseMoeBlock: gate and every expert's w1/w3/w2 are nn.Linear
    b.moe = _attn(b) + [Linear("block_sparse_moe.gate", b.hidden, b.experts, role="router")]
    b.moe += _mlp(b.hidden, b.inter, prefix="block_sparse_moe.experts.*", names=("w1", "w3", "w2"), copies=b.experts)
    b.moe_layers = b.layers


def _gemma(b: _Build, *, norms: int, qk_norm: bool) -> None:
    c = b.c
    _common(b)
    ab = c.flag("attention_bias", False)
    b.dense = _attn(b, qkv_bias=ab, o_bias=ab) + _mlp(b.hidden, b.inter)
    b.layer_other = norms * b.hidden + (_qk_norm(b) if qk_norm else 0)


def _gemma4_text(b: _Build, *, unified: bool = False) -> None:
    """Gemma 4's language model (transformers models/gemma4/modeling_gemma4.py Gemma4TextModel, defaults from
    configuration_gemma4.py Gemma4TextConfig). Layers differ: `per_layer_config` gives some layers their own
    head_dim / num_key_value_heads (absent, the full-attention layers take `global_head_dim`); the last
    `num_kv_shared_layers` layers reuse earlier keys and values (no k/v projections or k norm) and, with
    `use_double_wide_mlp`, an MLP twice as wide; with `attention_k_eq_v` the full-attention layers have no v_proj.
    Every layer: q/k norms over its head_dim (the v norm has no weight), four RMSNorms, and with
    `hidden_size_per_layer_input` a per-layer input gate, projection and norm, fed by a per-layer embedding table
    (vocab_size_per_layer_input x layers x that width) and a projection from the hidden state; with
    `enable_moe_block` a router (a projection, a scale, a per-expert scale), 3-D expert weights and three more norms
    beside the dense MLP. The uniform layer is a sliding one; other layers' differences are counted in `extra`."""
    c = b.c
    b.head_dim = c.get_int("head_dim", default=256) or 256
    _common(b, head_dim_key=False)
    h, n, L = b.hidden, b.heads, b.layers
    ab = c.flag("attention_bias", False)
    listed = c.raw("layer_types")
    if isinstance(listed, list) and listed and all(isinstance(k, str) for k in listed):
        kinds = [str(k) for k in listed[:L]] + ["sliding_attention"] * max(0, L - len(listed))
    else:                                          # Gemma4TextConfig: five sliding layers, then one full
        kinds = ["sliding_attention" if (i + 1) % 6 else "full_attention" for i in range(L)]
    kinds[-1] = "full_attention"                   # the config class forces the last layer to full attention
    overrides: dict[int, dict[str, Any]] = {}
    raw = c.raw("per_layer_config")
    if isinstance(raw, dict):
        for key, over in raw.items():
            if not isinstance(over, dict) or not str(key).isdigit():
                raise c.fail("per_layer_config", msg("model.config.bad_layer_kinds", key="per_layer_config"))
            overrides[int(key)] = over
    else:
        global_dim = c.get_int("global_head_dim", default=512) or 512
        global_kv = c.get_int("num_global_key_value_heads", default=None) if c.flag("attention_k_eq_v", False) else None
        for i, kind in enumerate(kinds):
            if kind == "full_attention":
                overrides[i] = {"head_dim": global_dim, **({"num_key_value_heads": global_kv} if global_kv else {})}
    shared = c.get_int("num_kv_shared_layers", default=0, minimum=0) or 0
    first_shared = L - min(shared, L)
    k_eq_v = c.flag("attention_k_eq_v", False)
    wide = c.flag("use_double_wide_mlp", False)

    def attn_of(i: int) -> int:
        over = Cfg(overrides.get(i, {}), c.path, None, c)
        d = over.get_int("head_dim", default=b.head_dim) or b.head_dim or 1
        kv = over.get_int("num_key_value_heads", default=b.kv) or b.kv
        total = 2 * h * n * d + d + ((n * d + h) if ab else 0)             # q_proj, o_proj, q_norm
        if i < first_shared:
            values = 0 if k_eq_v and kinds[i] != "sliding_attention" else 1
            total += (1 + values) * (h * kv * d + (kv * d if ab else 0)) + d    # k_proj (v_proj), k_norm
        return total

    b.dense = _attn(b, qkv_bias=ab, o_bias=ab) + _mlp(h, b.inter)
    # Gemma 4 unified's decoder (models/gemma4_unified/modeling_gemma4_unified.py Gemma4UnifiedTextDecoderLayer)
    # has neither the per-layer input nor the expert block, whatever its config says
    per_input = 0 if unified else c.get_int("hidden_size_per_layer_input", default=256, minimum=0) or 0
    b.layer_other = 4 * h + 2 * b.head_dim + (2 * h * per_input + h if per_input else 0)
    base = _attn_params(b) + 2 * b.head_dim
    for i in range(L):
        b.extra += attn_of(i) - base + (3 * h * b.inter if wide and i >= first_shared else 0)
    if per_input:
        vocab_per_layer = c.get_int("vocab_size_per_layer_input", default=262144) or 262144
        b.extra += vocab_per_layer * L * per_input + h * L * per_input + per_input
    if not unified and c.flag("enable_moe_block", False):
        b.experts = c.need("num_experts")
        b.experts_per_token = c.get_int("top_k_experts", default=1) or 1
        b.moe_inter = c.need("moe_intermediate_size")
        b.moe = b.dense + [Linear("router.proj", h, b.experts, role="router"),
                           Linear("experts.gate_up_proj", h, 2 * b.moe_inter, copies=b.experts, role="gate_up",
                                  peft=False),
                           Linear("experts.down_proj", b.moe_inter, h, copies=b.experts, role="down", peft=False)]
        b.layer_other += h + b.experts + 3 * h       # the router's scale and per-expert scale, three more norms
        b.dense = []
        b.moe_layers = L


def _positive_ints(values: Any, length: int | None = None) -> bool:
    """Whether a config value is a list of positive whole numbers (JSON's true/false are not), of `length` if given."""
    return (isinstance(values, list) and (length is None or len(values) == length)
            and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in values))


def _gemma3n_text(b: _Build) -> None:
    """Gemma 3n's language model (transformers models/gemma3n/modeling_gemma3n.py Gemma3nTextModel; defaults from
    configuration_gemma3n.py Gemma3nTextConfig). `intermediate_size` is one width for every layer or a list of one
    per layer (Gemma3nTextConfig.__post_init__; Gemma3nTextMLP reads `intermediate_size[layer_idx]`), the MLP
    gated and bias-free. Gemma3nTextAttention: q/o always, q_norm over head_dim; k/v projections, k_norm and
    v_norm (no weight, with_scale=False) only in layers that do not reuse keys and values, the last
    `num_kv_shared_layers` (Gemma3nTextConfig.kv_sharing_modes: "reuse" from num_hidden_layers -
    num_kv_shared_layers on). Gemma3nTextDecoderLayer: four RMSNorms; Gemma3nTextAltUp (correct_output_scale,
    correction_coefs n x n, prediction_coefs n -> n*n, modality_router hidden -> n, router_norm; n =
    altup_num_inputs); Gemma3nTextLaurelBlock (linear_left hidden -> laurel_rank, linear_right back, a norm);
    per_layer_input_gate hidden -> hidden_size_per_layer_input, per_layer_projection back and a norm. The model:
    embed_tokens, embed_tokens_per_layer (vocab_size_per_layer_input x layers * hidden_size_per_layer_input),
    per_layer_model_projection hidden -> that width, per_layer_projection_norm, altup_projections and
    altup_unembed_projections (n - 1 square matrices each), the final norm; lm_head tied by default.
    Activation sparsity is a threshold on the activations, no parameter."""
    c = b.c
    b.head_dim = c.get_int("head_dim", default=256) or 256
    b.hidden = c.get_int("hidden_size", default=2048)
    b.layers = c.get_int("num_hidden_layers", default=35, maximum=_MAX_LAYERS)
    b.heads = c.get_int("num_attention_heads", default=8)
    b.kv = c.get_int("num_key_value_heads", default=2)
    if b.kv > b.heads or b.heads % b.kv:
        raise c.fail("num_key_value_heads", msg("model.config.bad_kv_heads", kv=b.kv, heads=b.heads))
    b.vocab = c.get_int("vocab_size", default=262400)
    h, L, d = b.hidden, b.layers, b.head_dim
    raw = c.raw("intermediate_size", default=16384)
    if isinstance(raw, list):
        if not _positive_ints(raw, L):
            raise c.fail("intermediate_size", msg("model.config.bad_layer_list", key="intermediate_size", layers=L))
        widths = [int(w) for w in raw]
    else:
        widths = [c.get_int("intermediate_size", default=16384)] * L
    b.inter = max(widths)
    ab = c.flag("attention_bias", False)
    n = c.get_int("altup_num_inputs", default=4)
    rank = c.get_int("laurel_rank", default=64)
    p = c.get_int("hidden_size_per_layer_input", default=256)
    shared = min(c.get_int("num_kv_shared_layers", default=15, minimum=0) or 0, L)
    b.dense = _attn(b, qkv_bias=ab, o_bias=ab) + _mlp(h, b.inter)
    b.dense += [Linear("altup.correction_coefs", n, n, role="other"),
                Linear("altup.prediction_coefs", n, n * n, role="other"),
                Linear("altup.modality_router", h, n, role="other"),
                Linear("laurel.linear_left", h, rank, role="other"),
                Linear("laurel.linear_right", rank, h, role="other"),
                Linear("per_layer_input_gate", h, p, role="other"),
                Linear("per_layer_projection", p, h, role="other")]
    # four layer norms, q_norm and k_norm, altup's correct_output_scale and router_norm, laurel's and the per-layer
    # input's norms
    b.layer_other = 4 * h + 2 * d + 2 * h + h + h
    kv_params = 2 * (h * b.kv * d + (b.kv * d if ab else 0)) + d       # k_proj, v_proj, k_norm
    for i, width in enumerate(widths):
        b.extra += 3 * h * (width - b.inter) - (kv_params if i >= L - shared else 0)
    vocab_per_layer = c.get_int("vocab_size_per_layer_input", default=262144)
    b.extra += vocab_per_layer * L * p + h * L * p + p + 2 * (n - 1) * h * h


def _gemma3n_audio_params(a: Cfg) -> int:
    """Gemma 3n's audio tower (modeling_gemma3n.py Gemma3nAudioEncoder; defaults from Gemma3nAudioConfig):
    Gemma3nAudioSubSampleConvProjection's two bias-free Conv2d (1 -> sscp_conv_channel_size[0] -> [1], kernels
    sscp_conv_kernel_size), each with a CumulativeGroupNorm weight per channel, and input_proj_linear from the
    flattened channels x frequency bins (input_feat_size padded by one bin each side, then (f - kw) // sw + 1 per
    conv) into hidden_size; conf_num_hidden_layers Gemma3nAudioConformerBlock: two feed-forwards (two norms,
    hidden -> 4 hidden -> hidden), attention (pre/post norms, relative position pos_proj, per_dim_scale over
    head_dim, q/k/v, post), the light conv (a norm, linear_start hidden -> 2 hidden, a depthwise Conv1d of
    conf_conv_kernel_size, conv_norm, linear_end) and a closing norm; all bias-free."""
    hid = a.get_int("hidden_size", default=1536)
    heads = a.get_int("conf_num_attention_heads", default=8)
    layers = a.get_int("conf_num_hidden_layers", default=12, maximum=_MAX_LAYERS)
    kernel = a.get_int("conf_conv_kernel_size", default=5)
    f = a.get_int("input_feat_size", default=128)
    channels = a.raw("sscp_conv_channel_size", default=[128, 32])
    kernels = a.raw("sscp_conv_kernel_size", default=[[3, 3], [3, 3]])
    strides = a.raw("sscp_conv_stride_size", default=[[2, 2], [2, 2]])

    if not (_positive_ints(channels, 2) and isinstance(kernels, list) and len(kernels) == 2
            and all(_positive_ints(k, 2) for k in kernels)):
        raise a.fail("sscp_conv_channel_size", msg("model.config.bad_layer_list", key="sscp_conv_*", layers=2))
    if not (isinstance(strides, list) and len(strides) == 2 and all(_positive_ints(s, 2) for s in strides)):
        raise a.fail("sscp_conv_stride_size", msg("model.config.bad_layer_list", key="sscp_conv_stride_size", layers=2))
    convs, cin = 0, 1
    for (kh, kw), (_, sw), cout in zip(kernels, strides, channels):
        convs += cin * cout * kh * kw + cout
        f = (f + 2 - kw) // sw + 1
        cin = cout
    hd = hid // heads
    inner = heads * hd
    ffw = 2 * hid + 2 * 4 * hid * hid
    attn = 2 * hid + hid * inner + hd + 3 * hid * inner + hid * hid
    lconv = 2 * hid + 2 * hid * hid + hid * kernel + hid * hid
    return convs + cin * f * hid + layers * (2 * ffw + attn + lconv + hid)


def _gemma3n_embedder_params(m: Cfg, text_hidden: int, vocab: int, width: int) -> int:
    """Gemma3nMultimodalEmbedder (modeling_gemma3n.py): an embedding of the tower's vocab_size x its hidden_size,
    hard and soft embedding norms, embedding_projection into the text width; the post-projection norm has no
    weight."""
    w = m.get_int("hidden_size", default=width)
    return m.get_int("vocab_size", default=vocab) * w + 2 * w + w * text_hidden


def _cohere(b: _Build) -> None:
    """One LayerNorm (weight only) before parallel attention and MLP; optional per-head q/k LayerNorm."""
    c = b.c
    _common(b)
    ab = c.flag("attention_bias", False)
    b.dense = _attn(b, qkv_bias=ab, o_bias=ab) + _mlp(b.hidden, b.inter)
    d = b.head_dim or b.hidden // b.heads
    b.layer_other = b.hidden + ((b.heads + b.kv) * d if c.flag("use_qk_norm", False) else 0)


def _starcoder2(b: _Build) -> None:
    c = b.c
    _common(b)
    bias = c.flag("use_bias", True)
    b.gated = False
    b.dense = _attn(b, qkv_bias=bias, o_bias=bias) + _mlp(b.hidden, b.inter, names=("c_fc", "c_proj"), bias=bias)
    b.layer_other = 4 * b.hidden                  # two LayerNorms with bias
    b.final_norm = 2 * b.hidden


def _olmo(b: _Build) -> None:
    _llama(b)
    b.layer_other = 0                             # OlmoLayerNorm has no parameters
    b.final_norm = 0


def _olmo2(b: _Build) -> None:
    _llama(b)
    d = b.head_dim or b.hidden // b.heads
    # q_norm over all query heads, k_norm over all key heads, plus the two post-norms
    b.layer_other = 2 * b.hidden + (b.heads + b.kv) * d


def _stablelm(b: _Build) -> None:
    c = b.c
    _common(b, head_dim_key=False)
    b.dense = _attn(b, qkv_bias=c.flag("use_qkv_bias", False)) + _mlp(b.hidden, b.inter)
    norms = 1 if c.flag("use_parallel_residual", False) else 2
    d = b.hidden // b.heads
    b.layer_other = norms * 2 * b.hidden + ((b.heads + b.kv) * d if c.flag("qk_layernorm", False) else 0)
    b.final_norm = 2 * b.hidden


def _phi(b: _Build) -> None:
    """Phi-1/1.5/2: biased q/k/v/dense and fc1/fc2, one LayerNorm per layer, lm_head with a bias."""
    c = b.c
    _common(b, head_dim_key=False)
    b.gated = False
    if b.model_type in ("phi-msft", "mixformer-sequential"):
        # the pre-transformers remote code: fused Wqkv, out_proj; the head is a Linear with a LayerNorm
        b.kv = c.get_int("n_head_kv", default=b.heads)
        b.dense = _fused_attn(b, "mixer.Wqkv", "mixer.out_proj", qkv_bias=True, o_bias=True)
    else:
        b.dense = _attn(b, names=("q_proj", "k_proj", "v_proj", "dense"), qkv_bias=True, o_bias=True)
    b.dense += _mlp(b.hidden, b.inter, names=("fc1", "fc2"), bias=True)
    d = b.hidden // b.heads
    b.layer_other = 2 * b.hidden + (4 * d if c.flag("qk_layernorm", False) else 0)
    b.final_norm = 2 * b.hidden
    b.extra = 0 if b.tied else b.vocab            # lm_head bias


def _phi3(b: _Build) -> None:
    _common(b)
    b.dense = _fused_attn(b, "self_attn.qkv_proj", "self_attn.o_proj")
    b.dense += [Linear("mlp.gate_up_proj", b.hidden, 2 * b.inter, role="gate_up"),
                Linear("mlp.down_proj", b.inter, b.hidden, role="down")]


def _glm(b: _Build, *, post_norms: bool) -> None:
    """HF-native GLM-4 (`glm`, `glm4`): biased q/k/v, fused gate_up_proj; glm4 adds two post-norms."""
    c = b.c
    _common(b)
    b.dense = _attn(b, qkv_bias=c.flag("attention_bias", True))
    b.dense += [Linear("mlp.gate_up_proj", b.hidden, 2 * b.inter, role="gate_up"),
                Linear("mlp.down_proj", b.inter, b.hidden, role="down")]
    b.layer_other = (4 if post_norms else 2) * b.hidden


def _smollm3(b: _Build) -> None:
    _llama(b)


def _minicpm(b: _Build) -> None:
    """MiniCPM (remote code, modeling_minicpm.py): a Llama-style decoder. MiniCPM-MoE (`num_experts` set)
    replaces every layer's MLP with `num_experts` MiniCPMMLP experts (gate/up/down, no bias) behind a
    bias-free `mlp.gate` router."""
    c = b.c
    _llama(b)
    experts = c.get_int("num_experts", default=0, minimum=0) or 0
    if not experts:
        return
    b.experts = experts
    b.experts_per_token = c.get_int("num_experts_per_tok", default=2)
    b.moe_inter = b.inter
    attn = [l for l in b.dense if l.role in ("q", "k", "v", "o")]
    b.moe = attn + [Linear("mlp.gate", b.hidden, experts, role="router")]
    b.moe += _mlp(b.hidden, b.inter, prefix="mlp.experts.*", copies=experts)
    b.dense = []
    b.moe_layers = b.layers


def _bitnet(b: _Build) -> None:
    """BitNet b1.58 (transformers models/bitnet/modeling_bitnet.py): Llama's projections, q/k/v/o biased by
    `attention_bias`, a gated MLP even under its squared-ReLU `hidden_act`, and two sub-norms Llama lacks: an
    RMSNorm over the attention output (attn_sub_norm, hidden) and one over the MLP's inner width (ffn_sub_norm)."""
    _llama(b)
    b.layer_other = 3 * b.hidden + b.inter


def _exaone4(b: _Build) -> None:
    """EXAONE 4.0: Llama's projections; each layer keeps a post-attention and a post-feedforward RMSNorm
    (no input norm) and RMS-normalises q and k over head_dim (modeling_exaone4.py)."""
    _llama(b)
    b.layer_other = 2 * b.hidden + _qk_norm(b)


def _orion(b: _Build) -> None:
    """Orion (remote code, modeling_orion.py): Llama's projections with LayerNorms (weight and bias)."""
    _llama(b)
    b.layer_other = 4 * b.hidden
    b.final_norm = 2 * b.hidden


def _phimoe(b: _Build) -> None:
    """Phi-3.5-MoE / Phi-tiny-MoE (PhimoeForCausalLM): Mixtral's sparse block, q/k/v/o biased by
    `attention_bias`, LayerNorms with bias, an lm_head with a bias when `lm_head_bias`."""
    c = b.c
    _mixtral(b)
    ab = c.flag("attention_bias", False)
    b.moe = _attn(b, qkv_bias=ab, o_bias=ab) + [l for l in b.moe if l.role not in ("q", "k", "v", "o")]
    b.layer_other = 4 * b.hidden
    b.final_norm = 2 * b.hidden
    b.extra = b.vocab if c.flag("lm_head_bias", False) else 0


def _granitemoe(b: _Build, *, shared: bool) -> None:
    c = b.c
    _common(b)
    b.experts = c.need("num_local_experts")
    b.experts_per_token = c.get_int("num_experts_per_tok", default=2)
    b.moe_inter = b.inter
    ab = c.flag("attention_bias", False)
    # GraniteMoeParallelExperts keep all experts in one 3-D weight: not an nn.Linear PEFT can wrap
    b.moe = _attn(b, qkv_bias=ab, o_bias=ab) + [
        Linear("block_sparse_moe.router.layer", b.hidden, b.experts, role="router"),
        Linear("block_sparse_moe.input_linear", b.hidden, 2 * b.inter, copies=b.experts, role="gate_up", peft=False),
        Linear("block_sparse_moe.output_linear", b.inter, b.hidden, copies=b.experts, role="down", peft=False)]
    if shared:
        # shared_intermediate_size 0 (the config class's default) means no shared MLP at all
        # (transformers models/granitemoeshared/modeling_granitemoeshared.py: `None if ... == 0`)
        b.shared_inter = c.get_int("shared_intermediate_size", default=0, minimum=0)
        if b.shared_inter:
            b.shared = 1
            b.moe += [Linear("shared_mlp.input_linear", b.hidden, 2 * b.shared_inter, role="gate_up"),
                      Linear("shared_mlp.output_linear", b.shared_inter, b.hidden, role="down")]
    b.moe_layers = b.layers


def _gpt_oss(b: _Build) -> None:
    c = b.c
    _common(b)
    b.experts = c.need("num_local_experts")
    b.experts_per_token = c.get_int("num_experts_per_tok", "experts_per_token", default=4)
    b.moe_inter = b.inter
    b.moe = _attn(b, qkv_bias=c.flag("attention_bias", True), o_bias=c.flag("attention_bias", True))
    b.moe += [Linear("mlp.router", b.hidden, b.experts, True, role="router"),
              # GptOssExperts: gate_up_proj [E, h, 2i] and down_proj [E, i, h] with biases, 3-D parameters
              Linear("mlp.experts.gate_up_proj", b.hidden, 2 * b.inter, True, b.experts, "gate_up", False),
              Linear("mlp.experts.down_proj", b.inter, b.hidden, True, b.experts, "down", False)]
    b.layer_other = 2 * b.hidden + b.heads        # two norms + one attention sink per head
    b.moe_layers = b.layers


def _llama4(b: _Build) -> None:
    c = b.c
    _common(b)
    b.experts = c.need("num_local_experts")
    b.experts_per_token = c.get_int("num_experts_per_tok", default=1)
    b.moe_inter = b.inter                         # intermediate_size is the expert width
    dense_inter = c.get_int("intermediate_size_mlp", default=b.inter)
    attn = _attn(b, qkv_bias=c.flag("attention_bias", False), o_bias=c.flag("attention_bias", False))
    b.dense = attn + _mlp(b.hidden, dense_inter, prefix="feed_forward")
    b.moe = attn + [Linear("feed_forward.router", b.hidden, b.experts, role="router"),
                    Linear("feed_forward.experts.gate_up_proj", b.hidden, 2 * b.inter, copies=b.experts,
                           role="gate_up", peft=False),
                    Linear("feed_forward.experts.down_proj", b.inter, b.hidden, copies=b.experts, role="down", peft=False)]
    b.moe += _mlp(b.hidden, b.inter, prefix="feed_forward.shared_expert")
    b.shared, b.shared_inter = 1, b.inter
    b.inter = dense_inter
    listed = c.raw("moe_layers")
    if isinstance(listed, list) and listed:
        ids = {int(i) for i in listed if isinstance(i, int) and not isinstance(i, bool)}
        _moe_layer_ids(b, lambda i: i in ids)
    else:
        step = c.get_int("interleave_moe_layer_step", default=1)
        _moe_layer_ids(b, lambda i: (i + 1) % step == 0)


def _deepseek(b: _Build) -> None:
    """DeepSeek-V2/V3: multi-head latent attention, dense first layers, routed + shared experts."""
    c = b.c
    if b.model_type != "deepseek":               # latent attention: heads need not divide hidden_size
        b.head_dim = c.get_int("qk_nope_head_dim", default=128) + c.get_int("qk_rope_head_dim", default=64)
    _common(b, head_dim_key=False)
    if b.model_type == "deepseek":               # DeepSeek-MoE (v1 remote code): plain attention
        attn = _attn(b, qkv_bias=c.flag("attention_bias", False), o_bias=c.flag("attention_bias", False))
        _deepseek_moe(b, attn)
        return
    attn, norms = _mla_attn(b)
    b.layer_other = 2 * b.hidden + norms
    _deepseek_moe(b, attn)


def _deepseek_v4(b: _Build) -> None:
    """DeepSeek-V4 (transformers models/deepseek_v4/modeling_deepseek_v4.py). Attention: q through a `q_lora_rank`
    bottleneck (q_a_proj, its norm, q_b_proj to heads x head_dim), one shared key/value head (kv_proj, its norm),
    the output through a grouped low-rank pair (o_a_proj: heads x head_dim / o_groups -> o_groups x o_lora_rank
    in each of o_groups groups; o_b_proj), a sink per head. Per `layer_types`, a KV compressor (kv_proj and
    gate_proj, a position bias of compress-rate rows, a norm): one head_dim wide for heavily_compressed_attention,
    twice as wide plus an indexer (its own compressor of index_head_dim, q_b_proj to index heads, a scorer) for
    compressed_sparse_attention, none for sliding_attention. Every layer's MLP is the sparse block (hash-routed or
    not, the same parameters): a bare router weight, 3-D expert weights, shared experts. Around the attention and
    the MLP, a hyper-connection of `hc_mult` streams each ((2 + m) x m rows over m x hidden, a base, three
    scales), and one more before the head."""
    c = b.c
    b.head_dim = c.get_int("head_dim", default=512) or 512
    _common(b, head_dim_key=False)
    h, n, d = b.hidden, b.heads, b.head_dim
    b.kv = 1                                       # a single key/value head, broadcast to every head
    q_rank = c.get_int("q_lora_rank", default=1024) or 1024
    o_rank = c.get_int("o_lora_rank", default=1024) or 1024
    groups = c.get_int("o_groups", default=8) or 8
    attn = [Linear("self_attn.q_a_proj", h, q_rank, role="q"),
            Linear("self_attn.q_b_proj", q_rank, n * d, role="q"),
            Linear("self_attn.kv_proj", h, d, role="kv"),
            # DeepseekV4GroupedLinear: one weight of (o_groups x o_lora_rank) x (heads x head_dim / o_groups)
            Linear("self_attn.o_a_proj", n * d // groups, o_rank * groups, role="o", peft=False),
            Linear("self_attn.o_b_proj", groups * o_rank, h, role="o")]
    m = c.get_int("hc_mult", default=4) or 4
    hyper = (2 + m) * m * (m * h) + (2 + m) * m + 3
    b.layer_other = 2 * h + q_rank + d + n + 2 * hyper        # two norms, q/kv norms, sinks, two hyper-connections
    rates = c.raw("compress_rates", default={})
    rates = rates if isinstance(rates, dict) else {}
    sub = Cfg(rates, c.path, None, c)
    csa = sub.get_int("compressed_sparse_attention", default=4) or 4
    hca = sub.get_int("heavily_compressed_attention", default=128) or 128
    ih = c.get_int("index_n_heads", default=64) or 64
    idim = c.get_int("index_head_dim", default=128) or 128
    kinds = c.raw("layer_types")
    ratios = c.raw("compress_ratios")
    if kinds is None and isinstance(ratios, list):
        # the checkpoints' own config.json states per-layer compress_ratios (0 none, else the rate) where
        # transformers writes layer_types: configuration_deepseek_v4.py maps 0/4/128 to the three kinds
        by_rate = {0: "sliding_attention", csa: "compressed_sparse_attention", hca: "heavily_compressed_attention"}
        kinds = [by_rate.get(r, "") if isinstance(r, int) and not isinstance(r, bool) else "" for r in ratios]
    elif kinds is None:
        # neither key: DeepseekV4Config's default, two heavily compressed layers then CSA/HCA in turn
        kinds = ["heavily_compressed_attention"] * min(b.layers, 2) + [
            "compressed_sparse_attention" if i % 2 else "heavily_compressed_attention" for i in range(b.layers - 2)]
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds) or len(kinds) < b.layers:
        raise c.fail("layer_types", msg("model.config.bad_layer_kinds", key="layer_types"))
    compressors = 0
    for kind in kinds[:b.layers]:
        if kind == "heavily_compressed_attention":
            compressors += 2 * h * d + hca * d + d
        elif kind == "compressed_sparse_attention":
            compressors += 2 * h * 2 * d + csa * 2 * d + d
            compressors += 2 * h * 2 * idim + csa * 2 * idim + idim + q_rank * ih * idim + h * ih
        elif kind != "sliding_attention":
            raise c.fail("layer_types", msg("model.config.bad_layer_kinds", key="layer_types"))
    b.extra = compressors + m * (m * h) + m + 1                # the compressors; the head's hyper-connection
    b.experts = c.get_int("n_routed_experts", "num_local_experts", default=256) or 256
    b.experts_per_token = c.get_int("num_experts_per_tok", default=6) or 6
    b.moe_inter = b.inter = c.get_int("moe_intermediate_size", default=2048) or 2048
    # one shared expert, whatever n_shared_experts says: DeepseekV4SparseMoeBlock builds a single DeepseekV4MLP of
    # `intermediate_size`, which DeepseekV4Config maps to moe_intermediate_size; biased by `mlp_bias`
    b.shared = 1
    b.shared_inter = b.moe_inter
    b.moe = attn + [Linear("mlp.gate", h, b.experts, role="router", peft=False),
                    Linear("mlp.experts.gate_up_proj", h, 2 * b.moe_inter, copies=b.experts, role="gate_up",
                           peft=False),
                    Linear("mlp.experts.down_proj", b.moe_inter, h, copies=b.experts, role="down", peft=False)]
    b.moe += _mlp(h, b.shared_inter, prefix="mlp.shared_experts", bias=c.flag("mlp_bias", False))
    b.dense = []
    b.moe_layers = b.layers
    mtp = c.get_int("num_nextn_predict_layers", default=0, minimum=0)
    if mtp:
        b.notes.append(msg("model.note.mtp_not_loaded", layers=mtp))


def _hy_v4(b: _Build) -> None:
    """Hy4 (transformers models/hy_v4/modeling_hy_v4.py): DeepSeek-V3's latent attention with a sink per head and a sigmoid output gate (gate_proj, hidden -> heads x
    v_head_dim); on the layers `indexer_types` marks "full", an indexer (wq_b from the q latent to index heads,
    wk and its LayerNorm, weights_proj); dense or sparse MLPs by `mlp_layer_types` (DeepSeek-V3's experts and
    shared experts); around attention and MLP a hyper-connection of `hc_mult` streams each (2m rows over
    m x hidden, a base, two scales), and one before the head (m rows, a base, one scale)."""
    c = b.c
    b.head_dim = c.get_int("qk_nope_head_dim", default=128) + c.get_int("qk_rope_head_dim", default=64)
    _common(b, head_dim_key=False)
    attn, norms = _mla_attn(b)
    h, n = b.hidden, b.heads
    v_dim = c.get_int("v_head_dim", default=128)
    attn.append(Linear("self_attn.gate_proj", h, n * v_dim, role="other"))
    m = c.get_int("hc_mult", default=4) or 4
    hyper = 2 * m * (m * h) + 2 * m + 2
    b.layer_other = 2 * h + norms + n + 2 * hyper              # two norms, latent norms, sinks, two hyper-connections
    q_rank = c.get_int("q_lora_rank", default=1536) or 0
    ih = c.get_int("index_n_heads", default=64) or 64
    idim = c.get_int("index_head_dim", default=128) or 128
    kinds = c.raw("indexer_types")
    indexed = sum(1 for k in kinds[:b.layers] if k == "full") if isinstance(kinds, list) else b.layers
    b.extra = indexed * (q_rank * ih * idim + h * idim + 2 * idim + h * ih) + m * (m * h) + m + 1
    _deepseek_moe(b, attn)


def _inkling(b: _Build) -> None:
    """Inkling's language model (transformers models/inkling/modeling_inkling.py InklingAttention/InklingMoE/
    InklingDecoderLayer). Every layer is "hybrid" (full attention) or "hybrid_sliding" (the swa_* heads and
    head_dim): q/k/v/o, an r_proj to heads x d_rel, depthwise short convolutions over k and v, q/k norms, and a
    relative-logits table of d_rel x (rel_extent, or sliding_window_size when sliding); beside them two short
    convolutions over the hidden state and two RMSNorms. `mlp_layer_types` picks the MLP: sparse is a router
    over routed plus shared experts (one weight, a global scale), 3-D routed experts and 3-D shared experts;
    dense a gated MLP with a global scale. An RMSNorm on the embeddings; the head is never tied
    (InklingForCausalLM._tied_weights_keys is empty). The uniform layer is a sliding one; full layers'
    differences are counted in `extra`."""
    c = b.c
    b.head_dim = c.get_int("head_dim", default=128)
    _common(b, head_dim_key=False)
    b.tied = False
    h, L = b.hidden, b.layers
    kernel = c.get_int("conv_kernel_size", default=4) or 4
    d_rel = c.get_int("d_rel", default=16) or 16
    window = c.get_int("sliding_window_size", default=1024) or 1024
    full = (b.heads, b.kv, b.head_dim or h // b.heads, c.get_int("rel_extent", default=1024) or 1024)
    swa_heads = c.get_int("swa_num_attention_heads", default=b.heads) or b.heads
    sliding = (swa_heads, c.get_int("swa_num_key_value_heads", default=b.kv) or b.kv,
               c.get_int("swa_head_dim", default=full[2]) or full[2], window)
    kinds = c.raw("layer_types")
    if not isinstance(kinds, list) or len(kinds) < L or any(k not in ("hybrid", "hybrid_sliding") for k in kinds[:L]):
        raise c.fail("layer_types", msg("model.config.bad_layer_kinds", key="layer_types"))

    def attn_of(kind: tuple[int, int, int, int]) -> int:
        n, kv, d, extent = kind
        return 2 * h * n * d + 2 * h * kv * d + h * n * d_rel + 2 * kv * d * kernel + 2 * d + d_rel * extent

    b.heads, b.kv, b.head_dim = sliding[0], sliding[1], sliding[2]
    attn = _attn(b) + [Linear("self_attn.r_proj", h, b.heads * d_rel, role="other")]
    b.layer_other = 2 * h + 2 * h * kernel + 1 + (attn_of(sliding) - sum(m.params for m in attn))
    b.extra = sum(attn_of(full) - attn_of(sliding) for k in kinds[:L] if k == "hybrid") + h   # the embedding norm
    b.dense = attn + _mlp(h, b.inter)
    mlp_kinds = c.raw("mlp_layer_types")
    if not isinstance(mlp_kinds, list) or len(mlp_kinds) < L:
        mlp_kinds = ["sparse"] * L                 # InklingTextConfig: every layer sparse unless listed
    if "sparse" in mlp_kinds[:L]:
        b.experts = c.need("n_routed_experts")
        b.shared = c.get_int("n_shared_experts", default=0, minimum=0) or 0
        b.experts_per_token = c.get_int("num_experts_per_tok", default=1) or 1
        b.moe_inter = c.need("moe_intermediate_size")
        b.moe = attn + [Linear("mlp.gate", h, b.experts + b.shared, role="router", peft=False),
                        Linear("mlp.experts.gate_up_proj", h, 2 * b.moe_inter, copies=b.experts, role="gate_up",
                               peft=False),
                        Linear("mlp.experts.down_proj", b.moe_inter, h, copies=b.experts, role="down", peft=False)]
        if b.shared:
            b.shared_inter = b.shared * b.moe_inter
            b.moe += _mlp(h, b.shared_inter, prefix="mlp.shared_experts", peft=False)
        _moe_layer_ids(b, lambda i: mlp_kinds[i] == "sparse")


def _recurrent_gemma(b: _Build) -> None:
    """RecurrentGemma (transformers models/recurrent_gemma/modeling_recurrent_gemma.py): `block_types` repeated
    over the layers; a recurrent layer's temporal block is linear_x/linear_y/linear_out (biased) around a depthwise
    conv and the RG-LRU (block-diagonal input and recurrent gates, one block per head); attention layers keep an
    always-biased o_proj; the MLP is gated, biased, and half `intermediate_size` wide; two RMSNorms a layer."""
    c = b.c
    _common(b)
    h, w = b.hidden, c.get_int("lru_width", default=b.hidden) or b.hidden
    kinds = c.raw("block_types", default=["recurrent", "recurrent", "attention"])
    if not isinstance(kinds, list) or not kinds or not all(isinstance(k, str) for k in kinds):
        raise c.fail("block_types", msg("model.config.bad_layer_kinds", key="block_types"))
    layers = (kinds * (b.layers // len(kinds) + 1))[:b.layers]
    b.inter = b.inter // 2
    ab = c.flag("attention_bias", False)
    b.dense = _attn(b, qkv_bias=ab, o_bias=True) + _mlp(h, b.inter, prefix="mlp_block", bias=True)
    b.linear_attn = [Linear("temporal_block.linear_y", h, w, True, role="other"),
                     Linear("temporal_block.linear_x", h, w, True, role="other"),
                     Linear("temporal_block.linear_out", w, h, True, role="other")]
    b.linear_attn_layers = sum(1 for k in layers if k == "recurrent")
    block = w // b.heads
    gates = 2 * b.heads * (block * block + block)          # input and recurrent gates: weights and biases
    b.linear_attn_other = 2 * h + w * (c.get_int("conv1d_width", default=4) or 4) + w + w + gates  # conv, bias, a
    b.layer_other = 2 * h


def _lfm2(b: _Build) -> None:
    """LFM2, LFM2-MoE and LFM3 (transformers models/lfm2/modeling_lfm2.py, lfm2_moe/modeling_lfm2_moe.py,
    lfm3/modeling_lfm3.py): `layer_types` of "conv" (a gated short convolution: in_proj to 3 x hidden, a depthwise
    conv of `conv_L_cache` taps, out_proj; biased by `conv_bias`) and attention (any other kind: q/k/v/out_proj
    with per-head q/k layernorms); a gated w1/w3/w2 MLP; two RMSNorms a layer; the head tied by `tie_embedding`.
    LFM2's MLP width `block_ff_dim` is cut to 2/3, scaled by `block_ffn_dim_multiplier` and rounded up to
    `block_multiple_of` when `block_auto_adjust_ff_dim`; LFM2-MoE and LFM3 take `intermediate_size` as it is.
    LFM2-MoE: after `num_dense_layers` dense layers, a sparse block (a bare router weight, every expert's
    gate_up/down in 3-D parameters; its expert bias a buffer). LFM3: attention of `head_dim` named o_proj, biased
    by `attention_bias`, a per-head output gate g_proj with `use_attention_gate`, and with `use_sandwich_norm` a
    norm after the mixer and after the MLP as well."""
    c = b.c
    lfm3 = b.model_type == "lfm3"
    h = b.hidden = c.need("hidden_size")
    b.layers = c.need("num_hidden_layers", maximum=_MAX_LAYERS)
    b.heads = c.need("num_attention_heads", "num_heads")
    kv_default = 4 if lfm3 else 8                                  # Lfm3Config's and Lfm2(Moe)Config's defaults
    b.kv = c.get_int("num_key_value_heads", default=kv_default) or kv_default
    b.vocab = c.need("vocab_size")
    b.tied = c.flag("tie_word_embeddings", c.flag("tie_embedding", True))
    if b.model_type == "lfm2":
        inter = c.get_int("block_ff_dim", "intermediate_size", default=12288) or 12288
        if c.flag("block_auto_adjust_ff_dim", True):
            inter = int(2 * inter / 3)
            multiplier = c.raw("block_ffn_dim_multiplier", default=1.0)
            if multiplier is not None:
                inter = int(c.get_float("block_ffn_dim_multiplier", 1.0) * inter)
                step = c.get_int("block_multiple_of", default=256) or 256
                inter = step * ((inter + step - 1) // step)
    else:
        inter = c.get_int("intermediate_size", default=7680 if lfm3 else 7168) or 7168
    b.inter = inter
    kinds = c.raw("layer_types")
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
        raise c.fail("layer_types", msg("model.config.bad_layer_kinds", key="layer_types"))
    if lfm3:
        b.head_dim = c.get_int("head_dim", default=128) or 128
        ab = c.flag("attention_bias", False)
        attn = _attn(b, qkv_bias=ab, o_bias=ab)
    else:
        attn = _attn(b, names=("q_proj", "k_proj", "v_proj", "out_proj"))
    d = b.head_dim or h // b.heads
    b.dense = attn + _mlp(h, inter, prefix="feed_forward", names=("w1", "w3", "w2"))
    norms = 4 * h if lfm3 and c.flag("use_sandwich_norm", True) else 2 * h
    # operator/ffn (and sandwich) norms, q/k layernorms; LFM3's output gate (one value per head, bias-free) is
    # counted here so that the conv layers, which replace the attention modules, do not carry it
    gate = h * b.heads if lfm3 and c.flag("use_attention_gate", True) else 0
    b.layer_other = norms + 2 * d + gate
    bias = c.flag("conv_bias", False)
    taps = c.get_int("conv_L_cache", default=7 if lfm3 else 3) or 3
    b.linear_attn = [Linear("conv.in_proj", h, 3 * h, bias, role="other"),
                     Linear("conv.out_proj", h, h, bias, role="other")]
    b.linear_attn_layers = sum(1 for k in kinds[:b.layers] if k == "conv")
    b.linear_attn_other = norms + h * taps + (h if bias else 0)
    if b.model_type != "lfm2_moe":
        return
    b.experts = c.get_int("num_experts", default=32, minimum=0) or 0
    if not b.experts:
        return
    b.experts_per_token = c.get_int("num_experts_per_tok", default=4) or 4
    b.moe_inter = c.get_int("moe_intermediate_size", default=1792) or 1792
    b.moe = attn + [Linear("feed_forward.gate", h, b.experts, role="router", peft=False),
                    Linear("feed_forward.experts.gate_up_proj", h, 2 * b.moe_inter, copies=b.experts, role="gate_up",
                           peft=False),
                    Linear("feed_forward.experts.down_proj", b.moe_inter, h, copies=b.experts, role="down", peft=False)]
    dense = c.get_int("num_dense_layers", default=2, minimum=0) or 0
    _moe_layer_ids(b, lambda i: i >= dense)


def _falcon_h1(b: _Build) -> None:
    """Falcon-H1 (transformers models/falcon_h1/modeling_falcon_h1.py): every layer runs attention and a Mamba-2
    mixer side by side, then a gated MLP; the mixer's inner width is `mamba_d_ssm` (else expand x hidden), its
    in_proj/out_proj biased by `mamba_proj_bias`/`projectors_bias`, its gated norm present only with
    `mamba_rms_norm`; two RMSNorms a layer."""
    c = b.c
    _common(b)
    h = b.hidden
    ab = c.flag("attention_bias", False)
    mb = c.flag("mlp_bias", False)
    inner = c.get_int("mamba_d_ssm", default=None) or int(c.get_float("mamba_expand", 2.0) * h)
    heads = c.get_int("mamba_n_heads", default=128) or 128
    groups = c.get_int("mamba_n_groups", default=1) or 1
    state = c.get_int("mamba_d_state", default=256) or 256
    conv_dim = inner + 2 * groups * state
    mamba = [Linear("mamba.in_proj", h, inner + conv_dim + heads, c.flag("mamba_proj_bias", False), role="other"),
             Linear("mamba.out_proj", inner, h, c.flag("projectors_bias", False), role="other")]
    b.dense = _attn(b, qkv_bias=ab, o_bias=ab) + mamba + _mlp(h, b.inter, prefix="feed_forward", bias=mb)
    b.layer_other = (2 * h + conv_dim * (c.get_int("mamba_d_conv", default=4) or 4)
                     + (conv_dim if c.flag("mamba_conv_bias", True) else 0) + 3 * heads
                     + (inner if c.flag("mamba_rms_norm", False) else 0))
    b.notes.append(msg("model.note.state_space", ssm=b.layers, layers=b.layers, kind="mamba2"))


def _jetmoe(b: _Build) -> None:
    """JetMoE (transformers models/jetmoe/modeling_jetmoe.py): attention is itself a mixture of experts (JetMoeMoA:
    per-expert query and output projections of kv_channels x num_key_value_heads, one shared kv_proj, a router and
    an output bias), and so is the MLP (per-expert gated input and output projections, a router, an output bias);
    every layer holds both; the experts are 3-D parameters, not nn.Linear modules."""
    c = b.c
    _common(b, head_dim_key=False)
    h = b.hidden
    b.head_dim = c.get_int("kv_channels", default=128) or 128
    attn_dim = b.kv * b.head_dim
    b.experts = c.get_int("num_local_experts", default=8) or 8
    b.experts_per_token = c.get_int("num_experts_per_tok", default=2) or 2
    b.moe_inter = b.inter
    b.moe = [Linear("self_attention.kv_proj", h, 2 * attn_dim, role="kv"),
             Linear("self_attention.experts.router.layer", h, b.experts, role="router"),
             Linear("self_attention.experts.input_linear", h, attn_dim, copies=b.experts, role="q", peft=False),
             Linear("self_attention.experts.output_linear", attn_dim, h, copies=b.experts, role="o", peft=False),
             Linear("mlp.router.layer", h, b.experts, role="router"),
             Linear("mlp.input_linear", h, 2 * b.inter, copies=b.experts, role="gate_up", peft=False),
             Linear("mlp.output_linear", b.inter, h, copies=b.experts, role="down", peft=False)]
    b.moe_layers = b.layers
    b.layer_other = 4 * h                                  # two RMSNorms, the two output biases


def _zaya(b: _Build) -> None:
    """ZAYA1 (transformers models/zaya/modeling_zaya.py; its "hybrid"/"hybrid_sliding" layer kinds differ only
    in the attention window). Every layer: compressed convolutional attention (ZayaCCAProjection: q/k, values split
    into a current and a delayed half, a depthwise and a per-head grouped conv over q and k, both biased; a
    temperature per key/value head; o_proj; linears biased by `attention_bias`), then a mixture of experts routed by
    a small MLP (a biased down_proj to `router_hidden_size`, a norm, biased fc1/fc2, an out_proj to the experts plus
    a skip class; a router-state scale in every layer but the first) over 3-D expert weights; two RMSNorms and two
    residual scalings (four vectors each). Before the layers, an input scale and bias; the head biased by
    `lm_head_bias`."""
    c = b.c
    b.head_dim = c.get_int("head_dim", default=128) or 128
    _common(b, head_dim_key=False)
    h, n, kv, d = b.hidden, b.heads, b.kv, b.head_dim
    ab = c.flag("attention_bias", False)
    attn = [Linear("self_attn.qkv_proj.q_proj", h, n * d, ab, role="q"),
            Linear("self_attn.qkv_proj.k_proj", h, kv * d, ab, role="k"),
            Linear("self_attn.qkv_proj.v_proj_current", h, kv * d // 2, ab, role="v"),
            Linear("self_attn.qkv_proj.v_proj_delayed", h, kv * d // 2, ab, role="v"),
            Linear("self_attn.o_proj", n * d, h, ab, role="o")]
    channels = (n + kv) * d
    convs = channels * (c.get_int("cca_time0", default=2) or 2) + channels \
        + channels * d * (c.get_int("cca_time1", default=2) or 2) + channels
    r = c.get_int("router_hidden_size", default=256) or 256
    b.experts = c.get_int("num_experts", default=16) or 16
    b.experts_per_token = c.get_int("num_experts_per_tok", default=1) or 1
    b.moe_inter = b.inter = c.get_int("moe_intermediate_size", default=2048) or 2048
    b.moe = attn + [Linear("mlp.gate.down_proj", h, r, True, role="router"),
                    Linear("mlp.experts.gate_up_proj", h, 2 * b.moe_inter, copies=b.experts, role="gate_up",
                           peft=False),
                    Linear("mlp.experts.down_proj", b.moe_inter, h, copies=b.experts, role="down", peft=False)]
    router_mlp = r + 2 * (r * r + r) + r * (b.experts + 1) + r          # norm, fc1, fc2, out_proj; state scale
    b.layer_other = 2 * h + 8 * h + convs + kv + router_mlp
    b.extra = -r + 2 * h + (b.vocab if c.flag("lm_head_bias", False) else 0)    # layer 0 has no state scale
    b.dense = []
    b.moe_layers = b.layers


def _zamba2(b: _Build) -> None:
    """Zamba2 (transformers models/zamba2/modeling_zamba2.py): every layer a Mamba-2 mixer with one RMSNorm; the
    "hybrid" layers (`layers_block_type`) add a linear of their own and run one of `num_mem_blocks` shared
    transformer blocks (attention over the concatenated 2 x hidden input, a gate_up/down MLP, two norms), counted
    once; each block carries a LoRA-style adapter (`adapter_rank`) per hybrid layer it serves, on its MLP's
    gate_up and, with `use_shared_attention_adapter`, on q/k/v."""
    c = b.c
    h = b.hidden = c.need("hidden_size")
    b.layers = c.need("num_hidden_layers", maximum=_MAX_LAYERS)
    b.vocab = c.need("vocab_size")
    kinds = c.raw("layers_block_type")
    if isinstance(kinds, list) and kinds:
        hybrid = sum(1 for k in kinds[:b.layers] if k == "hybrid")
    else:
        listed = c.raw("hybrid_layer_ids", default=[])
        hybrid = len(listed) if isinstance(listed, list) else 0
    blocks = min(c.get_int("num_mem_blocks", default=1) or 1, hybrid)
    att = c.get_int("attention_hidden_size", default=2 * h) or 2 * h
    heads = c.get_int("num_attention_heads", default=32) or 32
    kv = c.get_int("num_key_value_heads", default=heads) or heads
    d = c.get_int("attention_head_dim", default=att // heads) or att // heads
    inter = b.inter = c.get_int("intermediate_size", default=4 * h) or 4 * h
    rank = c.get_int("adapter_rank", default=128) or 128
    bias = c.flag("add_bias_linear", False)
    # the Mamba-2 mixer: in_proj to z, x, B, C and one dt per head; depthwise conv (always biased); dt_bias, A_log
    # and D per head; a gated norm over the inner width; out_proj
    inner = int(c.get_float("mamba_expand", 2.0) * h)
    m_heads = c.get_int("n_mamba_heads", default=8) or 8
    groups = c.get_int("mamba_ngroups", default=1) or 1
    state = c.get_int("mamba_d_state", default=64) or 64
    conv_dim = inner + 2 * groups * state
    b.dense = [Linear("mamba.in_proj", h, inner + conv_dim + m_heads, bias, role="other"),
               Linear("mamba.out_proj", inner, h, bias, role="other")]
    b.layer_other = h + conv_dim * (c.get_int("mamba_d_conv", default=4) or 4) + conv_dim + 3 * m_heads + inner
    b.heads = b.kv = 1
    b.head_dim = h
    b.gated = False
    block = (att * heads * d + 2 * att * kv * d + heads * d * h + (2 * h * inter + inter * h)
             + (2 * inter + h if bias else 0) + att + h)
    adapters = hybrid * rank * (h + 2 * inter)
    if c.flag("use_shared_attention_adapter", False):
        adapters += hybrid * 3 * 2 * att * rank
    b.extra = blocks * block + adapters + hybrid * h * h
    b.notes.append(msg("model.note.state_space", ssm=b.layers, layers=b.layers, kind="mamba2"))


def _zamba(b: _Build) -> None:
    """Zamba (transformers models/zamba/modeling_zamba.py): every layer a Mamba-1 mixer with one RMSNorm; the
    "hybrid" layers (`layers_block_type`, else from attn_layer_period/offset as configuration_zamba.py builds it)
    add a linear of their own and run the one shared transformer block (attention over the concatenated
    2 x hidden input, a gated MLP, two norms), counted once."""
    c = b.c
    h = b.hidden = c.need("hidden_size")
    b.layers = c.need("num_hidden_layers", maximum=_MAX_LAYERS)
    b.vocab = c.need("vocab_size")
    kinds = c.raw("layers_block_type")
    if not (isinstance(kinds, list) and kinds):
        period = c.get_int("attn_layer_period", default=6) or 6
        offset = c.get_int("attn_layer_offset", default=4, minimum=0) or 0
        kinds = ["mamba", "mamba", "hybrid"] + ["hybrid" if i % period == offset else "mamba"
                                                for i in range(b.layers - 3)]
    hybrid = sum(1 for k in kinds[:b.layers] if k == "hybrid")
    att = c.get_int("attention_hidden_size", default=2 * h) or 2 * h
    heads = c.get_int("num_attention_heads", default=16) or 16
    kv = c.get_int("num_key_value_heads", default=heads) or heads
    d = c.get_int("attention_head_dim", default=att // heads) or att // heads
    inter = b.inter = c.get_int("intermediate_size", default=4 * h) or 4 * h
    inner = int(c.get_float("mamba_expand", 2.0) * h)
    state = c.get_int("mamba_d_state", default=16) or 16
    rank = math.ceil(h / 16) if c.raw("mamba_dt_rank", default="auto") == "auto" else c.need("mamba_dt_rank")
    bias = c.flag("mamba_proj_bias", False)
    b.dense = [Linear("mamba.in_proj", h, 2 * inner, bias, role="other"),
               Linear("mamba.out_proj", inner, h, bias, role="other")]
    # conv1d (and its bias), per-head x_proj and dt_proj (with bias), A_log and D, all stored as parameters
    b.layer_other = (h + inner * (c.get_int("mamba_d_conv", default=4) or 4) + (inner if c.flag("mamba_conv_bias", True)
                     else 0) + inner * (rank + 2 * state) + inner * rank + inner + inner * state + inner)
    b.heads = b.kv = 1
    b.head_dim = h
    b.gated = False
    block = att * heads * d + 2 * att * kv * d + heads * d * h + 3 * h * inter + att + h
    b.extra = (block if hybrid else 0) + hybrid * h * h
    b.notes.append(msg("model.note.state_space", ssm=b.layers, layers=b.layers, kind="mamba1"))


def _mla_attn(b: _Build) -> tuple[list[Linear], int]:
    """Multi-head latent attention (transformers models/deepseek_v3/modeling_deepseek_v3.py DeepseekV3Attention,
    shared by MiniCPM3, Youtu, Kimi-Linear, LongCat-Flash): q through a q_lora_rank bottleneck (or a plain q_proj
    when it is null), k/v through one kv_lora_rank latent plus a shared rope key; its linears, and the parameters
    of its two latent RMSNorms."""
    c = b.c
    # DeepseekV2Config / DeepseekV3Config defaults; q_lora_rank: null (V2-Lite) means a plain q_proj
    nope = c.get_int("qk_nope_head_dim", default=128)
    rope = c.get_int("qk_rope_head_dim", default=64)
    v_dim = c.get_int("v_head_dim", default=128)
    kv_rank = c.get_int("kv_lora_rank", default=512)
    q_rank = c.get_int("q_lora_rank", default=1536) if "q_lora_rank" not in c.data or c.data["q_lora_rank"] is not None \
        else None
    ab = c.flag("attention_bias", False)
    h, n = b.hidden, b.heads
    b.kv = n                                      # the latent is expanded to every head
    b.head_dim = nope + rope
    if q_rank:
        attn = [Linear("self_attn.q_a_proj", h, q_rank, ab, role="q"),
                Linear("self_attn.q_b_proj", q_rank, n * (nope + rope), role="q")]
    else:
        attn = [Linear("self_attn.q_proj", h, n * (nope + rope), role="q")]
    attn += [Linear("self_attn.kv_a_proj_with_mqa", h, kv_rank + rope, ab, role="kv"),
             Linear("self_attn.kv_b_proj", kv_rank, n * (nope + v_dim), role="kv"),
             Linear("self_attn.o_proj", n * v_dim, h, ab, role="o")]
    return attn, (q_rank or 0) + kv_rank


def _deepseek_moe(b: _Build, attn: list[Linear]) -> None:
    c, h = b.c, b.hidden
    b.dense = attn + _mlp(h, b.inter)
    b.experts = c.get_int("n_routed_experts", default=0) or 0
    if b.experts:
        b.experts_per_token = c.get_int("num_experts_per_tok", default=1)
        b.moe_inter = c.need("moe_intermediate_size")
        b.shared = c.get_int("n_shared_experts", default=0, minimum=0) or 0
        # the router is a bare weight Parameter (DeepseekV2MoEGate / DeepseekV3TopkRouter), not an nn.Linear
        b.moe = attn + [Linear("mlp.gate", h, b.experts, role="router", peft=False)]
        b.moe += _mlp(h, b.moe_inter, prefix="mlp.experts.*", copies=b.experts)
        if b.shared:
            b.shared_inter = b.shared * b.moe_inter
            b.moe += _mlp(h, b.shared_inter, prefix="mlp.shared_experts")
        kinds = c.raw("mlp_layer_types")
        if isinstance(kinds, list) and len(kinds) >= b.layers:     # GLM-4.7-Flash: "dense" / "sparse" per layer
            _moe_layer_ids(b, lambda i: kinds[i] == "sparse")
        else:
            first = c.get_int("first_k_dense_replace", default=0, minimum=0) or 0
            freq = c.get_int("moe_layer_freq", default=1)
            _moe_layer_ids(b, lambda i: i >= first and i % freq == 0)
        mtp = c.get_int("num_nextn_predict_layers", default=0, minimum=0)
        if mtp:
            b.notes.append(msg("model.note.mtp_not_loaded", layers=mtp))


def _qwen_hybrid(b: _Build, *, moe: bool) -> None:
    """Qwen3-Next and Qwen3.5 (dense and MoE; modeling_qwen3_next.py, modeling_qwen3_5[_moe].py): `layer_types`
    (else every `full_attention_interval`-th layer full, the rest linear) mixes tokens with gated full attention
    (q_proj twice as wide for its output gate, q_norm/k_norm over head_dim) or a Gated DeltaNet (in_proj_qkvz and
    in_proj_ba in Qwen3-Next, in_proj_qkv/z/b/a in Qwen3.5; a depthwise conv1d over q/k/v, A_log, dt_bias, a gated
    RMSNorm over the value head, out_proj). MoE layers: a bare router weight, every expert's gate_up/down in 3-D
    parameters, a shared expert and its sigmoid gate. Defaults are the config classes' (a nested text_config
    leaves them out)."""
    c = b.c
    b.head_dim = c.get_int("head_dim", default=256)
    _common(b, head_dim_key=False)
    h, d = b.hidden, b.head_dim
    ab = c.flag("attention_bias", False)
    attn = [Linear("self_attn.q_proj", h, 2 * b.heads * d, ab, role="q"),
            Linear("self_attn.k_proj", h, b.kv * d, ab, role="k"),
            Linear("self_attn.v_proj", h, b.kv * d, ab, role="v"),
            Linear("self_attn.o_proj", b.heads * d, h, ab, role="o")]
    b.layer_other = 2 * h + 2 * d
    nk, nv = c.get_int("linear_num_key_heads", default=16), c.get_int("linear_num_value_heads", default=32)
    dk, dv = c.get_int("linear_key_head_dim", default=128), c.get_int("linear_value_head_dim", default=128)
    key, value = nk * dk, nv * dv
    if b.model_type == "qwen3_next":
        mixer = [Linear("linear_attn.in_proj_qkvz", h, 2 * key + 2 * value, role="other"),
                 Linear("linear_attn.in_proj_ba", h, 2 * nv, role="other")]
    else:
        mixer = [Linear("linear_attn.in_proj_qkv", h, 2 * key + value, role="other"),
                 Linear("linear_attn.in_proj_z", h, value, role="other"),
                 Linear("linear_attn.in_proj_b", h, nv, role="other"),
                 Linear("linear_attn.in_proj_a", h, nv, role="other")]
    b.linear_attn = mixer + [Linear("linear_attn.out_proj", value, h, role="other")]
    b.linear_attn_other = 2 * h + (2 * key + value) * c.get_int("linear_conv_kernel_dim", default=4) + 2 * nv + dv
    listed = c.raw("layer_types")
    if isinstance(listed, list) and listed:
        kinds = [str(k) for k in listed[:b.layers]]
    else:
        every = c.get_int("full_attention_interval", default=4)
        kinds = ["linear_attention" if (i + 1) % every else "full_attention" for i in range(b.layers)]
    b.linear_attn_layers = kinds.count("linear_attention")
    if b.linear_attn_layers:
        b.notes.append(msg("model.note.linear_attention", linear=b.linear_attn_layers, layers=b.layers))
    b.dense = attn + _mlp(h, b.inter)
    mtp = c.get_int("mtp_num_hidden_layers", default=0, minimum=0)
    if mtp:
        b.notes.append(msg("model.note.mtp_not_loaded", layers=mtp))
    if not moe:
        return
    b.experts = c.get_int("num_experts", default=512 if b.model_type == "qwen3_next" else 256, minimum=0) or 0
    if not b.experts:
        return
    b.experts_per_token = c.get_int("num_experts_per_tok", default=10 if b.model_type == "qwen3_next" else 8)
    b.moe_inter = c.get_int("moe_intermediate_size", default=512)
    b.shared_inter = c.get_int("shared_expert_intermediate_size", default=512)
    b.shared = 1
    # Qwen3NextTopKRouter / Qwen3NextExperts: a weight Parameter and 3-D expert weights, not nn.Linear
    b.moe = attn + [Linear("mlp.gate", h, b.experts, role="router", peft=False),
                    Linear("mlp.experts.gate_up_proj", h, 2 * b.moe_inter, copies=b.experts, role="gate_up", peft=False),
                    Linear("mlp.experts.down_proj", b.moe_inter, h, copies=b.experts, role="down", peft=False)]
    b.moe += _mlp(h, b.shared_inter, prefix="mlp.shared_expert")
    b.moe.append(Linear("mlp.shared_expert_gate", h, 1, role="router"))
    if b.model_type == "qwen3_next":
        step = c.get_int("decoder_sparse_step", default=1)
        listed = c.raw("mlp_only_layers", default=[])
        only = {i for i in listed if isinstance(i, int) and not isinstance(i, bool)} if isinstance(listed, list) else set()
        _moe_layer_ids(b, lambda i: i not in only and (i + 1) % step == 0)
    else:                                        # Qwen3_5MoeDecoderLayer: every layer's MLP is the sparse block
        b.inter = c.get_int("intermediate_size", default=b.moe_inter)
        b.dense = []
        b.moe_layers = b.layers


# ---------------------------------------------------------------- remote-code families (trust_remote_code)

def _qwen1(b: _Build) -> None:
    """Qwen-1 (QWenLMHeadModel): fused biased c_attn; `intermediate_size` is twice the MLP width, split into
    w1 and w2 (modeling_qwen.py QWenMLP: `ff_dim_in = config.intermediate_size // 2`)."""
    c = b.c
    _common(b, head_dim_key=False, gqa=False)
    b.head_dim = c.get_int("kv_channels")
    if b.head_dim == b.hidden // b.heads:
        b.head_dim = None
    full = c.need("intermediate_size")
    b.inter = full // 2
    b.dense = [Linear("attn.c_attn", b.hidden, 3 * b.heads * (b.head_dim or b.hidden // b.heads), True, role="qkv"),
               Linear("attn.c_proj", b.heads * (b.head_dim or b.hidden // b.heads), b.hidden,
                      not c.flag("no_bias", True), role="o"),
               Linear("mlp.w2", b.hidden, b.inter, role="gate"),
               Linear("mlp.w1", b.hidden, b.inter, role="up"),
               Linear("mlp.c_proj", b.inter, b.hidden, role="down")]


def _chatglm(b: _Build) -> None:
    """ChatGLM2/3 and GLM-4 (modeling_chatglm.py): fused query_key_value with multi-query groups, a SwiGLU
    dense_h_to_4h of twice ffn_hidden_size, the head in transformer.output_layer."""
    c = b.c
    if c.has("inner_hidden_size"):                # ChatGLM-6B (v1): GLM block, GELU MLP, LayerNorms
        _common(b, head_dim_key=False, gqa=False)
        b.inter = c.need("inner_hidden_size")
        b.gated = False
        b.dense = _fused_attn(b, "attention.query_key_value", "attention.dense", qkv_bias=True, o_bias=True)
        b.dense += _mlp(b.hidden, b.inter, names=("dense_h_to_4h", "dense_4h_to_h"), bias=True)
        b.layer_other = 4 * b.hidden
        b.final_norm = 2 * b.hidden
        return
    b.hidden = c.need("hidden_size")
    b.layers = c.need("num_layers", "num_hidden_layers", maximum=_MAX_LAYERS)
    b.heads = c.need("num_attention_heads")
    b.head_dim = c.get_int("kv_channels", default=b.hidden // b.heads)
    if b.head_dim == b.hidden // b.heads:
        b.head_dim = None
    b.kv = c.get_int("multi_query_group_num", default=b.heads) if c.flag("multi_query_attention", False) else b.heads
    b.vocab = c.need("padded_vocab_size", "vocab_size")
    b.inter = c.need("ffn_hidden_size")
    linear_bias = c.flag("add_bias_linear", False)
    b.dense = _fused_attn(b, "self_attention.query_key_value", "self_attention.dense",
                          qkv_bias=linear_bias or c.flag("add_qkv_bias", False), o_bias=linear_bias)
    b.dense += [Linear("mlp.dense_h_to_4h", b.hidden, 2 * b.inter, linear_bias, role="gate_up"),
                Linear("mlp.dense_4h_to_h", b.inter, b.hidden, linear_bias, role="down")]
    per_norm = b.hidden * (1 if c.flag("rmsnorm", True) else 2)
    b.layer_other = 2 * per_norm
    b.final_norm = per_norm if c.flag("post_layer_norm", True) else 0


def _baichuan(b: _Build) -> None:
    _common(b, head_dim_key=False, gqa=False)
    b.dense = _fused_attn(b, "self_attn.W_pack", "self_attn.o_proj") + _mlp(b.hidden, b.inter)


def _internlm(b: _Build) -> None:
    # InternLMAttention: q/k/v/o biased by `bias` (default True in configuration_internlm.py)
    bias = b.c.flag("bias", True)
    _llama(b, qkv_bias=bias, o_bias=bias)


def _internlm2(b: _Build) -> None:
    c = b.c
    _common(b, head_dim_key=False)
    bias = c.flag("bias", True)
    b.dense = _fused_attn(b, "attention.wqkv", "attention.wo", qkv_bias=bias, o_bias=bias)
    b.dense += _mlp(b.hidden, b.inter, prefix="feed_forward", names=("w1", "w3", "w2"))


# ---------------------------------------------------------------- GPT-style families

def _gpt2(b: _Build) -> None:
    """GPT-2: Conv1D c_attn/c_proj/c_fc (biased), learned positions, LayerNorms with bias, tied head."""
    _gpt2_blocks(b, multi_query=False)


def _gpt_bigcode(b: _Build) -> None:
    """StarCoder / SantaCoder: GPT-2's block with multi-query attention unless the config says otherwise."""
    _gpt2_blocks(b, multi_query=b.c.flag("multi_query", True))


def _gpt2_blocks(b: _Build, multi_query: bool) -> None:
    """GPT-2's block: one fused c_attn (with a single key/value head under multi-query attention),
    a biased 4h MLP, learned positions."""
    c = b.c
    _common(b, head_dim_key=False, gqa=False)
    b.gated = False
    b.kv = 1 if multi_query else b.heads
    d = b.hidden // b.heads
    b.inter = c.get_int("n_inner", default=4 * b.hidden)
    b.dense = [Linear("attn.c_attn", b.hidden, b.hidden + 2 * b.kv * d, True, role="qkv"),
               Linear("attn.c_proj", b.hidden, b.hidden, True, role="o")]
    b.dense += _mlp(b.hidden, b.inter, names=("c_fc", "c_proj"), bias=True)
    b.layer_other = 4 * b.hidden
    b.final_norm = 2 * b.hidden
    b.extra = c.need("n_positions", "max_position_embeddings") * b.hidden


def _gpt_neox(b: _Build) -> None:
    c = b.c
    _common(b, head_dim_key=False, gqa=False)
    b.gated = False
    bias = c.flag("attention_bias", True)
    b.dense = _fused_attn(b, "attention.query_key_value", "attention.dense", qkv_bias=bias, o_bias=bias)
    b.dense += _mlp(b.hidden, b.inter, names=("dense_h_to_4h", "dense_4h_to_h"), bias=True)
    b.layer_other = 4 * b.hidden
    b.final_norm = 2 * b.hidden


def _gptj(b: _Build) -> None:
    c = b.c
    _common(b, head_dim_key=False, gqa=False)
    b.gated = False
    b.inter = c.get_int("n_inner", default=4 * b.hidden)
    b.dense = _attn(b, prefix="attn", names=("q_proj", "k_proj", "v_proj", "out_proj"))
    b.dense += _mlp(b.hidden, b.inter, names=("fc_in", "fc_out"), bias=True)
    b.layer_other = 2 * b.hidden
    b.final_norm = 2 * b.hidden
    b.extra = 0 if b.tied else b.vocab            # lm_head bias


def _gpt_neo(b: _Build) -> None:
    """GPT-Neo (models/gpt_neo/modeling_gpt_neo.py GPTNeoSelfAttention/GPTNeoMLP): bias-free q/k/v, a biased
    out_proj, a biased c_fc/c_proj MLP (intermediate_size, else 4h), two LayerNorms with bias, learned positions."""
    c = b.c
    _common(b, head_dim_key=False, gqa=False)
    b.gated = False
    b.dense = _attn(b, prefix="attn.attention", names=("q_proj", "k_proj", "v_proj", "out_proj"), o_bias=True)
    b.dense += _mlp(b.hidden, b.inter, names=("c_fc", "c_proj"), bias=True)
    b.layer_other = 4 * b.hidden
    b.final_norm = 2 * b.hidden
    b.extra = c.need("max_position_embeddings") * b.hidden


def _codegen(b: _Build) -> None:
    """CodeGen (models/codegen/modeling_codegen.py): one bias-free qkv_proj and out_proj, a biased fc_in/fc_out
    (n_inner, else 4h), one LayerNorm per layer (attention and MLP side by side), rotary positions, an lm_head
    with a bias."""
    c = b.c
    _common(b, head_dim_key=False, gqa=False)
    b.gated = False
    b.inter = c.get_int("n_inner", default=4 * b.hidden)
    b.dense = _fused_attn(b, "attn.qkv_proj", "attn.out_proj")
    b.dense += _mlp(b.hidden, b.inter, names=("fc_in", "fc_out"), bias=True)
    b.layer_other = 2 * b.hidden
    b.final_norm = 2 * b.hidden
    b.extra = b.vocab                             # lm_head bias


def _openai_gpt(b: _Build) -> None:
    """GPT-1 (models/openai/modeling_openai.py Attention/MLP/Block): biased Conv1D c_attn/c_proj and c_fc/c_proj
    (4h), two LayerNorms with bias after each sublayer and none at the end, learned positions (n_positions)."""
    c = b.c
    _common(b, head_dim_key=False, gqa=False)
    b.gated = False
    b.inter = 4 * b.hidden
    b.dense = [Linear("attn.c_attn", b.hidden, 3 * b.hidden, True, role="qkv"),
               Linear("attn.c_proj", b.hidden, b.hidden, True, role="o")]
    b.dense += _mlp(b.hidden, b.inter, names=("c_fc", "c_proj"), bias=True)
    b.layer_other = 4 * b.hidden
    b.final_norm = 0
    b.extra = c.need("n_positions", "max_position_embeddings") * b.hidden


def _fairseq_decoder(b: _Build, *, width_keys: tuple[str, ...], learned_positions: bool) -> None:
    """The fairseq decoder layer BioGPT and XGLM keep (models/biogpt/modeling_biogpt.py, models/xglm/
    modeling_xglm.py): biased q/k/v/out_proj and fc1/fc2, two LayerNorms with bias, a final LayerNorm; BioGPT's
    learned positions hold max_position_embeddings + 2 rows (its padding offset), XGLM's are sinusoidal."""
    c = b.c
    b.hidden = c.need("hidden_size", "d_model")
    b.layers = c.need("num_hidden_layers", "num_layers", maximum=_MAX_LAYERS)
    b.heads = b.kv = c.need("num_attention_heads", "attention_heads")
    if b.hidden % b.heads:
        raise c.fail("num_attention_heads", msg("model.config.bad_heads", hidden=b.hidden, heads=b.heads))
    b.vocab = c.need("vocab_size")
    b.inter = c.need(*width_keys)
    b.gated = False
    b.dense = _attn(b, names=("q_proj", "k_proj", "v_proj", "out_proj"), qkv_bias=True, o_bias=True)
    b.dense += [Linear("fc1", b.hidden, b.inter, True, role="up"), Linear("fc2", b.inter, b.hidden, True, role="down")]
    b.layer_other = 4 * b.hidden
    b.final_norm = 2 * b.hidden
    if learned_positions:
        b.extra = (c.need("max_position_embeddings") + 2) * b.hidden


# ---------------------------------------------------------------- encoder-decoders
# The decoder's layers are the layers (its self-attention, cross-attention and feed-forward are what a decoder layer
# holds); the encoder's layers, the positions and the embedding norms are counted in `extra`, so the total is whole.

# per model_type: (positions, norm after the embeddings, norm after the last layer), as each modeling file builds them
_BART_LINEAGE = {
    "bart": ("learned+2", True, False),           # models/bart/modeling_bart.py BartLearnedPositionalEmbedding (offset 2)
    "mbart": ("learned+2", True, True),           # models/mbart/modeling_mbart.py: layernorm_embedding and layer_norm
    "plbart": ("learned+2", True, False),         # models/plbart/modeling_plbart.py (BART's)
    "mvp": ("learned+2", True, False),            # models/mvp/modeling_mvp.py (BART's, prompts off by default)
    "blenderbot": ("learned", False, True),       # models/blenderbot/modeling_blenderbot.py
    "blenderbot-small": ("learned", True, False), # models/blenderbot_small/modeling_blenderbot_small.py
    "marian": ("table", False, False),            # models/marian/modeling_marian.py: a sinusoidal nn.Embedding weight
    "pegasus": ("table", False, True),            # models/pegasus/modeling_pegasus.py: the same, and a final layer_norm
    "m2m_100": ("buffer", False, True),           # models/m2m_100/modeling_m2m_100.py: sinusoidal weights as a buffer
    "whisper": ("whisper", False, True),          # models/whisper/modeling_whisper.py: audio convolutions, k_proj unbiased
    # models/pegasus_x/modeling_pegasus_x.py: positions computed on the fly, bias-free attention, num_global_tokens
    # learned global-token embeddings, and a global_self_attn_layer_norm in each encoder layer
    "pegasus_x": ("none", False, True),
}


def _bart_lineage(b: _Build) -> None:
    """The fairseq encoder-decoder transformers' BART family keeps: biased q/k/v/out_proj (Whisper's k_proj has
    no bias), fc1/fc2 with biases, a LayerNorm after each block; the decoder adds a cross-attention block. One
    embedding is shared by both halves and the lm_head (Whisper: the decoder's, the encoder reads mel frames
    through two convolutions of kernel 3); final_logits_bias is a buffer."""
    c = b.c
    positions, embed_norm, last_norm = _BART_LINEAGE[b.model_type]
    d = b.hidden = c.need("d_model", "hidden_size")
    b.layers = c.need("decoder_layers", "num_hidden_layers", maximum=_MAX_LAYERS)
    enc_layers = c.need("encoder_layers", maximum=_MAX_LAYERS)      # the class defaults differ per type: not assumed
    b.heads = b.kv = c.need("decoder_attention_heads", "num_attention_heads")
    if d % b.heads:
        raise c.fail("decoder_attention_heads", msg("model.config.bad_heads", hidden=d, heads=b.heads))
    b.vocab = c.need("vocab_size")
    b.inter = c.need("decoder_ffn_dim")
    enc_ffn = c.need("encoder_ffn_dim")
    b.gated = False
    b.tied = True
    whisper = positions == "whisper"
    global_tokens = b.model_type == "pegasus_x"
    ab = not global_tokens

    def attn(prefix: str) -> list[Linear]:
        return [Linear(f"{prefix}.q_proj", d, d, ab, role="q"), Linear(f"{prefix}.k_proj", d, d, ab and not whisper, role="k"),
                Linear(f"{prefix}.v_proj", d, d, ab, role="v"), Linear(f"{prefix}.out_proj", d, d, ab, role="o")]

    def fc(width: int) -> list[Linear]:
        return [Linear("fc1", d, width, True, role="up"), Linear("fc2", width, d, True, role="down")]

    b.dense = attn("self_attn") + attn("encoder_attn") + fc(b.inter)
    b.layer_other = 3 * 2 * d                          # self_attn_layer_norm, encoder_attn_layer_norm, final_layer_norm
    b.final_norm = 2 * d if last_norm else 0
    encoder_layer = sum(x.params for x in attn("self_attn") + fc(enc_ffn)) + (3 if global_tokens else 2) * 2 * d
    extra = enc_layers * encoder_layer + (2 * d if last_norm else 0) + (2 * 2 * d if embed_norm else 0)
    if global_tokens:
        extra += c.get_int("num_global_tokens", default=32) * d
    if positions in ("learned+2", "learned", "table"):
        rows = c.need("max_position_embeddings") + (2 if positions == "learned+2" else 0)
        extra += 2 * rows * d
    elif whisper:
        mels = c.need("num_mel_bins")
        extra += mels * d * 3 + d + d * d * 3 + d        # conv1, conv2
        extra += (c.need("max_source_positions") + c.need("max_target_positions")) * d
    b.extra = extra


def _trocr(b: _Build) -> None:
    """TrOCR's decoder (models/trocr/modeling_trocr.py): biased q/k/v/out_proj and fc1/fc2, a LayerNorm after each
    block, learned positions of max_position_embeddings + 2 rows (else sinusoidal, a buffer), an optional
    layernorm_embedding; as a decoder (is_decoder) each layer adds a cross-attention whose k/v read
    cross_attention_hidden_size features. No final norm; the output projection is the embedding when tied."""
    c = b.c
    d = b.hidden = c.need("d_model", "hidden_size")
    b.layers = c.need("decoder_layers", "num_hidden_layers", maximum=_MAX_LAYERS)
    b.heads = b.kv = c.need("decoder_attention_heads", "num_attention_heads")
    if d % b.heads:
        raise c.fail("decoder_attention_heads", msg("model.config.bad_heads", hidden=d, heads=b.heads))
    b.vocab = c.need("vocab_size")
    b.inter = c.need("decoder_ffn_dim")
    b.gated = False
    b.dense = _attn(b, names=("q_proj", "k_proj", "v_proj", "out_proj"), qkv_bias=True, o_bias=True)
    norms = 2
    if c.flag("is_decoder", True):          # TrOCRForCausalLM sets is_decoder itself: every TrOCR has cross-attention
        kv_in = c.get_int("cross_attention_hidden_size") or d
        b.dense += [Linear("encoder_attn.q_proj", d, d, True, role="q"),
                    Linear("encoder_attn.k_proj", kv_in, d, True, role="k"),
                    Linear("encoder_attn.v_proj", kv_in, d, True, role="v"),
                    Linear("encoder_attn.out_proj", d, d, True, role="o")]
        norms = 3
    b.dense += [Linear("fc1", d, b.inter, True, role="up"), Linear("fc2", b.inter, d, True, role="down")]
    b.layer_other = norms * 2 * d
    b.final_norm = 0
    positions = (c.need("max_position_embeddings") + 2) * d if c.flag("use_learned_position_embeddings", True) else 0
    b.extra = positions + (2 * d if c.flag("layernorm_embedding", True) else 0)


def _moonshine(b: _Build) -> None:
    """Moonshine (models/moonshine/modeling_moonshine.py): an encoder of three Conv1d (the first bias-free) and a
    GroupNorm over the raw waveform, then encoder layers of bias-free-output attention (q/k/v biased by
    attention_bias, o_proj never), a GELU fc1/fc2 MLP with biases and two bias-free LayerNorms; decoder layers add a
    cross-attention and a third LayerNorm, their MLP gated (fc1 to 2 x intermediate_size); the head is the
    embedding when tied (proj_out, tie_word_embeddings True by default)."""
    c = b.c
    d = b.hidden = c.need("hidden_size")
    b.layers = c.need("decoder_num_hidden_layers", "num_hidden_layers", maximum=_MAX_LAYERS)
    enc_layers = c.need("encoder_num_hidden_layers", maximum=_MAX_LAYERS)
    b.heads = c.need("decoder_num_attention_heads", "num_attention_heads")
    b.kv = c.get_int("decoder_num_key_value_heads", "num_key_value_heads", default=b.heads)
    enc_heads = c.need("encoder_num_attention_heads")
    enc_kv = c.get_int("encoder_num_key_value_heads", default=enc_heads)
    b.vocab = c.need("vocab_size")
    b.inter = c.need("intermediate_size")
    bias = c.flag("attention_bias", False)
    b.gated = True

    def attn(prefix: str, heads: int, kv: int) -> list[Linear]:
        hd = c.get_int("head_dim", default=d // heads)
        return [Linear(f"{prefix}.q_proj", d, heads * hd, bias, role="q"),
                Linear(f"{prefix}.k_proj", d, kv * hd, bias, role="k"),
                Linear(f"{prefix}.v_proj", d, kv * hd, bias, role="v"),
                Linear(f"{prefix}.o_proj", heads * hd, d, False, role="o")]

    b.dense = attn("self_attn", b.heads, b.kv) + attn("encoder_attn", b.heads, b.kv)
    b.dense += [Linear("mlp.fc1", d, 2 * b.inter, True, role="gate_up"), Linear("mlp.fc2", b.inter, d, True, role="down")]
    b.layer_other = 3 * d                   # input, post-attention and final LayerNorm, weight only
    b.final_norm = d
    encoder_layer = sum(x.params for x in attn("self_attn", enc_heads, enc_kv)) + 2 * d * b.inter + b.inter + d + 2 * d
    convs = d * 127 + (d * 2 * d * 7 + 2 * d) + (2 * d * d * 3 + d)      # conv1 (no bias), conv2, conv3
    b.extra = enc_layers * encoder_layer + convs + 2 * d + d              # groupnorm, the encoder's layer_norm


def _mllama_text(b: _Build) -> None:
    """Mllama's language model (models/mllama/modeling_mllama.py MllamaTextModel): Llama layers, of which those
    in `cross_attention_layers` attend to the image instead (the same q/k/v/o sizes, plus q_norm and k_norm over
    head_dim and two scalar gates); the embedding holds vocab_size + 8 rows, the lm_head vocab_size."""
    _llama(b)
    cross = b.c.raw("cross_attention_layers", default=[])
    crossed = len(cross) if isinstance(cross, list) else 0
    d = b.head_dim or b.hidden // b.heads
    b.extra += 8 * b.hidden + crossed * (2 * d + 2)


def _t5gemma_layer(b: _Build, c: Cfg, *, cross: bool) -> tuple[list[Linear], int]:
    """One T5Gemma layer (models/t5gemma/modeling_t5gemma.py T5GemmaEncoderLayer / T5GemmaDecoderLayer): Gemma 2's
    self-attention and gated MLP with a pre and a post RMSNorm around each; the decoder's adds a cross-attention
    block whose k/v read the encoder's width (cross_attention_hidden_size), with its own two norms."""
    h = c.need("hidden_size")
    heads = c.need("num_attention_heads")
    kv = c.get_int("num_key_value_heads", default=heads)
    d = c.get_int("head_dim", default=h // heads)
    inter = c.need("intermediate_size")
    bias = c.flag("attention_bias", False)
    linears = [Linear("self_attn.q_proj", h, heads * d, bias, role="q"),
               Linear("self_attn.k_proj", h, kv * d, bias, role="k"),
               Linear("self_attn.v_proj", h, kv * d, bias, role="v"),
               Linear("self_attn.o_proj", heads * d, h, bias, role="o")]
    if cross:
        enc = c.get_int("cross_attention_hidden_size", default=h)
        linears += [Linear("cross_attn.q_proj", h, heads * d, bias, role="other"),
                    Linear("cross_attn.k_proj", enc, kv * d, bias, role="other"),
                    Linear("cross_attn.v_proj", enc, kv * d, bias, role="other"),
                    Linear("cross_attn.o_proj", heads * d, h, bias, role="other")]
    linears += _mlp(h, inter)
    return linears, (6 if cross else 4) * h


def _t5gemma(b: _Build) -> None:
    """T5Gemma's decoder (its layers are the layers; the encoder is counted from `encoder` by _count_vision): its
    own embedding, tied to the lm_head unless tie_word_embeddings is false, and a final RMSNorm."""
    c = b.c
    b.hidden = c.need("hidden_size")
    b.layers = c.need("num_hidden_layers", maximum=_MAX_LAYERS)
    b.heads = c.need("num_attention_heads")
    b.kv = c.get_int("num_key_value_heads", default=b.heads)
    b.head_dim = c.get_int("head_dim", default=b.hidden // b.heads)
    b.vocab = c.need("vocab_size")
    b.inter = c.need("intermediate_size")
    b.dense, b.layer_other = _t5gemma_layer(b, c, cross=True)
    b.final_norm = b.hidden


def _t5gemma_encoder_params(v: Cfg) -> int:
    """T5GemmaEncoder: an embedding of its own, the encoder layers, a final RMSNorm."""
    h = v.need("hidden_size")
    layers = v.need("num_hidden_layers", maximum=_MAX_LAYERS)
    linears, other = _t5gemma_layer(_Build(v, "t5_gemma_module", True), v, cross=False)
    return v.need("vocab_size") * h + layers * (sum(m.params for m in linears) + other) + h


def _xlnet(b: _Build) -> None:
    """XLNet (models/xlnet/modeling_xlnet.py): XLNetRelativeAttention holds q, k, v, o and the relative-position
    r as d_model x n_head x d_head tensors without bias, three per-head biases (r_r, r_s, r_w) and a two-row
    seg_embed, then a LayerNorm; XLNetFeedForward a biased two-matrix MLP and a LayerNorm; XLNetModel a mask_emb
    of d_model; XLNetLMHeadModel's lm_loss is tied to the word embedding, with a bias. Other heads: a guess."""
    c = b.c
    h = b.hidden = c.need("d_model", "hidden_size")
    b.layers = c.need("n_layer", "num_hidden_layers", maximum=_MAX_LAYERS)
    n = b.heads = b.kv = c.need("n_head", "num_attention_heads")
    d = b.head_dim = c.get_int("d_head", default=h // n)
    b.vocab = c.need("vocab_size")
    b.inter = c.need("d_inner")
    b.gated = False
    b.tied = True
    b.dense = [Linear("rel_attn.q", h, n * d, role="q"), Linear("rel_attn.k", h, n * d, role="k"),
               Linear("rel_attn.v", h, n * d, role="v"), Linear("rel_attn.o", n * d, h, role="o"),
               Linear("rel_attn.r", h, n * d, role="other")]
    b.dense += [Linear("ff.layer_1", h, b.inter, True, role="up"), Linear("ff.layer_2", b.inter, h, True, role="down")]
    b.layer_other = 5 * n * d + 4 * h                    # r_r/r_s/r_w biases, seg_embed (2 rows), two LayerNorms
    b.final_norm = 0
    arch = c.raw("architectures")
    head = arch[0] if isinstance(arch, list) and arch and isinstance(arch[0], str) else "XLNetModel"
    if head not in ("XLNetModel", "XLNetLMHeadModel"):
        # a head this reading does not know: counted without it, a guess that transformers' count replaces
        b.guess = True
        b.assumed = [msg("model.assume.head", cls=head)]
    b.extra = h + (b.vocab if head == "XLNetLMHeadModel" else 0)     # mask_emb; lm_loss's bias
    b.head_counted = True


def _blip_text(b: _Build) -> None:
    """BLIP's text decoder (models/blip/modeling_blip_text.py BlipTextLMHeadModel): BERT's layers (biased q/k/v, a
    dense and a LayerNorm after attention and after the MLP) with, under is_decoder (BlipTextConfig's default), a
    cross-attention whose key/value read encoder_hidden_size; word and position embeddings with a LayerNorm, no
    pooler, and the MLM head's transform and bias (its decoder weight tied to the word embedding)."""
    c = b.c
    h = b.hidden = c.get_int("hidden_size", default=768)
    b.layers = c.get_int("num_hidden_layers", default=12, maximum=_MAX_LAYERS)
    b.heads = b.kv = c.get_int("num_attention_heads", default=8)
    b.vocab = c.get_int("vocab_size", default=30524)
    b.inter = c.get_int("intermediate_size", default=3072)
    b.gated = False
    b.tied = True
    b.dense = _attn(b, prefix="attention", names=("query", "key", "value", "output.dense"), qkv_bias=True,
                    o_bias=True)
    b.layer_other = 4 * h
    if c.flag("is_decoder", True):
        enc = c.get_int("encoder_hidden_size", default=768)
        b.dense += [Linear("crossattention.query", h, h, True, role="other"),
                    Linear("crossattention.key", enc, h, True, role="other"),
                    Linear("crossattention.value", enc, h, True, role="other"),
                    Linear("crossattention.output.dense", h, h, True, role="other")]
        b.layer_other += 2 * h
    b.dense += [Linear("intermediate.dense", h, b.inter, True, role="up"),
                Linear("output.dense", b.inter, h, True, role="down")]
    b.final_norm = 0
    b.extra = c.get_int("max_position_embeddings", default=512) * h + 2 * h + (h * h + h + 2 * h) + b.vocab
    b.head_counted = True


# ---------------------------------------------------------------- bidirectional encoders
# BERT's encoder as its descendants keep it: word, position and token-type embeddings with a LayerNorm, post-norm
# layers of biased q/k/v/o and a two-matrix biased MLP with a LayerNorm after each block (models/bert/modeling_bert.py
# BertEmbeddings, BertLayer); RoBERTa and XLM-R the same (models/roberta/modeling_roberta.py, models/xlm_roberta/);
# ELECTRA's embeddings are embedding_size wide with a projection into the hidden size (models/electra/
# modeling_electra.py ElectraModel.embeddings_project). The head is the class's own, read from architectures[0].
# LayoutLMv3 (models/layoutlmv3/modeling_layoutlmv3.py) is RoBERTa's encoder with 2-D positions, an image patch
# embedding and relative-position bias tables beside it (_layoutlmv3_extra), and no pooler.
# LayoutLM (models/layoutlm/modeling_layoutlm.py) is BERT's encoder with x/y/h/w position tables of
# max_2d_position_embeddings rows (LayoutLMEmbeddings), and every head class builds LayoutLMModel with its pooler;
# ERNIE (models/ernie/modeling_ernie.py) is BERT's, heads included, with a task_type_embeddings table of
# task_type_vocab_size rows under use_task_id (ErnieEmbeddings).
_ENCODER_KIND = {"bert": "bert", "roberta": "roberta", "xlm-roberta": "roberta", "camembert": "roberta",
                 "electra": "electra", "layoutlmv3": "layoutlmv3", "layoutlm": "layoutlm", "ernie": "bert",
                 "mpnet": "roberta"}
# MPNet (models/mpnet/modeling_mpnet.py) keeps RoBERTa's heads (MPNetClassificationHead, no pooler under the
# sequence, token and QA classes) and layers (attention.attn.q/k/v/o, biased), has no token-type table, and adds the
# encoder's relative_attention_bias, an Embedding of relative_attention_num_buckets rows by the heads.


def _layoutlmv3_extra(c: Cfg, h: int, heads: int) -> int:
    """LayoutLMv3TextEmbeddings' x/y (coordinate_size) and h/w (shape_size) tables of max_2d_position_embeddings
    rows; with visual_embed, LayoutLMv3PatchEmbeddings' biased Conv2d, cls_token, pos_embed of (input_size /
    patch_size)^2 + 1 rows, LayerNorm and norm; LayoutLMv3Encoder's bias-free rel_pos_bias (rel_pos_bins) and
    rel_pos_x/y_bias (rel_2d_pos_bins) Linears to the heads (defaults: configuration_layoutlmv3.py)."""
    rows = c.get_int("max_2d_position_embeddings", default=1024)
    extra = 2 * rows * c.get_int("coordinate_size", default=128) + 2 * rows * c.get_int("shape_size", default=128)
    if c.flag("visual_embed", True):
        patch = c.get_int("patch_size", default=16)
        side = c.get_int("input_size", default=224) // patch
        extra += c.get_int("num_channels", default=3) * patch * patch * h + h + h + (side * side + 1) * h + 4 * h
    if c.flag("has_relative_attention_bias", True):
        extra += c.get_int("rel_pos_bins", default=32) * heads
    if c.flag("has_spatial_attention_bias", True):
        extra += 2 * c.get_int("rel_2d_pos_bins", default=64) * heads
    return extra


def _encoder_head(b: _Build, kind: str, head: str, e: int) -> int:
    """The parameters of the class's pooler and head (its tied decoder weight is the word embedding)."""
    h, c = b.hidden, b.c
    labels = c.raw("id2label")
    # PretrainedConfig: num_labels = len(id2label), else the class default of 2
    n = len(labels) if isinstance(labels, dict) and labels else c.get_int("num_labels", default=2)
    pooler = h * h + h                                   # BertPooler / RobertaPooler: a biased dense, tanh
    transform = h * h + h + 2 * h                        # BertPredictionHeadTransform / RobertaLMHead: dense + LN
    two_layer = h * h + h + h * n + n                    # RobertaClassificationHead / ElectraClassificationHead
    if kind == "layoutlmv3":                             # LayoutLMv3ClassificationHead(pool_feature=False); no pooler
        if head.endswith("ForQuestionAnswering"):
            return h * h + h + 2 * h + 2                 # qa_outputs: the head over two labels
        if head.endswith("ForTokenClassification"):
            return h * n + n if n < 10 else two_layer    # LayoutLMv3ForTokenClassification: num_labels < 10
        if head.endswith("Model"):
            return 0
    if head.endswith(("ForMaskedLM", "ForCausalLM", "LMHeadModel")):
        if kind == "electra":                            # ElectraGeneratorPredictions (h -> e, LN), lm head bias
            return h * e + e + 2 * e + b.vocab
        return transform + b.vocab                       # the decoder's bias; its weight is tied
    if head.endswith("ForPreTraining"):
        if kind == "electra":                            # ElectraDiscriminatorPredictions: dense, dense_prediction
            return h * h + h + h + 1
        return pooler + transform + b.vocab + 2 * h + 2  # BertPreTrainingHeads: MLM head and the NSP Linear(h, 2)
    if head.endswith("ForSequenceClassification"):
        return pooler + h * n + n if kind == "bert" else two_layer
    if head.endswith("ForTokenClassification"):
        return h * n + n                                 # add_pooling_layer=False
    if head.endswith("ForQuestionAnswering"):
        return h * n + n                                 # qa_outputs: Linear(h, num_labels), no pooler
    if head.endswith("ForMultipleChoice") and kind != "electra":
        return pooler + h + 1
    if head.endswith("Model"):
        return 0 if kind == "electra" else pooler        # ElectraModel has no pooler
    # a head this reading does not know: counted without it, a guess, so that transformers' count replaces it
    b.guess = True
    b.assumed = [msg("model.assume.head", cls=head)]
    return 0


def _biased_encoder_layer(b: _Build, attention: tuple[str, str, str, str], vocab: bool = True) -> int:
    """The layer BERT's lineage and ESM share: biased query/key/value/output under `attention.`, a biased two-matrix
    MLP (intermediate.dense, output.dense), two biased LayerNorms, and a head tied to the word table; the hidden
    size."""
    c = b.c
    h = b.hidden = c.need("hidden_size")
    b.layers = c.need("num_hidden_layers", maximum=_MAX_LAYERS)
    b.heads = b.kv = c.need("num_attention_heads")
    if h % b.heads:
        raise c.fail("num_attention_heads", msg("model.config.bad_heads", hidden=h, heads=b.heads))
    b.vocab = c.need("vocab_size") if vocab else 0       # CANINE reads characters by hashing: no vocabulary
    b.inter = c.need("intermediate_size")
    b.gated = False
    b.tied = True
    b.dense = _attn(b, prefix="attention", names=attention, qkv_bias=True, o_bias=True)
    b.dense += [Linear("intermediate.dense", h, b.inter, True, role="up"),
                Linear("output.dense", b.inter, h, True, role="down")]
    b.layer_other = 4 * h
    return h


def _bert_lineage(b: _Build) -> None:
    c = b.c
    kind = _ENCODER_KIND[b.model_type]
    mpnet = b.model_type == "mpnet"
    names = ("attn.q", "attn.k", "attn.v", "attn.o") if mpnet else ("query", "key", "value", "output.dense")
    h = _biased_encoder_layer(b, names)                 # the MLM decoder tied to the words
    if c.flag("add_cross_attention", False):
        # a decoder half (bert2bert): BertLayer adds a crossattention BertAttention, k/v over hidden_size, and its
        # LayerNorm
        b.dense += [Linear(f"crossattention.{n}", h, h, True, role="other") for n in ("query", "key", "value", "out")]
        b.layer_other = (b.layer_other or 0) + 2 * h
    b.final_norm = 0
    # ElectraConfig's embedding_size defaults to 128 whatever the hidden size (models/electra/configuration_electra.py)
    e = c.get_int("embedding_size", default=128) if kind == "electra" else h
    positions = c.need("max_position_embeddings") * e
    types = 0 if mpnet else c.get_int("type_vocab_size", default=2) * e
    if mpnet:
        types = c.get_int("relative_attention_num_buckets", default=32) * b.heads
    project = e * h + h if e != h else 0
    # the word embedding is counted as vocab x hidden by the layout; ELECTRA's is vocab x embedding_size
    b.extra = b.vocab * (e - h) + positions + types + 2 * e + project
    arch = c.raw("architectures")
    head = arch[0] if isinstance(arch, list) and arch and isinstance(arch[0], str) else "Model"
    b.extra += _encoder_head(b, "bert" if kind == "layoutlm" else kind, head, e)
    if kind == "layoutlm":
        b.extra += 4 * c.get_int("max_2d_position_embeddings", default=1024) * h
        # LayoutLMModel(config) under every head: the pooler BERT's masked-LM, token and QA heads leave out
        if head.endswith(("ForMaskedLM", "ForTokenClassification", "ForQuestionAnswering")):
            b.extra += h * h + h
    if b.model_type == "ernie" and c.flag("use_task_id", False):
        b.extra += c.get_int("task_type_vocab_size", default=3) * h
    if kind == "layoutlmv3":
        b.extra += _layoutlmv3_extra(c, h, b.heads)
        if not c.flag("text_embed", True):              # no text embeddings at all: not this layout's count
            b.guess = True
            b.assumed = [msg("model.assume.head", cls=head)]
    b.head_counted = True


def _num_labels(c: Cfg) -> int:
    """PretrainedConfig: num_labels = len(id2label), else the class default of 2."""
    labels = c.raw("id2label")
    return len(labels) if isinstance(labels, dict) and labels else c.get_int("num_labels", default=2)


def _head_class(c: Cfg) -> str:
    arch = c.raw("architectures")
    return arch[0] if isinstance(arch, list) and arch and isinstance(arch[0], str) else "Model"


def _albert(b: _Build) -> None:
    """ALBERT (models/albert/modeling_albert.py): embeddings embedding_size wide (word, position, token type, a
    LayerNorm) projected into the hidden size (embedding_hidden_mapping_in); num_hidden_groups groups of
    inner_group_num AlbertLayers (biased query/key/value/dense, a LayerNorm, biased ffn/ffn_output, a LayerNorm) whose
    weights every pass of the num_hidden_layers shares (AlbertTransformer), so the activations see every pass and the
    weights one copy a group layer; the head is the class's (AlbertMLMHead: dense to embedding_size, LayerNorm, the
    decoder tied to the words with its bias; AlbertSOPHead; the pooler where AlbertModel keeps add_pooling_layer)."""
    c = b.c
    h = _biased_encoder_layer(b, ("query", "key", "value", "dense"))
    b.final_norm = 0
    e = c.get_int("embedding_size", default=128)
    distinct = c.get_int("num_hidden_groups", default=1) * c.get_int("inner_group_num", default=1)
    per_layer = sum(x.params for x in b.dense) + (b.layer_other or 0)
    shared = (b.layers - distinct) * per_layer if distinct < b.layers else 0
    b.extra = (b.vocab * (e - h) + c.need("max_position_embeddings") * e + c.get_int("type_vocab_size", default=2) * e
               + 2 * e + e * h + h - shared)
    head, n = _head_class(c), _num_labels(c)
    pooler, mlm = h * h + h, h * e + e + 2 * e + b.vocab
    heads = {"ForMaskedLM": mlm, "ForPreTraining": pooler + mlm + h * 2 + 2, "ForSequenceClassification":
             pooler + h * n + n, "ForTokenClassification": h * n + n, "ForQuestionAnswering": 2 * h + 2,
             "ForMultipleChoice": pooler + h + 1, "Model": pooler}
    _count_head(b, head, heads, b.extra)


def _deberta_v2(b: _Build) -> None:
    """DeBERTa-v2 and -v3 (models/deberta_v2/modeling_deberta_v2.py): word embeddings embedding_size wide, absolute
    positions only under position_biased_input (its default), token types when type_vocab_size > 0, a bias-free
    embed_proj where embedding_size differs, a LayerNorm; post-norm layers of biased query_proj/key_proj/value_proj
    and output dense, a biased two-matrix MLP, two LayerNorms, and under relative_attention without share_att_key a
    biased pos_key_proj (c2p) and pos_query_proj (p2c); the encoder's rel_embeddings (2 x position_buckets rows, else
    2 x max_relative_positions, else 2 x max_position_embeddings), its LayerNorm under norm_rel_ebd layer_norm and the
    ConvLayer under conv_kernel_size; the class's head (ContextPooler of pooler_hidden_size, then a classifier over
    its output_dim, the hidden size)."""
    c = b.c
    h = _biased_encoder_layer(b, ("query_proj", "key_proj", "value_proj", "output.dense"))
    b.final_norm = 0
    e = c.get_int("embedding_size", default=h)
    relative = c.flag("relative_attention", False)
    kinds = c.raw("pos_att_type") or []
    if relative and not c.flag("share_att_key", False) and isinstance(kinds, list):
        b.dense += [Linear(f"attention.self.{name}", h, h, True, role="other")
                    for kind, name in (("c2p", "pos_key_proj"), ("p2c", "pos_query_proj")) if kind in kinds]
    maxpos = c.get_int("max_position_embeddings", default=512)
    extra = b.vocab * (e - h) + 2 * h + (e * h if e != h else 0)
    extra += maxpos * e if c.flag("position_biased_input", True) else 0
    extra += c.get_int("type_vocab_size", default=0, minimum=0) * e
    if relative:
        buckets = c.get_int("position_buckets", default=-1, minimum=-1)
        rel = c.get_int("max_relative_positions", default=-1, minimum=-1)
        extra += 2 * (buckets if buckets > 0 else rel if rel >= 1 else maxpos) * h
    if "layer_norm" in [x.strip() for x in str(c.raw("norm_rel_ebd") or "none").lower().split("|")]:
        extra += 2 * h
    kernel = c.get_int("conv_kernel_size", default=0, minimum=0)
    if kernel > 0:
        extra += h * (h // c.get_int("conv_groups", default=1)) * kernel + h + 2 * h
    head, n = _head_class(c), _num_labels(c)
    ph = c.get_int("pooler_hidden_size", default=h)
    width = e if c.flag("legacy", True) else h          # the legacy MLM head's transform is embedding_size wide
    pooler = ph * ph + ph                               # ContextPooler: Linear(pooler_hidden_size, pooler_hidden_size)
    # ...whose output_dim is hidden_size: the classifier reads that width
    heads = {"ForMaskedLM": h * width + width + 2 * width + b.vocab, "ForSequenceClassification":
             pooler + h * n + n, "ForTokenClassification": h * n + n, "ForQuestionAnswering": h * n + n,
             "ForMultipleChoice": pooler + h + 1, "Model": 0}
    _count_head(b, head, heads, extra)


def _mobilebert(b: _Build) -> None:
    """MobileBERT (models/mobilebert/modeling_mobilebert.py; defaults from configuration_mobilebert.py): word
    embeddings embedding_size wide, concatenated with their two shifted copies under trigram_input and projected to
    hidden_size (embedding_transformation, biased), position and token-type tables hidden_size wide, a norm. Each
    layer works in true_hidden_size (intra_bottleneck_size under use_bottleneck, else hidden_size): biased
    query/key over it, value over it under use_bottleneck_attention else over hidden_size, a biased output dense;
    the bottleneck's input projection hidden -> intra_bottleneck_size (and a second, for key/query, under
    key_query_shared_bottleneck), each with a norm; an intermediate/output pair and num_feedforward_networks - 1 more
    FFNLayers of the same two matrices; OutputBottleneck (true -> hidden, a norm) under use_bottleneck. NoNorm and
    LayerNorm both keep a weight and a bias. The pooler is a dense only under classifier_activation, and
    MobileBertModel keeps it except under the masked-LM, token-classification and question-answering heads."""
    c = b.c
    h = b.hidden = c.get_int("hidden_size", default=512)
    b.layers = c.get_int("num_hidden_layers", default=24, maximum=_MAX_LAYERS)
    b.heads = b.kv = c.get_int("num_attention_heads", default=4)
    b.vocab = c.get_int("vocab_size", default=30522)
    i = b.inter = c.get_int("intermediate_size", default=512)
    e = c.get_int("embedding_size", default=128)
    ib = c.get_int("intra_bottleneck_size", default=128)
    bottleneck = c.flag("use_bottleneck", True)
    t = ib if bottleneck else h
    if t % b.heads:
        raise c.fail("num_attention_heads", msg("model.config.bad_heads", hidden=t, heads=b.heads))
    b.head_dim = t // b.heads
    b.gated, b.tied, b.final_norm = False, True, 0
    value_in = t if c.flag("use_bottleneck_attention", False) else h
    b.dense = [Linear("attention.self.query", t, t, True, role="q"), Linear("attention.self.key", t, t, True, role="k"),
               Linear("attention.self.value", value_in, t, True, role="v"),
               Linear("attention.output.dense", t, t, True, role="o"),
               Linear("intermediate.dense", t, i, True, role="up"), Linear("output.dense", i, t, True, role="down")]
    norms = 2 * t + 2 * t
    if bottleneck:
        b.dense += [Linear("output.bottleneck.dense", t, h, True, role="other"),
                    Linear("bottleneck.input.dense", h, ib, True, role="other")]
        norms += 2 * h + 2 * ib
        if c.flag("key_query_shared_bottleneck", True):
            b.dense.append(Linear("bottleneck.attention.dense", h, ib, True, role="other"))
            norms += 2 * ib
    for k in range(c.get_int("num_feedforward_networks", default=4, minimum=1) - 1):
        b.dense += [Linear(f"ffn.{k}.intermediate.dense", t, i, True, role="up"),
                    Linear(f"ffn.{k}.output.dense", i, t, True, role="down")]
        norms += 2 * t
    b.layer_other = norms
    c.raw("normalization_type")                         # no_norm or layer_norm: a weight and a bias either way
    width = e * (3 if c.flag("trigram_input", True) else 1)
    extra = (b.vocab * (e - h) + c.get_int("max_position_embeddings", default=512) * h
             + c.get_int("type_vocab_size", default=2) * h + width * h + h + 2 * h)
    head, n = _head_class(c), _num_labels(c)
    pooler = h * h + h if c.flag("classifier_activation", True) else 0
    mlm = h * h + h + 2 * h + b.vocab * (h - e) + b.vocab   # transform, its LayerNorm, the extra dense, decoder bias
    heads = {"ForMaskedLM": mlm, "ForPreTraining": pooler + mlm + 2 * h + 2, "ForNextSentencePrediction":
             pooler + 2 * h + 2, "ForSequenceClassification": pooler + h * n + n, "ForTokenClassification": h * n + n,
             "ForQuestionAnswering": h * n + n, "ForMultipleChoice": pooler + h + 1, "Model": pooler}
    _count_head(b, head, heads, extra)


def _count_head(b: _Build, head: str, heads: dict[str, int], extra: int) -> None:
    """Sets the build's extra parameters to `extra` plus the head class's own (`heads`: class-name suffix -> its
    parameters); a head class the reading does not know counts nothing and makes the count a guess."""
    found = [v for k, v in heads.items() if head.endswith(k)]
    if found:
        extra += found[0]
    else:                                               # a head this reading does not know: a guess
        b.guess = True
        b.assumed = [msg("model.assume.head", cls=head)]
    b.extra = extra
    b.head_counted = True


def _canine(b: _Build) -> None:
    """CANINE (models/canine/modeling_canine.py): no vocabulary; num_hash_functions hash-bucket tables of
    num_hash_buckets rows, hidden_size / num_hash_functions wide, char_position_embeddings of num_hash_buckets rows,
    token types and a LayerNorm (CanineEmbeddings); BERT's layers in three encoders, the deep one of num_hidden_layers
    over the downsampled molecules and two of one layer over the characters (initial_char_encoder,
    final_char_encoder), all counted as layers, so that the activations are sized as if every layer saw the
    characters (an upper bound); CharactersToMolecules (a biased Conv1d of downsampling_rate, a LayerNorm),
    ConvProjection (a biased Conv1d from 2 x hidden of upsampling_kernel_size, a LayerNorm), and CanineModel's pooler
    under every head class."""
    c = b.c
    h = _biased_encoder_layer(b, ("query", "key", "value", "output.dense"), vocab=False)
    b.final_norm = 0
    b.layers += 2
    functions = c.get_int("num_hash_functions", default=8)
    buckets = c.get_int("num_hash_buckets", default=16384)
    extra = functions * buckets * (h // functions) + buckets * h + c.get_int("type_vocab_size", default=16) * h + 2 * h
    extra += h * h * c.get_int("downsampling_rate", default=4) + h + 2 * h
    extra += 2 * h * h * c.get_int("upsampling_kernel_size", default=4) + h + 2 * h
    extra += h * h + h                                  # CaninePooler: CanineModel(config) under every head
    head, n = _head_class(c), _num_labels(c)
    heads = {"ForSequenceClassification": h * n + n, "ForTokenClassification": h * n + n,
             "ForQuestionAnswering": h * n + n, "ForMultipleChoice": h + 1, "Model": 0}
    _count_head(b, head, heads, extra)


def _t5_family(b: _Build) -> None:
    """T5, mT5 and UMT5 (models/t5/modeling_t5.py, models/umt5/modeling_umt5.py): bias-free q/k/v/o of
    num_heads x d_kv, a feed-forward of d_ff (wi_0/wi_1/wo when feed_forward_proj is "gated-...", else wi/wo),
    weight-only LayerNorms, a relative-position bias of buckets x heads in each stack's first layer (UMT5: in every
    layer); the decoder adds cross-attention. transformers 5 ties the lm_head to the shared embedding for all three
    (configuration_t5.py forces tie_word_embeddings)."""
    c = b.c
    d = b.hidden = c.need("d_model")
    b.layers = c.get_int("num_decoder_layers") or c.need("num_layers", maximum=_MAX_LAYERS)
    enc_layers = c.need("num_layers", maximum=_MAX_LAYERS)
    b.heads = b.kv = c.need("num_heads")
    b.head_dim = c.get_int("d_kv", default=64)
    inner = b.heads * b.head_dim
    b.vocab = c.need("vocab_size")
    b.inter = c.need("d_ff")
    default_ff = "relu" if b.model_type == "t5" else "gated-gelu"
    b.gated = str(c.raw("feed_forward_proj") or default_ff).split("-")[0] == "gated"
    b.tied = True

    def attn(prefix: str) -> list[Linear]:
        return [Linear(f"{prefix}.q", d, inner, False, role="q"), Linear(f"{prefix}.k", d, inner, False, role="k"),
                Linear(f"{prefix}.v", d, inner, False, role="v"), Linear(f"{prefix}.o", inner, d, False, role="o")]

    ff = _mlp(d, b.inter, prefix="DenseReluDense", names=("wi_0", "wi_1", "wo") if b.gated else ("wi", "wo"))
    buckets = c.get_int("relative_attention_num_buckets", default=32) * b.heads
    b.dense = attn("SelfAttention") + attn("EncDecAttention") + ff
    b.layer_other = 3 * d
    b.final_norm = d
    encoder_layer = sum(x.params for x in attn("SelfAttention") + ff) + 2 * d
    every_layer = b.model_type == "umt5"
    bias_rows = (enc_layers + b.layers) * buckets if every_layer else 2 * buckets
    b.extra = enc_layers * encoder_layer + d + bias_rows


def _ctrl(b: _Build) -> None:
    """CTRL (models/ctrl/modeling_ctrl.py): biased Wq/Wk/Wv/dense, a biased two-layer ReLU feed-forward of dff,
    two LayerNorms with bias, sinusoidal positions (no parameters), an lm_head with a bias."""
    c = b.c
    _common(b, head_dim_key=False, gqa=False)
    b.gated = False
    b.inter = c.need("dff")
    b.dense = _attn(b, prefix="multi_head_attention", names=("Wq", "Wk", "Wv", "dense"), qkv_bias=True, o_bias=True)
    b.dense += _mlp(b.hidden, b.inter, prefix="ffn", names=("0", "2"), bias=True)
    b.layer_other = 4 * b.hidden
    b.final_norm = 2 * b.hidden
    b.extra = b.vocab                             # lm_head bias


def _cpmant(b: _Build) -> None:
    """CPM-Ant (models/cpmant/modeling_cpmant.py): bias-free q/k/v/out of num_attention_heads x dim_head, a
    GELU-gated bias-free w_0/w_1/w_out of dim_ff, weight-only LayerNorms (two per layer, one at the end), an input
    embedding with prompt_types x prompt_length prompt rows beyond the vocabulary, a segment embedding, and a
    relative-position bias of (segment_types^2 + position_bias_num_buckets) x heads."""
    c = b.c
    _common(b, head_dim_key=False, gqa=False)
    b.head_dim = c.get_int("dim_head", default=128)
    b.inter = c.get_int("dim_ff", default=10240)
    b.dense = _attn(b, prefix="self_att.self_attention", names=("project_q", "project_k", "project_v", "attention_out"))
    b.dense += _mlp(b.hidden, b.inter, prefix="ffn.ffn", names=("w_in.w_0", "w_in.w_1", "w_out"))
    b.layer_other = 2 * b.hidden
    b.tied = False                  # its lm_head is a parameter of its own (CpmAntForCausalLM._tied_weights_keys is empty)
    segments = c.get_int("segment_types", default=32)
    prompts = c.get_int("prompt_types", default=32) * c.get_int("prompt_length", default=32)
    buckets = c.get_int("position_bias_num_buckets", default=512)
    b.extra = prompts * b.hidden + segments * b.hidden + (segments * segments + buckets) * b.heads


def _xlstm(b: _Build) -> None:
    """xLSTM-7B (models/xlstm/modeling_xlstm.py xLSTMLayer/xLSTMFeedForward/xLSTMBlock): an mLSTM layer of q/k
    (hidden * qk_dim_factor), v and an output gate (hidden * v_dim_factor), input and forget gates per head
    (always biased), a multi-head norm and out_proj; a gated feed-forward of hidden * ffn_proj_factor rounded up
    to ffn_round_up_to_multiple_of; weight_mode "fused" joins the same weights into two matrices."""
    c = b.c
    b.hidden = c.need("hidden_size", "embedding_dim")
    b.layers = c.need("num_blocks", "num_hidden_layers", maximum=_MAX_LAYERS)
    b.heads = b.kv = c.need("num_heads")
    b.vocab = c.need("vocab_size")
    h, heads = b.hidden, b.heads
    bias = c.flag("use_bias", False)
    qk = int(h * c.get_float("qk_dim_factor", 0.5, maximum=64))
    v = int(h * c.get_float("v_dim_factor", 1.0, maximum=64))
    b.head_dim = max(1, qk // heads)
    multiple = c.get_int("ffn_round_up_to_multiple_of", default=64)
    # configuration_xlstm.round_up_to_next_multiple_of: the float product rounded up to the multiple
    b.inter = int(((h * c.get_float("ffn_proj_factor", 2.667, maximum=64) + multiple - 1) // multiple) * multiple)
    if str(c.raw("weight_mode", default="single")) == "fused":
        mixer = [Linear("mlstm_layer.qkv_opreact", h, 2 * qk + 2 * v, bias, role="qkv"),
                 Linear("mlstm_layer.ifgate_preact", h, 2 * heads, True, role="other")]
        ffn = [Linear("ffn.proj_up_gate_z", h, 2 * b.inter, bias, role="gate_up"),
               Linear("ffn.proj_down", b.inter, h, bias, role="down")]
    else:
        mixer = [Linear("mlstm_layer.q", h, qk, bias, role="q"), Linear("mlstm_layer.k", h, qk, bias, role="k"),
                 Linear("mlstm_layer.v", h, v, bias, role="v"),
                 Linear("mlstm_layer.ogate_preact", h, v, bias, role="other"),
                 Linear("mlstm_layer.igate_preact", h, heads, True, role="other"),
                 Linear("mlstm_layer.fgate_preact", h, heads, True, role="other")]
        ffn = _mlp(h, b.inter, prefix="ffn", names=("proj_up_gate", "proj_up", "proj_down"), bias=bias)
    b.dense = mixer + [Linear("mlstm_layer.out_proj", v, h, bias, role="o")] + ffn
    norm = 2 if bias else 1
    b.layer_other = norm * (v + 2 * h)            # the multi-head norm, norm_mlstm, norm_ffn
    b.final_norm = h                              # xLSTMModel.out_norm: weight only, whatever use_bias says


def _gpt_neox_japanese(b: _Build) -> None:
    """GPT-NeoX-Japanese (models/gpt_neox_japanese/modeling_gpt_neox_japanese.py): a bias-free fused
    query_key_value and dense, a bias-free MLP of int(hidden * intermediate_multiple_size), two LayerNorms with
    bias, and one dense_bias vector in the last layer's attention only."""
    c = b.c
    _common(b, head_dim_key=False, gqa=False)
    b.gated = False
    b.inter = int(b.hidden * c.get_float("intermediate_multiple_size", 4.0, minimum=0.01, maximum=1024))
    b.dense = _fused_attn(b, "attention.query_key_value", "attention.dense")
    b.dense += _mlp(b.hidden, b.inter, names=("dense_h_to_4h", "dense_4h_to_h"))
    b.layer_other = 4 * b.hidden
    b.final_norm = 2 * b.hidden
    b.extra = b.hidden                            # the last layer's dense_bias


def _rwkv(b: _Build) -> None:
    """RWKV-4 (models/rwkv/modeling_rwkv.py RwkvSelfAttention/RwkvFeedForward/RwkvBlock): no attention heads;
    each block's time mixing has bias-free key/value/receptance (h -> attention_hidden_size) and output, a
    time_decay and time_first per channel and three time_mix vectors; its channel mixing has key (h -> inter),
    receptance (h -> h), value (inter -> h) and two time_mix vectors; two LayerNorms per block, one more
    (pre_ln) in block 0, ln_out at the end."""
    c = b.c
    b.hidden = c.need("hidden_size")
    b.layers = c.need("num_hidden_layers", maximum=_MAX_LAYERS)
    b.vocab = c.need("vocab_size")
    a = c.get_int("attention_hidden_size", default=b.hidden)
    b.inter = c.get_int("intermediate_size", default=4 * b.hidden)
    b.heads = b.kv = 1
    b.head_dim = b.hidden
    b.gated = False
    b.dense = [Linear("attention.key", b.hidden, a, role="k"), Linear("attention.value", b.hidden, a, role="v"),
               Linear("attention.receptance", b.hidden, a, role="q"), Linear("attention.output", a, b.hidden, role="o"),
               Linear("feed_forward.key", b.hidden, b.inter, role="up"),
               Linear("feed_forward.receptance", b.hidden, b.hidden, role="other"),
               Linear("feed_forward.value", b.inter, b.hidden, role="down")]
    b.layer_other = 2 * a + 3 * b.hidden + 2 * b.hidden + 4 * b.hidden
    b.final_norm = 2 * b.hidden
    b.extra = 2 * b.hidden                        # block 0's pre_ln


def _doge(b: _Build) -> None:
    """Doge (models/doge/modeling_doge.py DogeAttention/DogeMLP/DogeCDMoE/DogeDecoderLayer): Llama's q/k/v/o
    plus a dynamic-mask dt_proj (kv heads * head_dim -> kv heads), an A per kv head and q/k norms; a gated MLP, or with
    is_moe the cross-domain MoE (the gated MLP beside a router over sqrt(num_experts) keys twice and two
    num_experts x hidden expert embeddings); a residual scale vector beside each of the two RMSNorms."""
    c = b.c
    _common(b)
    bias = c.flag("attention_bias", False)
    mlp_bias = c.flag("mlp_bias", False)
    d = b.head_dim or b.hidden // b.heads
    b.dense = _attn(b, qkv_bias=bias, o_bias=bias)
    b.dense.append(Linear("self_attn.dt_proj", b.kv * d, b.kv, bias, role="other"))
    b.dense += _mlp(b.hidden, b.inter, bias=mlp_bias)
    b.layer_other = 4 * b.hidden + b.kv + 2 * d
    if c.flag("is_moe", False):
        experts = c.need("num_experts")
        keys = math.isqrt(experts)
        b.dense.append(Linear("mlp.router_gate", b.hidden, 2 * keys, role="router"))
        b.layer_other += 2 * experts * b.hidden


def _bloom(b: _Build) -> None:
    """BLOOM: n_embed/n_layer, fused biased query_key_value, a plain 4h MLP, ALiBi, an embedding LayerNorm."""
    _common(b, head_dim_key=False, gqa=False)
    b.gated = False
    b.inter = 4 * b.hidden
    b.dense = _fused_attn(b, "self_attention.query_key_value", "self_attention.dense", qkv_bias=True, o_bias=True)
    b.dense += _mlp(b.hidden, b.inter, names=("dense_h_to_4h", "dense_4h_to_h"), bias=True)
    b.layer_other = 4 * b.hidden
    b.final_norm = 2 * b.hidden
    b.extra = 2 * b.hidden                        # word_embeddings_layernorm


def _falcon(b: _Build) -> None:
    """Falcon / RefinedWeb(Model): multi-query or grouped heads in one query_key_value, the new decoder
    architecture's two LayerNorms, parallel attention (no parameters of its own), a tied head by default."""
    c = b.c
    _common(b, head_dim_key=False, gqa=False)
    b.gated = False
    new_arch = c.flag("new_decoder_architecture", b.model_type == "RefinedWeb")
    if new_arch:
        b.kv = c.get_int("num_kv_heads", "n_head_kv", default=b.heads)
    elif c.flag("multi_query", True):
        b.kv = 1
    else:
        b.kv = b.heads
    bias = c.flag("bias", False)
    b.inter = c.get_int("ffn_hidden_size", default=4 * b.hidden)
    b.dense = _fused_attn(b, "self_attention.query_key_value", "self_attention.dense", qkv_bias=bias, o_bias=bias)
    b.dense += _mlp(b.hidden, b.inter, names=("dense_h_to_4h", "dense_4h_to_h"), bias=bias)
    if new_arch:
        norms = c.get_int("num_ln_in_parallel_attn", default=2)
    else:
        norms = 1 if c.flag("parallel_attn", True) else 2
    b.layer_other = norms * 2 * b.hidden
    b.final_norm = 2 * b.hidden


def _mpt(b: _Build) -> None:
    c = b.c
    attn_cfg = c.sub("attn_config") or Cfg({}, c.path, None, c)
    b.hidden = c.need("d_model")
    b.layers = c.need("n_layers", maximum=_MAX_LAYERS)
    b.heads = c.need("n_heads")
    b.kv = attn_cfg.get_int("kv_n_heads", default=b.heads)
    b.vocab = c.need("vocab_size")
    ffn = c.sub("ffn_config")
    ffn_width = ffn.get_int("ffn_hidden_size") if ffn else None
    ratio = c.get_float("expansion_ratio", 4.0, minimum=0.01, maximum=1024)
    b.inter = ffn_width or int(ratio * b.hidden)
    b.gated = False
    bias = not c.flag("no_bias", True)
    b.dense = _fused_attn(b, "attn.Wqkv", "attn.out_proj", qkv_bias=bias, o_bias=bias)
    b.dense += _mlp(b.hidden, b.inter, prefix="ffn", names=("up_proj", "down_proj"), bias=bias)
    norm = b.hidden * (2 if bias else 1)
    b.layer_other = 2 * norm
    b.final_norm = norm
    if c.flag("learned_pos_emb", True) and not attn_cfg.flag("alibi", False):
        b.extra = c.need("max_seq_len") * b.hidden


def _opt(b: _Build) -> None:
    """OPT (models/opt/modeling_opt.py): biased q/k/v/out_proj and fc1/fc2 of `ffn_dim` (ReLU, no gate), two
    LayerNorms with bias per layer, learned positions of max_position_embeddings + 2 (OPT's offset), a final
    LayerNorm only when do_layer_norm_before, and project_in/project_out when word_embed_proj_dim differs from
    hidden_size (the embeddings and the tied head are then word_embed_proj_dim wide)."""
    c = b.c
    _common(b, head_dim_key=False, gqa=False)
    b.gated = False
    bias = c.flag("enable_bias", True)
    b.inter = c.need("ffn_dim")
    b.dense = _attn(b, names=("q_proj", "k_proj", "v_proj", "out_proj"), qkv_bias=bias, o_bias=bias)
    b.dense += [Linear("fc1", b.hidden, b.inter, bias, role="up"), Linear("fc2", b.inter, b.hidden, bias, role="down")]
    affine = 2 if c.flag("layer_norm_elementwise_affine", True) else 0
    b.layer_other = 2 * affine * b.hidden
    b.final_norm = affine * b.hidden if c.flag("do_layer_norm_before", True) else 0
    b.extra = (c.need("max_position_embeddings") + 2) * b.hidden
    proj = c.get_int("word_embed_proj_dim", default=b.hidden)
    if proj != b.hidden:
        # the embedding table (and the head tied to it) is vocab x proj, plus the two projections
        heads = 1 if b.tied else 2
        b.extra += 2 * proj * b.hidden - heads * b.vocab * (b.hidden - proj)


def _dbrx(b: _Build) -> None:
    """DBRX (models/dbrx/modeling_dbrx.py): d_model/n_heads/n_layers, attn_config.kv_n_heads for a fused
    bias-free Wqkv, every layer a sparse block of ffn_config.moe_num_experts experts whose w1/v1/w2 live in 3-D
    parameters, a bias-free router, two bias-free LayerNorms per layer."""
    c = b.c
    attn = c.sub("attn_config") or Cfg({}, c.path, None, c)
    ffn = c.sub("ffn_config") or Cfg({}, c.path, None, c)
    b.hidden = c.need("d_model")
    b.layers = c.need("n_layers", maximum=_MAX_LAYERS)
    b.heads = c.need("n_heads")
    b.kv = attn.get_int("kv_n_heads", default=1)
    b.vocab = c.need("vocab_size")
    b.inter = ffn.get_int("ffn_hidden_size", default=3584)
    b.experts = ffn.get_int("moe_num_experts", default=4)
    b.experts_per_token = ffn.get_int("moe_top_k", default=1)
    b.moe_inter = b.inter
    b.moe = _fused_attn(b, "norm_attn_norm.attn.Wqkv", "norm_attn_norm.attn.out_proj")
    b.moe += [Linear("ffn.router.layer", b.hidden, b.experts, role="router"),
              Linear("ffn.experts.mlp.w1", b.hidden, b.inter, copies=b.experts, role="gate", peft=False),
              Linear("ffn.experts.mlp.v1", b.hidden, b.inter, copies=b.experts, role="up", peft=False),
              Linear("ffn.experts.mlp.w2", b.inter, b.hidden, copies=b.experts, role="down", peft=False)]
    b.moe_layers = b.layers


# ---------------------------------------------------------------- vision towers (multimodal configs)

def _vit_layer(h: int, inter: int) -> int:
    """One pre-norm ViT layer: two LayerNorms, biased q/k/v/out (or a fused qkv and proj), a biased
    fc1/fc2 MLP of width `inter` (SigLIP, CLIP, the Qwen2-VL and Qwen3.5 towers)."""
    return 4 * (h * h + h) + (h * inter + inter) + (inter * h + h) + 4 * h


def _mllama_vision_params(v: Cfg, text_hidden: int) -> int:
    """Mllama's vision model (models/mllama/modeling_mllama.py MllamaVisionModel, MllamaVisionConfig defaults): a
    class embedding, a bias-free patch Conv2d, a gated position embedding with a per-aspect-ratio tile table,
    gated pre- and post-tile embeddings, two LayerNorms, a local encoder of num_hidden_layers and a global one of
    num_global_layers (two gates each) of bias-free q/k/v/o and biased fc1/fc2; then the projector from
    vision_output_dim to the text width."""
    h = v.get_int("hidden_size", default=1280)
    inter = v.get_int("intermediate_size", default=5120)
    layers = v.get_int("num_hidden_layers", default=32, maximum=_MAX_LAYERS)
    global_layers = v.get_int("num_global_layers", default=8, maximum=_MAX_LAYERS)
    patch = v.get_int("patch_size", default=14)
    image = v.get_int("image_size", default=448)
    channels = v.get_int("num_channels", default=3)
    tiles = v.get_int("max_num_tiles", default=4)
    ratios = v.raw("supported_aspect_ratios", default=None)
    # MllamaVisionConfig: max_aspect_ratio_id = len(supported_aspect_ratios), its default list holds 8 ratios
    ratio_ids = (len(ratios) if isinstance(ratios, list) else 8) + 1
    positions = (image // patch) ** 2 + 1
    layer = 4 * h * h + (h * inter + inter) + (inter * h + h) + 4 * h
    out = v.get_int("vision_output_dim", default=7680)
    return (h + channels * patch * patch * h + 1 + positions * h + ratio_ids * tiles * positions * h
            + 2 * (1 + ratio_ids * tiles * h) + 4 * h + layers * layer + global_layers * (layer + 2)
            + out * text_hidden + text_hidden)


def _base_vision_dims(v: Cfg, *, patch: int) -> tuple[int, int, int, int, int, int]:
    """(hidden, intermediate, layers, patch, image, channels) with the base-size defaults ViTConfig and
    CLIPVisionConfig share (768 wide, 3072, 12 layers, 224-pixel RGB images); only the patch size differs."""
    return (v.get_int("hidden_size", default=768), v.get_int("intermediate_size", default=3072),
            v.get_int("num_hidden_layers", default=12, maximum=_MAX_LAYERS), v.get_int("patch_size", default=patch),
            v.get_int("image_size", default=224), v.get_int("num_channels", default=3))


def _vit_model_params(v: Cfg) -> int:
    """A ViTModel (models/vit/modeling_vit.py, ViTConfig defaults): a class token, a biased patch Conv2d, learned
    positions for the patches and the class token, layers of q/k/v (biased by qkv_bias), a biased output and a
    biased fc1/fc2 with two LayerNorms, a final LayerNorm and the pooler's biased dense layer."""
    h, inter, layers, patch, image, channels = _base_vision_dims(v, patch=16)
    unbiased_qkv = 0 if v.flag("qkv_bias", True) else 3 * h
    return (h + channels * patch * patch * h + h + ((image // patch) ** 2 + 1) * h
            + layers * (_vit_layer(h, inter) - unbiased_qkv) + 2 * h + h * h + h)


def _patch_merger(e: int, merge: int, out: int, norm: int) -> int:
    """Qwen-VL's PatchMerger: a norm of `norm` parameters, then two biased Linears from merge^2 x e
    patch features into the language model's width `out`."""
    merged = e * merge * merge
    return norm + (merged * merged + merged) + (merged * out + out)


def _siglip_params(v: Cfg) -> int:
    """A SigLIP/ViT encoder (models/siglip/modeling_siglip.py): patch conv, learned positions, biased
    q/k/v/out and fc1/fc2, two LayerNorms per layer, a post LayerNorm."""
    h = v.need("hidden_size")
    inter = v.need("intermediate_size")
    layers = v.need("num_hidden_layers", maximum=_MAX_LAYERS)
    # SiglipVisionConfig's defaults stand in for a size the file leaves out (PaliGemma's vision_config, saved as
    # its difference from them, has no image_size)
    patch = v.get_int("patch_size", default=16)
    image = v.get_int("image_size", default=224)
    channels = v.get_int("num_channels", default=3)
    patches = (image // patch) ** 2
    return channels * patch * patch * h + h + patches * h + layers * _vit_layer(h, inter) + 2 * h


def _clip_vision_params(v: Cfg) -> int:
    """A CLIPVisionModel (models/clip/modeling_clip.py, CLIPVisionConfig defaults): a class embedding, a
    bias-free patch Conv2d, learned positions for the patches and the class token, pre and post LayerNorms,
    and layers of biased q/k/v/out_proj and fc1/fc2 with two LayerNorms."""
    h, inter, layers, patch, image, channels = _base_vision_dims(v, patch=32)
    return h + channels * patch * patch * h + ((image // patch) ** 2 + 1) * h + 4 * h + layers * _vit_layer(h, inter)


def _intern_vit_params(v: Cfg, top: Cfg, text_hidden: int) -> int:
    """InternVL's tower and projector (its remote modeling_intern_vit.py InternVisionModel, InternVisionConfig
    defaults; modeling_internvl_chat.py mlp1): a class embedding, a biased patch Conv2d, learned positions for the
    patches and the class token; layers of a fused qkv (biased by qkv_bias) and a biased proj, q/k RMSNorms under
    qk_normalization, two norms (LayerNorm or RMSNorm by norm_type), two layer-scale vectors and a biased fc1/fc2;
    no final norm. mlp1: a LayerNorm and two biased Linears from the pixel-shuffled features (hidden x
    (1/downsample_ratio)^2) to the language model's width."""
    h = v.get_int("hidden_size", default=3200)
    inter = v.get_int("intermediate_size", default=12800)
    layers = v.get_int("num_hidden_layers", default=48, maximum=_MAX_LAYERS)
    patch = v.get_int("patch_size", default=14)
    image = v.get_int("image_size", default=224)
    channels = v.get_int("num_channels", default=3)
    norm = 2 * h if v.raw("norm_type", default="rms_norm") == "layer_norm" else h
    layer = (3 * h * h + (3 * h if v.flag("qkv_bias", False) else 0) + h * h + h
             + (2 * h if v.flag("qk_normalization", True) else 0) + 2 * norm + 2 * h
             + h * inter + inter + inter * h + h)
    tower = h + channels * patch * patch * h + h + ((image // patch) ** 2 + 1) * h + layers * layer
    shuffled = h * round(1 / top.get_float("downsample_ratio", default=0.5, minimum=1e-3)) ** 2
    return tower + 2 * shuffled + shuffled * text_hidden + text_hidden + text_hidden * text_hidden + text_hidden


def _qwen2_vl_vision_params(v: Cfg, text_hidden: int) -> int:
    """Qwen2-VL's vision tower (Qwen2VisionTransformerPretrainedModel, Qwen2VLVisionConfig defaults): a
    bias-free Conv3d patch embedding, `depth` blocks of two LayerNorms, a biased fused qkv and proj and a
    biased fc1/fc2 MLP of mlp_ratio x embed_dim, then the PatchMerger (a LayerNorm and two biased Linears
    from spatial_merge_size^2 x embed_dim to the language model's hidden size)."""
    e = v.get_int("embed_dim", default=1280)
    depth = v.get_int("depth", default=32, maximum=_MAX_LAYERS)
    inter = e * v.get_int("mlp_ratio", default=4)
    channels = v.get_int("in_channels", "in_chans", default=3)
    patch = v.get_int("patch_size", "spatial_patch_size", default=14)
    temporal = v.get_int("temporal_patch_size", default=2)
    merge = v.get_int("spatial_merge_size", default=2)
    out = v.get_int("hidden_size", default=text_hidden)
    return channels * temporal * patch * patch * e + depth * _vit_layer(e, inter) + _patch_merger(e, merge, out, 2 * e)


def _rice_vit_params(v: Cfg) -> int:
    """LLaVA-OneVision-1.5's RICE-ViT tower (its remote modeling_llavaonevision1_5.py RiceTransformerPretrainedModel):
    a bias-free Conv2d patch embedding, a class embedding and its half-head-width rotary position, a pre-LayerNorm,
    `depth` RiceBlocks (two LayerNorms, a biased fused qkv and proj, a biased fc1/fc2 MLP of intermediate_size), and
    RicePatchMerger (a LayerNorm, then two biased Linears from spatial_merge_size^2 x hidden_size into
    text_hidden_size)."""
    h = v.need("hidden_size", "embed_dim")
    depth = v.need("depth", "num_hidden_layers", maximum=_MAX_LAYERS)
    inter = v.need("intermediate_size")
    heads = v.need("num_heads", "num_attention_heads")
    channels = v.get_int("in_channels", default=3)
    patch = v.get_int("patch_size", default=14)
    merge = v.get_int("spatial_merge_size", default=2)
    out = v.need("text_hidden_size")
    context = h * merge * merge
    block = 4 * h + (3 * h * h + 3 * h) + (h * h + h) + (h * inter + inter) + (inter * h + h)
    merger = 2 * h + context * context + context + context * out + out
    return channels * patch * patch * h + h + (h // heads) // 2 + 2 * h + depth * block + merger


def _qwen3_5_vision_params(v: Cfg) -> int:
    """Qwen3.5's vision tower (Qwen3_5VisionModel, Qwen3_5VisionConfig defaults): a biased Conv3d patch
    embedding, learned positions (num_position_embeddings), `depth` blocks of two LayerNorms, a biased fused
    qkv and proj and a biased linear_fc1/linear_fc2 MLP, then a PatchMerger (a LayerNorm and two biased
    Linears from spatial_merge_size^2 x hidden_size into out_hidden_size)."""
    e = v.get_int("hidden_size", default=1152)
    inter = v.get_int("intermediate_size", default=4304)
    depth = v.get_int("depth", default=27, maximum=_MAX_LAYERS)
    channels = v.get_int("in_channels", default=3)
    patch = v.get_int("patch_size", default=16)
    temporal = v.get_int("temporal_patch_size", default=2)
    merge = v.get_int("spatial_merge_size", default=2)
    out = v.get_int("out_hidden_size", default=3584)
    positions = v.get_int("num_position_embeddings", default=2304)
    return (channels * temporal * patch * patch * e + e + positions * e + depth * _vit_layer(e, inter)
            + _patch_merger(e, merge, out, 2 * e))


def _gemma4_vision_params(v: Cfg, text_hidden: int) -> int:
    """Gemma 4's vision tower and its embedder (models/gemma4/modeling_gemma4.py Gemma4VisionModel,
    Gemma4MultimodalEmbedder): a bias-free patch projection from 3 x patch^2 pixels and a two-axis position
    table (2 x position_embedding_size x hidden), layers of bias-free q/k/v/o with q/k RMSNorms over head_dim,
    a gated MLP and four RMSNorms, no final norm; then one bias-free projection into the language model's
    width (its pre-projection norm has no scale). Clipped linears add buffers, not parameters."""
    e = v.need("hidden_size")
    heads = v.need("num_attention_heads")
    kv = v.get_int("num_key_value_heads", default=heads)
    hd = v.get_int("head_dim", default=e // heads)
    inter = v.need("intermediate_size")
    layers = v.need("num_hidden_layers", maximum=_MAX_LAYERS)
    patch = v.get_int("patch_size", default=16)
    positions = v.get_int("position_embedding_size", default=10240)
    out = v.get_int("output_proj_dims", default=e)
    layer = e * heads * hd + 2 * e * kv * hd + heads * hd * e + 2 * hd + 3 * e * inter + 4 * e
    return 3 * patch * patch * e + 2 * positions * e + layers * layer + out * text_hidden


def _idefics3_vision_params(v: Cfg, text_hidden: int, scale_factor: int) -> int:
    """Idefics3's vision tower and connector (models/idefics3/modeling_idefics3.py Idefics3VisionTransformer,
    Idefics3SimpleMLP; Idefics3VisionConfig defaults): SigLIP's biased patch Conv2d, learned positions for
    (image/patch)^2 patches, pre-norm layers, a post LayerNorm; then one bias-free projection of
    scale_factor^2 pixel-shuffled features into the language model's width (SmolVLM builds the same)."""
    h = v.get_int("hidden_size", default=1152)
    inter = v.get_int("intermediate_size", default=3072)
    layers = v.get_int("num_hidden_layers", default=12, maximum=_MAX_LAYERS)
    patch = v.get_int("patch_size", default=32)
    image = v.get_int("image_size", default=224)
    channels = v.get_int("num_channels", default=3)
    tower = channels * patch * patch * h + h + (image // patch) ** 2 * h + layers * _vit_layer(h, inter) + 2 * h
    return tower + h * scale_factor * scale_factor * text_hidden


def _gemma4_unified_vision_params(v: Cfg, text_hidden: int) -> int:
    """Gemma 4 unified's encoder-free image input (models/gemma4_unified/modeling_gemma4_unified.py
    Gemma4UnifiedVisionEmbedder): a LayerNorm over 3 x model_patch_size^2 raw pixels, a biased Dense into
    mm_embed_dim, a LayerNorm, a factorized (mm_posemb_size, 2, mm_embed_dim) position table and its LayerNorm,
    then Gemma4UnifiedMultimodalEmbedder: a scale-free RMSNorm and one bias-free projection into the text width."""
    patch_dim = 3 * v.get_int("model_patch_size", default=48) ** 2
    e = v.need("mm_embed_dim")
    out = v.get_int("output_proj_dims", default=e)
    positions = v.need("mm_posemb_size")
    return 2 * patch_dim + patch_dim * e + e + 2 * e + positions * 2 * e + 2 * e + out * text_hidden


def _contrastive_text(b: _Build) -> None:
    """CLIP's and SigLIP's text transformer (models/clip/modeling_clip.py CLIPTextTransformer, models/siglip/
    modeling_siglip.py SiglipTextTransformer): a token and a learned position table, pre-norm layers of biased
    q/k/v/out_proj and fc1/fc2 with two LayerNorms, a final LayerNorm; no language-model head (the token table is
    counted once). SigLIP's adds a biased head to projection_size (its hidden size unless stated)."""
    c = b.c
    _common(b, head_dim_key=False, gqa=False)
    h = b.hidden
    b.gated = False
    b.tied = True
    b.dense = _attn(b, names=("q_proj", "k_proj", "v_proj", "out_proj"), qkv_bias=True, o_bias=True)
    b.dense += _mlp(h, b.inter, names=("fc1", "fc2"), bias=True)
    b.layer_other = 4 * h
    b.final_norm = 2 * h
    siglip = b.model_type.startswith("siglip")
    b.extra = c.get_int("max_position_embeddings", default=64 if siglip else 77) * h
    if siglip:
        b.extra += h * c.get_int("projection_size", default=h) + c.get_int("projection_size", default=h)


def _distilbert(b: _Build) -> None:
    """DistilBERT (models/distilbert/modeling_distilbert.py): word and position tables with a LayerNorm, post-norm
    blocks of biased q_lin/k_lin/v_lin/out_lin and lin1/lin2 with a LayerNorm after each (sa_layer_norm,
    output_layer_norm); the head its class adds: MaskedLM's vocab_transform, vocab_layer_norm and the projector's
    bias (its weight tied to the word table), SequenceClassification's and MultipleChoice's biased pre_classifier
    and classifier (the classifier's weight is _task_head's score for the first), TokenClassification's classifier,
    QuestionAnswering's two-wide qa_outputs."""
    c = b.c
    h = b.hidden = c.need("dim", "hidden_size")
    b.layers = c.need("n_layers", "num_hidden_layers", maximum=_MAX_LAYERS)
    b.heads = b.kv = c.need("n_heads", "num_attention_heads")
    b.vocab = c.need("vocab_size")
    b.inter = c.get_int("hidden_dim", default=4 * h)
    b.gated = False
    b.tied = True
    b.dense = _attn(b, prefix="attention", names=("q_lin", "k_lin", "v_lin", "out_lin"), qkv_bias=True, o_bias=True)
    b.dense += _mlp(h, b.inter, prefix="ffn", names=("lin1", "lin2"), bias=True)
    b.layer_other = 4 * h
    b.final_norm = 0
    b.extra = c.get_int("max_position_embeddings", default=512) * h + 2 * h
    arch = c.raw("architectures")
    head = arch[0] if isinstance(arch, list) and arch and isinstance(arch[0], str) else "DistilBertModel"
    labels = c.raw("id2label")
    n = len(labels) if isinstance(labels, dict) and labels else c.get_int("num_labels", default=2)
    heads = {"DistilBertModel": 0, "DistilBertForMaskedLM": h * h + h + 2 * h + b.vocab,
             "DistilBertForSequenceClassification": h * h + h + n, "DistilBertForMultipleChoice": h * h + h + h + 1,
             "DistilBertForTokenClassification": h * n + n, "DistilBertForQuestionAnswering": 2 * h + 2}
    if head not in heads:
        raise c.fail("architectures", msg("model.refuse.unreadable", why=msg("model.config.missing_key", keys=head),
                                          model_type=b.model_type))
    b.extra += heads[head]


def _esm(b: _Build) -> None:
    """ESM-2 and ESM-1b (models/esm/modeling_esm.py): a word table (positions only when position_embedding_type is
    "absolute", a LayerNorm on it only under emb_layer_norm_before), pre-norm layers of biased query/key/value and
    output.dense with a LayerNorm before each block (EsmAttention.LayerNorm, EsmLayer.LayerNorm), a biased two-matrix
    MLP (intermediate.dense, output.dense), emb_layer_norm_after closing the stack, and the contact head EsmModel
    always holds (Linear(num_hidden_layers x num_attention_heads, 1)); the head its class adds: EsmLMHead's dense,
    layer_norm and bias (its decoder tied to the word table), EsmClassificationHead's dense and out_proj, the token
    classifier, EsmModel's pooler (add_pooling_layer defaults to True; the heads build EsmModel without it)."""
    c = b.c
    h = _biased_encoder_layer(b, ("self.query", "self.key", "self.value", "output.dense"))
    b.final_norm = 2 * h                                 # emb_layer_norm_after
    b.extra = b.layers * b.heads + 1                     # contact_head.regression
    if str(c.raw("position_embedding_type") or "absolute") == "absolute":
        b.extra += c.need("max_position_embeddings") * h
    if c.flag("emb_layer_norm_before", False):
        b.extra += 2 * h
    arch = c.raw("architectures")
    head = arch[0] if isinstance(arch, list) and arch and isinstance(arch[0], str) else "EsmModel"
    labels = c.raw("id2label")
    n = len(labels) if isinstance(labels, dict) and labels else c.get_int("num_labels", default=2)
    heads = {"EsmModel": h * h + h, "EsmForMaskedLM": h * h + h + 2 * h + b.vocab,
             "EsmForSequenceClassification": h * h + h + h * n + n, "EsmForTokenClassification": h * n + n}
    if head not in heads:
        # a head this reading does not know (EsmForProteinFolding's trunk): a guess, so that transformers' count
        # replaces it
        b.guess = True
        b.assumed = [msg("model.assume.head", cls=head)]
    b.extra += heads.get(head, 0)
    b.head_counted = True


def _wav2vec2(b: _Build) -> None:
    """wav2vec 2.0 (models/wav2vec2/modeling_wav2vec2.py): the convolutional feature encoder (conv_dim/conv_kernel
    Conv1d layers, biased by conv_bias; a GroupNorm on the first under feat_extract_norm "group", a LayerNorm on
    each under "layer"), the feature projection (a LayerNorm and a biased Linear into hidden_size), masked_spec_embed
    when a time or feature mask is on, the weight-normed grouped positional Conv1d (weight_g, weight_v and a bias),
    the encoder's LayerNorm and layers of biased q/k/v/out_proj and intermediate/output dense with two LayerNorms;
    Wav2Vec2ForCTC's biased lm_head over vocab_size. An adapter or another head is refused."""
    c = b.c
    _common(b, head_dim_key=False, gqa=False)
    h = b.hidden
    b.gated = False
    b.tied = True
    b.dense = _attn(b, prefix="attention", names=("q_proj", "k_proj", "v_proj", "out_proj"), qkv_bias=True,
                    o_bias=True)
    b.dense += _mlp(h, b.inter, prefix="feed_forward", names=("intermediate_dense", "output_dense"), bias=True)
    b.layer_other = 4 * h
    b.final_norm = 2 * h
    dims, kernels = c.raw("conv_dim", default=[512] * 7), c.raw("conv_kernel", default=[10, 3, 3, 3, 3, 2, 2])
    arch = c.raw("architectures")
    head = arch[0] if isinstance(arch, list) and arch and isinstance(arch[0], str) else "Wav2Vec2Model"
    if (not isinstance(dims, list) or not isinstance(kernels, list) or len(dims) != len(kernels) or not dims
            or not _positive_ints(dims + kernels)
            or c.flag("add_adapter", False) or head not in ("Wav2Vec2Model", "Wav2Vec2ForCTC")):
        raise c.fail("architectures", msg("model.refuse.unreadable", why=msg("model.config.missing_key",
                                                                             keys="conv_dim, conv_kernel"),
                                          model_type=b.model_type))
    bias = c.flag("conv_bias", False)
    convs = sum(i * o * k + (o if bias else 0) for i, o, k in zip([1] + dims[:-1], dims, kernels))
    norm = c.raw("feat_extract_norm", default="group")
    convs += sum(2 * o for o in dims) if norm == "layer" else 2 * dims[0]
    projection = 2 * dims[-1] + dims[-1] * h + h
    masked = h if (c.get_float("mask_time_prob", 0.05) > 0 or c.get_float("mask_feature_prob", 0.0) > 0) else 0
    k = c.get_int("num_conv_pos_embeddings", default=128)
    groups = c.get_int("num_conv_pos_embedding_groups", default=16)
    positional = k + h * (h // groups) * k + h
    # no token table: the vocab_size x hidden table counted once (tied) stands for the CTC lm_head's weight, its
    # bias added; Wav2Vec2Model has neither
    b.extra = convs + projection + masked + positional + (b.vocab if head == "Wav2Vec2ForCTC" else -b.vocab * h)


def _contrastive_towers(b: _Build, top_type: str, v: Cfg, top: Cfg) -> None:
    """The vision half of CLIPModel and SiglipModel and what joins the two: CLIP's vision transformer, its
    bias-free visual and text projections to projection_dim and logit_scale (modeling_clip.py CLIPModel); SigLIP's
    vision transformer with its attention-pooling head (a probe, nn.MultiheadAttention's fused in_proj and out_proj,
    a LayerNorm and a biased fc1/fc2 MLP, unless vision_use_head is false), logit_scale and logit_bias."""
    vh = v.get_int("hidden_size", default=768)
    if top_type == "clip":
        proj = top.get_int("projection_dim", default=512)
        b.extra += _clip_vision_params(v) + vh * proj + b.hidden * proj + 1
        return
    inter = v.get_int("intermediate_size", default=3072)
    tower = _base_vision_dims(v, patch=16)
    h, _inter, layers, patch, image, channels = tower
    body = channels * patch * patch * h + h + (image // patch) ** 2 * h + layers * _vit_layer(h, inter) + 2 * h
    head = (h + 3 * h * h + 3 * h + h * h + h + 2 * h + h * inter + inter + inter * h + h
            if v.flag("vision_use_head", True) else 0)
    b.extra += body + head + 2


def _codet5p_encoder_params(e: Cfg, decoder_hidden: int) -> int:
    """CodeT5+'s encoder and what joins it to the decoder (its remote modeling_codet5p.py): CodeT5pModel, CodeGen's
    blocks without an lm_head (a token table, bias-free qkv_proj and out_proj, a biased fc_in/fc_out, one LayerNorm
    a block, ln_f); one cross-attention in the decoder's last block (CodeT5pAttention with is_cross_attention: a
    bias-free two-wide qkv_proj, q_attn and out_proj in the decoder's width); enc_to_dec_proj when the widths differ."""
    h = e.need("n_embd", "hidden_size")
    layers = e.need("n_layer", "num_hidden_layers", maximum=_MAX_LAYERS)
    inter = e.get_int("n_inner", default=4 * h)
    encoder = e.need("vocab_size") * h + layers * (4 * h * h + 2 * h * inter + inter + h + 2 * h) + 2 * h
    cross = 4 * decoder_hidden * decoder_hidden
    return encoder + cross + (h * decoder_hidden + decoder_hidden if h != decoder_hidden else 0)


def _count_joined_tower(b: _Build, top_type: str, v: Cfg, top: Cfg) -> bool:
    """CLIPModel's and SiglipModel's vision half, InternVL's InternViT and projector, CodeT5+'s encoder,
    LLaVA-OneVision-1.5's RICE-ViT; False for another kind."""
    if v.raw("model_type") == "rice_vit":
        # the tower holds its own merger into the language model's width: no projector beside it
        b.extra += _rice_vit_params(v)
    elif top_type == "codet5p" and v.raw("model_type") == "codet5p_module":
        b.extra += _codet5p_encoder_params(v, b.hidden)
    elif top_type in ("clip", "siglip"):
        _contrastive_towers(b, top_type, v, top)
    elif top_type == "internvl_chat" and v.raw("model_type") == "intern_vit_6b":
        b.extra += _intern_vit_params(v, top, b.hidden)
    else:
        return False
    return True


# the CLIP towers a config names by checkpoint instead of describing: (hidden, intermediate, layers, patch, image)
# as those checkpoints publish their vision_config (openai/clip-vit-*/config.json)
_NAMED_CLIP: dict[str, tuple[int, int, int, int, int]] = {
    "openai/clip-vit-base-patch32": (768, 3072, 12, 32, 224),
    "openai/clip-vit-base-patch16": (768, 3072, 12, 16, 224),
    "openai/clip-vit-large-patch14": (1024, 4096, 24, 14, 224),
    "openai/clip-vit-large-patch14-336": (1024, 4096, 24, 14, 336),
}


def _named_clip_params(name: str) -> int | None:
    """A CLIPVisionModel named by its checkpoint (see _clip_vision_params), or None for a name not in the table."""
    dims = _NAMED_CLIP.get(name.strip().lower())
    if dims is None:
        return None
    h, inter, layers, patch, image = dims
    return h + 3 * patch * patch * h + ((image // patch) ** 2 + 1) * h + 4 * h + layers * _vit_layer(h, inter)


# timm ViTs a config names by model name (timm models/vision_transformer.py, the so400m SigLIP defs): (embed, depth,
# mlp width, patch, image); no class token, a biased patch projection, one final LayerNorm
_NAMED_TIMM_VIT: dict[str, tuple[int, int, int, int, int]] = {
    "vit_so400m_patch14_siglip_224": (1152, 27, 4304, 14, 224),
    "vit_so400m_patch14_siglip_384": (1152, 27, 4304, 14, 384),
}


def _count_timm_tower(b: _Build, cfg: dict[str, Any]) -> bool:
    """MiniCPM-V 2.0's tower and resampler (its modeling_minicpmv.py: timm.create_model(vision_encoder) with the
    attention-pool head dropped and, with drop_vision_last_layer, the last block; resampler.py Resampler over
    query_num queries in the language model's width: a query and a position table of query_num x width, a
    bias-free kv projection from the tower's width, a biased nn.MultiheadAttention, three LayerNorms and a
    width x width output matrix). False when the config names no tower of the table or no query count."""
    name = cfg.get("vision_encoder")
    queries = cfg.get("query_num")
    if not isinstance(name, str) or not isinstance(queries, int) or isinstance(queries, bool) or queries <= 0:
        return False
    dims = _NAMED_TIMM_VIT.get(name.split(".")[0].strip().lower())      # ".webli": the pretrained tag
    if dims is None:
        return False
    e, depth, inter, patch, image = dims
    depth -= 1 if cfg.get("drop_vision_last_layer", False) else 0
    tower = 3 * patch * patch * e + e + (image // patch) ** 2 * e + depth * _vit_layer(e, inter) + 2 * e
    w = b.hidden
    resampler = 2 * queries * w + e * w + (3 * w * w + 3 * w) + (w * w + w) + 3 * 2 * w + w * w
    b.extra += tower + resampler
    return True


# SigLIP towers a LLaVA-style config names in mm_vision_tower: (hidden, intermediate, layers, patch, image) as the
# checkpoints publish their vision_config (google/siglip-so400m-patch14-*/config.json)
_NAMED_SIGLIP: dict[str, tuple[int, int, int, int, int]] = {
    "google/siglip-so400m-patch14-384": (1152, 4304, 27, 14, 384),
    "google/siglip-so400m-patch14-224": (1152, 4304, 27, 14, 224),
}


def _count_named_siglip_tower(b: _Build, cfg: dict[str, Any]) -> bool:
    """A SigLIP tower named in mm_vision_tower with LLaVA's projector keys (LLaVA-NeXT's siglip_encoder.py
    SigLipVisionTower, and MinerU 2's modeling_mineru2.py after it: a SiglipVisionModel less its last layer and its
    head); the projector as LLaVA's builder.py build_vision_projector makes it from mm_projector_type (`linear`, or
    `mlpNx_gelu`: mm_hidden_size -> hidden, then N-1 hidden x hidden, all biased), and llava_arch.py's image_newline
    under an `unpad` mm_patch_merge_type. False when the name or the projector is not one of these."""
    name = cfg.get("mm_vision_tower", cfg.get("vision_tower"))
    dims = _NAMED_SIGLIP.get(name.strip().lower()) if isinstance(name, str) else None
    kind = str(cfg.get("mm_projector_type", "linear"))
    mlp = kind.startswith("mlp") and kind.endswith("x_gelu") and kind[3:-6].isdigit()
    depth = 1 if kind == "linear" else (int(kind[3:-6]) if mlp else 0)
    if dims is None or not depth or cfg.get("mm_hidden_size", dims[0]) != dims[0]:
        return False
    h, inter, layers, patch, image = dims
    tower = 3 * patch * patch * h + h + (image // patch) ** 2 * h + (layers - 1) * _vit_layer(h, inter) + 2 * h
    w = b.hidden
    projector = h * w + w + (depth - 1) * (w * w + w)
    newline = w if "unpad" in str(cfg.get("mm_patch_merge_type", "")) else 0
    b.extra += tower + projector + newline
    return True


def _count_image_processor(b: _Build, cfg: dict[str, Any], notes: list[Msg], top_type: str) -> bool:
    """Phi-3-vision's image embedder, read from `img_processor` and `embd_layer` (its remote
    image_embedding_phi3_v.py Phi3ImageEmbedding): a CLIPVisionModel of the named checkpoint, two learnable
    separators of 4 x image_dim_out under the HD transform, and a projection (`linear`: one Linear; `mlp`: two
    biased Linears, the first from 4 x image_dim_out features under the HD transform). False when not that shape."""
    proc = cfg.get("img_processor")
    if not isinstance(proc, dict) or proc.get("name") != "clip_vision_model":
        return False
    tower = _named_clip_params(str(proc.get("model_name") or ""))
    dim_out = proc.get("image_dim_out")
    if tower is None or not isinstance(dim_out, int) or isinstance(dim_out, bool) or dim_out <= 0:
        notes.append(msg("model.warn.vision_tower_by_name", model_type=top_type, tower=str(proc.get("model_name"))))
        return True
    raw = cfg.get("embd_layer")
    layer: dict[str, Any] = raw if isinstance(raw, dict) else {}
    hd = bool(layer.get("use_hd_transform", False))
    feat = 4 * dim_out if hd else dim_out
    projection = str(layer.get("projection_cls", "linear"))
    proj = feat * b.hidden + b.hidden + ((b.hidden * b.hidden + b.hidden) if projection == "mlp" else 0)
    separators = 2 * 4 * dim_out if layer.get("with_learnable_separator", False) else 0
    b.extra += tower + separators + proj
    return True


def _qwen2_5_vl_vision_params(v: Cfg, text_hidden: int) -> int:
    """Qwen2.5-VL's vision tower (Qwen2_5_VisionTransformerPretrainedModel): Qwen2-VL's patch Conv3d and
    fused qkv/proj, but RMSNorms (weight only), a biased gate/up/down MLP of `intermediate_size`, and a
    PatchMerger with an RMSNorm into `out_hidden_size`."""
    e = v.get_int("hidden_size", default=1280)
    inter = v.get_int("intermediate_size", default=3420)
    depth = v.get_int("depth", default=32, maximum=_MAX_LAYERS)
    channels = v.get_int("in_channels", "in_chans", default=3)
    patch = v.get_int("patch_size", "spatial_patch_size", default=14)
    temporal = v.get_int("temporal_patch_size", default=2)
    merge = v.get_int("spatial_merge_size", default=2)
    out = v.get_int("out_hidden_size", default=text_hidden)
    block = 2 * e + (e * 3 * e + 3 * e) + (e * e + e) + 3 * e * inter + 2 * inter + e
    return channels * temporal * patch * patch * e + depth * block + _patch_merger(e, merge, out, e)


# ---------------------------------------------------------------- dispatch

# model_type -> (builder, tie_word_embeddings default of its config class)
_FAMILIES: dict[str, tuple[Callable[[_Build], None], bool]] = {
    "llama": (_llama, False), "mistral": (_llama, False), "yi": (_llama, False), "deepseek": (_deepseek, False),
    "granite": (_llama, False), "minicpm": (_minicpm, False),
    "exaone4": (_exaone4, False), "bitnet": (_bitnet, False), "orion": (_orion, False),
    "smollm3": (_smollm3, True),
    "qwen2": (_qwen2, False), "qwen3": (_qwen3, False),
    # Qwen2-VL's and Qwen2.5-VL's language model is Qwen2's decoder (the vision tower is counted from vision_config)
    "qwen2_vl": (_qwen2, False), "qwen2_vl_text": (_qwen2, False),
    # VideoLLaMA3's language model is Qwen2's decoder (its remote videollama3_qwen2 code:
    # Videollama3Qwen2ForCausalLM(Qwen2ForCausalLM)); the encoder and projector: _videollama3_tower_params
    "videollama3_qwen2": (_qwen2, False),
    "qwen2_5_vl": (_qwen2, False), "qwen2_5_vl_text": (_qwen2, False),
    "qwen2_moe": (lambda b: _qwen_moe(b, qk_norm=False, shared=True), False),
    # hybrids: Gated DeltaNet linear attention in most layers, gated full attention in the rest
    "qwen3_next": (lambda b: _qwen_hybrid(b, moe=True), False),
    "qwen3_5": (lambda b: _qwen_hybrid(b, moe=False), False), "qwen3_5_text": (lambda b: _qwen_hybrid(b, moe=False), False),
    "qwen3_5_moe": (lambda b: _qwen_hybrid(b, moe=True), False),
    "qwen3_5_moe_text": (lambda b: _qwen_hybrid(b, moe=True), False),
    "qwen3_moe": (lambda b: _qwen_moe(b, qk_norm=True, shared=False), False),
    # Qwen3-VL's language models are Qwen3's and Qwen3-MoE's decoders (models/qwen3_vl/modeling_qwen3_vl.py
    # Qwen3VLTextDecoderLayer: q/k RMSNorm, gated MLP; qwen3_vl_moe's Qwen3VLMoeTextSparseMoeBlock)
    "qwen3_vl_text": (_qwen3, False), "qwen3_vl_moe_text": (lambda b: _qwen_moe(b, qk_norm=True, shared=False), False),
    # Qwen3-Omni's thinker is Qwen3-MoE's decoder (models/qwen3_omni_moe/modular_qwen3_omni_moe.py
    # Qwen3OmniMoeThinkerTextDecoderLayer(Qwen3MoeDecoderLayer), its sparse block Qwen3MoeSparseMoeBlock's)
    "qwen3_omni_moe_text": (lambda b: _qwen_moe(b, qk_norm=True, shared=False), False),
    "mixtral": (_mixtral, False), "phimoe": (_phimoe, False),
    "gemma": (lambda b: _gemma(b, norms=2, qk_norm=False), True),
    "gemma2": (lambda b: _gemma(b, norms=4, qk_norm=False), True),
    "gemma3_text": (lambda b: _gemma(b, norms=4, qk_norm=True), True),
    "gemma3": (lambda b: _gemma(b, norms=4, qk_norm=True), True), "gemma4_text": (_gemma4_text, True),
    "gemma3n_text": (_gemma3n_text, True), "gemma3n": (_gemma3n_text, True),
    # Gemma 4 unified's language model is Gemma 4's text decoder (models/gemma4_unified/modular_gemma4_unified.py:
    # Gemma4UnifiedTextConfig / Gemma4UnifiedTextDecoderLayer are Gemma 4's); only the vision input differs
    "gemma4_unified_text": (lambda b: _gemma4_text(b, unified=True), True),
    "gemma4_unified": (lambda b: _gemma4_text(b, unified=True), True),
    "cohere": (_cohere, True), "cohere2": (_cohere, True),
    "starcoder2": (_starcoder2, True),
    "olmo": (_olmo, False), "olmo2": (_olmo2, False),
    "stablelm": (_stablelm, False),
    # StableLM's remote code before transformers took it in (stable-code-3b modeling_stablelm_epoch.py: the same
    # bias-free q/k/v/o and gated MLP between two biased LayerNorms; `norm_eps` and `rope_pct` are its key names)
    "stablelm_epoch": (_stablelm, False),
    "phi": (_phi, False), "phi-msft": (_phi, False), "mixformer-sequential": (_phi, False),
    "phi3": (_phi3, False),
    # Phi-3-vision's language model is Phi-3's decoder (its remote modeling_phi3_v.py: Phi3DecoderLayer with fused
    # qkv_proj and gate_up_proj); the image embedder is read from `img_processor` (_count_image_processor)
    "phi3_v": (_phi3, False),
    "glm": (lambda b: _glm(b, post_norms=False), False), "glm4": (lambda b: _glm(b, post_norms=True), False),
    "granitemoe": (lambda b: _granitemoe(b, shared=False), False),
    "granitemoeshared": (lambda b: _granitemoe(b, shared=True), False),
    "gpt_oss": (_gpt_oss, False),
    "llama4_text": (_llama4, False), "llama4": (_llama4, False),
    "deepseek_v2": (_deepseek, False), "deepseek_v3": (_deepseek, False), "deepseek_v4": (_deepseek_v4, False),
    # Mistral Small 4's language model: DeepSeek-V3's latent attention and routed + shared experts
    "mistral4": (_deepseek, False),
    # GLM-4.7-Flash (Glm4MoeLiteForCausalLM): DeepSeek-V3's latent attention and routed + shared experts
    "glm4_moe_lite": (_deepseek, False),
    "qwen": (_qwen1, False),
    # ChatGLM's config class leaves the base default (True), but its model defines no output embeddings to
    # tie: transformer.output_layer is always its own weight.
    "chatglm": (_chatglm, False),
    "baichuan": (_baichuan, False),
    "internlm": (_internlm, False), "internlm2": (_internlm2, False),
    "gpt2": (_gpt2, True), "gpt_bigcode": (_gpt_bigcode, True),
    # CodeT5+'s decoder is CodeGen's block (its encoder and cross-attention: _codet5p_encoder_params)
    "codet5p_module": (_codegen, False), "distilbert": (_distilbert, True), "wav2vec2": (_wav2vec2, True),
    "clip_text_model": (_contrastive_text, True), "siglip_text_model": (_contrastive_text, True),
    "gpt_neox": (_gpt_neox, False), "gptj": (_gptj, False),
    "gpt_neo": (_gpt_neo, True), "codegen": (_codegen, False), "openai-gpt": (_openai_gpt, True),
    **{t: (_bart_lineage, True) for t in _BART_LINEAGE},
    "t5": (_t5_family, True),
    "t5_gemma_module": (_t5gemma, True), "xlnet": (_xlnet, True), "blip_text_model": (_blip_text, True),
    "bert": (_bert_lineage, True), "roberta": (_bert_lineage, True), "xlm-roberta": (_bert_lineage, True),
    "layoutlmv3": (_bert_lineage, True), "layoutlm": (_bert_lineage, True), "ernie": (_bert_lineage, True),
    "albert": (_albert, True), "deberta-v2": (_deberta_v2, True), "canine": (_canine, True),
    "mobilebert": (_mobilebert, True),
    "mpnet": (_bert_lineage, True),
    "camembert": (_bert_lineage, True), "electra": (_bert_lineage, True), "esm": (_esm, True),
    "mllama_text_model": (_mllama_text, False),
    "trocr": (_trocr, True),
    "moonshine": (_moonshine, True),
    "mt5": (_t5_family, True),
    "umt5": (_t5_family, True),
    "biogpt": (lambda b: _fairseq_decoder(b, width_keys=("intermediate_size",), learned_positions=True), True),
    "xglm": (lambda b: _fairseq_decoder(b, width_keys=("ffn_dim",), learned_positions=False), True),
    "ctrl": (_ctrl, True), "gpt_neox_japanese": (_gpt_neox_japanese, True), "rwkv": (_rwkv, False),
    "doge": (_doge, False), "cpmant": (_cpmant, True), "xlstm": (_xlstm, False), "hy_v4": (_hy_v4, False),
    "inkling_text": (_inkling, False),
    "bloom": (_bloom, True),
    "falcon": (_falcon, True), "RefinedWeb": (_falcon, True), "RefinedWebModel": (_falcon, True),
    "mpt": (_mpt, True),
    "opt": (_opt, True), "dbrx": (_dbrx, False),
    "zaya": (_zaya, True), "recurrent_gemma": (_recurrent_gemma, True), "zamba2": (_zamba2, True), "zamba": (_zamba, True),
    "lfm2": (_lfm2, True), "lfm2_moe": (_lfm2, True), "lfm3": (_lfm2, True), "falcon_h1": (_falcon_h1, False),
    "jetmoe": (_jetmoe, True),
}


# per_layer_config keys that change only a layer's attention modules and their norms (the sizes an attention builder
# reads); a layer given any other structural key is not counted from features
_ATTN_OVERRIDE_KEYS = ("head_dim", "num_attention_heads", "num_key_value_heads", "kv_lora_rank", "q_lora_rank",
                       "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "attention_bias")


def _attn_params(b: _Build) -> int:
    return sum(m.params for m in (b.dense or b.moe) if m.role in ("q", "k", "v", "o", "qkv", "kv"))


def _per_layer_overrides(b: _Build, build: Callable[[_Build], None]) -> None:
    """transformers 5's `per_layer_config` (configuration_utils.py PreTrainedConfig: "a sparse mapping from layer
    indices to configuration attribute overrides"), which the models that use it read per layer
    (models/dots3_note/modeling_dots3_note.py: `layer_config = config.per_layer_config[layer_idx]`; Gemma 4,
    Step3p7): each listed layer is built from the config with its overrides (an assumption listed with the
    guess: a model class could ignore the key). Attention sizes are counted as the difference of that layer's attention modules and norms from
    the others' (in `extra`); any other structural override, or one in a model whose layers are not all attention,
    cannot be placed and refuses (features.Unplaced)."""
    from oomdoctor.features import NOT_STRUCTURAL, Unplaced

    c = b.c
    raw = c.raw("per_layer_config")
    if raw is None:
        return
    groups: dict[str, list[int]] = {}
    odd: set[str] = set()
    for key, over in (raw.items() if isinstance(raw, dict) else ()):
        if not isinstance(over, dict):
            odd.add(str(key))
            continue
        structural = {k: v for k, v in over.items() if not NOT_STRUCTURAL.search(k)}
        odd.update(k for k in structural if k not in _ATTN_OVERRIDE_KEYS)
        try:
            layer = int(key)
        except ValueError:
            odd.add(str(key))
            continue
        if structural and 0 <= layer < b.layers:
            groups.setdefault(json.dumps(structural, sort_keys=True), []).append(layer)
    if not isinstance(raw, dict) or odd or (groups and (b.linear_attn_layers or b.blocks is not None)):
        keys = ", ".join(sorted(odd)) or "per_layer_config"
        raise Unplaced(msg("model.refuse.per_layer", keys=keys, model_type=b.model_type))
    base = _attn_params(b) + (b.layer_other or 0)
    for items, layers in groups.items():
        o = _Build(Cfg({**c.data, **json.loads(items)}, c.path, None, c.parent or c), b.model_type, b.tied)
        build(o)
        b.extra += len(layers) * (_attn_params(o) + (o.layer_other or 0) - base)
    if groups:
        keys = ", ".join(sorted({k for items in groups for k in json.loads(items)}))
        b.assumed.append(msg("model.assume.per_layer", layers=sum(len(v) for v in groups.values()), keys=keys))


def known_model_types() -> tuple[str, ...]:
    return tuple(sorted(_FAMILIES))


# A nested text_config is saved as its difference from its config class's defaults (to_diff_dict), so a
# key left at the class default is missing: llava-1.5's Llama text_config has no hidden_size at all.
_NESTED_TEXT_DEFAULTS: dict[str, dict[str, int]] = {
    "llama": dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                  num_attention_heads=32),
    "mistral": dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                    num_attention_heads=32, num_key_value_heads=8),
    "qwen3_5_text": dict(vocab_size=248320, hidden_size=4096, intermediate_size=12288, num_hidden_layers=32,
                         num_attention_heads=16, num_key_value_heads=4),
    "qwen3_5_moe_text": dict(vocab_size=248320, hidden_size=2048, num_hidden_layers=40, num_attention_heads=16,
                             num_key_value_heads=2),
    # CLIPTextConfig's and SiglipTextConfig's defaults (models/clip/configuration_clip.py,
    # models/siglip/configuration_siglip.py); a saved CLIPModel or SiglipModel config states only the rest
    "clip_text_model": dict(vocab_size=49408, hidden_size=512, intermediate_size=2048, num_hidden_layers=12,
                            num_attention_heads=8),
    "siglip_text_model": dict(vocab_size=32000, hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
                              num_attention_heads=12),
}


def _is_sub_model(value: Any) -> bool:
    """A nested config that describes a module of its own (it names its type or states a size)."""
    return isinstance(value, dict) and any(k in value for k in (
        "model_type", "hidden_size", "d_model", "num_hidden_layers", "encoder_layers", "depth"))


def _left_out_parts(cfg: dict[str, Any], holder: dict[str, Any], read: str) -> list[str]:
    """The sub-models beside the language model that this count leaves out: the holder's own (an omni thinker's
    audio_config) and the top level's other `*_config` modules, the vision tower aside (counted, or warned apart)."""
    parts = [f"{read}.audio_config"] if holder is not cfg and _is_sub_model(holder.get("audio_config")) else []
    parts += [k for k, v in cfg.items() if k.endswith("_config") and k not in (read, "vision_config", "text_config")
              and _is_sub_model(v)]
    return parts


def _text_part(cfg: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(the language model's config, the vision tower's config or None) of a possibly multimodal config."""
    text, vision, _, _ = _text_part_and_rest(cfg)
    return text, vision


def _text_part_and_rest(cfg: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None, list[str],
                                                      tuple[str, ...]]:
    """_text_part, the sub-models beside the language model that a count of it leaves out (named where the
    language model is one part of several: an omni model's thinker, a speech model's decoder), and the keys that
    lead to the language model's config."""
    text = cfg.get("text_config")
    holder = cfg
    rest: list[str] = []
    where: tuple[str, ...] = ("text_config",)
    if text is None and isinstance(cfg.get("llm_config"), dict):
        # InternVL's remote code names its language model's config llm_config (configuration_internvl_chat.py)
        text = cfg["llm_config"]
    if text is None and isinstance(cfg.get("thinker_config"), dict) \
            and isinstance(cfg["thinker_config"].get("text_config"), dict):
        # Qwen2.5-Omni and Qwen3-Omni hold the language model in the thinker, beside its audio and vision towers;
        # the talker and the waveform decoder are models of their own (models/qwen3_omni_moe/
        # modeling_qwen3_omni_moe.py Qwen3OmniMoeForConditionalGeneration: thinker, talker, code2wav)
        holder = cfg["thinker_config"]
        text = holder["text_config"]
        rest = _left_out_parts(cfg, holder, "thinker_config")
        where = ("thinker_config", "text_config")
    if text is None and _is_sub_model(cfg.get("decoder_config")) and "hidden_size" not in cfg:
        # VibeVoice's language model is its decoder_config (its modeling_vibevoice.py VibeVoiceModel:
        # language_model = AutoModel.from_config(config.decoder_config), lm_head over decoder_config.hidden_size),
        # beside its acoustic and semantic tokenizers and diffusion head
        text = cfg["decoder_config"]
        rest = _left_out_parts(cfg, cfg, "decoder_config")
        where = ("decoder_config",)
    if text is None and _is_sub_model(cfg.get("lm_config")) and _is_sub_model(cfg.get("whisper_config")):
        # GLM-ASR's language model is its lm_config, built as Llama's (its modeling_glmasr.py
        # GlmasrForConditionalGeneration(LlamaForCausalLM): super().__init__(config.lm_config)), beside a Whisper
        # encoder and an adapter that _whisper_adapter_params counts
        text = dict(cfg["lm_config"])
        text.setdefault("model_type", "llama")      # its configuration_glmasr.py: LlamaConfig(**lm_config)
        rest = _left_out_parts(cfg, cfg, "lm_config")
        where = ("lm_config",)
    vision = holder.get("vision_config") if isinstance(holder.get("vision_config"), dict) else None
    if text is None and isinstance(cfg.get("encoder"), dict) and isinstance(cfg.get("decoder"), dict):
        # VisionEncoderDecoderConfig and its kin hold the two halves as sub-configs (models/vision_encoder_decoder/
        # configuration_vision_encoder_decoder.py): the decoder is the language model, the encoder its tower
        text, vision = cfg["decoder"], cfg["encoder"]
    if isinstance(text, dict) and any(k in text for k in ("hidden_size", "num_hidden_layers", "model_type")):
        merged = dict(text)
        if "model_type" not in text and cfg.get("model_type") == "florence2":
            # Florence-2's language model is BART's encoder-decoder (models/florence2/configuration_florence2.py:
            # text_config a BartConfig; its remote configuration_florence2.py Florence2LanguageConfig, BART's keys)
            merged["model_type"] = "bart"
        for key, value in _NESTED_TEXT_DEFAULTS.get(str(merged.get("model_type")), {}).items():
            merged.setdefault(key, value)
        for key in ("torch_dtype", "dtype", "tie_word_embeddings", "quantization_config"):
            for level in (holder, cfg):
                if key in level and key not in merged:
                    merged[key] = level[key]
        return merged, vision, rest, where
    return cfg, vision, [], where


# keys that only one family's block reads, so that a config carrying all of them is that family's block under
# another model_type (a reward model or a port re-saved with its own type): GPT-NeoX's parallel residual and
# partial rotary (models/gpt_neox/modeling_gpt_neox.py GPTNeoXLayer: `if self.use_parallel_residual`,
# GPTNeoXConfig.rotary_pct), whose MLP is two biased matrices (dense_h_to_4h, dense_4h_to_h)
_KIN_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gpt_neox", ("use_parallel_residual", "rotary_pct")),
    # DeepSeek-V4's grouped low-rank output beside hyper-connections (models/deepseek_v4/modeling_deepseek_v4.py:
    # o_a_proj in o_groups groups of o_lora_rank; hc_mult residual streams), which Hy4's hyper-connections lack
    ("deepseek_v4", ("o_lora_rank", "o_groups", "hc_mult")),
    # CodeGen's context length beside its partial rotary width: of transformers' configs only CodeGenConfig
    # (models/codegen/configuration_codegen.py n_ctx, rotary_dim) has both; a block of one LayerNorm, a bias-free
    # fused qkv_proj and out_proj beside a biased fc_in/fc_out, an lm_head with a bias (MOSS's modeling_moss.py)
    ("codegen", ("n_ctx", "rotary_dim")),
)


def _kin_family(cfg: dict[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    for family, keys in _KIN_KEYS:
        if all(k in cfg for k in keys):
            return family, keys
    return None


def _named_vision_tower(cfg: dict[str, Any]) -> str | None:
    """The vision encoder a config names instead of describing (LLaVA's own repository and its offspring: the
    tower is built from another checkpoint by name, llava/model/multimodal_encoder/builder.py
    `getattr(cfg, 'mm_vision_tower', getattr(cfg, 'vision_tower', None))`; Qwen-VL's `visual` dict), or None."""
    # MiniCPM-V names a timm model in `vision_encoder` (its modeling_minicpmv.py: timm.create_model(
    # config.vision_encoder, ...)), its resampler built in code
    for key in ("mm_vision_tower", "vision_tower", "vision_encoder"):
        value = cfg.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    if isinstance(cfg.get("visual"), dict):
        return "visual"
    return None


def _task_head(b: _Build, cfg: dict[str, Any], notes: list[Msg]) -> None:
    """The head the config's class puts on the decoder, where it is not the language-model head: a
    `*ForSequenceClassification` class has no lm_head but `score = nn.Linear(hidden, num_labels, bias=False)`
    (transformers modeling_layers.py GenericForSequenceClassification; reward models, classifiers)."""
    if b.head_counted:
        return
    arch = cfg.get("architectures")
    head = arch[0] if isinstance(arch, list) and arch and isinstance(arch[0], str) else ""
    if head.endswith("ForSequenceClassification"):
        labels = cfg.get("id2label")
        # PretrainedConfig: num_labels = len(id2label); a config without either takes the class default of 2
        n = len(labels) if isinstance(labels, dict) and labels else b.c.get_int("num_labels", default=2)
        score = b.hidden * n
    elif head.endswith(("RewardModel", "ForRewardModel")):
        # a reward model's head is one scalar per sequence (OpenAssistant's GPTNeoXRewardModel stores
        # out_proj.weight [1, hidden] and out_proj.bias [1] in place of embed_out)
        n, score = 1, b.hidden + 1
    else:
        return
    if not b.tied:
        b.extra -= b.vocab * b.hidden
    b.extra += score
    notes.append(msg("model.note.classification_head", cls=head, labels=n))


def _widest(data: dict[str, Any]) -> dict[str, Any]:
    """The config with each per-layer list of sizes replaced by its largest entry."""
    return {k: max(v) if isinstance(v, list) and v and all(isinstance(i, int) and not isinstance(i, bool) for i in v)
            else v for k, v in data.items()}


def _count_shuffled_or_raw_patches(b: _Build, top_type: str, vision: dict[str, Any], cfg: dict[str, Any], top: Cfg,
                                   path: str | None) -> None:
    """Idefics3's and SmolVLM's tower with its pixel-shuffle connector; Gemma 4 unified's encoder-free patch input
    (and its audio input, the same multimodal embedder over raw frames, audio_embed_dim wide: no audio tower)."""
    v = Cfg(vision, path, None, top, ("vision_config",))
    if top_type != "gemma4_unified":
        b.extra += _idefics3_vision_params(v, b.hidden, top.get_int("scale_factor", default=2))
        return
    b.extra += _gemma4_unified_vision_params(v, b.hidden)
    audio = cfg.get("audio_config")
    if isinstance(audio, dict):
        a = Cfg(audio, path, None, top, ("audio_config",))
        b.extra += a.get_int("output_proj_dims", "audio_embed_dim", default=640) * b.hidden


def _blip_vit_params(v: Cfg, defaults: tuple[int, int, int, int, int], *, qkv_bias: bool) -> int:
    """BLIP's and BLIP-2's vision transformer (models/blip/modeling_blip.py BlipVisionModel, models/blip_2/
    modeling_blip_2.py Blip2VisionModel): a class token, a biased patch Conv2d, learned positions for the patches and
    the class token, a fused qkv (bias 3h) and a biased projection, a biased fc1/fc2, two LayerNorms a layer, a post
    LayerNorm. `defaults`: the config class's (hidden, intermediate, layers, patch, image) for a size left out."""
    h = v.get_int("hidden_size", default=defaults[0])
    inter = v.get_int("intermediate_size", default=defaults[1])
    layers = v.get_int("num_hidden_layers", default=defaults[2], maximum=_MAX_LAYERS)
    patch, image = v.get_int("patch_size", default=defaults[3]), v.get_int("image_size", default=defaults[4])
    layer = 3 * h * h + (3 * h if qkv_bias else 0) + h * h + h + 2 * h * inter + inter + h + 4 * h
    return h + 3 * patch * patch * h + h + ((image // patch) ** 2 + 1) * h + layers * layer + 2 * h


def _count_qformer_tower(b: _Build, top_type: str, vision: dict[str, Any], cfg: dict[str, Any], top: Cfg,
                         path: str | None) -> bool:
    """BLIP-2's EVA ViT and Q-Former (models/blip_2/modeling_blip_2.py): the ViT with a class token, a biased patch
    Conv2d, learned positions, a fused qkv (its bias q, 0, v), a biased projection and fc1/fc2, two
    LayerNorms a layer and a post LayerNorm; the Q-Former's LayerNorm, BERT-style layers whose self-attention,
    feed-forward for the queries (intermediate_query/output_query) and, every cross_attention_frequency layers,
    cross-attention over the ViT's width each end in a dense and a LayerNorm (a second feed-forward under
    use_qformer_text_input); the query tokens; the biased language_projection. A size a sub-config leaves out is
    its class's default (configuration_blip_2.py Blip2VisionConfig, Blip2QFormerConfig, Blip2Config)."""
    if top_type != "blip-2" or not isinstance(cfg.get("qformer_config"), dict):
        return False
    v = Cfg(vision, path, None, top, ("vision_config",))
    h = v.get_int("hidden_size", default=1408)
    # Blip2Attention stores its q and v biases with a zero k bias between them as the one qkv.bias of 3h
    tower = _blip_vit_params(v, (1408, 6144, 39, 14, 224), qkv_bias=v.flag("qkv_bias", True))
    q = Cfg(cfg["qformer_config"], path, None, top, ("qformer_config",))
    qh, qi = q.get_int("hidden_size", default=768), q.get_int("intermediate_size", default=3072)
    enc = q.get_int("encoder_hidden_size", default=h)
    freq = q.get_int("cross_attention_frequency", default=2)
    dense, norm = qh * qh + qh, 2 * qh
    feed = qh * qi + qi + qi * qh + qh + norm
    per = 4 * dense + norm + feed * (2 if q.flag("use_qformer_text_input", False) else 1)
    cross = dense + 2 * (enc * qh + qh) + dense + norm
    n = q.get_int("num_hidden_layers", default=12, maximum=_MAX_LAYERS)
    qformer = norm + n * per + sum(1 for i in range(n) if i % freq == 0) * cross
    queries = top.get_int("num_query_tokens", default=32) * qh
    b.extra += tower + qformer + queries + qh * b.hidden + b.hidden
    return True


def _count_siglip_or_encoder_half(b: _Build, top_type: str, vision: dict[str, Any], top: Cfg, path: str | None) -> bool:
    """Gemma 3's and PaliGemma's SigLIP tower with its projector, BLIP's ViT, or T5Gemma's encoder half; False for
    other kinds."""
    if top_type == "gemma3":
        v = Cfg(vision, path, None, top, ("vision_config",))
        # Gemma3MultiModalProjector: a vision->text projection weight and a soft-embedding RMSNorm
        b.extra += _siglip_params(v) + v.need("hidden_size") * (b.hidden + 1)
    elif top_type == "paligemma" and vision.get("model_type") == "siglip_vision_model":
        v = Cfg(vision, path, None, top, ("vision_config",))
        # PaliGemmaMultiModalProjector (models/paligemma/modeling_paligemma.py): one biased Linear from the
        # SigLIP tower's width to vision_config.projection_dim
        out = v.get_int("projection_dim", default=2048)
        b.extra += _siglip_params(v) + v.need("hidden_size") * out + out
    elif top_type == "blip" and vision.get("model_type", "blip_vision_model") == "blip_vision_model":
        # BlipForConditionalGeneration: BlipVisionModel beside the text decoder (BlipVisionConfig's defaults)
        b.extra += _blip_vit_params(Cfg(vision, path, None, top, ("vision_config",)), (768, 3072, 12, 16, 384),
                                    qkv_bias=True)
    elif top_type == "t5gemma" and vision.get("model_type") == "t5_gemma_module":
        # T5GemmaModel holds the encoder beside the decoder (models/t5gemma/modeling_t5gemma.py); _text_part took
        # the `encoder` half for a tower
        b.extra += _t5gemma_encoder_params(Cfg(vision, path, None, top, ("encoder",)))
    else:
        return False
    return True


def _count_gemma3n_embed_vision(b: _Build, top_type: str, vision: dict[str, Any], top: Cfg, path: str | None,
                                notes: list[Msg]) -> bool:
    """Gemma 3n: Gemma3nModel's vision_tower is AutoModel.from_config(vision_config), a TimmWrapperModel that timm
    builds from the architecture name (mobilenetv5_300m_enc) the config names instead of describing: warned by
    name (read_config_json's whole-class count replaces the total where timm is importable). Its embed_vision
    (Gemma3nMultimodalEmbedder) is counted. False for any other type."""
    if top_type != "gemma3n":
        return False
    v = Cfg(vision, path, None, top, ("vision_config",))
    b.extra += _gemma3n_embedder_params(v, b.hidden, 128, 2048)
    notes.append(msg("model.warn.vision_tower_by_name", model_type=top_type,
                     tower=f"timm {vision.get('architecture', 'mobilenetv5_300m_enc')}"))
    return True


def _count_vision(b: _Build, top_type: str, vision: dict[str, Any], cfg: dict[str, Any], top: Cfg, path: str | None,
                  notes: list[Msg]) -> None:
    """Add a multimodal config's vision tower (and its projector) to b.extra where oomdoctor can count its kind;
    otherwise a warning that the count leaves it out."""
    if _count_siglip_or_encoder_half(b, top_type, vision, top, path) or \
            _count_qformer_tower(b, top_type, vision, cfg, top, path) or \
            _count_gemma3n_embed_vision(b, top_type, vision, top, path, notes):
        pass
    elif top_type in ("llava", "llava_next", "llava_next_video") and vision.get("model_type") == "clip_vision_model":
        v = Cfg(vision, path, None, top, ("vision_config",))
        vh = v.get_int("hidden_size", default=768)
        layers = top.raw("vision_feature_layer", default=-2)
        vin = vh * (len(layers) if isinstance(layers, list) and layers else 1)
        bias = top.flag("multimodal_projector_bias", True)
        # LlavaMultiModalProjector: linear_1 (vision features -> text hidden) and linear_2 (text -> text)
        b.extra += _clip_vision_params(v) + vin * b.hidden + b.hidden * b.hidden + (2 * b.hidden if bias else 0)
        if top_type != "llava":
            # LLaVA-NeXT's image_newline, one text-hidden vector (models/llava_next/modeling_llava_next.py)
            b.extra += b.hidden
        if top_type == "llava_next_video" and top.raw("spatial_pool_mode", default="average") == "conv":
            # LlavaNextVideoPooler in "conv" mode: a biased Conv2d of stride x stride over the vision features
            stride = top.get_int("spatial_pool_stride", default=2)
            out = top.get_int("spatial_pool_out_channels", default=vh)
            b.extra += vh * out * stride * stride + out
    elif _count_joined_tower(b, top_type, Cfg(vision, path, None, top, ("vision_config",)), top):
        pass
    elif top_type == "mllama":
        b.extra += _mllama_vision_params(Cfg(vision, path, None, top, ("vision_config",)), b.hidden)
    elif top_type == "vision-encoder-decoder" and vision.get("model_type") == "vit":
        # the encoder as AutoModel builds it: a ViTModel with its pooler (models/vit/modeling_vit.py), then a
        # projection into the decoder's width unless the decoder's cross-attention reads the encoder's own
        v = Cfg(vision, path, None, top, ("encoder",))
        b.extra += _vit_model_params(v)
        eh = v.get_int("hidden_size", default=768)
        if eh != b.hidden and not b.c.get_int("cross_attention_hidden_size"):
            b.extra += eh * b.hidden + b.hidden                  # enc_to_dec_proj
    elif top_type == "qwen2_vl":
        b.extra += _qwen2_vl_vision_params(Cfg(vision, path, None, top, ("vision_config",)), b.hidden)
    elif top_type == "qwen2_5_vl":
        b.extra += _qwen2_5_vl_vision_params(Cfg(vision, path, None, top, ("vision_config",)), b.hidden)
    elif top_type in ("idefics3", "smolvlm", "gemma4_unified"):
        _count_shuffled_or_raw_patches(b, top_type, vision, cfg, top, path)
    elif top_type == "gemma4" and not isinstance(cfg.get("audio_config"), dict):
        # an audio tower (Gemma 4 E2B/E4B) is not counted: such a config keeps the warning below
        b.extra += _gemma4_vision_params(Cfg(vision, path, None, top, ("vision_config",)), b.hidden)
    elif top_type in ("qwen3_5", "qwen3_5_moe", "qwen3_vl", "qwen3_vl_moe", "qwen3_omni_moe"):
        # Qwen3-Omni's thinker tower is Qwen3-VL-MoE's (modular_qwen3_omni_moe.py Qwen3OmniMoeVisionEncoder(
        # Qwen3VLMoeVisionModel)), DeepStack mergers included
        v = Cfg(vision, path, None, top, ("vision_config",))
        b.extra += _qwen3_5_vision_params(v)
        # Qwen3-VL's DeepStack: one more PatchMerger per `deepstack_visual_indexes` entry, its LayerNorm after
        # the merge (models/qwen3_vl/modeling_qwen3_vl.py deepstack_merger_list, use_postshuffle_norm=True)
        stack = v.raw("deepstack_visual_indexes", default=[])
        if isinstance(stack, list) and stack:
            e = v.get_int("hidden_size", default=1152)
            merge = v.get_int("spatial_merge_size", default=2)
            out = v.get_int("out_hidden_size", default=3584)
            b.extra += len(stack) * _patch_merger(e, merge, out, 2 * e * merge * merge)
    else:
        notes.append(msg("model.warn.vision_not_counted", model_type=top_type))


def _qwen3_omni_audio_params(a: Cfg) -> int:
    """Qwen3-Omni's audio tower (models/qwen3_omni_moe/modular_qwen3_omni_moe.py Qwen3OmniMoeAudioEncoder, on
    Qwen2.5-Omni's): three biased 3x3 stride-2 Conv2d of downsample_hidden_size channels over the mel bins, a
    bias-free conv_out from the flattened frequency axis into d_model, encoder layers of biased q/k/v/out_proj and
    fc1/fc2 with two LayerNorms, ln_post, then proj1 (d_model) and proj2 (output_dim), both biased; the positions
    are sinusoids (a buffer)."""
    d = a.get_int("d_model", default=1280)
    layers = a.get_int("encoder_layers", default=32, maximum=_MAX_LAYERS)
    ffn = a.get_int("encoder_ffn_dim", default=5120)
    mels = a.get_int("num_mel_bins", default=128)
    ds = a.get_int("downsample_hidden_size", default=480)
    out = a.get_int("output_dim", default=3584)
    freq = (((mels + 1) // 2 + 1) // 2 + 1) // 2
    layer = 4 * (d * d + d) + (d * ffn + ffn) + (ffn * d + d) + 2 * 2 * d
    convs = (9 * ds + ds) + 2 * (9 * ds * ds + ds)
    return layers * layer + 2 * d + convs + ds * freq * d + (d * d + d) + (d * out + out)


def _qwen3_omni_talker_params(cfg: dict[str, Any], path: str | None, top: Cfg) -> int | None:
    """Qwen3-Omni's talker (modular_qwen3_omni_moe.py Qwen3OmniMoeTalkerForConditionalGeneration): a Qwen3-MoE
    decoder whose sparse block is Qwen2-MoE's (a gated shared expert) over a codec vocabulary, an untied codec_head,
    two ResizeMLPs from the thinker's width (biased fc1 to the talker's intermediate_size, fc2 to its hidden_size),
    and a code predictor: a Qwen3 decoder with num_code_groups - 1 codec embeddings and as many heads. None where
    the config does not state it (a talker built from defaults is not read)."""
    talker = cfg.get("talker_config")
    text = talker.get("text_config") if isinstance(talker, dict) else None
    pred = talker.get("code_predictor_config") if isinstance(talker, dict) else None
    if not (isinstance(talker, dict) and isinstance(text, dict) and isinstance(pred, dict)):
        return None
    t = Cfg(text, path, None, top, ("talker_config", "text_config"))
    b = _Build(t, "qwen3_omni_moe_talker_text", False)
    b.c = Cfg(dict(text, num_experts=t.raw("num_experts", "num_local_experts")), path, None, top, t.at)
    _qwen_moe(b, qk_norm=True, shared=True)
    h, v = b.hidden, b.vocab
    moe_layers = b.moe_layers if b.moe_layers is not None else b.layers
    other = b.layer_other or 0

    def per(linears: list[Linear]) -> int:
        return sum(x.params for x in linears)

    decoder = moe_layers * (per(b.moe) + other) + (b.layers - moe_layers) * (per(b.dense) + other) + 2 * v * h + h
    tk = Cfg(talker, path, None, top, ("talker_config",))
    thinker = tk.get_int("thinker_hidden_size", default=2048)
    resize = (thinker * b.inter + b.inter) + (b.inter * h + h)
    p = Cfg(pred, path, None, top, ("talker_config", "code_predictor_config"))
    q = _Build(p, "qwen3", False)
    _qwen3(q)
    groups = p.get_int("num_code_groups", default=tk.get_int("num_code_groups", default=32)) - 1
    predictor = q.layers * (per(q.dense) + (q.layer_other or 0)) + q.hidden + 2 * groups * q.vocab * q.hidden
    return decoder + 2 * resize + predictor


def _whisper_adapter_params(top: Cfg, path: str | None, hidden: int) -> int | None:
    """GLM-ASR's audio part (its modeling_glmasr.py AudioMLPAdapter, modeling_audio.py WhisperSpecialEncoder): a
    Whisper encoder (models/whisper/modeling_whisper.py WhisperEncoder: conv1 over the mel bins and conv2, both kernel
    3 and biased, learned positions of max_source_positions rows, layers of q/v/out_proj biased and k_proj not, fc1/
    fc2 of encoder_ffn_dim, two LayerNorms; its rotary embedding holds no parameter) whose own final layer_norm is
    replaced by nn.Identity, then a LayerNorm of its width and the adapter nn.Sequential(Linear(d_model x
    merge_factor, 2 x hidden), act, Linear(2 x hidden, hidden)). None: an adapter_type other than the "mlp" that
    code builds."""
    if str(top.data.get("adapter_type", "mlp")) != "mlp":        # configuration_glmasr.py: adapter_type="mlp"
        return None
    w = Cfg(top.data["whisper_config"], path, None, top, ("whisper_config",))
    d = w.need("d_model", "hidden_size")
    ffn = w.need("encoder_ffn_dim")
    layers = w.need("encoder_layers", "num_hidden_layers", maximum=_MAX_LAYERS)
    layer = 4 * d * d + 3 * d + (d * ffn + ffn) + (ffn * d + d) + 2 * 2 * d
    convs = (w.need("num_mel_bins") * d * 3 + d) + (d * d * 3 + d)
    encoder = convs + w.need("max_source_positions") * d + layers * layer
    merged = d * top.get_int("merge_factor", default=4, minimum=1)    # configuration_glmasr.py: merge_factor=4
    adapter = (merged * 2 * hidden + 2 * hidden) + (2 * hidden * hidden + hidden)
    return encoder + 2 * d + adapter


def _count_omni_parts(b: _Build, cfg: dict[str, Any], top: Cfg, path: str | None, left_out: list[str]) -> list[str]:
    """Qwen3-Omni's parts beside its thinker's language model that a reading counts (the audio tower; the talker,
    built when enable_audio_output, Qwen3OmniMoeConfig's default True); the rest stay named."""
    thinker = cfg["thinker_config"]
    if isinstance(thinker.get("audio_config"), dict):
        b.extra += _qwen3_omni_audio_params(Cfg(thinker["audio_config"], path, None, top,
                                                ("thinker_config", "audio_config")))
        left_out = [p for p in left_out if p != "thinker_config.audio_config"]
    if not top.flag("enable_audio_output", True):
        return [p for p in left_out if p not in ("talker_config", "code2wav_config")]
    talker = _qwen3_omni_talker_params(cfg, path, top)
    if talker is not None:
        b.extra += talker
        left_out = [p for p in left_out if p != "talker_config"]
    return left_out


def _videollama3_tower_params(top: Cfg, path: str | None, hidden: int) -> int | None:
    """VideoLLaMA3's vision encoder and projector (its remote modeling_videollama3_encoder.py
    Videollama3VisionEncoderModel: a biased patch Conv2d with no learned positions (rotary), layers of biased
    q/k/v/out_proj and fc1/fc2 between two LayerNorms, a post_layernorm; build_vision_projector beside it (CogStream's
    cogreasoner_chat.py): "linear" one Linear to hidden_size, "mlpNx_gelu" N biased Linears, the first from the
    encoder's width). None: a projector kind that code does not build."""
    kind = str(top.data.get("mm_projector_type", "linear"))
    mlp = kind.startswith("mlp") and kind.endswith("x_gelu") and kind[3:-6].isdigit()
    depth = 1 if kind == "linear" else (int(kind[3:-6]) if mlp else 0)
    if not depth:
        return None
    v = Cfg(top.data["vision_encoder_config"], path, None, top, ("vision_encoder_config",))
    d = v.need("hidden_size")
    ffn = v.need("intermediate_size")
    patch = v.get_int("patch_size", default=16)                 # configuration_videollama3_encoder.py defaults
    layer = 4 * (d * d + d) + (d * ffn + ffn) + (ffn * d + d) + 2 * 2 * d
    tower = v.get_int("num_channels", default=3) * patch * patch * d + d \
        + v.need("num_hidden_layers", maximum=_MAX_LAYERS) * layer + 2 * d
    return tower + (d * hidden + hidden) + (depth - 1) * (hidden * hidden + hidden)


def _count_parts_beside(b: _Build, cfg: dict[str, Any], top: Cfg, path: str | None, left_out: list[str],
                        top_type: str, where: tuple[str, ...]) -> list[str]:
    """The parts beside the language model that a reading counts (added to b.extra); the rest stay named."""
    if top_type == "qwen3_omni_moe" and where == ("thinker_config", "text_config"):
        return _count_omni_parts(b, cfg, top, path, left_out)
    if where == ("lm_config",):
        audio = _whisper_adapter_params(top, path, b.hidden)
        if audio is not None:
            b.extra += audio
            return [p for p in left_out if p != "whisper_config"]
    if top_type == "gemma3n" and _is_sub_model(cfg.get("audio_config")):
        # Gemma3nModel: audio_tower (Gemma3nAudioEncoder) and embed_audio (Gemma3nMultimodalEmbedder)
        a = Cfg(cfg["audio_config"], path, None, top, ("audio_config",))
        b.extra += _gemma3n_audio_params(a) + _gemma3n_embedder_params(a, b.hidden, 128, 1536)
        return [p for p in left_out if p != "audio_config"]
    if top_type == "videollama3_qwen2" and _is_sub_model(cfg.get("vision_encoder_config")):
        tower = _videollama3_tower_params(top, path, b.hidden)
        if tower is None:
            return left_out + ["vision_encoder_config"]
        b.extra += tower
    return left_out


def shape_from_config(cfg: dict[str, Any], name: str, path: str | None, *, text: str | None = None,
                      source_kind: str = "config.json", tolerate_unplaced: bool = False) -> ModelShape:
    """The shape of the model a config.json describes (a multimodal config: its language model, plus the
    vision tower where its kind is known)."""
    top = Cfg(cfg, path, text)
    text_cfg, vision, left_out, where = _text_part_and_rest(cfg)
    c = Cfg(text_cfg, path, None, top, where) if text_cfg is not cfg else top
    model_type = str(text_cfg.get("model_type") or cfg.get("model_type") or "")
    top_type = str(cfg.get("model_type") or model_type)
    family = _FAMILIES.get(model_type) or _FAMILIES.get(top_type)
    notes: list[Msg] = []
    unread: list[str] = []
    kin = _kin_family(text_cfg) if family is None else None
    if kin is not None:
        # no builder of its own, but the keys of a family's own block: read it as that family (a guess all the same)
        kin_type, kin_keys = kin
        builder, tie_default = _FAMILIES[kin_type]
        guess = True
        b = _Build(c, model_type or top_type, c.flag("tie_word_embeddings", tie_default))
        builder(b)
        b.assumed = [msg("model.assume.kin", family=kin_type, keys=", ".join(kin_keys))]
    elif family is None:
        # no builder of its own: read the structure from the config's features (oomdoctor/features.py);
        # the tie default is PretrainedConfig's own, the key LFM2 spells `tie_embedding` counts too
        from oomdoctor.features import CHECKED_TYPES, Kit, Unplaced, read_features, unread_keys

        guess = (model_type or top_type) not in CHECKED_TYPES
        b = _Build(c, model_type or top_type, c.flag("tie_embedding", True))
        kit = Kit(_attn, _common, _mlp, _MAX_LAYERS, _mla_attn)
        try:
            read_features(b, kit)
            _per_layer_overrides(b, lambda o: read_features(o, kit))
        except (Unplaced, InputError) as err:
            # a value the features reading cannot take (Gemma 3n's per-layer intermediate_size list) refuses like
            # an unplaced block: the file is not wrong, this reading of it is
            why = err.message if isinstance(err, Unplaced) else msg(
                "model.refuse.unreadable", why=err.message, model_type=model_type or top_type)
            if not tolerate_unplaced:
                raise InputError(why, path) from None
            # the structure only, for the figures per layer; the total must come from transformers or is refused
            # (models.read_config_json). Per-layer lists stand at their widest entry.
            b = _Build(Cfg(_widest(c.data), path, None, top), model_type or top_type, c.flag("tie_embedding", True))
            try:
                _llama(b)
            except InputError:
                # no attention heads to read (a recurrent model such as RWKV): one head stands in, so that
                # transformers may still count the file; without that count it is refused all the same
                one_head = dict(_widest(c.data), num_attention_heads=1, num_key_value_heads=1, head_dim=None)
                # an encoder-decoder of a type without a reading (SpeechT5, ...) names its decoder's sizes as
                # BART's config does (decoder_layers, decoder_attention_heads, decoder_ffn_dim; d_model); a
                # fairseq-style text decoder as Kosmos-2's does (models/kosmos2/configuration_kosmos2.py
                # Kosmos2TextConfig: layers, embed_dim, ffn_dim, attention_heads)
                data = _widest(c.data)
                for key, aliases in (("num_hidden_layers", ("decoder_layers", "layers")),
                                     ("hidden_size", ("d_model", "embed_dim")),
                                     ("intermediate_size", ("decoder_ffn_dim", "ffn_dim"))):
                    alias = next((a for a in aliases if isinstance(data.get(a), int)), None)
                    if key not in data and alias is not None:
                        one_head[key] = data[alias]
                b = _Build(Cfg(one_head, path, None, top), model_type or top_type, c.flag("tie_embedding", True))
                try:
                    _llama(b)
                except InputError:
                    raise InputError(why, path) from None
            b.assumed = [msg("model.assume.unplaced", why=why)]
        unread = unread_keys(b) if guess else []
    else:
        builder, tie_default = family
        b = _Build(c, model_type or top_type, tie_default)
        builder(b)
        guess = b.guess                 # a reading that met a part it does not know (an encoder's head)
    if vision is not None:
        _count_vision(b, top_type, vision, cfg, top, path, notes)
    elif (_count_image_processor(b, cfg, notes, top_type) or _count_timm_tower(b, cfg)
          or _count_named_siglip_tower(b, cfg)):
        pass
    else:
        named = _named_vision_tower(cfg)
        if named:
            notes.append(msg("model.warn.vision_tower_by_name", model_type=top_type, tower=named))
    left_out = _count_parts_beside(b, cfg, top, path, left_out, top_type, where)
    if left_out:
        notes.append(msg("model.warn.parts_not_counted", model_type=top_type, parts=", ".join(left_out)))
    _task_head(b, cfg, notes)
    dtype = _DTYPES.get(str(c.raw("torch_dtype", "dtype") or top.raw("torch_dtype", "dtype") or "float32")
                        .replace("torch.", ""), "fp32")
    quant = cfg.get("quantization_config") if isinstance(cfg.get("quantization_config"), dict) else None
    qmethod, qbits = quantization_of(quant, top)
    d = b.head_dim
    if d is not None and d == b.hidden // b.heads and "head_dim" not in text_cfg:
        d = None
    dense_attn_bias = any(l.bias for l in (b.dense or b.moe) if l.role in ("q", "k", "v", "qkv"))
    mlp_bias = any(l.bias for l in (b.dense or b.moe) if l.role in ("gate", "up", "down", "gate_up"))
    return ModelShape(
        name=name, model_type=model_type or top_type, hidden_size=b.hidden, intermediate_size=b.inter,
        num_layers=b.layers, num_heads=b.heads, num_kv_heads=b.kv, head_dim=d, vocab_size=b.vocab,
        tie_word_embeddings=b.tied, attention_bias=dense_attn_bias, mlp_bias=mlp_bias, gated_mlp=b.gated,
        torch_dtype=dtype, num_experts=b.experts, experts_per_token=b.experts_per_token if b.experts else 0,
        moe_intermediate_size=b.moe_inter if b.experts else None, shared_experts=b.shared,
        shared_expert_intermediate_size=b.shared_inter if b.shared else None,
        first_dense_layers=b.first_dense if b.experts else 0,
        source=path or name, dense_linears=tuple(b.dense),
        moe_linears=tuple(b.moe) if b.experts else (),
        layer_other_params=2 * b.hidden if b.layer_other is None else b.layer_other,     # two RMSNorm weights
        final_norm_params=b.hidden if b.final_norm is None else b.final_norm, extra_params=b.extra,
        moe_layer_count=b.moe_layers if b.experts else None, quant_method=qmethod, quant_bits=qbits,
        linear_attn_linears=tuple(b.linear_attn), linear_attn_layers=b.linear_attn_layers,
        linear_attn_other=b.linear_attn_other if b.linear_attn else None,
        llama_style_guess=guess, source_kind=source_kind, source_path=path, notes=tuple(notes + b.notes),
        shape_confidence="guessed" if guess else "derived", assumptions=tuple(b.assumed) if guess else (),
        unread_keys=tuple(unread))


def quantization_of(quant: dict[str, Any] | None, c: Cfg) -> tuple[str | None, int | None]:
    """(method, bits) of a config.json quantization_config, as transformers' quantizers name them."""
    if not quant:
        return None, None
    method = str(quant.get("quant_method") or ("bitsandbytes" if ("load_in_4bit" in quant or "load_in_8bit" in quant)
                                                else "unknown"))
    bits: int | None = None
    if method == "bitsandbytes":
        bits = 4 if quant.get("load_in_4bit") else 8 if quant.get("load_in_8bit") else None
    elif method in ("fp8", "fbgemm_fp8"):
        bits = 8
    elif method == "mxfp4":
        bits = 4
    elif method == "compressed-tensors":
        # llm-compressor: config_groups -> group_N -> weights -> num_bits (W4A16, W8A8, ...)
        groups = quant.get("config_groups")
        for group in groups.values() if isinstance(groups, dict) else ():
            weights = group.get("weights") if isinstance(group, dict) else None
            if isinstance(weights, dict) and weights.get("num_bits") is not None:
                bits = Cfg(weights, c.path, None, c).get_int("num_bits", minimum=1, maximum=32)
                break
    elif quant.get("bits") is not None or quant.get("w_bit") is not None:
        key = "bits" if quant.get("bits") is not None else "w_bit"
        q = Cfg(quant, c.path, None, c)
        bits = q.get_int(key, minimum=1, maximum=32)
    return method, bits
