"""reins's Monte Carlo algorithms with NumPy: reins_algorithms.py vectorized across trials.

The same per-trial algorithms (an outcome-table draw per in-place step with its calls in closed
form, an alias draw per restart pass, the cascade by holding times, ziggurat normals, percentiles
by selection, the window as a count and an index, one common timeout sample), but each loop over
trials becomes array operations: where reins stops drawing at a give-up, this draws every step and
masks the rest. NumPy's Generator draws the uniforms (PCG64) and the normals (its own ziggurat).

Only run when NumPy is installed; the bench reports it beside the standard-library port, never in
place of it. Outputs and JSON shape are those of reins_algorithms.py; import of NumPy is excluded
from the timing, like interpreter start-up (it is printed as "importSeconds").
"""
import json
import math
import sys
import time

started_import = time.perf_counter()
import numpy as np  # noqa: E402

IMPORT_SECONDS = time.perf_counter() - started_import

from reins_algorithms import RETRY, Z95, alias_table, binomial_weights, proportion_estimate, retry_exact  # noqa: E402


def mean_estimate(sample):
    """MeanAccumulator over an array: sums relative to the first value."""
    n = sample.size
    d = sample - sample[0]
    total = float(d.sum())
    squares = float(np.dot(d, d))
    mean = float(sample[0]) + total / n
    variance = max(0.0, (squares - total * total / n) / (n - 1)) if n > 1 else 0.0
    half = Z95 * math.sqrt(variance / n)
    return {"value": mean, "ci95": [mean - half, mean + half]}


def quantile_estimates(sample, qs):
    """Nearest-rank quantiles with order-statistic intervals, by np.partition (introselect)."""
    n = sample.size

    def clamp(rank):
        return min(n - 1, max(0, rank))

    wanted = []
    for q in qs:
        spread = Z95 * math.sqrt(n * q * (1 - q))
        wanted.append((clamp(math.ceil(q * n) - 1), clamp(math.floor(n * q - spread) - 1), clamp(math.ceil(n * q + spread) - 1)))
    ranks = sorted({r for w in wanted for r in w})
    sample.partition(ranks)
    return [{"value": float(sample[v]), "ci95": [float(sample[lo]), float(sample[hi])]} for v, lo, hi in wanted]


def alias_arrays(weights):
    """An alias table as (acceptance probabilities, aliases) arrays for vectorized sampling."""
    threshold, alias = alias_table(list(weights))
    return np.minimum(np.array(threshold) / 4_294_967_296.0, 2.0), np.array(alias)


def alias_sample(rng, accept, alias, size, count):
    column = (rng.random(count) * size).astype(np.int64)
    return np.where(rng.random(count) < accept[column], column, alias[column])


def _retry_result(mode, params, trials, costs, gave_up):
    base = retry_exact(mode, **{**params, "p": 0.0})["meanCostUsd"]
    mean = mean_estimate(costs)
    rate = proportion_estimate(int(gave_up), trials)
    return {
        "meanCostUsd": mean["value"],
        "ci95": mean["ci95"],
        "multiplier": mean["value"] / base,
        "multiplierCi95": [mean["ci95"][0] / base, mean["ci95"][1] / base],
        "gaveUpRate": rate["value"],
        "gaveUpRateCi95": rate["ci95"],
        "trials": trials,
    }


def retry_inplace(rng, trials=200_000, **given):
    params = {**RETRY, **given}
    p, steps, system, output = params["p"], params["steps"], params["system"], params["output"]
    result, error, cap = params["result"], params["error"], params["retry_cap"]
    in_price = params["input_price"] / 1e6
    output_cost = output * params["output_price"] / 1e6
    cumulative = np.cumsum([p**k * (1 - p) for k in range(cap + 1)])
    k = np.searchsorted(cumulative, rng.random((trials, steps)), side="right")
    attempts = np.minimum(k + 1, cap + 1)
    gives_up = k > cap
    # A step runs if no earlier step gave up; the step that gives up runs (cap + 1 calls) and ends it.
    runs = np.ones((trials, steps), dtype=bool)
    runs[:, 1:] = ~np.logical_or.accumulate(gives_up, axis=1)[:, :-1]
    growth = np.where(runs, attempts * output + k * error + result, 0)
    transcript = system + np.cumsum(growth, axis=1) - growth
    per_call = output + error
    prefill = np.where(runs, attempts * transcript + per_call * attempts * (attempts - 1) / 2, 0).sum(axis=1)
    calls = np.where(runs, attempts, 0).sum(axis=1)
    costs = prefill * in_price + calls * output_cost
    return _retry_result("inplace", params, trials, costs, np.count_nonzero(gives_up & runs))


