"""``accelscope serve``: a scenario served under traffic, simulated iteration by iteration.

Takes the scenario flags of ``predict`` (the replica is its TP x PP group, ``--dp`` replicas),
the traffic (``--rate``, ``--arrival``, ``--concurrency``, lengths about ``--input-len`` and
``--output-len``, or ``--trace FILE``), the scheduler (``--policy`` and its limits) and the
objectives (``--slo-ttft-ms``, ``--slo-tpot-ms``); ``--capacity`` finds the largest rate that
meets them; ``--disaggregate P:D`` splits prefill and decode into pools. ``--jsonl FILE``
answers one JSON object per line, with the same keys in snake_case.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import fields
from typing import Any, TextIO

from accelscope.engine.core.fields import scenario_document

from .arguments import (
    COST_FLAGS,
    USAGE_ERROR,
    BadLines,
    UsageError,
    add_cost_arguments,
    add_scenario_arguments,
    cost_settings,
    fraction,
    json_line,
    native_weight_format,
    non_negative,
    non_negative_int,
    positive_int,
    positive_number,
    rate,
    read_lines,
    scenario_keys,
    scenario_values,
)

# Serving settings: command-line option (and JSONL key, in snake_case) -> ServingSpec field.
# The spec's own field names are used where they read well on a command line.
OPTION_FIELDS: dict[str, str] = {
    "input_dist": "input_distribution",
    "output_dist": "output_distribution",
    "burstiness": "burstiness_cv",
    "link_gbps": "link_bandwidth_GBps",
}
# Keys the serve command reads besides the spec's fields and the scenario's (the cost keys too).
EXTRA_KEYS: tuple[str, ...] = ("rate", "trace", "disaggregate", "capacity", "target_rate", "precision", *COST_FLAGS)


def add_serve_parser(commands: argparse._SubParsersAction) -> None:
    from accelscope.engine.core.serving import ARRIVALS, LENGTH_DISTRIBUTIONS, LINKS, POLICIES, ROUTERS

    number = positive_number
    serve = commands.add_parser(
        "serve",
        help="simulate serving a scenario under traffic: TTFT/TPOT percentiles, throughput, goodput, capacity",
    )
    add_scenario_arguments(serve, batch="static policy: the batch of its fixed-batch image (other policies: unused)")
    serve.add_argument("--requests", type=positive_int,
                       help="exactly this many requests (default: as many as a steady state needs, sized by time)")
    serve.add_argument("--rate", type=rate, help="requests per second, whole deployment ('inf': all at t = 0)")
    serve.add_argument("--arrival", choices=ARRIVALS, help="arrival process (default poisson; gamma with --burstiness)")
    serve.add_argument("--burstiness", type=number, help="gamma arrivals: coefficient of variation of the gaps")
    serve.add_argument("--concurrency", type=positive_int, help="closed loop of N users (each sends when its last ends)")
    serve.add_argument("--think-s", type=non_negative, help="closed loop: mean think time between requests, s")
    serve.add_argument("--input-dist", choices=LENGTH_DISTRIBUTIONS, help="prompt lengths about --input-len")
    serve.add_argument("--output-dist", choices=LENGTH_DISTRIBUTIONS, help="reply lengths about --output-len")
    serve.add_argument("--length-cv", type=non_negative, help="uniform and lognormal lengths: std / mean")
    serve.add_argument("--trace", metavar="FILE", help="requests from a CSV or JSONL trace (arrival_s, input_tokens, "
                       "output_tokens) instead of drawn ones")
    serve.add_argument("--seed", type=non_negative_int, help="seed of the drawn requests")
    serve.add_argument("--policy", choices=POLICIES, help="the serving engine's scheduling rules (default vllm)")
    serve.add_argument("--max-num-seqs", type=positive_int, help="most sequences per iteration (policy default)")
    serve.add_argument("--max-batched-tokens", type=positive_int, help="token budget per iteration (policy default)")
    serve.add_argument("--memory-fraction", type=fraction, help="memory for the model and KV cache (policy default)")
    serve.add_argument("--block-size", type=positive_int, help="tokens per KV block (policy default)")
    serve.add_argument("--prefix-tokens", type=non_negative_int, help="a shared system prompt (prefix cache)")
    serve.add_argument("--router", choices=ROUTERS, help="between the --dp replicas (default round-robin)")
    serve.add_argument("--slo-ttft-ms", type=number, help="p99 TTFT limit, ms (default 2000)")
    serve.add_argument("--slo-tpot-ms", type=number, help="p99 TPOT limit, ms (default 200)")
    serve.add_argument("--capacity", action="store_true", help="find the largest rate that meets the SLO")
    serve.add_argument("--target-rate", type=number, help="with --capacity: the devices this rate needs")
    serve.add_argument("--disaggregate", metavar="P:D", help="prefill and decode replicas in separate pools")
    serve.add_argument("--link", choices=LINKS, help="what carries the KV cache between the pools (default scale-out)")
    serve.add_argument("--link-gbps", type=number, help="custom link: GB/s per direction")
    serve.add_argument("--link-latency-us", type=non_negative, help="custom link: latency, us")
    serve.add_argument("--jsonl", metavar="FILE", help="one object per line from FILE ('-' for stdin), one result each")
    serve.add_argument("--json", action="store_true", help="print one JSON object")
    add_cost_arguments(serve)


def spec_keys() -> set[str]:
    """Every serving key a JSONL line may give."""
    from accelscope.engine.core.serving import SERVING_FIELDS

    renamed = {field: option for option, field in OPTION_FIELDS.items()}
    return {renamed.get(name, name) for name in SERVING_FIELDS} - {"rate_rps"} | set(EXTRA_KEYS)


def spec_from_values(values: dict[str, Any]):
    """A validated ServingSpec from option values by their CLI/JSONL names (absent or None:
    the default). ``rate`` 'inf' (or infinity) means every request at t = 0."""
    from accelscope.engine.core.serving import ServingSpec

    changes: dict[str, Any] = {}
    spec_fields = {f.name for f in fields(ServingSpec)}
    for key, value in values.items():
        if value is None or key in EXTRA_KEYS:
            continue
        field = OPTION_FIELDS.get(key, key)
        if field in spec_fields:
            changes[field] = value
    rate = values.get("rate")
    if rate is not None:
        if rate == "inf" or (isinstance(rate, float) and math.isinf(rate)):
            changes.setdefault("arrival", "offline")
        else:
            changes["rate_rps"] = rate
    if values.get("concurrency") is not None:
        changes.setdefault("arrival", "closed")
    if values.get("disaggregate") is not None:
        changes["prefill_replicas"], changes["decode_replicas"] = parse_pools(values["disaggregate"])
    for key in ("slo_ttft_ms", "slo_tpot_ms", "link_bandwidth_GBps", "link_latency_us", "think_s", "burstiness_cv",
                "length_cv", "memory_fraction"):
        if isinstance(changes.get(key), int) and not isinstance(changes[key], bool):
            changes[key] = float(changes[key])
    return ServingSpec(**changes).validate()


def parse_pools(text: object) -> tuple[int, int]:
    if not isinstance(text, str) or text.count(":") != 1:
        raise ValueError(f"disaggregate must be P:D (prefill and decode replicas, e.g. 1:3), got {text!r}"[:120])
    prefill, decode = text.split(":")
    try:
        counts = int(prefill), int(decode)
    except ValueError:
        raise ValueError(f"disaggregate must be two whole numbers P:D, got {text!r}"[:120]) from None
    if min(counts) < 1:
        raise ValueError(f"disaggregate needs at least one replica in each pool, got {text!r}")
    return counts


# ---- results as dicts and text ---------------------------------------------------------------


def _distribution(distribution, scale: float) -> dict[str, float | None]:
    def value(number: float) -> float | None:
        return None if not math.isfinite(number) else number * scale

    return {"mean": value(distribution.mean), "p50": value(distribution.p50), "p90": value(distribution.p90),
            "p99": value(distribution.p99)}


def _finite(number: float) -> float | None:
    return float(number) if number is not None and math.isfinite(number) else None


def served_to_dict(served, model, accelerator, capacity=None, target_rate=None, costs=None,
                   warnings=()) -> dict[str, Any]:
    """The run as JSON-ready values (a figure that cannot be measured is null); ``costs``
    (achieved, at capacity or None), what it costs."""
    s, spec, setup, metrics = served.scenario, served.spec, served.setup, served.metrics
    rate: Any = served.rate_rps
    rate = "inf" if isinstance(rate, float) and math.isinf(rate) else _finite(rate)
    result: dict[str, Any] = {
        "model": model.id,
        "accelerator": accelerator.id,
        "scenario": scenario_dict(s),
        "batching": "served: requests arrive over time and are scheduled iteration by iteration by the policy",
        "requests": metrics.requests,
        "rate": rate,
        "arrival": spec.arrival,
        "finished": metrics.finished,
        "rejected": metrics.rejected,
        "steady_state": steady_state_dict(served),
        "throughput_output_tok_s": _finite(metrics.output_tokens_per_s),
        "throughput_total_tok_s": _finite(metrics.total_tokens_per_s),
        "request_rate_rps": _finite(metrics.request_rate_per_s),
        "ttft_ms": _distribution(metrics.ttft_s, 1e3),
        "itl_ms": _distribution(metrics.itl_s, 1e3),
        "tpot_ms": _distribution(metrics.tpot_s, 1e3),
        "e2e_latency_s": _distribution(metrics.e2e_s, 1.0),
        "goodput_rps": _finite(metrics.goodput_per_s),
        "slo_attainment": _finite(metrics.slo_attainment),
        "slo": {"ttft_p99_ms": spec.slo_ttft_ms, "tpot_p99_ms": spec.slo_tpot_ms},
        "largest_iteration_batch_one_replica": metrics.batch_max,
        "mean_running_all_replicas": _finite(metrics.running_mean),
        "mean_waiting_all_replicas": _finite(metrics.queue_mean),
        "preemptions": metrics.preemptions,
        "kv_blocks_total": setup.kv_blocks_total,
        "kv_blocks_max": metrics.kv_blocks_max,
        "unstable": metrics.unstable,
        "capped": metrics.capped,
        "power_w": _finite(metrics.average_power_w),
        "energy_j": _finite(metrics.energy_j),
        "tokens_per_joule": _finite(metrics.tokens_per_joule),
        "output_tokens_per_joule": _finite(metrics.output_tokens_per_joule),
        "devices": served.devices,
        "warnings": list(warnings),
        "assumptions": assumptions(setup, spec),
    }
    if costs is not None:
        from .serialize import cost_to_dict

        achieved, at_capacity = costs
        result["cost"] = cost_to_dict(achieved)
        if at_capacity is not None:
            result["cost_at_capacity"] = cost_to_dict(at_capacity)
    if capacity is not None:
        from accelscope.engine.studies.serving.study import devices_for_rate

        result["capacity_rps"] = capacity.rate_per_s if capacity.determined else None
        result["capacity"] = {
            "status": capacity.status,
            "meets_slo_rps": capacity.rate_per_s,
            "misses_slo_rps": _finite(capacity.failing_rate_per_s),
            "reason": capacity.reason,
            "runs": capacity.runs,
        }
        if target_rate is not None:
            result["target_rate_rps"] = target_rate
            result["devices_for_target"] = (devices_for_rate(capacity.rate_per_s, target_rate, served.devices)
                                            if capacity.determined else None)
    return result


def scenario_dict(s) -> dict[str, Any]:
    """The scenario's fields but the batch, which the served run sets request by request."""
    return scenario_document(s, leave_out=("model", "accelerator", "batch"))


