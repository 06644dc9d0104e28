#!/usr/bin/python3
"""onemodel-load-plot (ctest load_plot): one-line errors with exit 2 for inputs and outputs it
cannot use, the failed requests it reports, and a drawing of a run with errors (the drawing
only with python3-matplotlib).

    python3 tests/load/load_plot_test.py client/load/onemodel-load-plot
"""

import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

PLOT = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else None

HEADER = ("phase,rate_per_s,t_s,seconds,requests_per_s,steps_per_s,errors,p50_ms,p99_ms,"
          "pool_rented_bytes,pool_idle_bytes,arena_reserved_bytes\n")
# Two seconds; in the second, half the requests failed.
ROWS = ("0,100,0.000,1.000,100,50,0,1.5,3,4096,0,1048576\n"
        "0,100,1.000,1.000,100,25,50,1.5,3,,,\n")
# A third second in which every request failed: no step latency to show.
ALL_FAILED = "0,100,2.000,1.000,100,0,100,,,,,\n"


def load_module():
    loader = importlib.machinery.SourceFileLoader("onemodel_load_plot", PLOT)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class PlotTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def file(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def plot(self, *args):
        return subprocess.run([sys.executable, PLOT, *args], capture_output=True, text=True,
                              check=False)

    def assert_refused(self, result, message):
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertIn(message, result.stderr)

    def test_a_json_array_is_not_a_report(self):
        report = self.file("array.json", "[1, 2]")
        self.assert_refused(self.plot("--json", report, "-o", self.dir.name + "/x.png"),
                            f"{report} is not an onemodel-load --json report")

    def test_a_report_without_its_fields_is_refused(self):
        report = self.file("bare.json", '{"tool": "onemodel-load", "rates": [{}]}')
        self.assert_refused(self.plot("--json", report, "-o", self.dir.name + "/x.png"),
                            "is not an onemodel-load --json report (bad or missing field")

    def test_json_that_does_not_parse_names_its_file_and_line(self):
        report = self.file("broken.json", "{\n  oops")
        self.assert_refused(self.plot("--json", report, "-o", self.dir.name + "/x.png"),
                            f"{report}:2: not JSON")

    def test_a_bad_number_names_its_file_line_and_column(self):
        series = self.file("bad.csv", HEADER + ROWS.replace("1.5,3,,,", "1.5,abc,,,"))
        self.assert_refused(self.plot("--csv", series, "-o", self.dir.name + "/x.png"),
                            f"{series}:3: p99_ms 'abc' is not a number")

    def test_times_outside_a_run_are_refused(self):
        # t_s=1e308 alone made matplotlib's tick locator raise IndexError (a traceback, exit 1)
        for t_s, seconds in (("1e308", "1.000"), ("-1e308", "1.000"), ("0.000", "1e308"),
                             ("999999999.5", "1.000")):
            with self.subTest(t_s=t_s, seconds=seconds):
                series = self.file("huge.csv", HEADER + f"0,100,{t_s},{seconds},100,25,50,1.5,"
                                                        "3,,,\n")
                self.assert_refused(self.plot("--csv", series, "-o", self.dir.name + "/x.png"),
                                    f"{series}:2: t_s {float(t_s):g} + seconds "
                                    f"{float(seconds):g} is not within 0 to 1e+09 s")

    def test_a_csv_without_the_columns_is_refused(self):
        series = self.file("other.csv", "a,b\n1,2\n")
        self.assert_refused(self.plot("--csv", series, "-o", self.dir.name + "/x.png"),
                            "is not an onemodel-load --csv time series (no phase, rate_per_s")

    def test_an_output_that_is_not_png_is_refused(self):
        series = self.file("s.csv", HEADER + ROWS)
        self.assert_refused(self.plot("--csv", series, "-o", self.dir.name + "/x.svg"),
                            "give a name ending in .png")

    def test_an_unwritable_output_is_refused(self):
        series = self.file("s.csv", HEADER + ROWS)
        self.assert_refused(self.plot("--csv", series, "-o", "/nonexistent-dir/x.png"),
                            "check that the directory /nonexistent-dir exists and is writable")

    def test_failed_requests_are_counted(self):
        plot = load_module()
        series = plot.read_series(self.file("s.csv", HEADER + ROWS))
        self.assertEqual(series[1]["errors"], 50)
        self.assertIsNone(series[1]["pool_rented_bytes"])
        self.assertEqual(plot.failure_note(series), "50 of 200 requests failed")
        self.assertIsNone(plot.failure_note(series[:1]))
        series = plot.read_series(self.file("f.csv", HEADER + ROWS + ALL_FAILED))
        self.assertIsNone(series[2]["p50_ms"])
        self.assertIsNone(series[2]["p99_ms"])
        self.assertEqual(plot.failure_note(series), "150 of 300 requests failed")

    def test_a_run_with_errors_is_drawn_with_its_note(self):
        if subprocess.run([sys.executable, "-c", "import matplotlib"],
                          capture_output=True, check=False).returncode != 0:
            self.skipTest("python3-matplotlib is not installed (scripts/install-deps installs it)")
        png = os.path.join(self.dir.name, "s.png")
        result = self.plot("--csv", self.file("s.csv", HEADER + ROWS + ALL_FAILED), "-o", png)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("note: 150 of 300 requests failed", result.stderr)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    if PLOT is None:
        sys.exit("usage: load_plot_test.py PATH/TO/onemodel-load-plot")
    unittest.main()