def retry_restart(rng, trials=100_000, **given):
    params = {**RETRY, **given}
    p, steps, system, output, result = params["p"], params["steps"], params["system"], params["output"], params["result"]
    in_price = params["input_price"] / 1e6
    output_cost = output * params["output_price"] / 1e6
    per_step = output + result
    accept, alias = alias_arrays([(1 - p) ** j * p if j < steps else (1 - p) ** steps for j in range(steps + 1)])
    prefill = np.zeros(trials)
    calls = np.zeros(trials)
    active = np.arange(trials)
    # One round is one more pass for every run still restarting.
    while active.size:
        survived = alias_sample(rng, accept, alias, steps + 1, active.size)
        calls_this_pass = np.where(survived >= steps, steps, survived + 1)
        calls[active] += calls_this_pass
        prefill[active] += calls_this_pass * system + per_step * calls_this_pass * (calls_this_pass - 1) / 2
        active = active[survived < steps]
    return _retry_result("restart", params, trials, prefill * in_price + calls * output_cost, 0)


def cascade(rng, trials=200_000, steps=8, p=0.1, pc=0.45):
    accept, alias = alias_arrays([(1 - p) ** t * p if t < steps else (1 - p) ** steps for t in range(steps + 1)])
    t = alias_sample(rng, accept, alias, steps + 1, trials)
    # The tails' tables side by side, row m for m later steps (columns past m are never drawn).
    tail_accept = np.ones((steps, steps))
    tail_alias = np.zeros((steps, steps), dtype=np.int64)
    for m in range(steps):
        a, b = alias_arrays(binomial_weights(m, pc))
        tail_accept[m, : m + 1] = a
        tail_alias[m, : m + 1] = b
    contaminated = t < steps
    later = np.where(contaminated, steps - t - 1, 0)
    column = (rng.random(trials) * (later + 1)).astype(np.int64)
    tail = np.where(rng.random(trials) < tail_accept[later, column], column, tail_alias[later, column])
    faults = np.where(contaminated, 1 + tail, 0).astype(np.float64)
    independent_accept, independent_alias = alias_arrays(binomial_weights(steps, p))
    independent = alias_sample(rng, independent_accept, independent_alias, steps + 1, trials).astype(np.float64)
    f = mean_estimate(faults)
    rate = proportion_estimate(int(np.count_nonzero(contaminated)), trials)
    i = mean_estimate(independent)
    return {
        "faultsPerRun": f["value"],
        "faultsPerRunCi95": f["ci95"],
        "contaminatedRate": rate["value"],
        "contaminatedRateCi95": rate["ci95"],
        "independentFaultsPerRun": i["value"],
        "independentFaultsPerRunCi95": i["ci95"],
        "amplification": f["value"] / i["value"],
        "trials": trials,
    }


def _summarize(sample):
    mean = mean_estimate(sample)
    p50, p95, p99 = quantile_estimates(sample, [0.5, 0.95, 0.99])
    return {"mean": mean, "p50": p50, "p95": p95, "p99": p99}


def latency(rng, trials=200_000, steps=8, mu=6.0, sigma=0.6):
    runs = np.exp(mu + sigma * rng.standard_normal((trials, steps))).sum(axis=1)
    single = np.exp(mu + sigma * rng.standard_normal(trials))
    step = _summarize(single)
    run = _summarize(runs)
    top = quantile_estimates(runs, [0.999])[0]["value"]
    bin_count = 60
    width_ms = top / bin_count or 1
    bins = np.floor(runs / width_ms).astype(np.int64)
    counts = np.bincount(bins[bins < bin_count], minlength=bin_count)
    return {
        "step": step,
        "run": run,
        "histogram": {"startMs": 0, "widthMs": width_ms, "counts": counts.tolist(), "overflow": int(np.count_nonzero(bins >= bin_count))},
        "trials": trials,
    }


