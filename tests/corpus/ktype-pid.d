BEGIN
{
	printf("%d %d\n", curthread->pid == pid, curthread->tgid == pid);
	exit(0);
}
