// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cxxchain.cc: spins below C++ frames (namespace, template, class, operator) with mangled names. */
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/time.h>

/* Same rule as targets.h: keep every frame under its own name. */
#define CXX_KEEP __attribute__((noipa))

namespace bpfprof_test {

static volatile sig_atomic_t stop;

class Spinner {
public:
	CXX_KEEP long operator()(long depth) const;
	CXX_KEEP long spin(unsigned long start) const;
};

/* Walker<N>::step calls Walker<N-1>::step: one distinct instantiation per frame. */
template <int N>
struct Walker {
	CXX_KEEP static long step(long depth)
	{
		volatile long scratch = depth;

		return Walker<N - 1>::step(depth + 1) + scratch;
	}
};

template <>
struct Walker<0> {
	CXX_KEEP static long step(long depth)
	{
		volatile long scratch = depth;
		const Spinner spinner;

		return spinner(depth + 1) + scratch;
	}
};

long Spinner::operator()(long depth) const
{
	volatile long scratch = depth;

	return spin(depth + 1) + scratch;
}

/* The hot leaf: polls the flag SIGALRM sets, calls nothing. */
long Spinner::spin(unsigned long start) const
{
	unsigned long n = start;

	while (!stop)
		n++;
	return (long)n;
}

} /* namespace bpfprof_test */

static void on_alarm(int)
{
	bpfprof_test::stop = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct itimerval it;
	double seconds;

	if (argc != 2 || argv[1][0] == '-') {
		fputs("usage: cxxchain SECONDS\n"
		      "Spins SECONDS in bpfprof_test::Spinner::spin(unsigned long) const, below\n"
		      "main -> Walker<3>::step(long) .. Walker<0>::step(long) -> Spinner::operator().\n",
		      stderr);
		return 2;
	}
	seconds = strtod(argv[1], NULL);
	if (!(seconds > 0)) {
		fprintf(stderr, "invalid SECONDS: %s\n", argv[1]);
		return 2;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = (time_t)seconds;
	it.it_value.tv_usec = (suseconds_t)((seconds - (time_t)seconds) * 1e6);
	if (!it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	setitimer(ITIMER_REAL, &it, NULL);

	return bpfprof_test::Walker<3>::step(1) ? 0 : 1;
}