def steady_state_dict(served) -> dict[str, Any]:
    """How the figures were measured: the window, its requests, and why not steady if not."""
    m, plan = served.metrics, served.plan
    return {
        "steady": m.steady,
        "note": m.steady_note,
        "window_start_s": _finite(m.window_start_s),
        "window_end_s": _finite(m.window_end_s),
        "window_s": _finite(m.window_s),
        "measured_requests": m.measured_requests,
        "queue_growth": _finite(m.queue_growth),
        "offered_load": _finite(m.offered_load),
        "sized_by_time": plan is not None,
        "e2e_estimate_s": plan.e2e_s if plan is not None else None,
        "simulated_replicas": plan.simulated_replicas if plan is not None else served.setup.replicas,
    }


def assumptions(setup, spec) -> dict[str, Any]:
    return {
        "policy": setup.policy,
        "replicas": setup.replicas,
        "devices_per_replica": setup.devices_per_replica,
        "router": spec.router,
        "max_num_seqs": setup.max_num_seqs,
        "max_batched_tokens": setup.max_batched_tokens,
        "block_size": setup.block_size,
        "memory_fraction": setup.memory_fraction,
        "memory_fraction_of": "total device memory" if setup.memory_of_total else "memory free after the weights",
        "kv_cache_gb_per_device": setup.kv_cache_bytes / 1e9,
        "kv_bytes_per_token_per_device": setup.kv_bytes_per_token,
        "kv_blocks_per_replica": setup.kv_blocks_total,
        "kv_cache_tokens_per_replica": setup.kv_tokens,
        "policy_defaults_used": list(setup.defaults),
        "prefix_tokens": setup.prefix_tokens,
        "max_model_len": setup.max_model_len,
        "static_batch": setup.static_batch if setup.policy == "static" else None,
        "lengths": f"{spec.input_distribution} prompts, {spec.output_distribution} replies, cv {spec.length_cv:g}, "
                   "about the scenario's input and output lengths, capped by the model's context",
        "seed": spec.seed,
        "iteration_time": "the engine's static physics for the batch each iteration schedules",
    }


