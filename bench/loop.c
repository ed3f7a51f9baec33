/* Makes N system calls of one kind as fast as it can, in 20 batches, and
 * prints the mean nanoseconds per call of the fastest batch: noise on a
 * shared machine only ever adds time, so the fastest batch is the truest.
 * The workload of every per-event benchmark. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: loop getppid|getuid COUNT\n");
		return 2;
	}
	long nr = strcmp(argv[1], "getppid") == 0 ? SYS_getppid : SYS_getuid;
	long n = atol(argv[2]);
	const int batches = 20;
	long per_batch = n / batches;
	double best = -1;
	for (int b = 0; b < batches; b++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (long i = 0; i < per_batch; i++)
			syscall(nr);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / per_batch;
		if (best < 0 || ns < best)
			best = ns;
	}
	printf("%.2f\n", best);
	return 0;
}
