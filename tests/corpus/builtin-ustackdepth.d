/*
 * ustackdepth counts the user frames at the probe: BEGIN fires in
 * dtrace(1) itself, which has some.
 */
BEGIN
{
	printf("%d\n", ustackdepth > 0);
	exit(0);
}
