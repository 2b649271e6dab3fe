"""Words for the memory model: components, regimes, caveats."""
from __future__ import annotations

WORDS = {
    # component names, short (bars, tables) and long (sentences)
    "memory.component.weights": ('weights', '权重'),
    "memory.component.gradients": ('grads', '梯度'),
    "memory.component.optimizer": ('optimizer', '优化器状态'),
    "memory.component.activations": ('activations', '激活值'),
    "memory.component.logits": ("logits", "logits"),
    "memory.component.overhead": ('overhead', '其他开销'),
    "memory.component.reserve": ('reserve', '分配器预留'),
    "memory.component_long.weights": ('weights', '权重'),
    "memory.component_long.gradients": ('gradients', '梯度'),
    "memory.component_long.optimizer": ('optimizer states', '优化器状态'),
    "memory.component_long.activations": ('activations', '激活值'),
    "memory.component_long.logits": ('logits and loss', 'logits 与损失'),
    "memory.component_long.overhead": ('runtime overhead', '运行时开销'),
    "memory.component_long.reserve": ('allocator reserve', '分配器预留'),
}
