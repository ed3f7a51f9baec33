BEGIN
{
	printf("\101\102\103|\60\61\n");
	exit(0);
}
