/* A static program with <sys/sdt.h> probes for the kernel-matrix guests:
 * myapp:::tick(i, -i) fired N times (argv[1]), with a semaphore that
 * reports whether it is traced. */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <stdio.h>
#include <stdlib.h>
__extension__ unsigned short myapp_tick_semaphore __attribute__((unused, section(".probes")));
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 3, traced = 0;
	for (int i = 0; i < n; i++) {
		traced += myapp_tick_semaphore != 0;
		long neg = -i;
		DTRACE_PROBE2(myapp, tick, i, neg);
	}
	printf("traced %d\n", traced);
	return 0;
}
