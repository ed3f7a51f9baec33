/* The delimiter set takes 32 bytes, more than two strings of strsize=8. */
#pragma D option strsize=8

BEGIN
{
	printf("[%s][%s][%d]\n", strtok("a,b", ","), strtok(NULL, ","), strtok(NULL, ",") == "");
	exit(0);
}
