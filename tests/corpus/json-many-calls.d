/* Many json() calls in one clause, at a strsize four times the default:
 * each is one state machine over the text (illumos' dtrace_json). */
#pragma D option strsize=1k

BEGIN
{
	j = "{\"a\": {\"b\": [1, {\"c\": \"deep\"}]}, \"t\": true, \"n\": null, \"x\": -1.5e3}";
	printf("%s\n", json(j, "a.b[1].c"));
	printf("%s\n", json(j, "a.b[0]"));
	printf("%s\n", json(j, "t"));
	printf("%s\n", json(j, "n"));
	printf("%s\n", json(j, "x"));
	printf("%s\n", json(j, "a.b"));
	printf("%s\n", json(j, "a.b[2]") == NULL ? "<NULL>" : "found");
	printf("%s\n", json(j, "a") );
	exit(0);
}
