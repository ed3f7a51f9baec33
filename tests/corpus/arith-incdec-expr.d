BEGIN
{
	i = 1;
	j = i++ + i++;
	k = --i * 10;
	printf("%d %d %d\n", i, j, k);
	exit(0);
}
