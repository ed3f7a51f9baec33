/* Makes N system calls of one kind as fast as it can, in 20 batches, and
 * prints the mean nanoseconds per call of the fastest batch: noise on a
 * shared machine only ever adds time, so the fastest batch is the truest.
 * The workload of every per-event benchmark: getppid and getuid take no
 * arguments, read reads one byte of /dev/zero (vfs_read, for bench/fbt.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

static long nr, fd = -1;
static char byte;

static void call(void)
{
	syscall(nr, fd, &byte, 1);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* COUNT calls at RATE per second, in 1 ms slices; prints the rate reached. */
static int paced(long n, long rate)
{
	long per_ms = rate / 1000 > 0 ? rate / 1000 : 1;
	double start = now();
	long done = 0;
	for (long slice = 1; done < n; slice++) {
		for (long i = 0; i < per_ms && done < n; i++, done++)
			call();
		while (now() - start < slice / 1000.0)
			;
	}
	printf("%.0f\n", n / (now() - start));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: loop getppid|getuid|read COUNT [RATE]\n");
		return 2;
	}
	if (strcmp(argv[1], "read") == 0) {
		nr = SYS_read;
		fd = open("/dev/zero", O_RDONLY);
		if (fd < 0) {
			perror("loop: /dev/zero");
			return 1;
		}
	} else {
		nr = strcmp(argv[1], "getppid") == 0 ? SYS_getppid : SYS_getuid;
	}
	long n = atol(argv[2]);
	if (argc == 4)
		return paced(n, atol(argv[3]));
	const int batches = 20;
	long per_batch = n / batches;
	double best = -1;
	for (int b = 0; b < batches; b++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (long i = 0; i < per_batch; i++)
			call();
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / per_batch;
		if (best < 0 || ns < best)
			best = ns;
	}
	printf("%.2f\n", best);
	return 0;
}
