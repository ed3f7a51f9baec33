BEGIN
{
	a = 1;
	b = 0;
	c = 1;
	if (a) {
		if (b) {
			printf("ab\n");
		} else {
			if (c) {
				printf("a!bc\n");
			} else {
				printf("a!b!c\n");
			}
			printf("after inner\n");
		}
	} else {
		printf("!a\n");
	}
	printf("end\n");
	exit(0);
}
