#pragma D option strsize=64

/* json() of text that is not a JSON object or array, or is cut short, is NULL. */
BEGIN
{
	printf("%d %d %d\n", json("not json", "a") == NULL, json("{\"a\": [1, 2", "a[5]") == NULL,
	    json("{\"a\": 0x10}", "a") == NULL);
	printf("[%s]\n", json("{\"a\": {\"b\": null}}", "a.b"));
	exit(0);
}
