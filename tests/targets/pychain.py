# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# pychain.py: a known Python call chain for the Python frame tests (run-pyframes.sh):
#   <module> -> main -> Worker.run -> middle -> leaf_spin (pure Python, where the time goes)
# usage: pychain.py [SECONDS] [plain|threads|asyncio|callback|subinterp|churn]  (0 seconds: until
# killed); with PYCHAIN_READY=FILE in the environment, FILE is created when the work starts
# (start-up done: a -p or -a run can begin then)
#   threads   two threading.Thread run Worker.run: Thread's frames above it, clone at the root
#   asyncio   Worker.run is a coroutine run by asyncio's event loop
#   callback  middle -> json.dumps -> C encoder (_json) -> on_default -> leaf_spin: Python ->
#             C -> Python, whose order must hold
#   generator middle -> spin_gen (a generator, resumed by middle's loop) -> leaf_spin, which
#             raises and catches an exception at each call: the generator's frame and
#             exception handling between
#   subinterp Worker.run_sub runs the chain's end in a subinterpreter (3.12: _xxsubinterpreters,
#             3.13: _interpreters): Python -> C -> another interpreter's Python, in order
#   churn     threads start and exit, and code objects are made and freed, all the time: the
#             process changes under the walk (the BPF side must neither crash nor hang)
import os
import sys
import threading
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
MODE = sys.argv[2] if len(sys.argv) > 2 else "plain"
END = time.monotonic() + SECONDS if SECONDS > 0 else float("inf")


def leaf_spin(n):
    x = 0
    for i in range(n):
        x += i * i
    if MODE == "generator":
        try:
            raise ValueError(x)
        except ValueError:
            pass
    return x


def spin_gen(n):
    for _ in range(4):
        yield leaf_spin(n // 4)


def on_default(obj):
    return leaf_spin(obj.n)


class Spin:
    def __init__(self, n):
        self.n = n


def middle(n):
    if MODE == "callback":
        return json.dumps([Spin(n)], default=on_default)  # noqa: F821 (imported in main)
    if MODE == "generator":
        return sum(spin_gen(n))
    return leaf_spin(n)


class Worker:
    def run(self):
        while time.monotonic() < END:
            middle(200000)

    async def run_async(self):
        import asyncio

        while time.monotonic() < END:
            middle(200000)
            await asyncio.sleep(0)


SUB_CODE = """
import time
def sub_leaf(n):
    x = 0
    for i in range(n):
        x += i * i
    return x
while time.monotonic() < %r:
    sub_leaf(200000)
"""


class SubWorker:
    def run_sub(self):
        try:
            import _interpreters as interpreters  # 3.13
            run = interpreters.exec
        except ImportError:
            import _xxsubinterpreters as interpreters  # 3.12
            run = interpreters.run_string
        iid = interpreters.create()
        run(iid, SUB_CODE % END)


def churn():
    # Short threads and fresh code objects (compiled, run, dropped) while the main one works.
    def short():
        leaf_spin(2000)

    while time.monotonic() < END:
        t = threading.Thread(target=short)
        t.start()
        t.join()
        code = compile("def fresh(n):\n    return sum(range(n))\n", "<fresh>", "exec")
        ns = {}
        exec(code, ns)
        ns["fresh"](1000)
        del ns, code


def main():
    global json
    # Imported only by the modes that use them: start-up stays short.
    if MODE == "callback":
        import json
    ready = os.environ.get("PYCHAIN_READY")
    if ready:
        open(ready, "w").close()
    if MODE == "threads":
        threads = [threading.Thread(target=Worker().run) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    elif MODE == "asyncio":
        import asyncio

        asyncio.run(Worker().run_async())
    elif MODE == "subinterp":
        SubWorker().run_sub()
    elif MODE == "churn":
        t = threading.Thread(target=churn)
        t.start()
        Worker().run()
        t.join()
    else:
        Worker().run()


main()
