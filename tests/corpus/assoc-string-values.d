BEGIN
{
	names[1] = "one";
	names[2] = "two";
	printf("%s\n", strjoin(names[1], names[2]));
	exit(0);
}