def served_to_text(served, model, accelerator, capacity=None, target_rate=None, costs=None, warnings=()) -> str:
    s, spec, setup, m = served.scenario, served.spec, served.setup, served.metrics
    rate = served.rate_rps
    traffic = ("all at t = 0" if math.isinf(rate) else f"{spec.concurrency} users in a closed loop" if
               spec.arrival == "closed" else "a trace" if math.isnan(rate) else f"{rate:g} requests/s ({spec.arrival})")

    def ms(distribution, scale: float = 1e3, unit: str = "ms") -> str:
        if distribution.count == 0:
            return "none"
        return (f"mean {distribution.mean * scale:.4g}, p50 {distribution.p50 * scale:.4g}, "
                f"p90 {distribution.p90 * scale:.4g}, p99 {distribution.p99 * scale:.4g} {unit}")

    def number(value: float, form: str, unit: str = "") -> str:
        return f"{value:{form}}{unit}" if math.isfinite(value) else "not measured"

    lines = [f"warning: {text}" for text in warnings] + [
        f"{model.name} served on {served.devices} x {accelerator.name} ({setup.replicas} replica"
        f"{'s' if setup.replicas != 1 else ''} of TP {s.tp} x PP {s.pp})",
        f"  {m.requests:,} requests, {traffic}; prompts ~{s.input_len:,} and replies ~{s.output_len:,} tokens",
        f"  policy {setup.policy}: up to {setup.max_num_seqs:,} sequences and {setup.max_batched_tokens:,} tokens per "
        f"iteration; KV cache {setup.kv_cache_bytes / 1e9:.1f} GB per device = {setup.kv_tokens:,} tokens per replica "
        f"({setup.kv_blocks_total:,} blocks of {setup.block_size})",
        "  " + measured_text(served),
        f"  TTFT {ms(m.ttft_s)}",
        f"  TPOT {ms(m.tpot_s)}",
        f"  ITL  {ms(m.itl_s)}",
        f"  end-to-end {ms(m.e2e_s, 1.0, 's')}",
        f"  throughput {number(m.output_tokens_per_s, ',.0f')} output tok/s, "
        f"{number(m.total_tokens_per_s, ',.0f')} input+output tok/s, {number(m.request_rate_per_s, '.3g')} requests/s",
        f"  SLO (p99 TTFT {_limit(spec.slo_ttft_ms)}, p99 TPOT {_limit(spec.slo_tpot_ms)}): "
        f"{number(100 * m.slo_attainment, '.1f', '%')} of requests within both, "
        f"goodput {number(m.goodput_per_s, '.3g')} requests/s",
        f"  running, all replicas: mean {number(m.running_mean, '.1f')}; largest iteration of one replica "
        f"{m.batch_max:,} sequences; waiting, all replicas: mean {number(m.queue_mean, '.1f')}; "
        f"preemptions {m.preemptions:,}; KV blocks at most {m.kv_blocks_max:,} of {setup.kv_blocks_total:,} per replica",
        f"  power {number(m.average_power_w, ',.0f')} W (all devices), "
        f"{number(m.tokens_per_joule, '.3f')} tokens/J (input+output)",
    ]
    if m.rejected:
        lines.append(f"  {m.rejected:,} requests rejected (longer than the model's context or than the whole KV cache)")
    if m.unstable:
        load = f" (offered load {m.offered_load:.2f} of what it serves saturated)" if math.isfinite(m.offered_load) else ""
        lines.append(f"  UNSTABLE: the waiting queue grew by {m.queue_growth:.0%} of the arrivals{load}: "
                     "more arrive than this deployment serves")
    if m.capped:
        lines.append("  stopped at the simulator's safety bound before every request finished")
    if capacity is not None:
        lines.append("  " + capacity_text(capacity))
        if target_rate is not None:
            from accelscope.engine.studies.serving.study import devices_for_rate

            needed = devices_for_rate(capacity.rate_per_s, target_rate, served.devices) if capacity.determined else None
            lines.append(f"  {target_rate:g} requests/s need "
                         + (f"{needed:,} devices" if needed is not None else
                            "an unknown number of devices (the capacity is undetermined)" if not capacity.determined
                            else "more than any number of these"))
    if costs is not None:
        from .serialize import cost_to_text

        achieved, at_capacity = costs
        lines += cost_to_text(achieved, "cost at the achieved rate")
        if at_capacity is not None:
            lines += cost_to_text(at_capacity, "cost at capacity")
    return "\n".join(lines) + "\n"


