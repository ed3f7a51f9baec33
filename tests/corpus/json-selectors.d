#pragma D option strsize=128

/*
 * json(): the value a selector names, as illumos' dtrace_json finds it:
 * strings without their quotes (escapes as written), numbers, true, false
 * and null as written, objects and arrays as their text; anything missing,
 * or text that is not JSON, is NULL.
 */
BEGIN
{
	j = "{\"a\": {\"b\": [1, 2, {\"c\": \"deep\"}]}, \"s\": \"q\\\"x\", \"t\": true, \"f\": -1.5e+3}";
	printf("[%s] [%s] [%s] [%s]\n", json(j, "a.b[1]"), json(j, "a.b[2].c"), json(j, "s"), json(j, "t"));
}

BEGIN
{
	exit(0);
}

END
{
	printf("[%s] [%s] [%s] [%d]\n", json(j, "f"), json(j, "a.b"), json("[10, 20, 30]", "[2]"),
	    json(j, "a.nosuch") == NULL);
}
