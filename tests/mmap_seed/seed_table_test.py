#!/usr/bin/python3
"""tools/mmap-seed/seed-table's CSV reading and table, from recorded CSVs (no QEMU, no benchmark run).

guest.csv is the CSV kernel/qemu/run wrote in a -smp 4 guest (patched 6.1, 4 threads x 10 x 4 MiB,
vm.populate_yield_mmap_lock off and on, without and with one munmap competitor); host.csv is a
small host run. The expected values are computed by hand from those files.
Usage: seed_table_test.py SEED_TABLE
"""
import contextlib
import importlib.machinery
import importlib.util
import io
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SEED_TABLE = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "tools", "mmap-seed",
                                                                     "seed-table")
loader = importlib.machinery.SourceFileLoader("seed_table", SEED_TABLE)
spec = importlib.util.spec_from_loader("seed_table", loader)
st = importlib.util.module_from_spec(spec)
loader.exec_module(st)
GUEST = os.path.join(HERE, "guest.csv")
HOST = os.path.join(HERE, "host.csv")


# By hand from guest.csv: the lock_drops column summed per label (only populate drops).
GUEST_ON_DROPS = 32 + 37 + 33
GUEST_ON_MUNMAP_DROPS = 40 + 40 + 40
# guest-off populate slowest_s of its three repetitions: 4.705211, 4.272856, 2.563576.
GUEST_OFF_POPULATE = (4.272856, 2.563576, 4.705211)
EXPECTED_TABLE = """\
mode             seed 3.6.11         seed 3.7.1  seed 3.7.1+series  host                        guest-off                   guest-off+munmap            guest-on                    guest-on+munmap
none                   0.001              0.001              0.001  0.000 [0.000..0.000]        0.001 [0.000..0.001]        0.100 [0.064..1.250]        0.000 [0.000..0.001]        0.018 [0.000..0.265]
touch                  0.216              0.216              0.216  0.576 [0.576..0.576]        5.037 [4.939..6.166]        4.730 [3.423..6.045]        3.130 [1.627..5.372]        4.039 [3.484..5.985]
populate               0.358              0.411              0.273  0.448 [0.448..0.448]        4.273 [2.564..4.705]        4.352 [1.473..4.737]        2.136 [1.243..3.512]        1.060 [1.049..1.676]
host: 4 threads x 10 maps x 4 MiB
guest-off: 4 threads x 10 maps x 4 MiB, lock drops none 0 / touch 0 / populate 0
guest-off+munmap: 4 threads x 10 maps x 4 MiB, lock drops none 0 / touch 0 / populate 0
guest-off+munmap: none, worst competitor mmap+munmap 164.2 ms
guest-off+munmap: touch, worst competitor mmap+munmap 1952.2 ms
guest-off+munmap: populate, worst competitor mmap+munmap 1368.1 ms
guest-on: 4 threads x 10 maps x 4 MiB, lock drops none 0 / touch 0 / populate 102
guest-on+munmap: 4 threads x 10 maps x 4 MiB, lock drops none 0 / touch 0 / populate 120
guest-on+munmap: none, worst competitor mmap+munmap 64.8 ms
guest-on+munmap: touch, worst competitor mmap+munmap 323.3 ms
guest-on+munmap: populate, worst competitor mmap+munmap 476.5 ms
"""


def run(*args):
    return subprocess.run([sys.executable, SEED_TABLE] + list(args), capture_output=True, text=True)


