# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# pycodes.py: code objects made and freed all the time under a known, stable chain, for the
# Python frame tests (run-pycodes.sh):
#   <module> -> main -> Maker.run -> make_a or make_b -> churn_a_N or churn_b_N
# make_X compiles and runs a fresh function churn_X_N (N counts them), line 1 of "<churn>",
# where the time goes, then drops it: the next code object often takes the freed one's memory.
# Which of make_a and make_b runs next is random, so a frame named after a freed code object
# (of the other maker) shows under the wrong caller: the test counts churn_a_* under make_b and
# churn_b_* under make_a.
# usage: pycodes.py [SECONDS]  (0 seconds: until killed); with PYCHAIN_READY=FILE in the
# environment, FILE is created when the work starts.
import os
import random
import sys
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
END = time.monotonic() + SECONDS if SECONDS > 0 else float("inf")
# Every churned function has the same size: one layout for the allocator to reuse.
SOURCE = """def churn_%s_%06d(n):
    x = 0
    for i in range(n):
        x += i * i
    return x
"""


def make(kind, i):
    ns = {}
    exec(compile(SOURCE % (kind, i), "<churn>", "exec"), ns)
    ns["churn_%s_%06d" % (kind, i)](20000)


def make_a(i):
    make("a", i)


def make_b(i):
    make("b", i)


class Maker:
    def run(self):
        rng = random.Random(1)
        i = 0
        while time.monotonic() < END:
            i += 1
            if rng.random() < 0.5:
                make_a(i)
            else:
                make_b(i)


def main():
    ready = os.environ.get("PYCHAIN_READY")
    if ready:
        open(ready, "w").close()
    Maker().run()


main()
