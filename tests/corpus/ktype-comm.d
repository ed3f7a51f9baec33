BEGIN
{
	printf("%d %s\n", curthread->comm == "dtrace", curthread->comm);
	exit(0);
}
