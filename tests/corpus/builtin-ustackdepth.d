/*
 * ustackdepth counts the user frames at the probe: BEGIN fires in
 * dtrace(1) itself, in a system call, so it has some.
 */
BEGIN
{
	printf("%d %d\n", ustackdepth > 0, stackdepth > 0);
	exit(0);
}
