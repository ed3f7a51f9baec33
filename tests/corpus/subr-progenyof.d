BEGIN
{
	printf("%d %d %d\n", progenyof($pid), progenyof($ppid), progenyof(99999999));
	exit(0);
}
