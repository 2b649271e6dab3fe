"""A model_type without a builder of its own, read from what its config.json states.

The keys below are the names transformers' config classes give the same features (num_experts in OLMoE and
Qwen-MoE, num_local_experts in Mixtral and Granite, n_routed_experts in DeepSeek, Dots1 and GLM-4-MoE,
moe_num_experts in ERNIE 4.5; expert/attention layer periods in Jamba; mamba_* sizes in Jamba, Bamba, Falcon-H1
and GraniteMoeHybrid; state_size/expand/conv_kernel in Mamba). From them the reader places:

- attention: q/k/v/o of `head_dim` (else `kv_channels`, else hidden/heads), biases as the config names them,
  a per-head q/k norm when a qk-norm key is set;
- the MLP: gate/up/down, or up/down when the activation is one that models use without a gate (relu2,
  squared_relu, xielu, relu) or the width is named `ffn_dim` (OPT, XGLM);
- experts: how many, their width, shared experts, and which layers hold them;
- state-space (Mamba) layers: which layers, and their mixer's sizes (Mamba-1: in/x/dt/out projections, Mamba-2:
  one in_proj for z, x, B, C and dt heads).

What it cannot place it does not guess: experts or state-space layers whose layers it cannot tell refuse with
one line (`Unplaced`). Every shape read this way is a guess and says so, with what it assumed.
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable, NamedTuple

from oomdoctor.facts import Linear, Msg, msg


class Kit(NamedTuple):
    """The layer-building helpers of oomdoctor/archs.py, handed in so that this module does not import it back."""

    attn: Callable[..., list[Linear]]
    common: Callable[..., None]
    mlp: Callable[..., list[Linear]]
    max_layers: int
    mla: Callable[..., tuple[list[Linear], int]]

EXPERT_KEYS = ("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts", "num_routed_experts")
TOPK_KEYS = ("num_experts_per_tok", "moe_k", "moe_topk", "num_selected_experts", "experts_per_token")
EXPERT_WIDTH_KEYS = ("moe_intermediate_size", "expert_intermediate_size", "moe_ffn_hidden_size", "expert_ffn_hidden_size")
SHARED_COUNT_KEYS = ("n_shared_experts", "num_shared_experts", "moe_num_shared_experts", "num_shared_expert")
SHARED_WIDTH_KEYS = ("shared_expert_intermediate_size", "shared_intermediate_size", "moe_shared_expert_intermediate_size")
SSM_KEYS = ("mamba_d_state", "ssm_state_size", "state_size", "mamba_expand", "mamba_d_conv", "mamba_n_heads", "mamba_num_heads",
            "mamba_d_ssm", "mamba_d_head", "time_step_rank", "mamba_dt_rank", "ssm_cfg")
# activations the models that use them apply without a gate (Nemotron and Arcee relu2, Apertus xIELU, OPT relu)
PLAIN_ACTS = ("relu2", "squared_relu", "xielu", "relu")
# the sizes of a Gated DeltaNet layer (Qwen3-Next, OLMo-Hybrid)
_GDN_KEYS = ("linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim")
_MOE_SWITCH_KEYS = ("is_moe", "use_moe")
_QK_NORM_KEYS = ("use_qk_norm", "qk_norm", "qk_layernorm", "use_qk_layernorm")
# ("hybrid" is not one of them: Zamba's hybrid layers are a Mamba mixer plus a shared transformer block)
_ATTN_WORDS = ("attention", "attn", "full_attention", "sliding_attention", "global", "local")
_SSM_WORDS = ("mamba", "ssm", "m")
_LAYER_KIND_KEYS = ("layers_block_type", "layer_types", "block_types", "hybrid_override_pattern", "attn_layer_indices",
                    "attention_layer_indices", "attn_layer_period", "attn_type_list")
# keys that never change the parameter count (training knobs, token ids, positions' scaling, norms' eps)
NOT_STRUCTURAL = re.compile(
    r"(_token_id|_eps|epsilon|dropout|pdrop|initializer|init_|rope|rotary|_theta|max_position|sliding_window|"
    r"use_cache|dtype|aux_loss|router_aux|z_loss|output_|multiplier|scaling|_scale|chunk_size|time_step_(min|max|"
    r"floor|limit|init|scale)|transformers_version|max_window|logits_to_keep|use_.*kernel|norm_topk|capacity|"
    r"routed_scaling|topk_group|n_group|scoring|jitter|loss|_floor|attn_implementation|pretraining_tp)")
_LOOKS_STRUCTURAL = re.compile(
    r"(expert|moe|mamba|ssm|conv|layer_types|block|_layers?$|layers_|num_|n_|_size$|_dim$|_dims$|heads|kv_|"
    r"altup|laurel|per_layer|cross_attention|vision|audio|lora_rank|proj|ffn|mlp|shared|dense|pattern|period|"
    r"offset|indices|interval|vocab|embed|tie)")


# Model types whose reading from features is within 0.5% of transformers' own build of their real configs
# (tests/data/corpus MANIFEST.yaml `audit:`, asserted by tests/test_shape_audit.py): their shapes are derived,
# not guessed. A type not listed here is read the same way but warned about.
CHECKED_TYPES = ("olmoe", "jamba", "bamba", "granitemoehybrid", "nemotron", "arcee", "apertus", "olmo3", "ernie4_5",
                 "ernie4_5_moe", "hunyuan_v1_dense", "dots1", "glm4_moe", "seed_oss", "internlm3", "mamba",
                 "falcon_mamba",
                 # MANIFEST.yaml `audit_2:` (and, for nemotron_h, hybrid patterns built by transformers in
                 # tests/test_shape_audit.py)
                 "mamba2", "nemotron_h", "minicpm3", "youtu", "exaone_moe", "flex_olmo", "helium", "jais2",
                 "minimax_m2", "solar_open", "vaultgemma", "minimax", "kimi_linear")


class Unplaced(Exception):
    """Experts or state-space layers the config states but whose layers cannot be told apart."""

    def __init__(self, message: Msg) -> None:
        super().__init__(message.code)
        self.message = message


def _ints(value: object) -> list[int] | None:
    if isinstance(value, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        return list(value)
    return None


_FFN_WORDS = {"mlp": "mlp", "-": "mlp", "moe": "moe", "e": "moe"}
_MIXER_WORDS = {"*": "attention", "attention": "attention", "full_attention": "attention", "m": "ssm",
                "mamba": "ssm", "linear_attention": "ssm"}


class Blocks(NamedTuple):
    """A config whose layers are single blocks, each a token mixer or a feed-forward (Nemotron-H), read as
    layers of one mixer and one feed-forward block; blocks left without a partner are counted on their own."""

    mixers: list[str]               # "attention" / "ssm" per paired mixer block
    ffns: list[str]                 # "mlp" / "moe" per paired feed-forward block
    key: str
    lone_mixers: list[str]          # mixer blocks with no feed-forward block to pair with
    lone_ffns: list[str]            # feed-forward blocks with no mixer to pair with


def single_blocks(c: Any) -> Blocks | None:
    """Nemotron-H's grammar: every layer one block, named per layer in `layers_block_type` (mamba or
    linear_attention, attention, mlp, moe) or by one character in `hybrid_override_pattern` (M, *, -, E)
    (transformers models/nemotron_h/configuration_nemotron_h.py and modeling_nemotron_h.py: NemotronHBlock
    holds one mixer chosen by the layer's kind). Only a list that names feed-forward blocks is this grammar."""
    pattern = c.raw("hybrid_override_pattern")
    listed = c.raw("layers_block_type")
    if isinstance(pattern, str) and pattern:
        words, key = list(pattern.lower()), "hybrid_override_pattern"
    elif isinstance(listed, list) and listed and all(isinstance(w, str) for w in listed):
        words, key = [w.lower() for w in listed], "layers_block_type"
    else:
        return None
    if not any(w in _FFN_WORDS for w in words):
        return None
    mixers = [_MIXER_WORDS.get(w, w) for w in words if w not in _FFN_WORDS]
    ffns = [_FFN_WORDS[w] for w in words if w in _FFN_WORDS]
    lone_mixers: list[str] = []
    lone_ffns: list[str] = []
    # the count does not depend on which blocks pair; attention mixers (few, between Mamba blocks) stay alone
    while len(mixers) > len(ffns) and len(mixers) > 1:
        kind = "attention" if "attention" in mixers else mixers[-1]
        mixers.remove(kind)
        lone_mixers.append(kind)
    while len(ffns) > len(mixers) and len(ffns) > 1:
        kind = "mlp" if "mlp" in ffns else ffns[-1]
        ffns.remove(kind)
        lone_ffns.append(kind)
    return Blocks(mixers, ffns, key, lone_mixers, lone_ffns)


def _kinds(b: Any) -> tuple[list[str] | None, str | None]:
    """Per-layer mixer kinds ("attention" / "ssm" / other words as written), and the key they came from."""
    c = b.c
    if b.blocks is not None:
        return b.blocks.mixers, b.blocks.key
    for key in ("layers_block_type", "layer_types", "block_types"):
        listed = c.raw(key)
        if isinstance(listed, list) and listed and all(isinstance(k, str) for k in listed):
            # a shorter list is a pattern that repeats (transformers RecurrentGemmaConfig.layers_block_type:
            # `(block_types * 100)[:num_hidden_layers]`)
            listed = (listed * (b.layers // len(listed) + 1))[:b.layers]
            kinds = []
            for word in listed:
                w = word.lower()
                # "linear_attention" names any mixer that is not softmax attention (transformers 5: Mamba in
                # Nemotron-H and Zamba, lightning attention in MiniMax, delta rules in Kimi-Linear): sized below
                kinds.append("ssm" if w in _SSM_WORDS or "mamba" in w or "ssm" in w else
                             "linear" if w == "linear_attention" else
                             "attention" if w in _ATTN_WORDS or "attention" in w else w)
            return kinds, key
    coded = _ints(c.raw("attn_type_list"))
    if coded is not None and len(coded) >= b.layers and set(coded) <= {0, 1}:
        # MiniMax-Text-01's and MiniMax-M1's remote code (modeling_minimax_m1.py MiniMaxM1Model: `if
        # self.attn_type_list[i] == 0:` a lightning-attention layer, else softmax attention) codes each layer 0 or 1
        return ["lightning" if k == 0 else "attention" for k in coded[:b.layers]], "attn_type_list"
    pattern = c.raw("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        return None, "hybrid_override_pattern"
    nested = c.raw("linear_attn_config")
    kda = _ints(nested.get("kda_layers")) if isinstance(nested, dict) else None
    if kda is not None:
        # Kimi-Linear's checkpoint config: delta-attention layers numbered from 1 (transformers
        # models/kimi_linear/configuration_kimi_linear.py: `layer_types[layer - 1]`)
        return ["linear" if i + 1 in kda else "attention" for i in range(b.layers)], "linear_attn_config"
    indices = _ints(c.raw("attn_layer_indices", "attention_layer_indices"))
    if indices is not None:
        return ["attention" if i in indices else "ssm" for i in range(b.layers)], "attn_layer_indices"
    period = c.get_int("attn_layer_period", default=None)
    if period:
        offset = c.get_int("attn_layer_offset", default=0, minimum=0) or 0
        return ["attention" if i % period == offset else "ssm" for i in range(b.layers)], "attn_layer_period"
    return None, None


def _moe_ids(b: Any) -> tuple[list[int] | None, str]:
    """The layers that hold the experts, from whichever placement keys the config states (None: unknown)."""
    c, n = b.c, b.layers
    if b.blocks is not None:                    # a mixer paired with the feed-forward block in its place
        return [i for i, kind in enumerate(b.blocks.ffns) if kind == "moe"], b.blocks.key
    listed = _ints(c.raw("moe_layers"))
    if listed is not None:
        return [i for i in range(n) if i in listed], "moe_layers"
    kinds = c.raw("mlp_layer_types")
    if isinstance(kinds, list) and len(kinds) >= n and all(isinstance(k, str) for k in kinds):
        # "dense" / "sparse" per layer (transformers models/kimi_linear and glm4_moe_lite configuration files)
        return [i for i in range(n) if kinds[i].lower() in ("sparse", "moe")], "mlp_layer_types"
    if c.has("expert_layer_period"):                  # Jamba: i % period == offset
        period = c.need("expert_layer_period")
        offset = c.get_int("expert_layer_offset", default=0, minimum=0) or 0
        return [i for i in range(n) if i % period == offset], "expert_layer_period"
    if c.has("moe_layer_start_index", "moe_layer_interval"):   # ERNIE 4.5
        start = c.get_int("moe_layer_start_index", default=0, minimum=0) or 0
        end = c.raw("moe_layer_end_index")
        end = end if isinstance(end, int) and not isinstance(end, bool) and end >= 0 else n - 1
        step = c.get_int("moe_layer_interval", default=1)
        return [i for i in range(n) if start <= i <= end and (i + 1) % step == 0], "moe_layer_start_index"
    if c.has("first_k_dense_replace", "moe_layer_freq", "num_dense_layers"):   # DeepSeek, Dots1, GLM-4-MoE, AFMoE
        # AFMoE names the dense first layers num_dense_layers (transformers models/afmoe/modeling_afmoe.py:
        # `moe_enabled = layer_idx >= config.num_dense_layers`)
        first = c.get_int("first_k_dense_replace", "num_dense_layers", default=0, minimum=0) or 0
        freq = c.raw("moe_layer_freq", default=1)
        flags = _ints(freq) if isinstance(freq, list) else None
        if flags is not None and len(flags) == n and set(flags) <= {0, 1}:
            # a per-layer list of 0/1 (MiMo-V2-Flash, MiniMax-M3): transformers models/minimax_m3_vl/
            # configuration_minimax_m3_vl.py reads it as `"sparse" if f else "dense"` per layer
            return [i for i in range(n) if flags[i]], "moe_layer_freq"
        if not isinstance(freq, int) or isinstance(freq, bool) or freq < 1:
            return None, "moe_layer_freq"
        return [i for i in range(n) if i >= first and i % freq == 0], "first_k_dense_replace"
    if c.has("moe_layer_num_skipped"):
        # Hunyuan's remote code: "First moe_layer_num_skipped layers do not use MoE" (configuration_hunyuan.py)
        first = c.get_int("moe_layer_num_skipped", default=0, minimum=0) or 0
        return [i for i in range(n) if i >= first], "moe_layer_num_skipped"
    if c.has("decoder_sparse_step", "mlp_only_layers"):       # Qwen-MoE
        step = c.get_int("decoder_sparse_step", default=1)
        only = set(_ints(c.raw("mlp_only_layers", default=[])) or [])
        return [i for i in range(n) if i not in only and (i + 1) % step == 0], "decoder_sparse_step"
    if c.has("interleave_moe_layer_step"):
        step = c.get_int("interleave_moe_layer_step", default=1)
        return [i for i in range(n) if (i + 1) % step == 0], "interleave_moe_layer_step"
    stray = [k for k in c.data if re.search(r"(moe|expert).*(layer|freq|step|period|interval|pattern)", k)]
    if stray:
        return None, stray[0]
    return list(range(n)), ""


def _mamba_mixer(b: Any) -> tuple[list[Linear], int, str]:
    """One Mamba layer's token mixer: its linear modules, its other parameters, and the kind (mamba1/mamba2)."""
    c, h = b.c, b.hidden
    state = c.get_int("mamba_d_state", "ssm_state_size", "state_size", "d_state", default=16)
    conv = c.get_int("mamba_d_conv", "conv_kernel", "d_conv", default=4)
    expand = c.get_int("mamba_expand", "expand", default=2)
    proj_bias = c.flag("mamba_proj_bias", c.flag("use_bias", False))
    conv_bias = c.flag("mamba_conv_bias", c.flag("use_conv_bias", True))
    # a pure Mamba-2 config (Mamba2Config) names its SSM heads num_heads and their width head_dim
    heads = c.get_int("mamba_n_heads", "mamba_num_heads", "ssm_num_heads", *(("num_heads",) if b.pure_ssm else ()),
                  default=None)
    if heads is not None or c.has("mamba_n_groups", "n_groups", "mamba_d_head", "mamba_head_dim"):
        # Mamba-2 (Bamba, GraniteMoeHybrid, Falcon-H1, Nemotron-H): one in_proj for z, x, B, C and dt per head
        head_dim = c.get_int("mamba_d_head", "mamba_head_dim", "ssm_head_dim", *(("head_dim",) if b.pure_ssm else ()),
                         default=64)
        heads = heads or (expand * h) // head_dim
        inner = c.get_int("mamba_d_ssm", default=None) or heads * head_dim
        groups = c.get_int("mamba_n_groups", "n_groups", default=1)
        conv_dim = inner + 2 * groups * state
        mixer = [Linear("mamba.in_proj", h, 2 * inner + 2 * groups * state + heads, proj_bias, role="other"),
                 Linear("mamba.out_proj", inner, h, proj_bias, role="other")]
        other = conv_dim * conv + (conv_dim if conv_bias else 0) + 3 * heads + inner    # conv1d, dt_bias, A_log, D, norm
        return mixer, other, "mamba2"
    inner = c.get_int("mamba_d_inner", default=None) or (b.inter if b.pure_ssm and b.c.has("intermediate_size")
                                                     else expand * h)
    rank = c.raw("mamba_dt_rank", "time_step_rank", default="auto")
    rank = math.ceil(h / 16) if rank == "auto" else c.get_int("mamba_dt_rank", "time_step_rank")
    mixer = [Linear("mamba.in_proj", h, 2 * inner, proj_bias, role="other"),
             Linear("mamba.x_proj", inner, rank + 2 * state, role="other"),
             Linear("mamba.dt_proj", rank, inner, True, role="other"),
             Linear("mamba.out_proj", inner, h, proj_bias, role="other")]
    other = inner * conv + (inner if conv_bias else 0) + inner * state + inner     # conv1d, A_log, D
    return mixer, other, "mamba1"


def _expert_int(b: Any, keys: tuple[str, ...], default: int | None) -> int | None:
    """An expert size the config may state once per layer (Hunyuan's remote code: moe_topk, moe_intermediate_size and
    num_shared_expert are lists of num_hidden_layers entries, configuration_hunyuan.py; its HunYuanMoE reads entry 0
    for every layer): one value when every entry agrees, a refusal when they differ."""
    c = b.c
    listed = _ints(c.raw(*keys))
    if listed is None:
        return c.get_int(*keys, default=default, minimum=0)
    key = next(k for k in keys if c.has(k))
    if not listed or len(set(listed)) != 1 or listed[0] < 0:
        raise Unplaced(msg("model.refuse.experts", experts=c.get_int(*EXPERT_KEYS, default=0, minimum=0) or 0,
                           key=key, model_type=b.model_type))
    return listed[0]


def _read_experts(b: Any, attn: list, names: tuple[str, ...], mlp_bias: bool, assumed: list[Msg], _mlp: Any) -> None:
    """The mixture-of-experts layers, when the config counts more than one expert: the router, the routed
    experts, the shared expert(s), and which layers they are."""
    c = b.c
    experts = c.get_int(*EXPERT_KEYS, default=0, minimum=0) or 0
    # a switch that says the experts are off leaves its class's expert count unused (Doge: DogeMLP unless
    # config.is_moe, models/doge/modeling_doge.py DogeDecoderLayer)
    if experts <= 1 or any(not c.flag(k, True) for k in _MOE_SWITCH_KEYS):
        return
    ids, key = _moe_ids(b)
    if ids is None:
        raise Unplaced(msg("model.refuse.experts", experts=experts, key=key, model_type=b.model_type))
    b.experts = experts
    b.experts_per_token = _expert_int(b, TOPK_KEYS, min(2, experts)) or min(2, experts)
    b.moe_inter = _expert_int(b, EXPERT_WIDTH_KEYS, b.inter) or b.inter
    b.moe = attn + [Linear("mlp.gate", b.hidden, experts, role="router")]
    latent = c.get_int("moe_latent_size", default=None, minimum=1)
    if latent:
        # latent MoE: the routed experts work in a narrower space, one projection in and one out per layer
        # (transformers models/nemotron_h/modeling_nemotron_h.py: fc1_latent_proj/fc2_latent_proj, experts on
        # moe_latent_size); the router and the shared expert stay on hidden_size
        b.moe += [Linear("mlp.fc1_latent_proj", b.hidden, latent, bias=mlp_bias, role="other"),
                  Linear("mlp.fc2_latent_proj", latent, b.hidden, bias=mlp_bias, role="other")]
    b.moe += _mlp(latent or b.hidden, b.moe_inter, prefix="mlp.experts.*", names=names, bias=mlp_bias,
                  copies=experts)
    shared_n = _expert_int(b, SHARED_COUNT_KEYS, 0) or 0
    shared_w = c.get_int(*SHARED_WIDTH_KEYS, default=None, minimum=0)     # 0: no shared expert
    if shared_w or shared_n:
        b.shared = 1
        b.shared_inter = shared_w or shared_n * b.moe_inter
        b.moe += _mlp(b.hidden, b.shared_inter, prefix="mlp.shared_experts", names=names, bias=mlp_bias)
    b.moe_layers = len(ids)
    b.first_dense = next((i for i in range(b.layers) if i in ids), b.layers)
    assumed.append(msg("model.assume.experts", experts=experts, layers=len(ids), key=key or "-",
                       width=b.moe_inter))


def read_features(b: Any, kit: Kit) -> None:
    """Fill an archs._Build from the config's features (see the module docstring); raise Unplaced when it cannot."""
    _attn, _common, _mlp, _MAX_LAYERS = kit.attn, kit.common, kit.mlp, kit.max_layers
    c = b.c
    assumed: list[Msg] = []
    ssm_keys = [k for k in SSM_KEYS if c.data.get(k) is not None]
    # Mamba and Mamba-2 have no attention: their `num_heads` (Mamba2Config) counts the SSM heads, and no key
    # places attention layers among the mixers
    b.pure_ssm = bool(ssm_keys) and not c.has("num_attention_heads", "n_head", "n_heads") and not (
        c.has("num_heads") and not c.has("n_groups", "mamba_n_groups")) and not any(
        c.has(k) for k in _LAYER_KIND_KEYS)
    if b.pure_ssm:                                  # Mamba, FalconMamba: every layer a mixer and one norm, no MLP
        b.hidden = c.need("hidden_size", "d_model", "n_embd")
        b.layers = c.need("num_hidden_layers", "n_layer", "n_layers", "num_layers", maximum=_MAX_LAYERS)
        b.vocab = c.need("vocab_size")
        b.inter = c.get_int("intermediate_size", default=2 * b.hidden)
        b.heads = b.kv = 1
        b.head_dim = b.hidden
        mixer, other, kind = _mamba_mixer(b)
        b.dense = mixer
        b.layer_other = other + b.hidden
        b.gated = False
        b.notes.append(msg("model.note.state_space", ssm=b.layers, layers=b.layers, kind=kind))
        b.assumed = [msg("model.assume.ssm", kind=kind)]
        return
    mla = c.data.get("kv_lora_rank") is not None       # multi-head latent attention (DeepSeek-V2 and after)
    if mla:                                      # heads need not divide hidden_size: head_dim is nope + rope
        b.head_dim = (c.get_int("qk_nope_head_dim", default=128) or 0) + (c.get_int("qk_rope_head_dim", default=64) or 0)
    b.blocks = single_blocks(c)
    if b.blocks is not None:
        odd = sorted({k for k in b.blocks.mixers + b.blocks.lone_mixers if k not in ("attention", "ssm")})
        if odd or len(b.blocks.mixers) != len(b.blocks.ffns):
            raise Unplaced(msg("model.refuse.layer_kind", kinds=", ".join(odd) or "-", key=b.blocks.key,
                               model_type=b.model_type))
    _common(b, head_dim_key=not mla, layers=len(b.blocks.mixers) if b.blocks is not None else None)
    if b.head_dim is None and c.has("kv_channels", "attention_head_dim"):
        b.head_dim = c.get_int("kv_channels", "attention_head_dim")
    if not c.has("num_key_value_heads") and c.has("num_query_groups") and c.flag("group_query_attention", True):
        # Megatron-LM's name for the key/value heads (--num-query-groups), kept by the ports that follow it
        # (CodeShell's modeling_codeshell.py: kv_heads = num_query_groups under group_query_attention)
        b.kv = c.get_int("num_query_groups", maximum=b.heads)
        if b.heads % b.kv:
            raise c.fail("num_query_groups", msg("model.config.bad_kv_heads", kv=b.kv, heads=b.heads))
    # GPT-2's own keys for the MLP (configuration_gpt2.py n_inner, activation_function): the blocks of its lineage
    # (GPT-2, GPT-BigCode, GPT-J, CodeGen and the ports that keep these names) have an ungated c_fc/c_proj MLP and
    # biased linears and LayerNorms throughout (modeling_gpt2.py GPT2MLP, GPT2Attention)
    gpt2_keys = c.has("n_inner") and c.has("activation_function")
    qkv_bias = c.flag("attention_bias", c.flag("qkv_bias", c.flag("use_bias", c.flag("bias", c.flag("enable_bias",
                                                                                                   gpt2_keys)))))
    o_bias = c.flag("attention_out_bias", qkv_bias if not c.has("qkv_bias") else c.flag("use_bias", c.flag("bias", False)))
    mlp_bias = c.flag("mlp_bias", c.flag("use_bias", c.flag("bias", c.flag("enable_bias", gpt2_keys))))
    attn, mla_norms = kit.mla(b) if mla else (_attn(b, qkv_bias=qkv_bias, o_bias=o_bias), 0)
    if mla:
        assumed.append(msg("model.assume.mla", rank=c.get_int("kv_lora_rank")))
    # Nemotron-H names its MLP's activation mlp_hidden_act (its hidden_act, where present, is the Mamba gate's)
    act = str(c.raw("mlp_hidden_act", "hidden_act", "activation_function", "hidden_activation", default="silu")).lower()
    width = c.get_int("ffn_dim", default=None)
    if width:
        b.inter = width
    b.gated = not (act in PLAIN_ACTS or width is not None or gpt2_keys)
    names = ("gate_proj", "up_proj", "down_proj") if b.gated else ("up_proj", "down_proj")
    assumed.append(msg("model.assume.mlp_gated" if b.gated else "model.assume.mlp_plain", act=act))
    qk = any(c.flag(k, False) for k in _QK_NORM_KEYS)
    b.layer_other = (4 if mlp_bias else 2) * b.hidden + (2 * (b.head_dim or b.hidden // b.heads) if qk else 0) + mla_norms
    if mlp_bias:
        b.final_norm = 2 * b.hidden
    b.dense = attn + _mlp(b.hidden, b.inter, names=names, bias=mlp_bias)

    _read_experts(b, attn, names, mlp_bias, assumed, _mlp)

    _read_layer_kinds(b, ssm_keys, mla_norms, qk, assumed)
    if b.blocks is not None and (b.blocks.lone_mixers or b.blocks.lone_ffns):
        _count_lone_blocks(b, attn, mla_norms + (2 * (b.head_dim or b.hidden // b.heads) if qk else 0), names,
                           mlp_bias, assumed)
    b.assumed = assumed


def _read_layer_kinds(b: Any, ssm_keys: list[str], mla_norms: int, qk: bool, assumed: list[Msg]) -> None:
    """Layers of other kinds among the attention ones (linear attention, Mamba mixers), when the config lists
    the layers' kinds or has SSM keys."""
    kinds, kinds_key = _kinds(b)
    if not (ssm_keys or kinds_key):
        return
    if kinds is None:
        raise Unplaced(msg("model.refuse.ssm", keys=", ".join(ssm_keys or [kinds_key or "?"]),
                           model_type=b.model_type))
    if "linear" in kinds:
        linear_kind = _linear_kind(b, ssm_keys)
        kinds = [linear_kind if k == "linear" else k for k in kinds]
    other_kinds = sorted({k for k in kinds if k not in ("attention", "ssm", "kda", "gdn", "lightning")})
    if other_kinds:
        raise Unplaced(msg("model.refuse.layer_kind", kinds=", ".join(other_kinds), key=kinds_key,
                           model_type=b.model_type))
    n_ssm = kinds.count("ssm")
    n_linear = len(kinds) - n_ssm - kinds.count("attention")
    if n_linear:
        mixer, other, kind = _linear_mixer(b, kinds)
        b.linear_attn = mixer
        b.linear_attn_layers = n_linear
        b.linear_attn_other = b.layer_other - mla_norms - (2 * (b.head_dim or b.hidden // b.heads) if qk else 0) \
            + other
        assumed.append(msg("model.assume.linear_layers", count=n_linear, layers=b.layers, key=kinds_key, kind=kind))
    if n_ssm and not ssm_keys:
        raise Unplaced(msg("model.refuse.ssm", keys=kinds_key, model_type=b.model_type))
    if n_ssm:
        mixer, other, kind = _mamba_mixer(b)
        b.linear_attn = mixer
        b.linear_attn_layers = n_ssm
        b.linear_attn_other = b.layer_other - (2 * (b.head_dim or b.hidden // b.heads) if qk else 0) + other
        b.notes.append(msg("model.note.state_space", ssm=n_ssm, layers=b.layers, kind=kind))
        assumed.append(msg("model.assume.ssm_layers", ssm=n_ssm, layers=b.layers, key=kinds_key, kind=kind))


def _linear_kind(b: Any, ssm_keys: list[str]) -> str:
    """What a "linear_attention" layer is, from the keys that size it."""
    c = b.c
    if c.has("linear_num_heads", "linear_head_dim") or c.sub("linear_attn_config") is not None:
        return "kda"
    if c.has(*_GDN_KEYS):
        return "gdn"
    if c.has("block_size") and not ssm_keys:
        return "lightning"
    if ssm_keys:
        return "ssm"
    return "linear_attention"                       # nothing sizes it: refused as a layer kind not read


def _linear_mixer(b: Any, kinds: list[str]) -> tuple[list[Linear], int, str]:
    """A linear-attention layer's mixer: its linear modules, its other parameters, and its kind."""
    c, h = b.c, b.hidden
    if "kda" in kinds:
        # Kimi Delta Attention (transformers models/kimi_linear/modeling_kimi_linear.py KimiDeltaAttention):
        # q/k/v of heads x head_dim, a depthwise conv over the three (no bias), low-rank forget (f_a/f_b) and
        # output (g_a/g_b) gates, a per-head beta (b_proj), dt_bias per channel, A_log per head, a gated norm
        nested = c.sub("linear_attn_config")           # the checkpoint's spelling of the same three sizes
        n = c.get_int("linear_num_heads", default=None) or (nested.get_int("num_heads", default=None) if nested else None) \
            or b.heads
        d = c.get_int("linear_head_dim", default=None) or (nested.get_int("head_dim", default=None) if nested else None) \
            or h // b.heads
        kernel = c.get_int("linear_conv_kernel_dim", default=None) or (
            nested.get_int("short_conv_kernel_size", default=None) if nested else None) or 4
        qkv = n * d
        mixer = [Linear("self_attn.q_proj", h, qkv, role="q"), Linear("self_attn.k_proj", h, qkv, role="k"),
                 Linear("self_attn.v_proj", h, qkv, role="v"),
                 Linear("self_attn.f_a_proj", h, d, role="other"), Linear("self_attn.f_b_proj", d, qkv, role="other"),
                 Linear("self_attn.b_proj", h, n, role="other"),
                 Linear("self_attn.g_a_proj", h, d, role="other"), Linear("self_attn.g_b_proj", d, qkv, role="other"),
                 Linear("self_attn.o_proj", qkv, h, role="o")]
        return mixer, 3 * qkv * kernel + qkv + n + d, "kda"
    if "gdn" in kinds:
        # a Gated DeltaNet sized by the four keys Qwen3-Next and OLMo-Hybrid both name (transformers
        # models/olmo_hybrid/modeling_olmo_hybrid.py OlmoHybridGatedDeltaNet; models/qwen3_next Qwen3NextGatedDeltaNet
        # fuses the same projections): q/k of key heads x key dim, v and an output gate of value heads x value dim,
        # a and b per value head, o_proj; a bias-free depthwise conv over q/k/v, A_log and dt_bias per value head,
        # a gated norm over one value head
        nk = c.get_int("linear_num_key_heads", default=None) or b.heads
        nv = c.get_int("linear_num_value_heads", default=None) or nk
        dk = c.get_int("linear_key_head_dim", default=None) or h // b.heads
        dv = c.get_int("linear_value_head_dim", default=None) or dk
        kernel = c.get_int("linear_conv_kernel_dim", default=4) or 4
        key, value = nk * dk, nv * dv
        mixer = [Linear("linear_attn.q_proj", h, key, role="other"), Linear("linear_attn.k_proj", h, key, role="other"),
                 Linear("linear_attn.v_proj", h, value, role="other"),
                 Linear("linear_attn.a_proj", h, nv, role="other"), Linear("linear_attn.b_proj", h, nv, role="other"),
                 Linear("linear_attn.g_proj", h, value, role="other"),
                 Linear("linear_attn.o_proj", value, h, role="other")]
        return mixer, (2 * key + value) * kernel + 2 * nv + dv, "gdn"
    # MiniMax lightning attention (transformers models/minimax/modeling_minimax.py MiniMaxLightningAttention):
    # one qkv_proj, an out_proj, a sigmoid output gate, and an RMSNorm over heads x head_dim
    d = c.get_int("head_dim", default=h // b.heads) or h // b.heads
    hd = b.heads * d
    mixer = [Linear("self_attn.qkv_proj", h, 3 * hd, role="qkv"), Linear("self_attn.out_proj", hd, h, role="o"),
             Linear("self_attn.output_gate", h, hd, role="other")]
    return mixer, hd, "lightning"


def _count_lone_blocks(b: Any, attn: list[Linear], attn_norms: int, names: tuple[str, ...], mlp_bias: bool,
                       assumed: list[Msg]) -> None:
    """Blocks of a single-block config with no partner: each its own parameters and its one norm, outside the
    paired layers (the total is exact; their activations are not counted apart)."""
    h = b.hidden
    sizes = {"attention": sum(m.params for m in attn) + attn_norms,
             "mlp": sum(m.params for m in b.dense if m.role in ("gate", "up", "down"))}
    if "ssm" in b.blocks.lone_mixers:
        mixer, other, _ = _mamba_mixer(b)
        sizes["ssm"] = sum(m.params for m in mixer) + other
    if b.experts:
        sizes["moe"] = sum(m.params for m in b.moe) - sum(m.params for m in attn)
    lone = b.blocks.lone_mixers + b.blocks.lone_ffns
    b.extra += sum(sizes[k] + h for k in lone)
    assumed.append(msg("model.assume.lone_blocks", count=len(lone), kinds=", ".join(sorted(set(lone))),
                       key=b.blocks.key))


def unread_keys(b: Any) -> list[str]:
    """Keys of the config that look structural but that nothing read (listed with a guessed shape)."""
    asked = b.c.asked
    return sorted(k for k, v in b.c.data.items()
                  if k not in asked and v is not None and v is not False and not isinstance(v, dict)
                  and _LOOKS_STRUCTURAL.search(k) and not NOT_STRUCTURAL.search(k))[:12]
