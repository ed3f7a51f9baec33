/*
 * Members of an associative array's struct elements and of thread-local
 * structs are places (`i[probefunc].calls++`, the Guide's rwinfo.d): an
 * element or thread-local not there yet is created zero-filled.
 */
struct callinfo {
	uint64_t calls;
	size_t maxbytes;
	int small;
	char c;
};

struct callinfo i[string];
self struct callinfo s;

BEGIN
{
	i["x"].calls++;
	i["x"].maxbytes = 5;
	i["x"].calls += 2;
	i["y"].small = -3;
	i["y"].small--;
	self->s.c = 'A';
	self->s.maxbytes = i["x"].maxbytes * 2;
	self->s.calls++;
	printf("%d %d %d %d %d\n", i["x"].calls, i["x"].maxbytes, i["y"].small, i["y"].calls, i["z"].calls);
	printf("%c %d %d %d\n", self->s.c, self->s.maxbytes, self->s.calls, self->s.small);
	exit(0);
}
