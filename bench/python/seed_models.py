"""The seed posts' Monte Carlo models as a reader would run them: plain Python, random module.

Written for reins' benchmark from each post's description (not copied). Each function runs the
post's trial count; main() times each with time.perf_counter and time.process_time (interpreter
start-up excluded) and prints one JSON object: {name: {"seconds": s, "cpuSeconds": s, "value": ...}}.
"""
import json
import math
import random
import statistics
import sys
import time


def retry_inplace(trials=200_000, p=0.2, n=8, sys_tokens=1500, out=300, result=500, error=200, cap=4):
    in_price, out_price = 3.0 / 1e6, 15.0 / 1e6
    costs, gave_up = [], 0
    for _ in range(trials):
        transcript, cost, failed = sys_tokens, 0.0, False
        for _step in range(n):
            for attempt in range(cap + 1):
                cost += transcript * in_price + out * out_price
                transcript += out
                if random.random() >= p:
                    transcript += result
                    break
                transcript += error
                if attempt == cap:
                    failed = True
            if failed:
                gave_up += 1
                break
        costs.append(cost)
    return statistics.mean(costs), gave_up / trials


def retry_restart(trials=100_000, p=0.2, n=8, sys_tokens=1500, out=300, result=500):
    in_price, out_price = 3.0 / 1e6, 15.0 / 1e6
    costs = []
    for _ in range(trials):
        cost = 0.0
        while True:
            transcript, clean = sys_tokens, True
            for _step in range(n):
                cost += transcript * in_price + out * out_price
                transcript += out
                if random.random() >= p:
                    transcript += result
                else:
                    clean = False
                    break
            if clean:
                break
        costs.append(cost)
    return statistics.mean(costs)


def cascade(trials=200_000, n=8, p=0.1, p_c=0.45):
    total_faults, contaminated_runs = 0, 0
    for _ in range(trials):
        contaminated, faults = False, 0
        for _step in range(n):
            if random.random() < (p_c if contaminated else p):
                faults += 1
                contaminated = True
        total_faults += faults
        contaminated_runs += 1 if contaminated else 0
    independent = sum(sum(random.random() < p for _ in range(n)) for _ in range(trials))
    return total_faults / trials, contaminated_runs / trials, independent / trials


def latency(trials=200_000, n=8, mu=6.0, sigma=0.6):
    def pct(xs, q):
        return sorted(xs)[int(q * len(xs)) - 1]

    runs = [sum(random.lognormvariate(mu, sigma) for _ in range(n)) for _ in range(trials)]
    steps = [random.lognormvariate(mu, sigma) for _ in range(trials)]
    return {
        "step": [statistics.mean(steps), pct(steps, 0.5), pct(steps, 0.95), pct(steps, 0.99)],
        "run": [statistics.mean(runs), pct(runs, 0.5), pct(runs, 0.95), pct(runs, 0.99)],
    }


def compaction(trials=200_000, turns=120, budget=30, retain=0.3, key_turn=3, policy="recency"):
    survived = 0
    for _ in range(trials):
        kept, key_state = [], None
        for t in range(turns):
            kept.append(t == key_turn)
            if len(kept) > budget:
                old, kept = kept[:-budget], kept[-budget:]
                for is_key in old:
                    if not is_key:
                        continue
                    if policy == "salience":
                        key_state = True
                    elif key_state is None:
                        key_state = random.random() < retain
        survived += any(kept) or key_state is True
    return survived / trials


def timeout_curve(trials=20_000, timeouts=(5, 10, 15, 20, 30, 45, 60), idle=0.002, call=0.10, mult=1.2):
    def sample(rng):
        r = rng.random()
        if r < 0.85:
            return rng.uniform(1, 6)
        if r < 0.95:
            return rng.uniform(6, 30)
        return rng.uniform(120, 300)

    curve = []
    for t in timeouts:
        rng = random.Random(7)
        total = 0.0
        for _ in range(trials):
            d = sample(rng)
            total += idle * d if d <= t else idle * t + call * mult
        curve.append(total / trials)
    return curve


MODELS = {
    "retry-inplace": retry_inplace,
    "retry-restart": retry_restart,
    "cascade": cascade,
    "latency": latency,
    "compaction": compaction,
    "timeout": timeout_curve,
}


def main():
    names = sys.argv[1:] or list(MODELS)
    random.seed(1)
    out = {}
    for name in names:
        started, started_cpu = time.perf_counter(), time.process_time()
        value = MODELS[name]()
        out[name] = {"seconds": time.perf_counter() - started, "cpuSeconds": time.process_time() - started_cpu, "value": value}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
