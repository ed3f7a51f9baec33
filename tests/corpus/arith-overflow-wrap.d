BEGIN
{
	i = 2147483647;
	j = i + 1;
	k = 9223372036854775807;
	m = k + 1;
	printf("%d %d\n", j, m);
	exit(0);
}