class SeedTableTest(unittest.TestCase):
    def test_guest_csv_columns(self):
        columns = st.columns_by_label(st.read_csv(GUEST))
        self.assertEqual([name for name, _ in columns],
                         ["guest-off", "guest-off+munmap", "guest-on", "guest-on+munmap"])
        for _, rows in columns:
            self.assertEqual(len(rows), 9)  # 3 modes x 3 repetitions
            self.assertTrue(all(r["lock_drops"] is not None for r in rows))
        drops = {name: sum(r["lock_drops"] for r in rows) for name, rows in columns}
        self.assertEqual(drops["guest-off"], 0)
        self.assertEqual(drops["guest-off+munmap"], 0)
        self.assertEqual(drops["guest-on"], GUEST_ON_DROPS)
        self.assertEqual(drops["guest-on+munmap"], GUEST_ON_MUNMAP_DROPS)

    def test_host_csv_has_no_lock_drops(self):
        rows = st.read_csv(HOST)
        self.assertEqual(len(rows), 3)
        self.assertTrue(all(r["lock_drops"] is None for r in rows))

    def test_table_from_recorded_csvs(self):
        out = run("--from-csv", HOST, "--guest", GUEST)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout, EXPECTED_TABLE)

    def test_median_min_max(self):
        rows = [r for r in st.read_csv(GUEST) if r["label"] == "guest-off"]
        self.assertEqual(st.cell(rows, "populate"), GUEST_OFF_POPULATE)

    def test_malformed_csv_names_file_line_column(self):
        with open(GUEST) as f:
            lines = f.read().splitlines()
        fields = lines[3].split(",")
        fields[8] = "slow"  # slowest_s
        bad_line = ",".join(fields)
        column = len(",".join(fields[:8])) + 2
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.csv")
            with open(bad, "w") as f:
                f.write("\n".join(lines[:3] + [bad_line] + lines[4:]) + "\n")
            out = run("--from-csv", HOST, "--guest", bad)
            self.assertEqual(out.returncode, 2)
            self.assertEqual(out.stdout, "")
            self.assertEqual(out.stderr, "seed-table: %s:4:%d: slowest_s is 'slow', not a number: fix the line or "
                                         "re-run the benchmark\n" % (bad, column))
            with open(bad, "w") as f:
                f.write("label,mode\nguest-on,none\n")
            out = run("--guest", bad, "--from-csv", HOST)
            self.assertEqual(out.returncode, 2)
            self.assertIn("%s:1:1: the header has no column 'threads'" % bad, out.stderr)
            with open(bad, "w") as f:
                f.write(lines[0] + "\n" + lines[1] + ",7\n")
            out = run("--from-csv", HOST, "--guest", bad)
            self.assertEqual(out.returncode, 2)
            self.assertIn("%s:2:1: 14 fields where the header has 13" % bad, out.stderr)
        out = run("--from-csv", HOST, "--guest", "/nonexistent/guest.csv")
        self.assertEqual(out.returncode, 2)
        self.assertIn("/nonexistent/guest.csv:1:1: cannot read it", out.stderr)

    def test_malformed_cost_file_names_file_line_column(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "costs.txt")
            with open(bad, "w") as f:
                f.write("# costs\nFAULT_NS = 1000\nZERO_4K_NS = lots  # not a number\n")
            before = open(bad).read()
            out = run("--no-host", "--sim-costs", bad)
            self.assertEqual(out.returncode, 2)
            self.assertIn("%s:3:1: 'ZERO_4K_NS = lots' is not NAME = integer" % bad, out.stderr)
            self.assertEqual(open(bad).read(), before)  # the user's file is left alone
            self.assertEqual(st.read_costs(os.path.join(HERE, "mmap_costs.txt"))["POPULATE_PAGE_NS"], 400)
        out = run("--no-host", "--sim-costs", "/nonexistent/costs.txt")
        self.assertEqual(out.returncode, 2)
        self.assertIn("/nonexistent/costs.txt:1:1: cannot read it", out.stderr)

    def test_non_utf8_and_fractional_counts_name_file_line_column(self):
        with open(GUEST) as f:
            lines = f.read().splitlines()
        header = lines[0].split(",")
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.csv")
            with open(bad, "wb") as f:
                f.write((lines[0] + "\n").encode() + b"guest-off,\xff\xfe\n")
            out = run("--from-csv", bad)
            self.assertEqual(out.returncode, 2)
            self.assertEqual(out.stderr, "seed-table: %s:2:11: byte 0xff is not UTF-8 text: give the CSV "
                                         "kernel/qemu/run or --csv wrote\n" % bad)
            out = run("--no-host", "--sim-costs", bad)
            self.assertEqual(out.returncode, 2)
            self.assertIn("%s:2:11: byte 0xff is not UTF-8 text: run mmap_calibrate" % bad, out.stderr)
            for name, value in (("size_bytes", "4194304.0"), ("lock_drops", "1.5")):
                fields = lines[1].split(",")
                fields[header.index(name)] = value
                column = len(",".join(fields[:header.index(name)])) + 2
                with open(bad, "w") as f:
                    f.write(lines[0] + "\n" + ",".join(fields) + "\n")
                out = run("--from-csv", bad)
                self.assertEqual(out.returncode, 2, name)
                self.assertEqual(out.stdout, "", name)  # nothing half printed
                self.assertEqual(out.stderr, "seed-table: %s:2:%d: %s is '%s', not a whole number: fix the line "
                                             "or re-run the benchmark\n" % (bad, column, name, value))

    def test_counts_and_output_paths_are_checked_before_any_run(self):
        for args, message in ((("--threads", "0"), "--threads 0: give 1 to 64"),
                              (("--threads", "65"), "--threads 65: give 1 to 64"),
                              (("--competitors", "-1"), "--competitors -1: give 0 to 64"),
                              (("--reps", "0"), "--reps 0: give 1 to 1000"),
                              (("--csv", "/nonexistent/x.csv"), "--csv /nonexistent/x.csv: cannot write into "
                                                                "/nonexistent: give a path in a writable folder"),
                              (("--sim-csv", HERE), "--sim-csv %s: is a directory: give a file name" % HERE)):
            out = run("--bench", "/nonexistent/bench", "--rseqmc", "/nonexistent/rseqmc", *args)
            self.assertEqual(out.returncode, 2, args)
            self.assertEqual(out.stderr, "seed-table: %s\n" % message, args)

    def test_bad_size_is_usage_error(self):
        out = run("--no-host", "--size", "3K")
        self.assertEqual(out.returncode, 2)
        self.assertIn("--size 3K: give a multiple of 4 KiB", out.stderr)


if __name__ == "__main__":
    unittest.main()
