"""Notebook-style comparison of accelerators with the Python module (docs/python.md).

The default scenario (a Llama training step on 1,024 GPUs) on each accelerator preset of one
generation pair, then a sweep of its pipeline split, with a plot when matplotlib is there:

    PYTHONPATH=build/release python3 examples/python/compare_accelerators.py [OUT.png]

Prints one line per accelerator: step time, tokens/s, MFU and energy per token, exactly the
numbers `clustersim run scenarios/default.yaml --set cluster.node.accelerator=NAME` gives.
"""

import concurrent.futures
import pathlib
import sys

import clustersim

ROOT = pathlib.Path(__file__).resolve().parents[2]
ACCELERATORS = ["h100-sxm", "h200-sxm"]  # both Hopper: the default scenario's dgx-h100 system


def main(png=None):
    base = clustersim.load(ROOT / "scenarios" / "default.yaml")
    scenarios = {name: base.copy().set("cluster.node.accelerator", name) for name in ACCELERATORS}
    # Each run releases the GIL: a thread pool runs them side by side.
    with concurrent.futures.ThreadPoolExecutor() as pool:
        results = dict(zip(scenarios, pool.map(clustersim.run, scenarios.values())))
    print(f"{'accelerator':<12} {'step (s)':>9} {'tokens/s':>12} {'MFU':>6} {'J/token':>8}")
    for name, result in results.items():
        t = result.training
        print(f"{name:<12} {t.step_time_s:>9.3f} {t.tokens_per_s:>12,.0f} {t.mfu:>6.1%} "
              f"{result.power.energy_per_token_j:>8.3f}")

    # The pipeline split on each: a sweep, one row per point (a list of dicts).
    sweep = {
        name: clustersim.sweep(scenario, zip=[{"workload.parallelism.pp": [4, 8, 16],
                                               "workload.parallelism.dp": [32, 16, 8]}])
        for name, scenario in scenarios.items()
    }
    for name, report in sweep.items():
        for row in report:
            status = f"{row['step_time_s']:.3f} s" if row["status"] == "ok" else row["reason"].splitlines()[0]
            print(f"{name:<12} pp {row['workload.parallelism.pp']:>2}: {status}")

    if png:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not installed (Debian: python3-matplotlib): no plot written")
            return
        fig, ax = plt.subplots(figsize=(6, 4))
        for name, report in sweep.items():
            ok = [row for row in report if row["status"] == "ok"]
            ax.plot([row["workload.parallelism.pp"] for row in ok], [row["step_time_s"] for row in ok],
                    marker="o", label=name)
        ax.set_xlabel("pipeline-parallel degree (tp 8, dp = 1,024 / 8 / pp)")
        ax.set_ylabel("step time (s)")
        ax.set_title(base.name)
        ax.legend()
        fig.tight_layout()
        fig.savefig(png)
        print(f"wrote {png}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
