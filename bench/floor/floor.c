/* The floor's user space: what a hand-written libbpf tool does and no more.
 *
 *   floor OBJECT          load, attach every program (a kprobe.multi one to
 *                         the traceable functions its pattern matches),
 *                         print "ready"; on SIGINT print what the maps hold
 *                         (see below)
 *   floor --once OBJECT   load, attach, run the program named "begin" once
 *                         (BPF_PROG_TEST_RUN) if there is one, and exit: the
 *                         start-up floor
 *
 * Maps it knows by name: "counts" (per-CPU hash, 16-byte comm key → u64;
 * printed as "comm count"), "buckets" (per-CPU array of u64; printed as
 * "bucket N count" for non-zero buckets), "events" (ring buffer of u64
 * records, each printed as a decimal line while tracing, drained every 20
 * ms; records the kernel could not reserve are counted in the "lost" array
 * and reported as "lost N"). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

/* A "kprobe.multi/PATTERN" program attached to every traceable function
 * the pattern matches, as tracefs lists them (libbpf 1.1 matches kallsyms,
 * where symbols ftrace cannot patch make the whole link fail). */
static struct bpf_link *attach_kprobe_multi(struct bpf_program *prog, const char *pattern)
{
	FILE *f = fopen("/sys/kernel/tracing/available_filter_functions", "r");
	if (!f)
		return NULL;
	char line[512], name[256];
	size_t count = 0, cap = 0;
	char **syms = NULL;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%255s", name) != 1 || fnmatch(pattern, name, 0) != 0)
			continue;
		int seen = 0;
		for (size_t i = 0; i < count && !seen; i++)
			seen = strcmp(syms[i], name) == 0;
		if (seen)
			continue;
		if (count == cap) {
			cap = cap ? 2 * cap : 256;
			syms = realloc(syms, cap * sizeof(*syms));
		}
		syms[count++] = strdup(name);
	}
	fclose(f);
	LIBBPF_OPTS(bpf_kprobe_multi_opts, opts, .syms = (const char **)syms, .cnt = count);
	return count ? bpf_program__attach_kprobe_multi_opts(prog, NULL, &opts) : NULL;
}
static void on_signal(int sig) { (void)sig; stop = 1; }

static int print_event(void *ctx, void *data, size_t size)
{
	(void)ctx;
	if (size >= 8)
		printf("%llu\n", *(unsigned long long *)data);
	return 0;
}

static unsigned long long percpu_sum(int fd, const void *key, int ncpus)
{
	unsigned long long values[ncpus], total = 0;
	if (bpf_map_lookup_elem(fd, key, values) == 0)
		for (int i = 0; i < ncpus; i++)
			total += values[i];
	return total;
}

int main(int argc, char **argv)
{
	int once = argc == 3 && strcmp(argv[1], "--once") == 0;
	if (argc != 2 && !once) {
		fprintf(stderr, "usage: floor [--once] OBJECT\n");
		return 2;
	}
	const char *path = argv[argc - 1];
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "floor: cannot load %s\n", path);
		return 1;
	}
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, obj) {
		if (strcmp(bpf_program__name(prog), "begin") == 0) {
			LIBBPF_OPTS(bpf_test_run_opts, run);
			bpf_prog_test_run_opts(bpf_program__fd(prog), &run);
			continue;
		}
		const char *section = bpf_program__section_name(prog);
		const char *multi = "kprobe.multi/";
		struct bpf_link *link = strncmp(section, multi, strlen(multi)) == 0
						? attach_kprobe_multi(prog, section + strlen(multi))
						: bpf_program__attach(prog);
		if (!link) {
			fprintf(stderr, "floor: cannot attach %s\n", bpf_program__name(prog));
			return 1;
		}
	}
	if (once)
		return 0;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	int events = bpf_object__find_map_fd_by_name(obj, "events");
	struct ring_buffer *rb = events >= 0 ? ring_buffer__new(events, print_event, NULL, NULL) : NULL;
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		if (rb) {
			usleep(20000);
			ring_buffer__consume(rb);
		} else {
			pause();
		}
	}
	if (rb)
		ring_buffer__consume(rb);

	int ncpus = libbpf_num_possible_cpus();
	int lost = bpf_object__find_map_fd_by_name(obj, "lost");
	if (lost >= 0) {
		unsigned int zero = 0;
		unsigned long long n = percpu_sum(lost, &zero, ncpus);
		if (n)
			fprintf(stderr, "lost %llu\n", n);
	}
	int counts = bpf_object__find_map_fd_by_name(obj, "counts");
	if (counts >= 0) {
		char key[16], next[16], *prev = NULL;
		while (bpf_map_get_next_key(counts, prev, next) == 0) {
			printf("%-16.16s %llu\n", next, percpu_sum(counts, next, ncpus));
			memcpy(key, next, sizeof(key));
			prev = key;
		}
	}
	int buckets = bpf_object__find_map_fd_by_name(obj, "buckets");
	if (buckets >= 0) {
		for (unsigned int i = 0; i < 64; i++) {
			unsigned long long n = percpu_sum(buckets, &i, ncpus);
			if (n)
				printf("bucket %u %llu\n", i, n);
		}
	}
	fflush(stdout);
	return 0;
}
