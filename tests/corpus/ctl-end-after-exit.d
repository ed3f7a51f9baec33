BEGIN
{
	x = 42;
	printf("begin\n");
	exit(0);
}

END
{
	printf("end %d\n", x);
}
