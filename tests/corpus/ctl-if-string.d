BEGIN
{
	s = "abc";
	if (s == "abc") {
		printf("match\n");
	}
	if (strlen(s) > 5) {
		printf("long\n");
	}
	exit(0);
}
