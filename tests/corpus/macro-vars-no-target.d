/* $target is 0 without -c or -p; $projid and $taskid are 0 on Linux. */
BEGIN
{
	printf("%d %d %d %d\n", $target, $projid, $taskid, $pid == pid);
	exit(0);
}
