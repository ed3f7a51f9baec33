BEGIN
{
	x = 1;
	exit(0);
}

END
{
	printf("end1 %d\n", x);
	x++;
}

END
/x == 2/
{
	printf("end2 %d\n", x);
}

END
/x == 1/
{
	printf("not reached\n");
}
