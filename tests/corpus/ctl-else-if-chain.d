BEGIN
{
	x = 7;
	if (x < 0)
		printf("negative\n");
	else if (x == 0)
		printf("zero\n");
	else if (x < 5)
		printf("small\n");
	else if (x < 10)
		printf("medium\n");
	else
		printf("large\n");
	exit(0);
}
