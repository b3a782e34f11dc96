# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""pyoffcpu.py: a Python program that waits, each kind of wait under a function of its own, and
says how long each kind took by its own monotonic clock (tests/integration/run-pyoffcpu.sh).

    python3 pyoffcpu.py [-w] ACCOUNTS [ROUNDS [DELAY_S]]

-w: first waits for SIGUSR2 (bpfprof -p attached). Then, before anything else:
  wait_first:  time.sleep(FIRST_S), the process's first blocked stack (bpfprof arms a CPython
               before its first record: this one has its Python frames too)
Then each round, on the main thread:
  wait_sleep:  time.sleep(DELAY_S)
  wait_lock:   acquires a threading.Lock that a thread running release_lock releases after
               DELAY_S (its own time.sleep, under sleep_before_release)
  wait_pipe:   reads a pipe that a thread running write_pipe writes after DELAY_S (under
               sleep_before_write)
Every wait has ended when the program exits. ACCOUNTS gets a line per kind, "KIND NS RUNQ_NS":
the time the main thread spent in that kind's blocking call, summed over the rounds (ns;
"first": wait_first's), and of that the time it was runnable but not running (its schedstat's
run_delay: on a busy machine, a thread woken may wait for a CPU past its system call's exit,
which is no time blocked); "-":
standard output (a container root the program cannot write, its script read from stdin).

    python3 pyoffcpu.py --pingpong COUNT

instead: two processes (no GIL between them) hand a byte to each other COUNT times each over
two pipes (serve, ping_pong): each waits in os.read under Python frames (tools/bench.sh's
off-CPU section); prints the hand-overs' time by its own clock.
"""
import os
import signal
import sys
import threading
import time

# wait_first's sleep, s: long against the 10% the test allows (a few ms of scheduling).
FIRST_S = 0.1


def sleep_before_release(delay):
    time.sleep(delay)


def release_lock(lock, delay):
    sleep_before_release(delay)
    lock.release()


def sleep_before_write(delay):
    time.sleep(delay)


def write_pipe(fd, delay):
    sleep_before_write(delay)
    os.write(fd, b"x")


def clock():
    """(monotonic ns, the thread's run_delay ns: time runnable on a runqueue, from
    /proc/thread-self/schedstat, 0 where it cannot be read)."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            runq = int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        runq = 0
    return time.monotonic_ns(), runq


def since(t0):
    """(ns, runnable ns) since clock()'s t0."""
    t1 = clock()
    return t1[0] - t0[0], t1[1] - t0[1]


def wait_sleep(delay):
    t0 = clock()
    time.sleep(delay)
    return since(t0)


def wait_lock(delay):
    lock = threading.Lock()
    lock.acquire()
    t = threading.Thread(target=release_lock, args=(lock, delay), name="releaser")
    t.start()
    t0 = clock()
    lock.acquire()
    ns = since(t0)
    t.join()
    return ns


def wait_pipe(delay):
    r, w = os.pipe()
    t = threading.Thread(target=write_pipe, args=(w, delay), name="writer")
    t.start()
    t0 = clock()
    os.read(r, 1)
    ns = since(t0)
    t.join()
    os.close(r)
    os.close(w)
    return ns


def wait_first():
    t0 = clock()
    time.sleep(FIRST_S)
    return since(t0)


def waits(accounts, rounds, delay):
    total = {"first": wait_first(), "sleep": (0, 0), "lock": (0, 0), "pipe": (0, 0)}
    for _ in range(rounds):
        for kind, wait in (("sleep", wait_sleep), ("lock", wait_lock), ("pipe", wait_pipe)):
            ns, runq = wait(delay)
            total[kind] = (total[kind][0] + ns, total[kind][1] + runq)
    lines = "".join(f"{kind} {ns} {runq}\n" for kind, (ns, runq) in total.items())
    if accounts == "-":
        sys.stdout.write(lines)
        return
    with open(accounts, "w") as f:
        f.write(lines)


def ping_pong(rfd, wfd, count):
    for _ in range(count):
        os.read(rfd, 1)
        os.write(wfd, b"x")


def serve(wfd, rfd, count):
    for _ in range(count):
        os.write(wfd, b"x")
        os.read(rfd, 1)


def pingpong(count):
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    pid = os.fork()
    if pid == 0:
        ping_pong(r1, w2, count)
        os._exit(0)
    t0 = time.monotonic_ns()
    serve(w1, r2, count)
    ns = time.monotonic_ns() - t0
    os.waitpid(pid, 0)
    print(f"pingpong: {2 * count} hand-overs in {ns / 1e9:.3f} s")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--pingpong":
        pingpong(int(sys.argv[2]))
        return
    args = sys.argv[1:]
    if args and args[0] == "-w":
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2])
        signal.sigwait([signal.SIGUSR2])
        args = args[1:]
    rounds = int(args[1]) if len(args) > 1 else 3
    delay = float(args[2]) if len(args) > 2 else 0.2
    waits(args[0], rounds, delay)


if __name__ == "__main__":
    main()