def measured_text(served) -> str:
    """How the figures were measured, in one line."""
    m, plan = served.metrics, served.plan
    if not m.steady:
        return f"measured over the whole run: {m.steady_note}"
    load = f"; offered load {m.offered_load:.2f} of the saturated rate" if math.isfinite(m.offered_load) else ""
    sized = (f" (run sized by time: {plan.simulated_replicas} of {plan.replicas} round-robin replicas simulated)"
             if plan is not None and plan.sampled and plan.simulated_replicas < plan.replicas else "")
    return (f"steady state: measured on {m.window_s:,.4g} s from {m.window_start_s:,.4g} s, "
            f"{m.measured_requests:,} requests{sized}{load}")


def capacity_text(capacity) -> str:
    from accelscope.engine.studies.serving.capacity import FOUND, NONE

    if capacity.status == FOUND:
        return (f"capacity at the SLO: {capacity.rate_per_s:.3g}-{capacity.failing_rate_per_s:.3g} requests/s "
                f"({capacity.rate_per_s:.3g} meets it, {capacity.failing_rate_per_s:.3g} does not)")
    if capacity.status == NONE:
        return f"capacity at the SLO: 0 requests/s: {capacity.reason}"
    known = f"; at least {capacity.rate_per_s:.3g} requests/s meet it" if capacity.rate_per_s > 0.0 else ""
    return f"capacity at the SLO: undetermined: {capacity.reason}{known}"


