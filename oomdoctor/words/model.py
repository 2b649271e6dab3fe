"""Words for model shapes: where a shape came from, what was assumed, and bad model files."""
from __future__ import annotations

# the end of every refusal of a config.json no reading places: no checkpoint and no transformers count gives the layer
# sizes it lacks (models.py reads a checkpoint after config.json, and a meta-device count is a total), so the one way
# to an estimate is a model of the same layout that oomdoctor reads
_NO_READING_EN = ("oomdoctor takes the layer sizes the estimate needs from neither a checkpoint nor transformers' count; "
                  "for a rough estimate pass --model with a model of the same layout that oomdoctor reads")
_NO_READING_ZH = ("oomdoctor 无法从检查点或 transformers 的计数得到估算所需的各层尺寸；如需粗略估算，请用 --model 指定一个 "
                  "oomdoctor 能读取、结构相同的模型")

WORDS = {
    # where the shape came from
    "model.source.checkpoint": ("checkpoint {path}", "检查点 {path}"),
    "model.source.index": ("checkpoint index {path}", "检查点索引 {path}"),
    "model.source.config": ("config.json {path}", "config.json {path}"),
    "model.source.catalog": ("bundled catalog ({id})", "内置模型目录（{id}）"),
    "model.source.catalog_for": ("bundled catalog ({id}, for {name})", "内置模型目录（{id}，对应 {name}）"),
    "model.source.log": ("the log's parameter count ({params:,}), shaped like {id} with {layers} layers",
                         "日志中的参数量（{params:,}），按 {id} 的结构缩放为 {layers} 层"),
    "model.summary": ("{params_b:.2f}B parameters, {layers} layers, hidden {hidden}, vocabulary {vocab}",
                      "{params_b:.2f}B 参数，{layers} 层，隐藏维度 {hidden}，词表 {vocab}"),
    # notes on how the shape was read
    "model.note.llama_style_guess": (
        "model_type {model_type!r} is not one oomdoctor knows: counted as a Llama-style decoder "
        "(q/k/v/o attention, gated MLP, two norms per layer)",
        "oomdoctor 不认识 model_type {model_type!r}：按 Llama 式解码器估算（q/k/v/o 注意力、门控 MLP、每层两个归一化层）"),
    "model.note.state_space": (
        "{ssm} of {layers} layers are {kind} state-space layers: their activations are estimated like "
        "attention's (approximate)",
        "{layers} 层中有 {ssm} 层是 {kind} 状态空间层：这些层的激活值按注意力层估算（近似）"),
    "model.note.meta_count": (
        "counted exactly by transformers {version}'s own model class ({cls}) on the meta device, no weights loaded",
        "由 transformers {version} 自身的模型类（{cls}）在 meta 设备上精确计数，未加载权重"),
    "model.note.unread_keys": ("keys that look structural but were not read: {keys}",
                               "看似与结构有关但未读取的键：{keys}"),
    # a shape read from features alone: the warning, what it assumed, how to make it exact
    "model.warn.guessed": (
        "GUESSED SHAPE: oomdoctor has no reading of its own for model_type {model_type!r}; the count rests on "
        "the config's keys: {assumed}",
        "结构为推测：oomdoctor 没有 model_type {model_type!r} 的专门读法，参数量依据配置中的键推得：{assumed}"),
    "model.warn.how_exact": (
        "for an exact count pass --model DIR with the checkpoint (*.safetensors or its index), or run where "
        "transformers (with torch) is installed and knows {model_type!r}",
        "要得到精确参数量：用 --model DIR 指定含检查点（*.safetensors 或其索引）的目录，或在安装了 transformers"
        "（及 torch）且认识 {model_type!r} 的环境中运行"),
    "model.warn.how_exact_remote": (
        "for an exact count pass --model DIR with the checkpoint (*.safetensors or its index); transformers here "
        "does not know {model_type!r}: with the model's own code in DIR, set OOMDOCTOR_TRUST_REMOTE_CODE=1",
        "要得到精确参数量：用 --model DIR 指定含检查点（*.safetensors 或其索引）的目录；此处的 transformers 不认识 "
        "{model_type!r}：若 DIR 中有该模型自带的代码，可设置 OOMDOCTOR_TRUST_REMOTE_CODE=1"),
    "model.warn.catalog_structure": (
        "GUESSED SHAPE: the total is the catalog's count, but oomdoctor has no reading of its own for model_type "
        "{model_type!r}: per-layer figures (activations, LoRA, ZeRO-3 gathers) rest on a Llama-style guess; pass "
        "--model DIR with the checkpoint for an exact shape",
        "结构为推测：总参数量取自内置目录，但 oomdoctor 没有 model_type {model_type!r} 的专门读法：逐层数值（激活、LoRA、"
        "ZeRO-3 聚合）依据 Llama 式推测；用 --model DIR 指定含检查点的目录可得到精确结构"),
    "model.warn.meta_timeout": (
        "transformers did not finish counting it within {seconds:g} s (OOMDOCTOR_META_TIMEOUT sets the limit)",
        "transformers 未能在 {seconds:g} 秒内完成计数（可用 OOMDOCTOR_META_TIMEOUT 调整时限）"),
    "model.warn.meta_failed": ("transformers could not count it ({reason})", "transformers 无法计数（{reason}）"),
    "model.assume.mlp_gated": ("a gated MLP (gate/up/down, activation {act})", "门控 MLP（gate/up/down，激活函数 {act}）"),
    "model.assume.mlp_plain": ("a two-matrix MLP (up/down, activation {act})", "两矩阵 MLP（up/down，激活函数 {act}）"),
    "model.assume.experts": ("{experts} experts of width {width} in {layers} layers (placed by {key})",
                             "{layers} 层中各有 {experts} 个宽度为 {width} 的专家（按 {key} 放置）"),
    "model.assume.lone_blocks": ("{count} single blocks ({kinds}) with no partner in {key} counted on their own",
                                 "{key} 中 {count} 个无配对的单独块（{kinds}）单独计数"),
    "model.assume.linear_layers": ("{count} of {layers} layers {kind} linear attention (placed by {key})",
                                   "{layers} 层中有 {count} 层是 {kind} 线性注意力（按 {key} 放置）"),
    "model.assume.mla": ("multi-head latent attention (kv_lora_rank {rank})", "多头潜在注意力（kv_lora_rank {rank}）"),
    "model.assume.ssm": ("every layer a {kind} state-space mixer, no attention and no MLP",
                         "每层都是 {kind} 状态空间混合层，没有注意力和 MLP"),
    "model.assume.ssm_layers": ("{ssm} of {layers} layers {kind} state-space mixers (placed by {key})",
                                "{layers} 层中有 {ssm} 层是 {kind} 状态空间混合层（按 {key} 放置）"),
    "model.assume.unplaced": ("Llama-style layers for the structure only ({why}); the total is transformers' count",
                              "仅层结构按 Llama 式假设（{why}）；总参数量取自 transformers 的计数"),
    "model.assume.per_layer": ("per_layer_config: {layers} layers with their own {keys}",
                               "per_layer_config：{layers} 层有各自的 {keys}"),
    "model.assume.join": ("{a}; {b}", "{a}；{b}"),
    # a guess that cannot place what it sees refuses
    "model.refuse.experts": (
        "config.json states {experts} experts but oomdoctor cannot tell which layers hold them ({key}; model_type "
        "{model_type!r} has no reading of its own yet): " + _NO_READING_EN,
        "config.json 声明了 {experts} 个专家，但 oomdoctor 无法判断它们位于哪些层（{key}；model_type {model_type!r} "
        "尚无专门读法）：" + _NO_READING_ZH),
    "model.refuse.unreadable": (
        "config.json of model_type {model_type!r} (no reading of its own yet) holds a value oomdoctor cannot read "
        "({why}): " + _NO_READING_EN,
        "model_type {model_type!r}（尚无专门读法）的 config.json 含有 oomdoctor 无法读取的值（{why}）：" + _NO_READING_ZH),
    "model.refuse.ssm": (
        "config.json states state-space layers ({keys}) but oomdoctor cannot tell which layers they are (model_type "
        "{model_type!r} has no reading of its own yet): " + _NO_READING_EN,
        "config.json 声明了状态空间层（{keys}），但 oomdoctor 无法判断是哪些层（model_type {model_type!r} 尚无专门读法）："
        + _NO_READING_ZH),
    "model.refuse.layer_kind": (
        "config.json's {key} names layers of kind {kinds} that oomdoctor cannot count (model_type {model_type!r} "
        "has no reading of its own yet): " + _NO_READING_EN,
        "config.json 的 {key} 含有 oomdoctor 无法计数的层类型 {kinds}（model_type {model_type!r} 尚无专门读法）："
        + _NO_READING_ZH),
    "model.refuse.per_layer": (
        "config.json's per_layer_config gives some layers their own {keys}, which oomdoctor cannot count (model_type "
        "{model_type!r} has no reading of its own yet): " + _NO_READING_EN,
        "config.json 的 per_layer_config 为部分层单独设定了 {keys}，oomdoctor 无法计数（model_type {model_type!r} "
        "尚无专门读法）：" + _NO_READING_ZH),
    # the refusals above, where transformers is importable and counts the type: the advice to run where it knows
    # the type would be false there, so the line says what it counted and what is still unread
    "model.refuse.known_unread": (
        "transformers {version} counts this {model_type!r} model exactly ({cls}: {params:,} parameters), but the "
        "memory estimate also needs its layer sizes, which oomdoctor cannot read from this config.json ({why}; "
        "model_type {model_type!r} has no reading of its own yet): for a rough estimate pass --model with a model of "
        "the same layout that oomdoctor reads",
        "transformers {version} 可精确计数该 {model_type!r} 模型（{cls}：{params:,} 个参数），但内存估算还需要各层尺寸，"
        "oomdoctor 无法从该 config.json 读出（{why}；model_type {model_type!r} 尚无专门读法）：如需粗略估算，请用 --model "
        "指定一个 oomdoctor 能读取、结构相同的模型"),
    "model.refuse.why_unplaced": ("which layers hold the parts it states", "无法判断其声明的部件位于哪些层"),
    "model.confidence.exact": ("exact", "精确"),
    "model.confidence.derived": ("derived from config.json", "由 config.json 推导"),
    "model.confidence.guessed": ("guessed", "推测"),
    "model.warn.vision_not_counted": (
        "the vision tower of this {model_type} model is not counted, only its language model: the total is low; "
        "pass --model DIR with the checkpoint (*.safetensors or its index) to count all of it",
        "未计入该 {model_type} 模型的视觉编码器，只计算了语言模型部分，总数偏低：用 --model DIR 指定含检查点"
        "（*.safetensors 或其索引）的目录可计入全部参数"),
    "model.warn.parts_not_counted": (
        "this {model_type} config also describes {parts}, which this count leaves out (only its language model is "
        "read): the total is low; pass --model DIR with the checkpoint (*.safetensors or its index) to count all of it",
        "该 {model_type} 配置还描述了 {parts}，此计数未计入（只读取了语言模型部分），总数偏低：用 --model DIR 指定含检查点"
        "（*.safetensors 或其索引）的目录可计入全部参数"),
    "model.warn.vision_tower_by_name": (
        "this {model_type} config names its vision encoder ({tower}) instead of describing it: that encoder, and "
        "any other module its own code adds, is not counted; the total is low",
        "该 {model_type} 配置只给出视觉编码器的名字（{tower}）而未描述其结构：该编码器及其自带代码添加的其他模块均未计入，"
        "总数偏低"),
    "model.assume.head": ("{cls}: a head this reading does not know, left out of the count",
                          "{cls}：此读法不认识的输出头，未计入参数量"),
    "model.assume.kin": ("a {family} block, read by {family}'s own reading (the config carries its keys {keys})",
                         "{family} 结构，按 {family} 的专门读法计数（配置中含其特有的键 {keys}）"),
    "model.note.classification_head": (
        "{cls}: a classification head of {labels} labels in place of the language-model head",
        "{cls}：以 {labels} 个类别的分类头代替语言模型输出层"),
    "model.note.mtp_not_loaded": (
        "the checkpoint's {layers} multi-token-prediction layer(s) are not counted: transformers does not load them",
        "未计入检查点中的 {layers} 个多 token 预测（MTP）层：transformers 不加载它们"),
    "model.note.linear_attention": (
        "{linear} of {layers} layers use Gated DeltaNet linear attention: their activations are estimated like "
        "full attention's (approximate)",
        "{layers} 层中有 {linear} 层使用 Gated DeltaNet 线性注意力：这些层的激活值按全注意力估算（近似）"),
    "model.note.tied_head_stored": (
        "the checkpoint stores lm_head separately, but the config ties it to the embeddings: counted once",
        "检查点单独保存了 lm_head，但配置将其与词嵌入绑定：只计一次"),
    "model.note.quantized": ("weights stored {method} {bits}-bit", "权重以 {method} {bits} 位量化存储"),
    "model.note.quantized_nobits": ("weights stored quantized ({method})", "权重以量化形式存储（{method}）"),
    "model.note.shards_missing": (
        "{missing} of {total} shard(s) listed in the index are not here: shapes from config.json, total from the index",
        "索引中列出的 {total} 个分片有 {missing} 个不在本地：结构取自 config.json，总量取自索引"),
    "model.note.shard_unreadable": ("{file} is not a readable safetensors file ({reason}): skipped",
                                    "{file} 不是可读的 safetensors 文件（{reason}）：已跳过"),
    "model.note.cache_unreadable": ("Hugging Face cache {path} cannot be read ({reason}): skipped",
                                    "无法读取 Hugging Face 缓存 {path}（{reason}）：已跳过"),
    "model.note.vocab_differs": (
        "the local vocabulary ({local}) differs from the catalog's {id} ({catalog}): the local config wins",
        "本地词表大小（{local}）与内置目录中 {id} 的（{catalog}）不同：以本地配置为准"),
    "model.note.lora_unmatched": ("LoRA target(s) {targets} match no linear module of this model",
                                  "LoRA 目标 {targets} 在该模型中找不到对应的线性层"),
    # bad model files
    "model.config.missing_key": ("config.json lacks {keys}", "config.json 缺少 {keys}"),
    "model.config.bad_kv_heads": ("num_key_value_heads ({kv}) must divide num_attention_heads ({heads})",
                                  "num_key_value_heads（{kv}）必须整除 num_attention_heads（{heads}）"),
    "model.config.bad_layer_list": ("{key} must be one positive integer or a list of one per layer ({layers})",
                                    "{key} 必须是一个正整数，或每层一个正整数的列表（共 {layers} 个）"),
    "model.config.bad_layer_kinds": ("{key} must be a list of layer kinds (strings)", "{key} 必须是层类型（字符串）的列表"),
    "model.config.bad_heads": ("hidden_size ({hidden}) is not a multiple of num_attention_heads ({heads})",
                               "hidden_size（{hidden}）不是 num_attention_heads（{heads}）的整数倍"),
    "model.config.not_object": ("model config.json is not a JSON object", "模型的 config.json 不是 JSON 对象"),
    "model.checkpoint.header_too_big": ("safetensors header of {size:,} bytes is larger than the {limit:,} accepted",
                                        "safetensors 文件头有 {size:,} 字节，超过允许的 {limit:,} 字节"),
    "model.checkpoint.bad_header": ("not a safetensors header: {reason}", "不是有效的 safetensors 文件头：{reason}"),
    "model.checkpoint.bad_index": ("checkpoint index is not valid: {reason}", "检查点索引无效：{reason}"),
    "model.checkpoint.reason.lfs_pointer": ("a Git LFS pointer, not the file", "只是 Git LFS 指针，不是文件本身"),
    "model.checkpoint.reason.short": ("shorter than 8 bytes", "不足 8 字节"),
    "model.checkpoint.reason.cut": ("header cut at {got:,} of {size:,} bytes", "只有 {got:,} 字节，应有 {size:,} 字节"),
    "model.checkpoint.reason.not_utf8": ("header is not UTF-8", "不是 UTF-8 文本"),
    "model.checkpoint.reason.not_object": ("header is not a JSON object", "不是 JSON 对象"),
    "model.checkpoint.reason.no_shape": ("entry {name!r} has no dtype and shape", "条目 {name!r} 缺少 dtype 和 shape"),
    "model.checkpoint.reason.bad_shape": ("entry {name!r} has a bad shape", "条目 {name!r} 的 shape 无效"),
    "model.checkpoint.reason.bad_dtype": ("entry {name!r} has dtype {dtype!r}", "条目 {name!r} 的 dtype 是 {dtype!r}，无法识别"),
    "model.checkpoint.reason.no_weight_map": ("no weight_map of names to files", "缺少从张量名到分片文件的 weight_map"),
    "model.unknown": ("unknown model {name!r}: tried {tried}; pass --model PATH to a directory or config.json "
                      "with the model's architecture",
                      "未知模型 {name!r}：已尝试 {tried}；请用 --model PATH 指定含模型结构的目录或 config.json"),
    "model.none_named": ("no model named: tried {tried}; pass --model PATH to a directory or config.json "
                         "with the model's architecture",
                         "未指定模型：已尝试 {tried}；请用 --model PATH 指定含模型结构的目录或 config.json"),
    "model.tried.directory": ("directory {path} (no config.json in it)", "目录 {path}（其中没有 config.json）"),
    "model.tried.catalog": ("the bundled catalog", "内置模型目录"),
    "model.tried.hf_cache": ("the Hugging Face cache ({dirs})", "Hugging Face 缓存（{dirs}）"),
    "model.tried.nothing": ("nothing", "无"),
}
