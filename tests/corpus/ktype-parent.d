BEGIN
{
	printf("%d\n", curthread->real_parent->tgid == ppid);
	exit(0);
}