def _limit(milliseconds: float | None) -> str:
    return "none" if milliseconds is None else f"{milliseconds:g} ms"


def run_serve(args: argparse.Namespace, out: TextIO) -> int:
    if args.jsonl is not None:
        return _serve_jsonl(args, out)
    if not args.model or not args.accelerator:
        raise UsageError("accelscope serve: --model and --accelerator are required (or --jsonl FILE)")
    values = {key: value for key, value in vars(args).items() if key in spec_keys() | scenario_keys()}
    try:
        result = serve_one(values)
    except (ValueError, OSError) as error:
        raise UsageError(f"accelscope serve: {error}") from None
    if args.json:
        json.dump(result["dict"], out, indent=2, allow_nan=False)
        out.write("\n")
    else:
        out.write(result["text"])
    return 0


def check_combinations(values: dict[str, Any]) -> None:
    """Refuse options that would be ignored, naming them (ValueError)."""
    capacity = values.get("capacity")
    if capacity is not None and not isinstance(capacity, bool):
        raise ValueError(f"capacity must be true or false, got {capacity!r}"[:120])
    if values.get("target_rate") is not None and not capacity:
        raise ValueError("--target-rate needs --capacity: the devices a rate needs come from the capacity")
    custom = [flag for flag, key in (("--link-gbps", "link_gbps"), ("--link-latency-us", "link_latency_us"))
              if values.get(key) is not None]
    if custom and values.get("link") != "custom":
        raise ValueError(f"{' and '.join(custom)} set a custom link: add --link custom")
    if values.get("trace") is not None:
        given = [flag for flag, key in (("--rate", "rate"), ("--requests", "requests"), ("--arrival", "arrival"),
                                        ("--concurrency", "concurrency"), ("--burstiness", "burstiness"))
                 if values.get(key) is not None]
        if given:
            raise ValueError(f"a trace gives the arrivals and lengths: {', '.join(given)} cannot be used with --trace")
        if values.get("disaggregate") is not None or capacity:
            raise ValueError("a trace fixes the arrivals: it cannot be used with --capacity or --disaggregate")


