"""Tests of the Python module (python/clustersim_module.cpp), run by ctest as
`python3 -m unittest discover -s tests/python` with PYTHONPATH at the build folder.

Each answer is checked against the CLI built from the same libraries (`clustersim run
--format json` and friends), so the module can only pass by giving the CLI's numbers."""

import concurrent.futures
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

import clustersim

SOURCE = pathlib.Path(os.environ.get("CLUSTERSIM_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
CLI = pathlib.Path(clustersim.__file__).resolve().parent / "clustersim"
TINY = SOURCE / "tests" / "data" / "sweep" / "tiny_base.yaml"
TINY_SWEEP = SOURCE / "tests" / "data" / "sweep" / "tiny_sweep.yaml"
TINY_SEARCH = SOURCE / "tests" / "data" / "search" / "tiny.yaml"
OWN_TRAINING = SOURCE / "tests" / "data" / "validate" / "own_training.csv"

# A small serving scenario as text (the capacity tests of tests/sim/sweep use the same one).
SERVING = """schema_version: 1
name: capacity
include: [systems/dgx-h100.yaml]
cluster:
  nodes: 1
  network: {topology: fat-tree, tiers: 2, radix: 64}
workload:
  kind: serving
  model: llama-3-8b
  pools:
    main: {replicas: 4, tp: 1}
  requests:
    count: 300
    arrival: {process: poisson, rate: 10}
    input: {distribution: fixed, value: 1000}
    output: {distribution: fixed, value: 200}
  slo: {ttft: 300 ms, tpot: 30 ms}
"""


def cli_json(*args):
    """The CLI's JSON output for `args`."""
    done = subprocess.run([str(CLI), *map(str, args), "--format", "json"], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


class LoadAndRun(unittest.TestCase):
    def test_run_gives_the_cli_document(self):
        result = clustersim.run(clustersim.load(str(TINY)))
        expected = cli_json("run", TINY)
        self.assertEqual(result.to_dict(), expected)
        self.assertEqual(result.training.step_time_s, expected["training"]["step_time_s"])
        self.assertGreater(result.training.step_time_s, 0)
        self.assertEqual(result["fingerprint"], expected["fingerprint"])
        self.assertIn("compute_s", result.breakdown.keys())
        self.assertEqual(result.memory.capacity_bytes, expected["memory"]["capacity_bytes"])
        self.assertEqual(json.loads(result.to_json()), expected)

    def test_a_path_object_and_a_path_string_are_the_same_scenario(self):
        self.assertEqual(clustersim.run(TINY).fingerprint, clustersim.run(str(TINY)).fingerprint)

    def test_overrides_and_set_match_the_cli_set(self):
        expected = cli_json("run", TINY, "--set", "workload.parallelism.tp=2", "--set", "workload.parallelism.dp=2")
        by_dict = clustersim.load(str(TINY), overrides={"workload.parallelism.tp": 2, "workload.parallelism.dp": 2})
        by_list = clustersim.load(TINY, overrides=["workload.parallelism.tp=2", "workload.parallelism.dp=2"])
        by_update = clustersim.load(TINY).update({"workload.parallelism.tp": 2, "workload.parallelism.dp": 2})
        by_set = clustersim.load(TINY).set("workload.parallelism", {"tp": 2, "pp": 1, "dp": 2})
        for scenario in (by_dict, by_list, by_update, by_set):
            self.assertEqual(clustersim.run(scenario).training.step_time_s, expected["training"]["step_time_s"])
        self.assertEqual(clustersim.run(by_update).to_dict(), expected)
        self.assertEqual(by_update.get("workload.parallelism.tp"), "2")
        self.assertEqual(by_update.overrides, ["workload.parallelism.tp=2", "workload.parallelism.dp=2"])
        # One at a time, the first leaves tp x dp past the cluster: refused, the scenario unchanged.
        with self.assertRaises(clustersim.ScenarioError) as raised:
            by_list.copy().set("workload.parallelism.dp", 4)
        self.assertIn("4 accelerators", str(raised.exception))

    def test_values_of_every_python_type_become_yaml(self):
        scenario = clustersim.load(TINY)
        scenario.set("workload.parallelism", {"tp": 2, "pp": 1, "dp": 2})
        self.assertEqual(scenario.get("workload.parallelism.tp"), "2")
        scenario.set("cluster.network.nic.bandwidth", "200 Gb/s")  # a str is written as on the command line
        self.assertIn("200", scenario.get("cluster.network.nic.bandwidth"))
        scenario.set("workload.overlap_grad_reduce", False)
        self.assertEqual(scenario.get("workload.overlap_grad_reduce"), "false")
        with self.assertRaises(TypeError):
            scenario.set("workload.global_batch", object())

    def test_copy_is_independent(self):
        scenario = clustersim.load(TINY)
        other = scenario.copy().set("workload.global_batch", 16)
        self.assertEqual(scenario.get("workload.global_batch"), "8")
        self.assertEqual(other.get("workload.global_batch"), "16")

    def test_yaml_text_loads_and_runs(self):
        text = TINY.read_text()
        result = clustersim.run(clustersim.load(text))
        self.assertEqual(result.fingerprint, cli_json("run", TINY)["fingerprint"])
        serving = clustersim.run(clustersim.load(SERVING))
        self.assertEqual(serving.serving.completed, 300)
        self.assertIn("ttft_s", serving.serving.keys())

    def test_a_missing_key_names_what_the_result_has(self):
        result = clustersim.run(TINY)
        with self.assertRaises(AttributeError) as raised:
            result.no_such_thing
        self.assertIn("training", str(raised.exception))
        with self.assertRaises(KeyError):
            result["no_such_thing"]


class Errors(unittest.TestCase):
    def test_a_bad_key_raises_scenario_error_with_its_position(self):
        text = TINY.read_text().replace("global_batch: 8", "global_bach: 8")
        with self.assertRaises(clustersim.ScenarioError) as raised:
            clustersim.load(text)
        error = raised.exception
        line = next(i for i, l in enumerate(text.splitlines(), 1) if "global_bach" in l)
        # Every problem, sorted by position; the error's own fields are the first one's.
        unknown = next(d for d in error.diagnostics if d["key"] == "workload.global_bach")
        self.assertEqual((unknown["file"], unknown["line"]), ("<text>", line))
        self.assertGreater(unknown["column"], 0)
        self.assertIn("global_batch", unknown["hint"])
        first = error.diagnostics[0]
        self.assertEqual((error.file, error.line, error.column, error.key, error.hint),
                         (first["file"], first["line"], first["column"], first["key"], first["hint"]))
        self.assertIn(f"<text>:{line}:", str(error))
        self.assertIsInstance(error, clustersim.ConfigError)
        self.assertIsInstance(error, clustersim.Error)

    def test_a_bad_set_raises_and_leaves_the_scenario_as_it_was(self):
        scenario = clustersim.load(TINY)
        with self.assertRaises(clustersim.ScenarioError) as raised:
            scenario.set("workload.parallelism.tpp", 2)
        self.assertEqual(raised.exception.key, "workload.parallelism.tpp")
        self.assertIn("tp", raised.exception.hint)
        with self.assertRaises(clustersim.ScenarioError):
            scenario.set("workload.parallelism.tp", "many")
        self.assertEqual(scenario.overrides, [])
        self.assertEqual(clustersim.run(scenario).fingerprint, clustersim.run(TINY).fingerprint)

    def test_a_missing_file_and_a_layout_that_cannot_run(self):
        with self.assertRaises(clustersim.ConfigError):
            clustersim.load(str(SOURCE / "no-such-scenario.yaml"))
        with self.assertRaises(clustersim.Error):  # tp 3 x dp 1 leaves an accelerator idle: refused
            clustersim.run(clustersim.load(TINY, {"workload.parallelism.tp": 3, "workload.parallelism.dp": 1}))
        with self.assertRaises(TypeError):
            clustersim.load(42)
        with self.assertRaises(clustersim.SimulationError) as raised:  # 70B on 4 A100s: does not fit
            clustersim.run(clustersim.load(TINY, {"workload.model": "llama-3-70b"}))
        self.assertIn("does not fit", str(raised.exception))

    def test_presets_and_describe(self):
        presets = clustersim.presets()
        self.assertIn("h100-sxm", presets["accelerators"])
        self.assertIn("fat-tree", presets["topologies"])
        self.assertEqual(clustersim.presets("models"), presets["models"])
        with self.assertRaises(ValueError):
            clustersim.presets("gpus")
        described = clustersim.describe("h100-sxm")
        self.assertIn("h100-sxm", described["title"])
        self.assertTrue(described["keys"])
        self.assertEqual(described["text"], subprocess.run([str(CLI), "describe", "h100-sxm"], capture_output=True,
                                                           text=True, check=True).stdout)
        with self.assertRaises(clustersim.ConfigError):
            clustersim.describe("h100-sxmm")


class Studies(unittest.TestCase):
    def test_sweep_of_the_files_block_matches_the_cli(self):
        report = clustersim.sweep(clustersim.load(TINY_SWEEP), jobs=2)
        with tempfile.TemporaryDirectory() as out:
            expected = cli_json("sweep", TINY_SWEEP, "--out", out, "-j", "2")
        self.assertEqual(report.to_dict(), expected)
        self.assertEqual(len(report), 6)
        self.assertEqual([row["status"] for row in report].count("failed"), 2)  # tp 3 x dp 1, twice

    def test_sweep_of_a_grid_runs_each_point_as_run_would(self):
        scenario = clustersim.load(TINY)
        report = clustersim.sweep(scenario, {"workload.global_batch": [8, 16]}, jobs=2)
        self.assertEqual([row["workload.global_batch"] for row in report], [8, 16])
        self.assertEqual(report.rows[0]["status"], "ok")
        for row in report:
            alone = clustersim.run(scenario.copy().set("workload.global_batch", row["workload.global_batch"]))
            self.assertEqual(row["step_time_s"], alone.training.step_time_s)
        zipped = clustersim.sweep(scenario, zip=[{"workload.parallelism.tp": [1, 2], "workload.parallelism.dp": [4, 2]}])
        self.assertEqual(len(zipped), 2)
        with tempfile.TemporaryDirectory() as out:
            written = clustersim.sweep(scenario, {"workload.global_batch": [8, 16]}, out=out)
            self.assertTrue((pathlib.Path(out) / "sweep.csv").exists())
        self.assertEqual(written.rows, report.rows)

    def test_a_bad_sweep_names_its_position(self):
        # As with `clustersim sweep`: a point whose key is unknown fails with the position and the
        # closest key; a bad block option stops the sweep before any point runs.
        report = clustersim.sweep(clustersim.load(TINY), {"workload.global_bach": [8, 16]})
        self.assertEqual([row["status"] for row in report], ["failed", "failed"])
        self.assertIn("clustersim.sweep():3:", report[0]["reason"])
        self.assertIn("did you mean 'global_batch'", report[0]["reason"])
        with self.assertRaises(clustersim.ScenarioError) as raised:
            clustersim.sweep(clustersim.load(TINY), {"workload.global_batch": [8, 16]}, sample=0)
        self.assertEqual((raised.exception.file, raised.exception.key), ("clustersim.sweep()", "sweep.sample"))
        with self.assertRaises(ValueError):
            clustersim.sweep(clustersim.load(TINY), sample=2)
        with self.assertRaises(TypeError):
            clustersim.sweep(clustersim.load(TINY), [("workload.global_batch", [8])])

    def test_search_matches_the_cli(self):
        report = clustersim.search(clustersim.load(TINY_SEARCH), top=3, resimulate=1, threads=1)
        expected = cli_json("search", TINY_SEARCH, "--top", "3", "--resimulate", "1", "--threads", "1")
        self.assertEqual(report.to_dict(), expected)
        self.assertEqual(len(report), 3)
        self.assertEqual(report[0]["rank"], 1)

    def test_capacity_of_a_serving_scenario(self):
        report = clustersim.capacity(clustersim.load(SERVING), rate=20)
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as file:
            file.write(SERVING)
            file.flush()
            expected = cli_json("capacity", file.name, "--rate", "20")
        self.assertEqual(report.to_dict(), expected)
        self.assertTrue(report.rows)
        self.assertTrue(all("met" in row for row in report))
        with self.assertRaises(ValueError):
            clustersim.capacity(clustersim.load(SERVING), tokens=1e9)

    def test_validate_matches_the_cli(self):
        report = clustersim.validate(OWN_TRAINING, threads=1)
        done = subprocess.run([str(CLI), "validate", "--dataset", str(OWN_TRAINING), "--format", "json", "--threads", "1"],
                              capture_output=True, text=True)
        self.assertEqual(report.to_dict(), json.loads(done.stdout))
        self.assertEqual(len(report), report.summary.rows)

    def test_validate_on_a_calibration_table_from_a_trace(self):
        importers = SOURCE / "tests" / "data" / "importers"
        with tempfile.TemporaryDirectory() as folder:
            table = pathlib.Path(folder) / "h100.csv"
            done = subprocess.run([str(CLI), "calibrate", "--from-trace", str(importers / "kineto-gpt-layer-h100.json"),
                                   "--out", str(table)], capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            report = clustersim.validate(importers / "trtllm-bench-llama3-8b-fp8.json", calibration=table)
            calibration = report.to_dict()["calibration"]
            self.assertEqual(len(calibration["rows"]), len(report))
            self.assertEqual(calibration["per_source"][0]["group"], "defaults")


class Chakra(unittest.TestCase):
    def test_an_exported_step_runs_again_as_a_trace(self):
        with tempfile.TemporaryDirectory() as folder:
            try:
                written = clustersim.export_chakra(clustersim.load(TINY), folder)
            except clustersim.ConfigError as error:  # a build without -DCLUSTERSIM_WITH_CHAKRA=ON
                self.assertIn("CLUSTERSIM_WITH_CHAKRA", str(error))
                return
            self.assertEqual(len(written["files"]), 4)
            replay = TINY.read_text().split("workload:")[0].replace("name: tiny-base", "name: replay") + (
                f"workload:\n  kind: trace\n  trace: {folder}/step\n  groups_file: {written['groups_file']}\n"
                "  compute: recorded\n")
            step = clustersim.run(clustersim.load(replay)).workload.metrics.step_time.value
        self.assertAlmostEqual(step / clustersim.run(TINY).training.step_time_s, 1.0, delta=0.01)


class Parallel(unittest.TestCase):
    def test_runs_from_a_thread_pool_give_the_serial_answers(self):
        scenarios = [clustersim.load(TINY, {"workload.global_batch": batch}) for batch in (8, 16, 32, 64)]
        serial = [clustersim.run(s).fingerprint for s in scenarios]
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            threaded = [r.fingerprint for r in pool.map(clustersim.run, scenarios)]
        self.assertEqual(threaded, serial)


    def test_a_run_releases_the_gil(self):
        # While a run simulates in another thread, this thread keeps running Python: with the GIL
        # held it could not count at all until the run returned.
        import threading
        scenario = clustersim.load(SOURCE / "scenarios" / "default.yaml")
        worker = threading.Thread(target=clustersim.run, args=(scenario,))
        count = 0
        worker.start()
        while worker.is_alive():
            count += 1
        worker.join()
        self.assertGreater(count, 1000)


class Example(unittest.TestCase):
    def test_the_accelerator_comparison_prints_the_cli_numbers(self):
        env = dict(os.environ, PYTHONPATH=str(CLI.parent))
        with tempfile.TemporaryDirectory() as folder:
            png = pathlib.Path(folder) / "compare.png"
            done = subprocess.run([sys.executable, str(SOURCE / "examples" / "python" / "compare_accelerators.py"),
                                   str(png)], capture_output=True, text=True, check=True, env=env)
            if importlib.util.find_spec("matplotlib"):  # optional
                self.assertTrue(png.exists())
            else:
                self.assertIn("matplotlib is not installed", done.stdout)
        lines = done.stdout.splitlines()
        for name in ("h100-sxm", "h200-sxm"):
            step = cli_json("run", SOURCE / "scenarios" / "default.yaml", "--set",
                            f"cluster.node.accelerator={name}")["training"]["step_time_s"]
            self.assertIn(f"{step:.3f}", next(line for line in lines if line.startswith(name)))


class Frames(unittest.TestCase):
    def test_rows_become_a_dataframe_when_pandas_is_there(self):
        report = clustersim.sweep(clustersim.load(TINY), {"workload.global_batch": [8, 16]})
        if not importlib.util.find_spec("pandas"):  # optional
            with self.assertRaises(ImportError) as raised:
                report.frame()
            self.assertIn("pandas", str(raised.exception))
            return
        frame = report.frame()
        self.assertEqual(len(frame), 2)
        self.assertIn("step_time_s", frame.columns)
        self.assertEqual(list(clustersim.to_frame(report.rows)["id"]), list(frame["id"]))


if __name__ == "__main__":
    unittest.main()
