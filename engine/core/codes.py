"""Why a scenario does not fit, and what to warn about, as numbers the kernels can return.

The kernels freeze these values when they compile; their on-disk cache is keyed by the source
of every module they import (``physics/jit.py``), this one included, so a change recompiles them.
"""

from __future__ import annotations

# Fit: the first reason that applies (0 = it fits).
FIT_OK = 0
FIT_EP_NOT_DIVIDING_TP = 1
FIT_EP_ON_DENSE_MODEL = 2
FIT_EP_EXCEEDS_EXPERTS = 3
FIT_PP_EXCEEDS_LAYERS = 4
FIT_OFFLOAD_WITHOUT_FAR_TIER = 5
FIT_WEIGHTS_DO_NOT_FIT = 6
FIT_KV_DOES_NOT_FIT_ONE_SEQUENCE = 7
FIT_FAR_TIER_TOO_SMALL = 8
FIT_COMPUTE_UNPUBLISHED = 9

FIT_REASONS: dict[int, str] = {
    FIT_OK: "fits",
    FIT_EP_NOT_DIVIDING_TP: "expert parallelism must divide tensor parallelism: experts are spread over the tensor-parallel devices of each stage",
    FIT_EP_ON_DENSE_MODEL: "expert parallelism needs a mixture-of-experts model; this model is dense",
    FIT_EP_EXCEEDS_EXPERTS: "expert parallelism is wider than the number of routed experts",
    FIT_PP_EXCEEDS_LAYERS: "pipeline parallelism has more stages than the model has layers",
    FIT_OFFLOAD_WITHOUT_FAR_TIER: "offloading needs a far memory tier (host, CXL or DDR), which this accelerator does not have",
    FIT_WEIGHTS_DO_NOT_FIT: "the weights do not fit in device memory",
    FIT_KV_DOES_NOT_FIT_ONE_SEQUENCE: "the weights fit, but not the KV cache of even one sequence at this context length",
    FIT_FAR_TIER_TOO_SMALL: "the offloaded weights and KV cache do not fit in the far memory tier",
    FIT_COMPUTE_UNPUBLISHED: "the weights and KV cache fit in memory, but no compute peak of this accelerator is published for this format (nor for a wider one): its times, throughput and energy cannot be computed",
}

# Warnings: bits that can be set together.
WARN_KV_WAVES = 1
WARN_CONTEXT_EXCEEDS_MODEL = 2
WARN_TP_UNEVEN_HEADS = 4
WARN_EP_UNEVEN_EXPERTS = 8
WARN_POWER_CAPPED = 16
WARN_CROSSES_SCALE_UP_DOMAIN = 32
WARN_KV_STARVED = 64
WARN_COMPUTE_FALLBACK = 128
WARN_KV_HEADS_REPLICATED = 256

WARNINGS: dict[int, str] = {
    WARN_KV_WAVES: "the KV cache of the whole batch does not fit: it runs in waves of the largest batch that fits, as serving stacks do (with preemption), which is much slower",
    WARN_CONTEXT_EXCEEDS_MODEL: "the context is longer than the model was trained for",
    WARN_TP_UNEVEN_HEADS: "tensor parallelism does not divide the attention heads: the busiest device sets the pace, and serving stacks refuse this layout",
    WARN_EP_UNEVEN_EXPERTS: "expert parallelism does not divide the experts evenly: the busiest device sets the pace",
    WARN_POWER_CAPPED: "the work asks for more than the TDP: power is capped at TDP",
    WARN_CROSSES_SCALE_UP_DOMAIN: "a parallel group is larger than the scale-up domain and crosses the slower scale-out network",
    WARN_KV_STARVED: "weights take more than 80% of usable memory, which leaves the KV cache starved (Brunetta et al., Sec. IV-B)",
    WARN_COMPUTE_FALLBACK: "the device has no units for the activation format: matrix products run in a wider format",
    WARN_KV_HEADS_REPLICATED: "tensor parallelism is wider than the KV heads: KV heads are replicated, so the KV cache stops shrinking per device",
}

BOUND_COMPUTE = 0
BOUND_MEMORY = 1
BOUND_COMMUNICATION = 2
BOUND_OVERHEAD = 3
BOUNDS: tuple[str, ...] = ("compute", "memory", "communication", "overhead")


def warning_texts(bits: int) -> list[str]:
    return [text for bit, text in WARNINGS.items() if bits & bit]
