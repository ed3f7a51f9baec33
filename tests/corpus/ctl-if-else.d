BEGIN
{
	x = 5;
	if (x > 3) {
		printf("big ");
	} else {
		printf("small ");
	}
	if (x > 10) {
		printf("huge\n");
	} else if (x == 5) {
		printf("five\n");
	} else {
		printf("other\n");
	}
	exit(0);
}
