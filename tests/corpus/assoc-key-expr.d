BEGIN
{
	a[1 + 1] = 5;
	k = "ab";
	b[strjoin("a", "b")] = 9;
	printf("%d %d\n", a[2], b[k]);
	exit(0);
}
