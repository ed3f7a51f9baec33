#pragma D option destructive

BEGIN
{
	printf("before\n");
	system("echo %s %d", "from the shell", 42);
	printf("after\n");
	exit(0);
}
