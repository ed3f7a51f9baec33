BEGIN
{
	x = 2;
	y = 3;
	if (x == 2) {
		if (y == 4) {
			printf("a\n");
		} else {
			printf("b\n");
		}
	}
	if (x != 2)
		printf("c\n");
	else
		printf("d\n");
	exit(0);
}
