// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* plt_seed.c: the program whose builds are fuzz_plt's seeds (tests/fuzz/gen_plt_seeds.sh): calls
 * into libc and libstdc++-style mangled names through the PLT, and one IFUNC-free local. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void _ZN2ns3fooEv(void);
void _ZN2ns3fooEv(void)
{
	puts("ns::foo");
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	char *copy = strdup(argc > 1 ? argv[1] : "x");

	qsort(argv, argc, sizeof(*argv), cmp);
	printf("%zu %s\n", strlen(copy), getenv("HOME") ? "home" : "");
	_ZN2ns3fooEv();
	free(copy);
	return 0;
}