def serve_one(values: dict[str, Any]) -> dict[str, Any]:
    """One serve request from option values (CLI or JSONL); raises ValueError with the reason."""
    from accelscope.engine.catalog.traces import load_trace
    from accelscope.engine.core.cost import Pricing
    from accelscope.engine.core.errors import AccelscopeError
    from accelscope.engine.core.scenario import Scenario
    from accelscope.engine.core.serving import check_simulated_size
    from accelscope.engine.physics.engine import Engine
    from accelscope.engine.studies.cost import capacity_cost, served_cost
    from accelscope.engine.studies.serving.study import capacity_at_slo, simulate_served
    from accelscope.engine.studies.serving.workload import trace_workload

    check_combinations(values)
    try:
        spec = spec_from_values(values)
        engine = Engine()
        engine, scenario = engine.for_scenario(Scenario(**scenario_values(values, native_weight_format(engine))))
        model = engine.model(scenario.model)
        if scenario.input_len + scenario.output_len > model.max_context:
            raise ValueError(f"prompts of {scenario.input_len:,} tokens and replies of {scenario.output_len:,} exceed "
                             f"{model.name}'s context of {model.max_context:,} tokens")
        if spec.prefix_tokens and spec.prefix_tokens >= scenario.input_len:
            raise ValueError(f"--prefix-tokens {spec.prefix_tokens:,} is not shorter than the prompts (about "
                             f"{scenario.input_len:,} tokens): no request would share it")
        check_simulated_size(spec.prefill_replicas + spec.decode_replicas if spec.disaggregated else scenario.dp,
                             spec)
        # The static engine's warnings for the scenario (a TP that does not divide the heads, ...).
        warnings = tuple(engine.predict(scenario.with_changes(batch=1)).warnings)
        pricing = Pricing(engine.catalog.prices, cost_settings(values, scenario.accelerator))
        trace = None
        if values.get("trace") is not None:
            loaded = load_trace(values["trace"])
            trace = trace_workload(loaded.arrival_s, loaded.input_tokens, loaded.output_tokens)
        capacity = capacity_at_slo(engine, scenario, spec) if values.get("capacity") else None
        if spec.disaggregated:
            return _disaggregated(engine, scenario, spec, pricing, capacity, values.get("target_rate"), warnings)
        served = simulate_served(engine, scenario, spec, trace=trace)
    except AccelscopeError as error:
        raise ValueError(str(error)) from None
    accelerator = engine.catalog.accelerator(scenario.accelerator)
    target = values.get("target_rate")
    costs = (served_cost(accelerator.id, served.devices, served.metrics, pricing, engine.catalog),
             None if capacity is None else capacity_cost(accelerator.id, served.devices, capacity, pricing,
                                                         engine.catalog))
    return {"dict": served_to_dict(served, model, accelerator, capacity, target, costs, warnings),
            "text": served_to_text(served, model, accelerator, capacity, target, costs, warnings)}


