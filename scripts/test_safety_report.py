#!/usr/bin/env python3
"""Tests of scripts/safety-report.py: python3 scripts/test_safety_report.py"""
import importlib.util
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("safety_report", os.path.join(HERE, "safety-report.py"))
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)

PROPS = ["S1", "S2", "S3", "S4", "L1", "L3", "L4", "L5", "LIN"]


def result(scenario, backend, passed=True, seed=1):
    props = {p: {"status": "PASS", "expect": "MUST", "measure": None} for p in PROPS}
    props["S4"] = {"status": "MEASURED", "expect": "MEASURED", "measure": 0}
    props["L4"]["measure"] = 0
    if not passed:
        props["S1"]["status"] = "FAIL"
    return {"scenario": scenario, "backend": backend, "title": "title of " + scenario, "tier": "tier2",
            "passed": passed, "failure": "" if passed else "S1 broke", "seed": seed, "properties": props,
            "refusedRequests": 0, "rawOverlaps": 0}


class SafetyReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.doc = os.path.join(self.tmp.name, "doc.md")
        with open(self.doc, "w", encoding="utf-8") as fh:
            fh.write("# head\n\n%s\n%s\n\ntail\n" % (report.BEGIN, report.END))

    def tearDown(self):
        self.tmp.cleanup()

    def run_report(self, results, *flags):
        d = tempfile.mkdtemp(dir=self.tmp.name)
        for r in results:
            with open(os.path.join(d, "%s--%s.json" % (r["scenario"], r["backend"])), "w") as fh:
                json.dump(r, fh)
        argv = sys.argv
        sys.argv = ["safety-report.py"] + list(flags) + [d, self.doc]
        try:
            report.main()
        finally:
            sys.argv = argv
        with open(self.doc, encoding="utf-8") as fh:
            return fh.read()

    def test_without_merge_only_the_new_results_are_in_the_tables(self):
        self.run_report([result("G4", "redis", seed=11)])
        text = self.run_report([result("G4", "mariadb", seed=22)])
        self.assertIn("| G4 | mariadb |", text)
        self.assertNotIn("| G4 | redis |", text)

    def test_merge_keeps_the_rows_of_backends_not_run_and_replaces_the_others(self):
        self.run_report([result("G4", "redis", seed=11), result("G1", "redis", seed=12),
                         result("R2", "redis", passed=False, seed=13)])
        text = self.run_report([result("G4", "mariadb", seed=22), result("R2", "redis", seed=23)], "--merge")
        self.assertIn("| G4 | redis | pass |", text)
        self.assertIn("| G1 | redis | pass |", text)
        self.assertIn("| G4 | mariadb | pass |", text)
        self.assertIn("| G4 title of G4 | 2 | pass | pass |", text)
        self.assertIn("| R2 | redis | pass |", text)
        self.assertNotIn("| 13 |", text)
        self.assertNotIn("Failed MUST", text)
        self.assertIn("from 4 scenario runs: 2 from the last run's result files, 2 kept", text)
        self.assertTrue(text.startswith("# head\n") and text.endswith("\ntail\n"))

    def test_merge_keeps_a_kept_rows_failure_line(self):
        self.run_report([result("R2", "redis", passed=False, seed=13)])
        text = self.run_report([result("G4", "mariadb", seed=22)], "--merge")
        self.assertIn("| R2 | redis | **FAIL** |", text)
        self.assertIn("- R2 on redis (seed 13): S1 broke", text)

    def test_merge_twice_with_the_same_results_changes_nothing(self):
        self.run_report([result("G4", "redis", seed=11), result("K1", "redis", seed=14)])
        first = self.run_report([result("G4", "mariadb", seed=22)], "--merge")
        second = self.run_report([result("G4", "mariadb", seed=22)], "--merge")
        self.assertEqual(first, second)

    def test_a_failed_should_property_is_shown_but_does_not_fail_the_cell(self):
        r = result("K1", "postgresql-advisory", seed=31)
        r["properties"]["L6"] = {"status": "FAIL", "expect": "SHOULD", "measure": 13190}
        text = self.run_report([r, result("G4", "redis", seed=32)])
        self.assertIn("| K1 title of K1 | 2 |  | pass (should: L6) |", text)
        self.assertIn("| 31 | should: broke, 13.2 s |", text)
        self.assertIn("| 32 |  |", text)  # a result from before L6 existed
        self.assertNotIn("Failed MUST", text)


if __name__ == "__main__":
    unittest.main()
