profile:::tick-10ms
{
	n++;
}

profile:::tick-10ms
/n == 3/
{
	printf("%d\n", n);
	exit(0);
}