def _disaggregated(engine, scenario, spec, pricing, capacity, target, warnings) -> dict[str, Any]:
    from accelscope.engine.studies.cost import capacity_cost, served_cost
    from accelscope.engine.studies.serving.study import simulated_disaggregated_run

    served = simulated_disaggregated_run(engine, scenario, spec)
    prefill_setup, decode_setup, link = served.prefill_setup, served.setup, served.link
    model = engine.model(scenario.model)
    accelerator = engine.catalog.accelerator(scenario.accelerator)
    # Both pools run on the scenario's accelerator: the deployment's devices, at the rate achieved.
    costs = (served_cost(accelerator.id, served.devices, served.metrics, pricing, engine.catalog),
             None if capacity is None else capacity_cost(accelerator.id, served.devices, capacity, pricing,
                                                         engine.catalog))
    data = served_to_dict(served, model, accelerator, capacity, target, costs, warnings)
    data["disaggregated"] = {
        "prefill_replicas": prefill_setup.replicas,
        "decode_replicas": decode_setup.replicas,
        "link": spec.link,
        "link_bandwidth_gbps_per_replica": link.bandwidth_bytes_per_s / 1e9,
        "link_latency_us": link.latency_s * 1e6,
        "kv_bytes_per_token_per_replica": link.kv_bytes_per_token,
        "prefill_assumptions": assumptions(prefill_setup, spec),
    }
    text = served_to_text(served, model, accelerator, capacity, target, costs, warnings)
    text += (f"  disaggregated: {prefill_setup.replicas} prefill : {decode_setup.replicas} decode replicas, the KV "
             f"cache over the {spec.link} link ({link.bandwidth_bytes_per_s / 1e9:.3g} GB/s per replica, "
             f"{link.latency_s * 1e6:.3g} us)\n")
    return {"dict": data, "text": text}


def _serve_jsonl(args: argparse.Namespace, out: TextIO) -> int:
    """One result object per line, in order; a bad line is answered by an error object in its
    place (and on stderr, the first few of them), and the exit status is then 2."""
    bad = BadLines("serve")
    lines = 0
    allowed = spec_keys() | scenario_keys()
    for number, line in enumerate(read_lines(args.jsonl, "serve"), start=1):
        if not line.strip():
            continue
        lines += 1
        try:
            values = json_line(line)
            if not isinstance(values, dict):
                raise ValueError("each line must be a JSON object")
            unknown = sorted(set(values) - allowed)
            if unknown:
                raise ValueError(f"unknown key {unknown[0]!r}; known: {', '.join(sorted(allowed))}")
            out.write(json.dumps(serve_one(values)["dict"], allow_nan=False) + "\n")
        except (ValueError, TypeError, OverflowError, OSError) as error:
            text = f"line {number}: {error}"
            bad.say(text)
            out.write(json.dumps({"line": number, "error": text}) + "\n")
    bad.close(lines)
    return USAGE_ERROR if bad.count else 0