def compaction(rng, trials=200_000, turns=120, budget=30, retain=0.3, key_turn=3, policy="recency"):
    """The turn loop over arrays of every trial's window count, fact index and summary state."""
    held = np.zeros(trials, dtype=np.int64)
    key_index = np.full(trials, -1, dtype=np.int64)
    # 0: not summarized yet, 1: summary kept it, −1: summary dropped it.
    summarized = np.zeros(trials, dtype=np.int8)
    for t in range(turns):
        if t == key_turn:
            key_index[:] = held
        held += 1
        over = held > budget
        if not over.any():
            continue
        leaving = np.where(over, held - budget, 0)
        leaves_now = over & (key_index >= 0) & (key_index < leaving)
        if leaves_now.any():
            if policy == "salience":
                summarized[leaves_now] = 1
            else:
                undecided = leaves_now & (summarized == 0)
                count = int(np.count_nonzero(undecided))
                summarized[undecided] = np.where(rng.random(count) < retain, 1, -1)
        key_index = np.where(leaves_now, -1, np.where(over & (key_index >= 0), key_index - leaving, key_index))
        held = np.where(over, budget, held)
    survived = int(np.count_nonzero((key_index >= 0) | (summarized == 1)))
    estimate = proportion_estimate(survived, trials)
    return {"survival": estimate["value"], "ci95": estimate["ci95"], "trials": trials}


def timeout(rng, trials=20_000, timeouts=(5, 10, 15, 20, 30, 45, 60), idle_rate=0.002, call_cost=0.1, retry_mult=1.2):
    durations_table = ((0.85, 1, 6), (0.1, 6, 30), (0.05, 120, 300))
    cumulative = np.cumsum([w for w, _l, _h in durations_table])
    lows = np.array([low for _w, low, _h in durations_table], dtype=np.float64)
    spans = np.array([high - low for _w, low, high in durations_table], dtype=np.float64)
    bucket = np.searchsorted(cumulative[:-1], rng.random(trials), side="right")
    durations = lows[bucket] + spans[bucket] * rng.random(trials)
    retry_cost = call_cost * retry_mult
    n = trials
    curve = []
    for timeout_seconds in timeouts:
        finished = durations[durations <= timeout_seconds]
        finished_sum = float(finished.sum())
        finished_squares = float(np.dot(finished, finished))
        cut_off = n - finished.size
        cut_off_cost = idle_rate * timeout_seconds + retry_cost
        total = idle_rate * finished_sum + cut_off * cut_off_cost
        squares = idle_rate * idle_rate * finished_squares + cut_off * cut_off_cost * cut_off_cost
        mean = total / n
        variance = max(0.0, (squares - total * mean) / (n - 1)) if n > 1 else 0.0
        half = Z95 * math.sqrt(variance / n)
        curve.append({"timeoutSeconds": timeout_seconds, "monteCarloCostUsd": mean, "ci95": [mean - half, mean + half]})
    return {"curve": curve, "trials": trials}


MODELS = {
    "retry-inplace": retry_inplace,
    "retry-restart": retry_restart,
    "cascade": cascade,
    "latency": latency,
    "compaction": compaction,
    "timeout": timeout,
}


def main():
    """reins_algorithms_numpy.py [model ...]: seed 3 (independent of the other two Python runs)."""
    names = sys.argv[1:] or list(MODELS)
    out = {"importSeconds": IMPORT_SECONDS}
    for name in names:
        rng = np.random.default_rng(3)
        started, started_cpu = time.perf_counter(), time.process_time()
        value = MODELS[name](rng)
        out[name] = {"seconds": time.perf_counter() - started, "cpuSeconds": time.process_time() - started_cpu, "value": value}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
