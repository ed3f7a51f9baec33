/* Associative arrays declared with key and value types. */
self int last[int];
string names[int, string];
int counts[string];

BEGIN
{
	self->last[3] = 7;
	names[1, "a"] = "one";
	counts["x"]++;
	counts["x"]++;
	printf("%d %s %d %d\n", self->last[3], names[1, "a"], counts["x"], counts["y"]);
	exit(0);
}
