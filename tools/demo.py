# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# demo.py: a few seconds of ordinary pure-Python work for `make demo` to profile.
import json
import re
import sys
import time


def primes(n):
    sieve = bytearray([1]) * (n + 1)
    sieve[0:2] = b"\0\0"
    for i in range(2, int(n ** 0.5) + 1):
        if sieve[i]:
            sieve[i * i::i] = bytearray(len(range(i * i, n + 1, i)))
    return [i for i, v in enumerate(sieve) if v]


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def records(count):
    word = re.compile(r"[a-z]+")
    out = []
    for i in range(count):
        text = "item %d of the demo with some words %x" % (i, i * 7919)
        out.append({"id": i, "words": word.findall(text), "sum": sum(range(i % 100))})
    return json.loads(json.dumps(out))


def main(seconds):
    end = time.monotonic() + seconds
    rounds = 0
    while time.monotonic() < end:
        primes(200000)
        fib(20)
        records(2000)
        rounds += 1
    print("demo.py: %d rounds" % rounds, file=sys.stderr)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 5.0)
