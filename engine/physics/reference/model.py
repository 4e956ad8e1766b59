"""The reference model: one scenario, step by step, as the package docstring reads."""

from __future__ import annotations

from ...core import codes
from ...core.accelerator import Accelerator
from ...core.constants import Constants
from ...core.model import ModelArch
from ...core.precision import bytes_per_element
from ...core.scenario import Scenario
from ..results import MemoryResult, Result
from . import phases
from .closed_forms import AttentionGroups, AttentionLayers, RecurrentLayers
from .energy import Power
from .iteration import IterationCostModel
from .memory import DeviceMemory, TierReads, fit_memory
from .network import Communication
from .parallel import lay_out
from .phases import Setup, Step
from .stage import Stage, compute_format, compute_peak, phase_result
from .trace import Trace, trace_of


class ReferenceModel:
    """Evaluates one scenario. Construct with the model, accelerator and constants it uses."""

    def __init__(self, model: ModelArch, accelerator: Accelerator, constants: Constants) -> None:
        self.model = model
        self.accelerator = accelerator
        self.constants = constants
        self.cls = constants.for_class(accelerator.architecture_class)
        self.memory = DeviceMemory(accelerator, self.cls)

    def setup(self, scenario: Scenario) -> Setup:
        """Steps 1-3 and the power model: everything before the phases."""
        m, a, cls, k = self.model, self.accelerator, self.cls, self.constants
        compute_key, fallback = compute_format(a, scenario)
        peak = compute_peak(a, compute_key)
        layout = lay_out(m, scenario, self.memory.far_tier is not None)
        fit = fit_memory(m, k, self.memory, scenario, layout, peak)
        tiers = TierReads(a, cls, k, self.memory, fit)
        communication = Communication(a, cls, layout, m.hidden_size, bytes_per_element(scenario.activation_precision),
                                      m.moe.experts_per_token if m.moe else 0)
        stage = Stage(m, a, cls, scenario, layout, fit.sizes, tiers, communication, peak)
        return Setup(
            scenario=scenario,
            model=m,
            layout=layout,
            compute_precision=compute_key,
            peak=peak,
            memory=self.memory,
            fit=fit,
            communication=communication,
            stage=stage,
            power=Power(a, cls, k, peak, tiers),
            attention=AttentionLayers.of(m),
            groups=AttentionGroups.of(m),
            recurrent=RecurrentLayers.of(m),
            step_overhead=cls.step_overhead_s,
            sequence_overhead=cls.sequence_overhead_s,
            warnings=fallback | layout.warnings | fit.warnings | communication.warnings,
        )

    def evaluate(self, scenario: Scenario) -> Result:
        setup = self.setup(scenario)
        return self._result(setup, phases.prefill(setup), phases.decode(setup))

    def evaluate_traced(self, scenario: Scenario) -> tuple[Result, Trace]:
        """The result, and the facts the steps found on the way (see ``trace.py``)."""
        setup = self.setup(scenario)
        prefill, decode = phases.prefill(setup), phases.decode(setup)
        return self._result(setup, prefill, decode), trace_of(self.accelerator, self.cls, setup, prefill, decode)

    def iteration_cost_model(self, scenario: Scenario) -> IterationCostModel:
        """The cost of one serving iteration of this scenario's replica, by the same steps as
        :meth:`evaluate` (see ``iteration.py``)."""
        return IterationCostModel(self.setup(scenario))

    def _result(self, setup: Setup, prefill: Step, decode: Step) -> Result:
        s, fit, layout, power = setup.scenario, setup.fit, setup.layout, setup.power
        warnings = setup.warnings
        decode_steps = s.output_len - 1
        if power.capped(prefill.dynamic_J, prefill.time_s) or (
            decode_steps > 0 and power.capped(decode.dynamic_J, decode.time_s)
        ):
            warnings |= codes.WARN_POWER_CAPPED

        # The whole run: waves one after another, each a prefill and its decode steps.
        ttft_wave, itl = prefill.time_s, decode.time_s
        wave_time = ttft_wave + decode_steps * itl
        makespan = fit.waves * wave_time
        ttft = ttft_wave + (fit.waves - 1) / 2.0 * wave_time
        devices = layout.devices
        energy_per_device = fit.waves * (prefill.power_W * ttft_wave + decode.power_W * decode_steps * itl)
        energy = energy_per_device * devices
        total_tokens = layout.dp * s.batch * (s.input_len + s.output_len)
        output_tokens = layout.dp * s.batch * s.output_len

        memory = self.memory
        device_tier = self.accelerator.tier("device") or memory.near_tiers[-1]
        return Result(
            scenario=s,
            devices=devices,
            fits=fit.fits,
            fit_code=fit.fit_code,
            warning_bits=warnings,
            compute_precision=setup.compute_precision,
            waves=fit.waves,
            prefill=phase_result(prefill.stage_pass, prefill.passes, ttft_wave, prefill.host_s,
                                 prefill.pipeline_passes, prefill.power_W),
            decode=phase_result(decode.stage_pass, decode.passes, itl, decode.host_s, decode.pipeline_passes,
                                decode.power_W),
            memory=MemoryResult(
                weights_bytes=fit.sizes.weights,
                weights_far_bytes=fit.weights_far,
                kv_cache_bytes=s.batch * fit.kv_sequence,
                kv_cache_far_bytes=s.batch * fit.kv_sequence * fit.kv_offload,
                recurrent_state_bytes=s.batch * fit.state_sequence,
                activation_bytes=fit.activation_bytes(s.batch),
                overhead_bytes=memory.runtime_overhead,
                usable_bytes=memory.usable,
                capacity_bytes=memory.capacity,
                far_usable_bytes=memory.far_usable,
                max_batch=fit.max_batch,
                resident_batch=fit.resident,
            ),
            ttft_s=ttft,
            itl_s=itl,
            e2e_latency_s=makespan,
            throughput_output_tok_s=output_tokens / makespan,
            throughput_total_tok_s=total_tokens / makespan,
            power_W=energy / makespan,
            energy_J=energy,
            tokens_per_joule=total_tokens / energy,
            output_tokens_per_joule=output_tokens / energy,
            tp_needed=fit.tp_needed,
            offload_needed=fit.offload_needed,
            ridge_point=setup.peak / device_tier.effective_bandwidth_Bps,
        )


def evaluate(scenario: Scenario, model: ModelArch, accelerator: Accelerator, constants: Constants) -> Result:
    return ReferenceModel(model, accelerator, constants).evaluate(scenario)
