/* Loads and attaches count_comm.bpf.o, prints "ready", and on SIGINT prints
 * each comm's count (all CPUs summed), like the tracers it is compared with. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: count_comm OBJECT\n");
		return 2;
	}
	struct bpf_object *obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "count_comm: cannot load %s\n", argv[1]);
		return 1;
	}
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, "count_comm");
	struct bpf_link *link = prog ? bpf_program__attach(prog) : NULL;
	if (!link) {
		fprintf(stderr, "count_comm: cannot attach\n");
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		pause();
	int fd = bpf_object__find_map_fd_by_name(obj, "counts");
	int ncpus = libbpf_num_possible_cpus();
	unsigned long long *values = calloc(ncpus, sizeof(*values));
	char key[16], next[16];
	char *prev = NULL;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		unsigned long long total = 0;
		if (bpf_map_lookup_elem(fd, next, values) == 0)
			for (int i = 0; i < ncpus; i++)
				total += values[i];
		printf("%-16.16s %llu\n", next, total);
		memcpy(key, next, sizeof(key));
		prev = key;
	}
	bpf_link__destroy(link);
	bpf_object__close(obj);
	return 0;
}
